#!/usr/bin/env bash
# Fuzzes the API against its OpenAPI document with schemathesis (pinned, installed from PyPI into
# a virtual environment under .local/). Exits non-zero on any failure, so `npm test` fails too.
set -euo pipefail
cd "$(dirname "$0")/.."
SCHEMATHESIS_VERSION=4.32.5
venv=.local/fuzz-venv
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
if [ ! -f dist/scripts/fuzz-api.js ] || [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  npx tsc -p tsconfig.build.json
fi
exec node dist/scripts/fuzz-api.js
