// Which redirects count as bots in the statistics: `isbot`'s maintained list (crawlers, link-preview
// fetchers such as Slackbot, Twitterbot, facebookexternalhit, Discordbot, WhatsApp, TelegramBot and
// LinkedInBot, monitors, headless browsers, HTTP libraries), plus one rule of ours for what it
// leaves alone: an empty or missing User-Agent, which no browser sends. Every pattern of the list
// this replaced is matched by isbot 5.2.3 (test/unit/owner-insight.test.ts keeps them as cases).
// A browser that lies about itself counts as a human: this is a census, not a defence. In-app
// browsers (Pinterest's, Instagram's) name their app but carry people; isbot counts them human.
import { isbot } from 'isbot'

export function isBot(userAgent: string | undefined): boolean {
  return userAgent === undefined || userAgent.trim() === '' || isbot(userAgent)
}
