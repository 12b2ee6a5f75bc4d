#!/usr/bin/env bash
# npm run bench: the redirect benchmark (scripts/bench/run.mjs), every figure a ratio to a ceiling
# measured in the same run. Installs nothing; says what is missing. Builds dist/ only if src/ is
# newer. Writes docs/performance.md. Options (env): BENCH_SECONDS (10, max 15), BENCH_ROUNDS (3),
# BENCH_LARGE=1 (adds the 1M-link set), BENCH_DATABASE_URL (an empty database to use) or
# BENCH_ADMIN_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres: a fresh bench_* database is
# created and dropped), BENCH_ARGON2_MEMORY_KIB, BENCH_ARGON2_ITERATIONS, BENCH_HUGE=1 (the 10M-link data set, scripts/bench/huge.mjs), BENCH_ONLY=logins, stats, limits or rules (the login
# points, the visit statistics' points, a capped link or a link with 3 rules against a plain one, only; docs/performance.md is left alone), BENCH_ACCESS_LOG (default: the service's, all), BENCH_KEEP=1.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=0
if ! command -v node >/dev/null; then
  echo "bench: node is missing (Node 20 or later)" >&2
  missing=1
elif ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
  echo "bench: Node 20 or later is needed, found $(node --version)" >&2
  missing=1
fi
if ! command -v wrk >/dev/null; then
  echo "bench: wrk is missing: apt-get install wrk" >&2
  missing=1
fi
if [ ! -d node_modules/postgres ] || [ ! -d node_modules/@electric-sql/pglite ]; then
  echo "bench: node_modules is missing or incomplete: npm ci" >&2
  missing=1
fi
if ! command -v nginx >/dev/null; then
  echo "bench: nginx not found; its ceiling will be skipped (apt-get install nginx-light to have it)" >&2
fi
[ "$missing" = 0 ] || exit 1

# Build only when a source of dist/ is newer than dist/server.js (or it or the web app is missing).
if [ ! -f dist/server.js ] || [ ! -f dist/app/index.html ] || [ -n "$(find src webapp tsconfig.json tsconfig.build.json package-lock.json -newer dist/server.js -print -quit 2>/dev/null)" ]; then
  echo "bench: dist/ is missing or older than src/: npm run build"
  npm run build --silent
else
  echo "bench: dist/ is up to date with src/: not building"
fi

# BENCH_HUGE=1: the data set of record size instead (scripts/bench/huge.mjs: 10M links, 400 days
# of statistics for 100k of them, generated in PostgreSQL; BENCH_HUGE_LINKS etc. scale it down).
if [ "${BENCH_HUGE:-}" = 1 ]; then exec node scripts/bench/huge.mjs; fi
# BENCH_AB=<commit>: this checkout's cached redirect against that commit's and the ceiling, in
# alternating rounds (scripts/bench/ab.mjs; issue 22 compares f8aed4c).
if [ -n "${BENCH_AB:-}" ]; then exec node scripts/bench/ab.mjs "$BENCH_AB"; fi
exec node scripts/bench/run.mjs
