#!/bin/sh
# A target that dies with rank 0's ACK'd put in flight, rank 0 polling
# with PtlEQGet alone (never a wait): the failed ACK libptl makes in its
# stead comes within seconds, without a progress thread (an empty PtlEQGet
# looks at the dead peer itself) and with one (tests/ptl/mp/mp_deadpoll.c).
# PTL_TEST_VALGRIND=1: every rank under valgrind, its limits and the job's
# 50 times longer (valgrind.sh).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
. "$(dirname "$0")/../../time_limit.sh"
. "$(dirname "$0")/valgrind.sh"
t=$(test_limit 90)
run() {
	echo "deadpoll.sh: $*"
	limited "$(job_limit "$t")" env "$@" "$PTL_TOP_BUILDDIR/tools/ptlrun" -n 2 --timeout "$(job_timeout "$t")" \
		$MP_VG "$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_deadpoll" ||
		{ echo "FAIL: deadpoll.sh with $*"; exit 1; }
}
run PTL_PROGRESS_THREAD=0
run PTL_PROGRESS_THREAD=1
