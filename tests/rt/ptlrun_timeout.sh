#!/bin/sh
# ptlrun --timeout: a hung job ends, naming the ranks still running and,
# in a fence, those that had not arrived. Signals to ptlrun reach the ranks.
. "${PTL_TOP_SRCDIR:-$(dirname "$0")/../..}/tests/rt/rt_common.sh"

# Every rank hangs outside any collective. Before they are stopped, each
# one's threads are described (here one, asleep in pause(2); "?" where
# /proc does not show a process's system call); no stacks with
# PTLRUN_STACKS=0.
run 124 env PTLRUN_STACKS=0 "$PTLRUN" -n 3 --timeout 1 "$FAIL" hang
has "$ERR" 'ptlrun: timeout after 1 s; ranks 0-2 still running'
for r in 0 1 2; do
	has "$ERR" "ptlrun: rank $r \(pid [0-9]+\) thread [0-9]+ rt_fail: state S, in (pause|\?), wchan .*, 0% CPU"
done
count "$ERR" 'ptlrun: .*' 4

# Rank 2 hangs; the others wait for it in a fence.
run 124 "$PTLRUN" -n 4 --timeout 1 "$FAIL" hang 2
has "$ERR" 'ptlrun: timeout after 1 s; ranks 0-3 still running'
has "$ERR" 'ptlrun: ranks 0-1,3 reached the fence; rank 2 had not'

# Rank 0 hangs; rank 1 already exited: only the running one is named and
# described, with its stack where a tool to take it is installed.
run 124 "$PTLRUN" -n 2 --timeout 1 sh -c '[ "$PTL_RT_RANK" = 1 ] || exec sleep 30'
has "$ERR" 'ptlrun: timeout after 1 s; rank 0 still running'
has "$ERR" 'ptlrun: rank 0 \(pid [0-9]+\) thread [0-9]+ sleep: state S, in (clock_nanosleep|\?), wchan .*, 0% CPU'
hasnot "$ERR" 'ptlrun: rank 1'
if command -v eu-stack >/dev/null || command -v gdb >/dev/null; then
	has "$ERR" 'ptlrun: rank 0 \(pid [0-9]+\): the stacks of its threads \(.*(eu-stack|gdb)\):'
	# the frames only where the tool can attach here (ptrace allowed)
	sleep 30 &
	sp=$!
	if command -v eu-stack >/dev/null; then
		limited "$PROGRAM_LIMIT" eu-stack -p $sp >/dev/null
	else
		limited "$PROGRAM_LIMIT" gdb -p $sp -batch -nx -q -ex bt >/dev/null
	fi
	attach=$?
	kill $sp 2>/dev/null
	wait $sp 2>/dev/null
	if [ $attach -eq 0 ]; then
		grep -q 'nanosleep' "$ERR" || fail "no nanosleep frame in the stack of sleep(1)"
	else
		echo "# the stack tool cannot attach to a process here: frames not checked"
	fi
else
	has "$ERR" "ptlrun: rank 0: no stacks \(install elfutils' eu-stack or gdb to see them\)"
fi

# SIGTERM to ptlrun is forwarded; ptlrun exits 128+15 and cleans up.
# ptlrun runs limited, in the background: the child of limited's
# timeout(1), which is the child of the background shell.
limited "$RT_RUN_LIMIT" "$PTLRUN" --timeout 60 -n 2 "$FAIL" hang >"$OUT" 2>"$ERR" &
job=$!
# Wait until both ranks run (ptlrun has its signals set up by then).
pid='' i=0
while [ $i -lt 100 ]; do
	tpid=$(pgrep -x -P $job timeout)
	[ -n "$tpid" ] && pid=$(pgrep -P "$tpid")
	[ -n "$pid" ] && [ "$(pgrep -c -P "$pid")" -ge 2 ] && break
	sleep 0.05
	i=$((i + 1))
done
if [ -n "$pid" ]; then
	kill -TERM "$pid"
else
	fail "ptlrun did not start under limited's timeout(1) in 5 s"
fi
wait $job
got=$?
[ $got -eq 143 ] || fail "ptlrun after SIGTERM exited $got, expected 143"
has "$ERR" 'ptlrun: received signal 15 \(Terminated\); stopping the job'

# The rank side of these waits (PTL_RT_TIMEOUT, ptlrun gone) is in rt_unit.
finish
