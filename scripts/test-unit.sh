#!/usr/bin/env bash
# The fast loop: the unit tests and the client library's tests, with no service started and no
# build (about 15 s here). `npm test` remains the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/use-node.sh
bash scripts/ensure-deps.sh
NODE_OPTIONS=--experimental-vm-modules exec ./node_modules/.bin/jest --selectProjects unit sdk "$@"
