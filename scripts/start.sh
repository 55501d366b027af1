#!/usr/bin/env bash
# `npm start`: installs what is missing, builds when sources changed, then runs the API and every
# worker in one process on Node 24.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/use-node.sh
bash scripts/ensure-deps.sh
bash scripts/build-if-stale.sh
exec node dist/scripts/start-local.js
