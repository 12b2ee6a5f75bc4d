// A User-Agent as the statistics show it: device (mobile, tablet, desktop or other), browser family
// and OS family, by bowser (MIT). Done at the visit flush, and for a redirect rule's device
// (rules.ts, remembered per User-Agent); never for a link without rules.
import { BROWSER_MAP, OS_MAP, getParser, parse } from 'bowser'

export type Device = 'mobile' | 'tablet' | 'desktop' | 'other'
export interface AgentFamilies {
  device: Device
  browser: string
  os: string
}

export const OTHER = 'other' as const

/**
 * How much of a User-Agent is read: real ones are under 400 characters, and a parse of 8 KB of
 * noise takes a millisecond (one forged header per request would make that every redirect's).
 */
export const AGENT_CHARS = 512
export const agentCut = (userAgent: string): string => (userAgent.length > AGENT_CHARS ? userAgent.slice(0, AGENT_CHARS) : userAgent)

/** bowser's longer names, shortened to the family names people use; its others are kept as it gives them. */
const BROWSER_NAMES: Readonly<Record<string, string>> = {
  'Microsoft Edge': 'Edge',
  'Samsung Internet for Android': 'Samsung Internet',
  'Opera Coast': 'Opera',
  'Opera Touch': 'Opera',
}
const OS_NAMES: Readonly<Record<string, string>> = { 'Chrome OS': 'ChromeOS' }
const DEVICES = new Set<string>(['mobile', 'tablet', 'desktop'])
/**
 * Only the families bowser names in its maps: for an agent it does not know, it falls back to the
 * agent's first word ("Mozilla"), which would let any visitor add a value of their choosing.
 */
const BROWSERS = new Set(Object.values(BROWSER_MAP))
const SYSTEMS = new Set(Object.values(OS_MAP))

export function agentFamilies(userAgent: string): AgentFamilies {
  if (userAgent === '') return { device: OTHER, browser: OTHER, os: OTHER }
  const parsed = parse(agentCut(userAgent))
  return {
    device: deviceOf(parsed.platform.type),
    browser: family(parsed.browser.name, BROWSERS, BROWSER_NAMES),
    os: family(parsed.os.name, SYSTEMS, OS_NAMES),
  }
}

/**
 * The device and OS family alone, as agentFamilies reads them, for a redirect rule's device: the
 * browser and engine are not parsed (bowser parses each part when first asked), which takes about
 * 40% less time per agent not seen before, the cost that agents forged anew on each visit impose.
 */
export function agentDevice(userAgent: string): Pick<AgentFamilies, 'device' | 'os'> {
  if (userAgent === '') return { device: OTHER, os: OTHER }
  const parser = getParser(agentCut(userAgent), true)
  return {
    device: deviceOf(parser.getPlatform().type),
    os: family(parser.getOS().name, SYSTEMS, OS_NAMES),
  }
}

/** bowser's platform type when it is one of our devices; a TV, a console or none is OTHER. */
const deviceOf = (type: string | undefined): Device => (type !== undefined && DEVICES.has(type) ? (type as Device) : OTHER)

const family = (name: string | undefined, known: ReadonlySet<string>, names: Readonly<Record<string, string>>): string =>
  name === undefined || !known.has(name) ? OTHER : (names[name] ?? name)
