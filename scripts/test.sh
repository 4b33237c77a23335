#!/usr/bin/env bash
# `pnpm test`: lint first (a second), then the typecheck and the tests side by side: `tsc -b` is
# one process (about a minute of one core) and the tests leave a good part of the two cores idle
# while they wait on their children. At normal priority: at nice 10 beside the tests and another
# load on the machine it got almost no CPU and finished 95 s after them. Fails when either fails;
# tsc's output comes at the end. Arguments go to vitest. Runs from the repository root whatever
# the current directory (a package's `pnpm test` passes `--project <its name>`).
#
# The run gets a temp directory of its own (TMPDIR, which Node's os.tmpdir() and every host
# follow), removed when the run ends, also on Ctrl-C: an interrupted run leaves no Gateway data,
# sessions or sandboxes behind. Short (/tmp/amt.XXXXXX): Unix socket paths inside it stay well
# under their 108-byte limit.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
node_ok=$(node -e 'const [a, b] = process.versions.node.split(".").map(Number); console.log(a > 22 || (a === 22 && b >= 19) ? 1 : 0)' 2>/dev/null)
if [[ $node_ok != 1 ]] || ! command -v biome >/dev/null || ! command -v vitest >/dev/null; then
  echo "pnpm test needs Node >= 22.19 and the installed dependencies (found node $(node --version 2>/dev/null || echo none)):" >&2
  echo "  source scripts/env.sh && pnpm install && pnpm test" >&2
  exit 2
fi
run_tmp=$(mktemp -d /tmp/amt.XXXXXX) || exit 2
trap 'rm -rf "$run_tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export TMPDIR=$run_tmp
biome check . || exit 1
log=$(mktemp)
tsc -b >"$log" 2>&1 &
tsc_pid=$!
vitest run "$@"
tests=$?
wait "$tsc_pid"
types=$?
if ((types != 0)); then
  echo "typecheck failed (tsc -b):"
  cat "$log"
fi
rm -f "$log"
((tests != 0)) && exit "$tests"
exit "$types"
