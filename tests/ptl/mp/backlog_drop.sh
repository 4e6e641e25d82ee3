#!/bin/sh
# An answer that finds no room to wait for ring space is dropped, said once
# on stderr and counted (mp_backlog.c's last case): 4 slots of max_inline
# bytes (PTL_TEST_TX_MAX), which the target's own puts fill, then 16 gets
# whose REPLYs carry data. The job must pass and the message be there.
# Its way of leaving no room (the target's puts filling a ring its peer
# does not read, then 4 slots) is shm's: over verbs the REPLYs still found
# room (tests/vm, 2026-12-03), so it runs on shm only.
set -u
case ${PTL_NAL:-shm} in
shm) ;;
*)	echo "backlog_drop: fills shm's ring to leave no room, not run with PTL_NAL=$PTL_NAL"
	exit 77 ;;
esac
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
"$(dirname "$0")/run.sh" 2 mp_backlog PTL_PROGRESS_THREAD=0 PTL_TEST_TX_CHUNK=2 PTL_TEST_TX_MAX=4 >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" = 0 ] || exit "$rc"
want="ptl: rank 1: no room left for sends that wait for ring space; an answer to rank 0 is dropped (its initiator waits in vain; PTL_SR_DROP_COUNT counts them)"
n=$(grep -cF "$want" "$out")
if [ "$n" != 1 ]; then
	echo "backlog_drop.sh: the dropped answer's message came $n times, want once: $want"
	exit 1
fi
echo "backlog_drop.sh: the dropped answer was said once"
