#!/usr/bin/env bash
# npm test: type-check and compile (strict), then run every test under c8 with a 90% line floor.
# Uses the embedded database unless DATABASE_URL is set, and the first `node` in PATH
# (scripts/node-line.sh fetches another line: PATH="$(scripts/node-line.sh 26):$PATH" npm test).
# `npm test -- http cli` runs only those folders of test/ (unit, http, cli, browser); the line
# floor is for the whole suite, so a part reports its coverage without checking it.
set -euo pipefail
cd "$(dirname "$0")/.."
parts=("$@")
for part in "${parts[@]}"; do
  [ -d "test/$part" ] || { echo "test.sh: no test folder test/$part" >&2; exit 2; }
done
db='the embedded database'
[ -z "${DATABASE_URL:-}" ] || db=PostgreSQL   # never the URL: it may hold a password
echo "npm test: Node.js $(node --version), $db, ${parts[*]:-every test}"
rm -rf build coverage
npx tsc -p tsconfig.json
# The web app, where the test servers serve it from (test/helpers/server.ts APP_DIR)
node scripts/build-app.mjs build/app
# The output is kept, and on a failure what failed is printed again after the coverage table, so
# that a log cut to its last lines (a CI's) still says which test failed and why.
log=build/test-output.log
status=0
if [ ${#parts[@]} -eq 0 ]; then
  npx c8 uvu build/test '\.test\.js$' 2>&1 | tee "$log" || status=$?
else
  npx c8 --check-coverage=false uvu build/test "^($(IFS='|'; echo "${parts[*]}"))/.*\\.test\\.js$" 2>&1 | tee "$log" || status=$?
fi
plain() { sed 's/\x1b\[[0-9;]*m//g' "$log"; } # without the colours
if [ "$status" -ne 0 ]; then
  echo "npm test: failed (exit $status); the failures again:"
  if grep -a -q ' FAIL ' "$log"; then
    grep -a -A 25 ' FAIL ' "$log" | head -n 300 || true # head's early close is not a failure
  else
    # A crash (an error nobody caught, in a test or in a service it started) ends uvu before its
    # summary: what it printed last, before c8's table, is the crash.
    echo "(no test failed: a crash, or the coverage floor; the last lines before the coverage table:)"
    plain | sed -n '/^-*|-*|/q;p' | tail -n 60 || true
  fi
  grep -a -E '^  (Total|Passed|Skipped): ' "$log" || true
fi
# uvu swallows an error thrown by a suite's before hook: the suite shows "(0 / N)" and the run
# passes. Tests counted that neither passed nor were skipped fail the run, said last so that it
# is seen.
count() { plain | grep -a -E "^  $1: " | tail -1 | awk '{print $2}' || true; }
total=$(count Total)
passed=$(count Passed)
skipped=$(count Skipped)
if [ "$status" -eq 0 ] && [ -n "$total" ] && [ $((${passed:-0} + ${skipped:-0})) -lt "$total" ]; then
  echo "npm test: failed: $((total - ${passed:-0} - ${skipped:-0})) of $total tests did not run: a suite's before hook threw (its error is above). Its suite:"
  plain | grep -a -E '\(0 / [1-9]' || true
  status=1
fi
exit "$status"
