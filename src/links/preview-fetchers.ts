// The link-preview fetchers that get a link's card (title, description, image) instead of its
// 302: the one list (docs/api.md, "Preview cards"). Each is named by a token of its User-Agent,
// matched case-insensitively. Read only for a link that has a card.
export const PREVIEW_FETCHERS = [
  'Slackbot', // Slack ("Slackbot-LinkExpanding 1.0")
  'Twitterbot', // X / Twitter
  'facebookexternalhit', // Facebook, Messenger, Instagram
  'Facebot',
  'LinkedInBot',
  'Discordbot',
  'WhatsApp',
  'TelegramBot',
  'Mastodon', // Mastodon servers ("http.rb/... (Mastodon/4.x; +https://...)")
  'iMessageLinkPreviews', // Apple Messages (it also sends "facebookexternalhit/1.1 Facebot Twitterbot/1.0")
  'redditbot',
  'SkypeUriPreview', // Skype and Microsoft Teams
  'Pinterestbot',
  'vkShare',
  'Embedly',
] as const

const FETCHER = new RegExp(PREVIEW_FETCHERS.join('|'), 'i')

/** Whether this User-Agent is one of PREVIEW_FETCHERS. */
export const isPreviewFetcher = (userAgent: string | undefined): boolean => userAgent !== undefined && FETCHER.test(userAgent)
