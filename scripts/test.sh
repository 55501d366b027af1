#!/usr/bin/env bash
# The whole test suite on Node 24: installs what is missing, type-checks, lints, checks formatting and import
# rules (no cycles, no upward imports), builds (integration tests run the compiled process
# entries), then runs every Jest project. Integration tests start their own Redis, MongoDB-wire
# server and provider mocks on free ports.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/use-node.sh
SVC_TEST=1 bash scripts/ensure-deps.sh
echo "[test] node $(node --version)" >&2
# The client library first: tests import it as a package, through its built type declarations.
npx tsc -p sdk/tsconfig.json
npx tsc -p tsconfig.json --noEmit
# The benchmarks and drills have a build of their own (npm run bench:*, drills): it must keep compiling.
npx tsc -p tsconfig.bench.json --noEmit --incremental false
npx eslint . --max-warnings=0
# One formatting for the whole tree (npx prettier --write . fixes it).
npx prettier --check . --log-level warn
npx depcruise api core workers scripts bench test sdk/src --config .dependency-cruiser.cjs
bash scripts/build-if-stale.sh
results=$(mktemp)
status=0
NODE_OPTIONS=--experimental-vm-modules npx jest --ci --json --outputFile="$results" "$@" || status=$?
if [ $# -eq 0 ]; then FUZZ_SKIP_BUILD=1 bash scripts/fuzz-api.sh || status=1; fi
# One plain closing line, whatever reads the log.
node -e "const r=JSON.parse(require('fs').readFileSync(process.argv[1],'utf8'));console.log('tests: '+r.numPassedTests+' passed, '+r.numFailedTests+' failed')" "$results" || true
rm -f "$results"
exit $status
