// Where the time goes, for each target docs/performance.md can miss: printed under a missed row.
// The figures quoted come from `npm run profile` (docs/profile.md) and from experiments named here;
// each says what the design would have to give up to meet the target.
export const WHY = {
  hotApi:
    'Counting the visit, and noise. In docs/profile.md ("cached redirect") the service\'s process spends ' +
    'within about a tenth more CPU per cached redirect than the ceiling (the same node:http parsing and ' +
    'socket write, plus the visit each GET redirect records and its fold), and its PostgreSQL backend a few ' +
    'µs more to apply the flush, on the two cores wrk also uses; our own modules on the path (redirect.js, ' +
    'redirect-cache.js, request-id) are a few percent of the profile. A single profiled round may reach ' +
    '0.9×; the bench\'s median over three is lower, and min–max shows the swing. In an A/B experiment with ' +
    'VisitCounter.record made a no-op (not a setting: the spec counts every GET redirect) the service ' +
    'measured 0.95× of the ceiling, and with VISIT_STATS=off (totals only) 0.90×.',
  hotAll:
    'The access line, on top of the above, and mostly the writing of it rather than its making: each ' +
    'redirect\'s JSON line is built on the answering thread and written by the log thread, here to a file on ' +
    'the machine\'s disk, whose writes and writeback (kernel threads, about a tenth of a core at the 7 MB of ' +
    'lines a second of this point) take their share of the cores. With the same file on tmpfs the default ' +
    'comes within a few percent of ACCESS_LOG=api: browser-like visits at 0.49× the ceiling to the disk, 0.57× ' +
    'to tmpfs, 0.60× with ACCESS_LOG=api (scripts/bench/arms.mjs, 4 rounds; the command is in its header). A ' +
    'busy service should run with ACCESS_LOG=api (README) or log where writing is cheap; the default keeps ' +
    'every request visible, as the contract\'s logging asks.',
  hot2:
    'Not measurable fairly here: two workers, wrk and PostgreSQL (which applies both workers\' visit flushes) ' +
    'share two cores. The 2-process ceiling itself gains little over one process (its row), and the service ' +
    'with two workers was no faster than with one: each worker keeps its own cache and flushes its own visits, ' +
    'and the processes preempt each other. On a machine with cores to spare for the load generator and the ' +
    'database, the ratio should follow the 1-worker row.',
  nginx:
    'Node\'s HTTP stack before anything of ours: the node:http ceiling itself answers about 0.5-0.6 of what ' +
    'nginx does (its row), parsing and writing in JavaScript where nginx does both in C. The service then ' +
    'reaches the hot-redirect share of that ceiling with its default access line (the row "hot redirect, 1 ' +
    'worker, ACCESS_LOG=all"); 0.50 of nginx would ask it for about 0.85-0.9 of bare node:http while it writes a ' +
    'log line per request, which that row shows it does not.',
  capped:
    'The database, on the same two cores: a capped link\'s visits come from this node\'s block, taken from ' +
    'link_caps about a second of visits at a time (at most a quarter of what is left, at most 1,000) and ' +
    'given back within 2 s (src/links/caps.ts). At this point\'s rate each of the walk\'s capped links takes a ' +
    'block about once a second, so the service keeps sending link_caps updates (up to 500 a statement) and ' +
    'PostgreSQL applies them on the cores wrk and the service use; a visit that finds its link\'s block used up ' +
    'waits for the next take (the p99 row). The ratio follows how much CPU PostgreSQL gets: 0.90 (0.89-0.97) ' +
    'in the run at 82e63d7, 0.62 (0.55-0.80) at 2655240 on a machine whose node:http ceiling was 29% slower.',
  statsRatio:
    'Issue 10\'s target, measured with browser-like requests. Since 2026-12-07 the tally thread classifies the ' +
    'agents, parses their families, places addresses in countries and hashes the visitors (docs/decisions.md), ' +
    'so the answering thread only appends each visit and, at each flush, receives the counts, builds the rows ' +
    'and has the driver serialize them; PostgreSQL writes four more tables (visit_days, visit_referrers, ' +
    'visit_dims, the sketches) than the totals, on the cores wrk and the service use. A run below target is ' +
    'that work on a loaded machine; VISIT_STATS=off gives the throughput back to an operator who does not ' +
    'want the statistics.',
  statsCeiling:
    'Mostly not the statistics: on ÷ off (two rows below) has been 0.86-0.94. Since 2026-11-29 the fold runs on a ' +
    'thread of its own (docs/decisions.md): in profiles of this point the answering thread gave it 7.9% of its busy ' +
    'CPU and now gives the hand-over 3.0%, and the tally thread\'s folding shares the two cores with wrk. Before ' +
    'that change, the service\'s answering thread was the ' +
    'bound: scripts/bench/threads.mjs put it at 15-17 µs of CPU per browser-like visit (every other thread ' +
    'together about 2 µs), against about 12 µs for the whole ceiling. perf (perf record -g on that thread, node ' +
    '--perf-basic-prof, 8 s under wrk, service and ceiling alike) placed the 4-5 µs between them: the look-ups of ' +
    'each link\'s per-day tables (agents, addresses, visitors, referrers), which are out of the processor\'s ' +
    'caches at each visit, 0.7-1.2 µs (the fewer visits a fold takes at once, the more: 0.7 µs at 4,096, 1.0 at ' +
    '1,024, 1.5 at 256, 1.3 counting each visit as it comes; the service folds every 512, for the tail: see the ' +
    'p99 row and docs/decisions.md); hashing the header strings 0.3; ' +
    'the access line, built and then flattened into the batch that goes to the log thread, 0.5-0.9; the socket ' +
    'write\'s kernel path 0.5; the rest a tenth of a µs here and there (the redirect\'s own functions, the ' +
    'visit\'s appends). Encoding the log lines into shared memory for the log thread, instead of sending it ' +
    'strings, halved the flattening in the profiles but moved nothing in 8 interleaved rounds (0.63 and 0.62 ' +
    'of the ceiling), and was not kept. What is left is what full statistics are: a few look-ups per visit ' +
    'into tables as many as the links visited, on the two cores wrk also uses.',
  p99:
    'The flush\'s pause, and the other threads\' turns: once a VISIT_FLUSH_MS the event loop receives the ' +
    'counts from the tally thread (chunks of 100 links), sorts the codes, builds the rows, has the driver ' +
    'serialize them and collects the garbage, a few milliseconds during which 8 connections wait; that is ' +
    'more than 1% of a second. The tally thread, the log thread and PostgreSQL also take turns on the two ' +
    'cores wrk uses. In the experiment without visit recording, p99 was the ceiling\'s.',
  burst:
    'As in the storm row: the 60 logins\' argon2id derivations keep both KDF threads at a full core each for ' +
    'the burst\'s whole length (its slowest login, about 10 s), so the event loop answers redirects in the ' +
    'share of the cores the scheduler leaves it and wrk. The event loop itself is not held (the slowest ' +
    'redirect stays far under 1 s: its row). KDF_THREADS=1 trades login throughput for redirect latency.',
  unknown:
    'Noise, and the negative entries\' expiry: each unknown code is read from the database once per ' +
    'NEGATIVE_CACHE_MS (5 s), so over a 10 s round the 1,000 codes are read about twice, each in a batched ' +
    'primary-key read, where the hot redirect reads nothing. The ratio has swung from 0.81 to 1.20 across runs ' +
    'of the same code path (1.10 at c3838ad).',
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
    '56 MB; the log thread (a V8 isolate of its own, so that a log reader that falls behind never stops the ' +
    'answering thread: docs/decisions.md) adds about 12 MB (11.6 MB with its heap limited to the least, so left ' +
    'at the defaults). Nothing else is held until it is used: the KDF threads start at the first password check and stop ' +
    'after KDF_IDLE_MS (each a V8 isolate of about 9 MB, plus the ARGON2_MEMORY_KIB it hashes with), and the ' +
    'country database (8 MB) is read at the first flush with a human visit. The tally thread (about 9 MB) starts ' +
    'with the first visits and stops after a minute of flushes that found none.',
  api:
    'What the ceiling skips and the service must do, then noise. docs/profile.md ("create link") puts a ' +
    'create at about twice the ceiling\'s CPU both in the service\'s process (body reading, validation, ' +
    'URL parsing for the host, the rate limit, the time limit, the JSON answer) and in PostgreSQL ' +
    '(create_link(): the owner\'s row lock and count for the 50-link cap, the block-list check and the ' +
    'host\'s domains since issue 12, where the ceiling does one insert). List and patch likewise carry the ' +
    '`disabled` flag and the block-list check. Each request is still one statement ' +
    '(test/http/round-trips.test.ts holds it to that): what is left is work per request, not waiting. ' +
    'And a database write here swings by half from round to round (min–max): the run at 6ecd32e, before ' +
    'the abuse controls, measured all four at 0.87–0.93×.',
  metrics:
    'Mostly noise: two services identical but for METRICS_PORT, measured back to back, swing by a fifth ' +
    'here (1.19 in the run at 6ecd32e, the same code path). What METRICS_PORT adds per redirect is an ' +
    'increment of a pre-bound counter and one histogram observation; with it unset, the path touches ' +
    'nothing (src/metrics.ts, NO_METRICS).',
}
