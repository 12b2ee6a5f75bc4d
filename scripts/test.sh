#!/usr/bin/env bash
# npm test: type-check and compile (strict), then run every test under c8 with a 90% line floor.
# Uses the embedded database unless DATABASE_URL is set.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build coverage
npx tsc -p tsconfig.json
# The web app, where the test servers serve it from (test/helpers/server.ts APP_DIR)
node scripts/build-app.mjs build/app
npx c8 uvu build/test '\.test\.js$'
