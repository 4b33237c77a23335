#!/usr/bin/env bash
# `pnpm test`: lint first (a second), then the typecheck and the tests side by side — `tsc -b`
# at a lower priority, so it takes the CPU the test processes leave idle while they wait on their
# children. Fails when either fails; tsc's output comes at the end. Arguments go to vitest.
set -uo pipefail
biome check . || exit 1
log=$(mktemp)
nice -n 10 tsc -b >"$log" 2>&1 &
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
