// Which redirects count as bots in the statistics: an empty or missing User-Agent, or one that
// matches a known crawler, link-preview fetcher, monitor or HTTP library (docs/api.md lists them).
// A browser that lies about itself counts as a human: this is a census, not a defence. In-app
// browsers (Pinterest's, Flipboard's) name their app but carry people, so app names are not listed.

/** Matched case-insensitively anywhere in the User-Agent. Keep docs/api.md in step. */
export const BOT_PATTERNS: readonly string[] = [
  // crawlers and search engines (most say "bot", "crawl" or "spider")
  'bot', 'crawl', 'spider', 'slurp', 'archiver', 'yandex', 'baidu', 'sogou', 'seznam',
  // link previews in chat and social apps
  'facebookexternalhit', 'facebookcatalog', 'meta-externalagent', 'whatsapp', 'skypeuripreview',
  'vkshare', 'embedly', 'quora link preview', 'outbrain', 'iframely', 'preview',
  // monitors, validators, headless browsers, scanners
  'lighthouse', 'pagespeed', 'headlesschrome', 'phantomjs', 'pingdom', 'uptime', 'statuscake',
  'monitor', 'validator', 'check_http', 'zgrab', 'masscan', 'nmap', 'censys', 'nuclei',
  // HTTP libraries and command-line clients
  'curl/', 'wget/', 'httpie/', 'python-requests', 'python-urllib', 'python-httpx', 'aiohttp',
  'go-http-client', 'okhttp', 'java/', 'apache-httpclient', 'libwww-perl', 'ruby', 'axios/',
  'node-fetch', 'undici', 'got (', 'guzzlehttp', 'postmanruntime', 'insomnia', 'scrapy', 'feed',
]

const BOT = new RegExp(BOT_PATTERNS.map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'), 'i')

export function isBot(userAgent: string | undefined): boolean {
  return userAgent === undefined || userAgent.trim() === '' || BOT.test(userAgent)
}
