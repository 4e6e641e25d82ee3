#!/bin/sh
# ptlrun --timeout: a hung job ends, naming the ranks still running and,
# in a fence, those that had not arrived. Signals to ptlrun reach the ranks.
. "${PTL_TOP_SRCDIR:-$(dirname "$0")/../..}/tests/rt/rt_common.sh"

# Every rank hangs outside any collective.
run 124 "$PTLRUN" -n 3 --timeout 1 "$FAIL" hang
has "$ERR" 'ptlrun: timeout after 1 s; ranks 0-2 still running'
count "$ERR" 'ptlrun: .*' 1

# Rank 2 hangs; the others wait for it in a fence.
run 124 "$PTLRUN" -n 4 --timeout 1 "$FAIL" hang 2
has "$ERR" 'ptlrun: timeout after 1 s; ranks 0-3 still running'
has "$ERR" 'ptlrun: ranks 0-1,3 reached the fence; rank 2 had not'

# Rank 0 hangs; rank 1 already exited: only the running one is named.
run 124 "$PTLRUN" -n 2 --timeout 1 sh -c '[ "$PTL_RT_RANK" = 1 ] || exec sleep 30'
has "$ERR" 'ptlrun: timeout after 1 s; rank 0 still running'

# SIGTERM to ptlrun is forwarded; ptlrun exits 128+15 and cleans up.
"$PTLRUN" -n 2 "$FAIL" hang >"$OUT" 2>"$ERR" &
pid=$!
# Wait until both ranks run (ptlrun has its signals set up by then).
i=0
while [ "$(pgrep -c -P $pid)" -lt 2 ] && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
kill -TERM $pid
wait $pid
got=$?
[ $got -eq 143 ] || fail "ptlrun after SIGTERM exited $got, expected 143"
has "$ERR" 'ptlrun: received signal 15 \(Terminated\); stopping the job'

# The rank side of these waits (PTL_RT_TIMEOUT, ptlrun gone) is in rt_unit.
finish
