// GET /api/v1/links/{code}/qr: the link's short_url as a QR code in SVG. The encoding is
// uqr's (a maintained encoder with no dependencies); this module only draws its matrix.
import { encode } from 'uqr'
import { sessionOf, type Ctx } from '../context.js'
import { linkNotFound } from '../http/errors.js'
import { Query } from '../http/query.js'
import { bytes, type Reply } from '../http/reply.js'
import { findLink } from './queries.js'
import { codeParam, shortUrl } from './short-code.js'

/** What these routes may touch. */
type QrCtx = Ctx<'sql' | 'baseUrl'>

export const QR_SIZE = { min: 32, max: 4096, default: 256 }
/** The standard's quiet zone is 4 modules; scanners cope with less on a plain background. */
export const QR_MARGIN = { min: 0, max: 16, default: 4 }
export const QR_ECC = ['L', 'M', 'Q', 'H'] as const
export type QrEcc = (typeof QR_ECC)[number]

export interface QrOptions {
  /** width and height in pixels */
  size: number
  /** quiet zone, in modules */
  margin: number
  /** error correction: L 7%, M 15%, Q 25%, H 30% of the symbol may be lost */
  ecc: QrEcc
}

export async function getQr(ctx: QrCtx): Promise<Reply> {
  const session = sessionOf(ctx)
  const q = new Query(ctx.req.url)
  const options: QrOptions = {
    size: q.int('size', QR_SIZE.min, QR_SIZE.max) ?? QR_SIZE.default,
    margin: q.int('margin', QR_MARGIN.min, QR_MARGIN.max) ?? QR_MARGIN.default,
    ecc: q.oneOf('ecc', QR_ECC) ?? 'M',
  }
  q.check() // parameters before the look-up (contract §2)
  const code = codeParam(ctx)
  if ((await findLink(ctx.deps.sql, session.userId, code)) === undefined) throw linkNotFound()
  const svg = qrSvg(shortUrl(ctx.deps.baseUrl, code), options)
  return bytes(200, 'image/svg+xml', Buffer.from(svg), { 'content-disposition': `inline; filename="${code}.svg"` })
}

/**
 * The QR code of `text` as SVG: one unit per module, dark modules as one path of horizontal runs
 * (a row of n dark modules is one rectangle, not n), scaled to `size` pixels.
 */
export function qrSvg(text: string, { size, margin, ecc }: QrOptions): string {
  const { data } = encode(text, { ecc, border: 0 })
  const n = data.length + 2 * margin
  let d = ''
  data.forEach((row, y) => {
    for (let x = 0; x < row.length; x++) {
      if (!row[x]) continue
      const start = x
      while (row[x + 1]) x++
      const w = x - start + 1
      d += `M${start + margin} ${y + margin}h${w}v1h-${w}z`
    }
  })
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 ${n} ${n}" shape-rendering="crispEdges">` +
    `<rect width="${n}" height="${n}" fill="#fff"/><path fill="#000" d="${d}"/></svg>`
  )
}
