#!/bin/sh
# ptlrun: a rank that fails stops the job; exit status and message name the
# rank; the job's shared-memory objects are removed.
. "${PTL_TOP_SRCDIR:-$(dirname "$0")/../..}/tests/own_shm.sh"
. "${PTL_TOP_SRCDIR:-$(dirname "$0")/../..}/tests/rt/rt_common.sh"

# Exit status 3 at rank 1: ptlrun exits 3, the others are stopped.
run 3 "$PTLRUN" --timeout 60 -n 4 "$FAIL" exit 1 3
has "$ERR" 'ptlrun: rank 1 \(pid [0-9]+\) exited with status 3'
count "$ERR" 'ptlrun: .*' 1

# SIGKILL at rank 2: 128+9, and no shm object of the job is left.
run 137 "$PTLRUN" --timeout 60 -n 4 "$FAIL" kill 2
has "$ERR" 'ptlrun: rank 2 \(pid [0-9]+\) killed by signal 9 \(Killed\)'
count "$ERR" 'ptlrun: .*' 1
count "$OUT" 'jobid [0-9a-f]{16} pid [0-9]+' 4
jobid=$(sed -n 's/^jobid \([0-9a-f]*\) .*/\1/p' "$OUT" | head -1)
[ -n "$jobid" ] || fail "no job id printed"
for f in /dev/shm/ptl."$jobid".*; do
	[ -e "$f" ] && fail "$f left behind"
done
for pid in $(sed -n 's/.* pid \([0-9]*\)$/\1/p' "$OUT"); do
	for f in /dev/shm/ptl.view."$pid" /dev/shm/ptl.view."$pid".*; do
		[ -e "$f" ] && fail "$f left behind"
	done
done
# ... and nothing of another job is touched.
other=/dev/shm/ptl.00000000deadbeef.keep.$$
: >"$other"
run 137 "$PTLRUN" --timeout 60 -n 2 -v "$FAIL" kill 0
[ -e "$other" ] || fail "ptlrun removed $other of another job"
rm -f "$other"
count "$ERR" 'ptlrun: removed /dev/shm/ptl\.[0-9a-f]{16}\.seg\.[01]' 2
count "$ERR" 'ptlrun: removed /dev/shm/ptl\.view\.[0-9]+' 2
count "$ERR" 'ptlrun: removed /dev/shm/ptl\.view\.[0-9]+\.eq0' 2

# rt_abort at rank 1 with code 7: the job ends with 7 and the reason.
run 7 "$PTLRUN" --timeout 60 -n 3 "$FAIL" abort 1 7
has "$ERR" 'ptlrun: rank 1 \(pid [0-9]+\) aborted the job with code 7: rank 1 gives up'
count "$ERR" 'ptlrun: .*' 1
# rt_abort alone says it itself.
limited "$PROGRAM_LIMIT" env -u PTL_RT_FD "$FAIL" abort 0 5 >"$OUT" 2>"$ERR"
[ $? -eq 5 ] || fail "rt_abort alone did not exit 5"
has "$ERR" 'ptl: abort with code 5: rank 0 gives up'

# A rank that leaves without the fence: the others' fence fails at once.
run 4 "$PTLRUN" --timeout 60 -n 3 "$FAIL" early 1
has "$ERR" 'ptl: rank [02]: the fence failed: rank 1 \(pid [0-9]+\) exited before reaching the fence'
has "$ERR" 'ptlrun: rank [02] \(pid [0-9]+\) exited with status 4'

# A rank that ignores SIGTERM is killed after the grace period.
run 1 "$PTLRUN" --timeout 60 -n 2 "$FAIL" noterm
has "$ERR" 'ptlrun: rank 0 \(pid [0-9]+\) exited with status 1'
has "$ERR" 'ptlrun: rank 1 \(pid [0-9]+\) still running 2000 ms after SIGTERM; sending SIGKILL'

# A program that cannot be executed by the rank (exec fails after fork is
# not reachable once ptlrun has checked it; a shell script's exit is).
run 127 "$PTLRUN" --timeout 60 -n 2 sh -c 'exit 127'
has "$ERR" 'ptlrun: rank [01] \(pid [0-9]+\) exited with status 127'

finish
