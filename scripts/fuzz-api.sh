#!/usr/bin/env bash
# Fuzzes the API against its OpenAPI document with schemathesis (pinned, installed from PyPI into
# a virtual environment under .local/). Exits non-zero on any failure, so `npm test` fails too.
set -euo pipefail
cd "$(dirname "$0")/.."
SCHEMATHESIS_VERSION=4.32.5
# Python 3.11 before 3.11.8 can crash inside hypothesis while it describes deeply nested
# strategies ("SystemError: AST constructor recursion depth mismatch", CPython issue 106905), which
# ends a run without a finding. A newer interpreter is used when the machine has one (pyenv keeps
# several side by side), the default python3 otherwise.
python=python3
for candidate in python3.13 python3.12 "$HOME"/.pyenv/versions/3.13*/bin/python3 "$HOME"/.pyenv/versions/3.12*/bin/python3; do
  if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
    python=$candidate
    break
  fi
done
venv=.local/fuzz-venv
version_of() { "$1" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")' 2>/dev/null || true; }
if [ "$(version_of "$venv/bin/python")" != "$(version_of "$python")" ] ||
  ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
if [ ! -f dist/scripts/fuzz-api.js ] || [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  npx tsc -p tsconfig.build.json
fi
exec node dist/scripts/fuzz-api.js
