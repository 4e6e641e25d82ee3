#!/bin/sh
# A target that dies with rank 0's ACK'd put in flight, rank 0 polling
# alone (never a wait), with PtlEQGet and with PtlEQPoll of timeout 0:
# the failed ACK libptl makes in its stead comes within seconds, without
# a progress thread (an empty poll looks at the dead peer itself, every
# 64th) and with one (tests/ptl/mp/mp_deadpoll.c). PTL_TEST_VALGRIND=1:
# every rank under valgrind, its limits and the job's 50 times longer
# (valgrind.sh).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
. "$(dirname "$0")/../../time_limit.sh"
. "$(dirname "$0")/valgrind.sh"
t=$(test_limit 90)
# run HOW VAR=VALUE...: rank 0 polls with HOW (get: PtlEQGet, poll0:
# PtlEQPoll of timeout 0)
run() {
	how=$1
	shift
	echo "deadpoll.sh: $how $*"
	ptl_job "$t" "$@" -n 2 $MP_VG "$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_deadpoll" "$how" ||
		{ echo "FAIL: deadpoll.sh: $how with $*"; exit 1; }
}
for how in get poll0; do
	run "$how" PTL_PROGRESS_THREAD=0
	run "$how" PTL_PROGRESS_THREAD=1
done
