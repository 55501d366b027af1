#!/usr/bin/env bash
# `bash scripts/with-node.sh <command...>`: runs a command with the project's Node 24 first on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/use-node.sh
exec "$@"
