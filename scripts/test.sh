#!/usr/bin/env bash
# The whole test suite: installs what is missing, type-checks, lints, builds (integration tests
# run the compiled process entries), then runs every Jest project. Integration tests start
# their own Redis, MongoDB-wire server and provider mocks on free ports.
set -euo pipefail
cd "$(dirname "$0")/.."
SVC_TEST=1 bash scripts/ensure-deps.sh
npx tsc -p tsconfig.json --noEmit
npx eslint . --max-warnings=0
npx tsc -p tsconfig.build.json
results=$(mktemp)
status=0
NODE_OPTIONS=--experimental-vm-modules npx jest --ci --json --outputFile="$results" "$@" || status=$?
if [ $# -eq 0 ]; then FUZZ_SKIP_BUILD=1 bash scripts/fuzz-api.sh || status=1; fi
# One plain closing line, whatever reads the log.
node -e "const r=JSON.parse(require('fs').readFileSync(process.argv[1],'utf8'));console.log('tests: '+r.numPassedTests+' passed, '+r.numFailedTests+' failed')" "$results" || true
rm -f "$results"
exit $status
