#!/bin/sh
# Targets that die with an operation of rank 0 in flight to each, rank 0
# waiting in PtlEQWait: the ACK and REPLYs libptl makes in their stead
# come within seconds, with and without a progress thread, and carry their
# uid and jid (each is another user), the bulk put's SEND_END rank 0's
# (tests/ptl/mp/mp_deadpeer.c). PTL_TEST_VALGRIND=1: every rank under
# valgrind, its limits and the job's 50 times longer (valgrind.sh).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
. "$(dirname "$0")/../../time_limit.sh"
. "$(dirname "$0")/valgrind.sh"
t=$(test_limit 90)
run() {
	echo "deadpeer.sh: $*"
	ptl_job "$t" "$@" -n 4 $MP_VG "$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_deadpeer" ||
		{ echo "FAIL: deadpeer.sh with $*"; exit 1; }
}
run PTL_PROGRESS_THREAD=1
run PTL_PROGRESS_THREAD=0
