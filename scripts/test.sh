#!/usr/bin/env bash
# `pnpm test`: lint first (a second), then the typecheck and the tests side by side: `tsc -b` is
# one process (about a minute of one core) and the tests leave a good part of the two cores idle
# while they wait on their children. At normal priority: at nice 10 beside the tests and another
# load on the machine it got almost no CPU and finished 95 s after them. Fails when either fails;
# tsc's output comes at the end. Arguments go to vitest.
set -uo pipefail
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
