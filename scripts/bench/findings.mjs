// Where the time goes, for each target docs/performance.md can miss: printed under a missed row.
// The figures quoted come from `npm run profile` (docs/profile.md) and from experiments named here;
// each says what the design would have to give up to meet the target.
export const WHY = {
  hotApi:
    'Counting the visit. A cached redirect costs the service about twice the ceiling\'s CPU (docs/profile.md, ' +
    '"cached redirect": the same node:http parsing and socket write, and on top of them the visit that every GET ' +
    'redirect records, its fold into per-link, per-day counts, the flush each VISIT_FLUSH_MS that the driver ' +
    'serializes and a PostgreSQL backend applies on the same two cores, and the garbage of all that). Our own ' +
    'modules on the path (redirect.js, redirect-cache.js, request-id) are a few percent of the profile. In an A/B ' +
    'experiment with VisitCounter.record made a no-op (not a setting: the spec counts every GET redirect) the ' +
    'same service measured 0.95× of the ceiling; with VISIT_STATS=off (totals only) 0.90×. Meeting 0.90× with the ' +
    'per-day statistics on would need them to cost under 5% of a redirect; they cost about 10%.',
  hotAll:
    'The access line, on top of the above: each redirect\'s JSON line is formatted and written to the log, about ' +
    'a sixth of the rate (compare the ACCESS_LOG=api row, same round). A busy service should run with ' +
    'ACCESS_LOG=api (README); the default keeps every request visible, as the contract\'s logging asks.',
  hot2:
    'Not measurable fairly here: two workers, wrk and PostgreSQL (which applies both workers\' visit flushes) ' +
    'share two cores. The 2-process ceiling itself gains little over one process (its row), and the service ' +
    'with two workers was slower than with one: each worker keeps its own cache and flushes its own visits, ' +
    'and the processes preempt each other. On a machine with cores to spare for the load generator and the ' +
    'database, the ratio should follow the 1-worker row.',
  statsRatio:
    'Issue 10\'s target, measured with browser-like requests: each flush classifies the user agents (memoized ' +
    'per string), takes the referrer host, hashes each new visitor of the day (SHA-256) and writes three more ' +
    'tables (visit_days, visit_referrers, visit_hashes) than the totals. docs/profile.md ("cold redirect") ' +
    'shows the cost: visits.js, stats-queries.js and the driver\'s array serialization are the service\'s ' +
    'largest own costs. VISIT_STATS=off gives the throughput back to an operator who does not want the ' +
    'statistics.',
  p99:
    'The flush\'s pause: once a VISIT_FLUSH_MS the event loop builds and sends the batch and collects its ' +
    'garbage, a few milliseconds during which 8 connections wait; that is more than 1% of a second. In the ' +
    'experiment without visit recording, p99 was the ceiling\'s.',
  storm:
    'Two argon2id threads at full speed on two cores leave the event loop a share of a core: the p99 is the ' +
    'scheduler\'s, not the event loop\'s (it is held in the burst row). KDF_THREADS=1 trades login throughput ' +
    'for redirect latency.',
  cold:
    'Each miss is a PostgreSQL read, and each cold visit is of a different link, so it is also a row in every ' +
    'table of the next flush. docs/profile.md ("cold redirect") puts the service\'s CPU per cold redirect at ' +
    'several times the ceiling\'s, and the PostgreSQL backends\' as much again, all on the cores wrk uses. The ' +
    'read is already one primary-key lookup for all misses of an event-loop turn; what is left is PostgreSQL\'s ' +
    'own cost per row read and per count upserted, which a design with the counts in the shared database ' +
    'cannot avoid. A cache large enough for the working set (CACHE_MAX_BYTES) is the operator\'s lever.',
  coldP99:
    'A cold walk makes every flush as large as the requests of a VISIT_FLUSH_MS (thousands of distinct links): ' +
    'building and serializing those arrays runs on the event loop, and the transaction holds the links\' rows ' +
    'while the misses\' reads queue for the pool.',
  rssIdle:
    'Node itself is about 40 MB and the service\'s modules (the driver, prom-client, our code) bring it to about ' +
    '56 MB; each KDF thread is a V8 isolate of about 9 MB, and the first password hash (the dummy that makes ' +
    'an unknown username cost what a known one does) touches ARGON2_MEMORY_KIB (19 MiB) that the thread keeps. ' +
    'KDF_THREADS=1 saves about 10 MB.',
}
