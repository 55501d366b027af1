#!/usr/bin/env bash
# Compiles the service (dist/) and the client library (sdk/dist/) only when a source file, a tsconfig or the lock file is newer than the last
# build, so restarts and CLI calls with nothing changed skip tsc (about 13 s here) entirely.
# Expects the project's Node on PATH (scripts/use-node.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=dist/.build-stamp
if [ -f "$stamp" ] && [ -z "$(find api core workers scripts sdk/src sdk/package.json sdk/tsconfig.json tsconfig.json tsconfig.build.json package-lock.json \
      -newer "$stamp" \( -name '*.ts' -o -name '*.json' \) -print -quit 2>/dev/null)" ]; then
  exit 0
fi
echo "[build] compiling (sources changed since the last build)" >&2
# The stamp is taken before compiling: a file saved during the build makes the next run compile again.
mkdir -p dist
touch "$stamp.next"
npx tsc -p tsconfig.build.json
npx tsc -p sdk/tsconfig.json
mv "$stamp.next" "$stamp"
