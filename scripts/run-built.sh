#!/usr/bin/env bash
# `bash scripts/run-built.sh <entry.js> [args...]`: runs a compiled entry of dist/ on Node 24,
# compiling first only when sources changed (the admin CLI answers in about a second this way).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/use-node.sh
[ -d node_modules ] || bash scripts/ensure-deps.sh
bash scripts/build-if-stale.sh
entry=$1
shift
exec node "dist/$entry" "$@"
