#!/usr/bin/env bash
# The whole test suite: installs what is missing, type-checks, lints, builds (integration tests
# run the compiled process entries), then runs every Jest project. Integration tests start
# their own Redis and MongoDB-wire server on free ports.
set -euo pipefail
cd "$(dirname "$0")/.."
SVC_TEST=1 bash scripts/ensure-deps.sh
npx tsc -p tsconfig.json --noEmit
npx eslint . --max-warnings=0
npx tsc -p tsconfig.build.json
NODE_OPTIONS=--experimental-vm-modules npx jest --ci "$@"
