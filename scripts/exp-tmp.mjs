import postgres from 'postgres'
import { readStats } from '../dist/links/stats-queries.js'
const sql = postgres('postgres://postgres@127.0.0.1:5432/exp1', { max: 1, onnotice: () => {} })
const DAY = 86400000, dayOf = (o) => new Date(Date.now() - o * DAY).toISOString().slice(0, 10)
const links = await sql`select code, user_id from links limit 1000`
const ms = []
for (let i = 0; i < 300; i++) { const l = links[i % links.length]; const t = performance.now(); const r = await readStats(sql, l.user_id, l.code, dayOf(Number(process.env.D ?? 399)), dayOf(0)); ms.push(performance.now() - t); if (i === 0) console.log(r.days.length, r.dims.length, r.referrers) }
ms.sort((a, b) => a - b); console.log('p50', ms[150].toFixed(2), 'p99', ms[297].toFixed(2))
await sql.end()
