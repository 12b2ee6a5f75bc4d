// The country of a client address, from a local MMDB file read by mmdb-lib: no network call, and
// the address is only looked up, never kept. By default the CC0 ip-location-db "geo-whois-asn-
// country" database shipped as an npm package; GEO_DB names another file (GeoLite2-Country, which
// operators download under MaxMind's licence) or "off". docs/decisions.md, "Visit statistics".
import { readFileSync } from 'node:fs'
import { access, constants } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { isIP } from 'node:net'
import { Reader, type Response } from 'mmdb-lib'
import { firstAddressOf, unwrapIpv4 } from '../address.js'
import type { Logger } from '../log.js'

export const UNKNOWN_COUNTRY = 'unknown'
const BUNDLED = '@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb'
const COUNTRY = /^[A-Z]{2}$/

/** ip-location-db's records are { country_code }; MaxMind's are { country: { iso_code } }. */
export type CountryRecord = Response & {
  country_code?: unknown
  country?: { iso_code?: unknown }
  registered_country?: { iso_code?: unknown }
}

/** Address → ISO 3166-1 alpha-2 code, or "unknown". */
export type CountryOf = (address: string) => string

const unknown: CountryOf = () => UNKNOWN_COUNTRY

/**
 * GEO_DB: undefined for the bundled database, "off", or a file. A database that cannot be read
 * leaves every country unknown. The file (8 MB for the bundled one) is read at the first lookup:
 * by the tally thread at its first human visit, by the answering thread at a rule's first
 * country; an idle service does not hold it.
 */
export async function openCountries(setting: string | undefined, log: Pick<Logger, 'warn'>): Promise<CountryOf> {
  if (setting === 'off') return unknown
  const file = setting ?? createRequire(import.meta.url).resolve(BUNDLED)
  const cannotRead = (err: unknown): CountryOf => {
    log.warn('the country database cannot be read; countries are "unknown"', { file, err })
    return unknown
  }
  try {
    await access(file, constants.R_OK)
  } catch (err) {
    return cannotRead(err)
  }
  let lookup: CountryOf | undefined
  return (address) => {
    if (lookup === undefined) {
      try {
        lookup = lookupIn(new Reader<CountryRecord>(readFileSync(file)))
      } catch (err) {
        lookup = cannotRead(err)
      }
    }
    return lookup(address)
  }
}

function lookupIn(reader: Reader<CountryRecord>): CountryOf {
  return (address) => {
    // Node gives IPv4 peers of a dual-stack socket as IPv4-mapped IPv6, which the databases key as
    // IPv4; the tally keeps an IPv6 visitor by its /64 ("2001:db8:1:2::/64"), looked up as its first address.
    const ip = firstAddressOf(unwrapIpv4(address))
    if (isIP(ip) === 0) return UNKNOWN_COUNTRY
    return countryOfRecord(reader.get(ip))
  }
}

/** The country of a record in either shape, or "unknown". */
export function countryOfRecord(record: CountryRecord | null): string {
  const code = record?.country_code ?? record?.country?.iso_code ?? record?.registered_country?.iso_code
  return typeof code === 'string' && COUNTRY.test(code.toUpperCase()) ? code.toUpperCase() : UNKNOWN_COUNTRY
}
