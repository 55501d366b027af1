#!/usr/bin/env bash
# `npm start`: installs what is missing, builds, then runs the API and every worker in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
npx tsc -p tsconfig.build.json
exec node dist/scripts/start-local.js
