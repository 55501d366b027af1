#!/usr/bin/env bash
# Sourced by every project command: puts Node 24 LTS first on PATH. The machine's own `node` is used
# when it is already 24.x; otherwise (e.g. Node 20, past end of life) the official Node 24 binary is
# installed once from the npm registry's `node` package into .local/node.
NODE_WANTED=24.21.0
NODE_LOCAL_BIN="$(pwd)/.local/node/node_modules/.bin"

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(node_major node)" != "24" ]; then
  if [ ! -x "$NODE_LOCAL_BIN/node" ] || [ "$("$NODE_LOCAL_BIN/node" --version 2>/dev/null)" != "v$NODE_WANTED" ]; then
    echo "[setup] installing Node $NODE_WANTED into .local/node (npm registry)" >&2
    npm install --prefix .local/node --no-save --no-audit --no-fund --loglevel=error "node@$NODE_WANTED" >&2
  fi
  export PATH="$NODE_LOCAL_BIN:$PATH"
fi
