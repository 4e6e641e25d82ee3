#!/bin/sh
# Targets that die with an operation of rank 0 in flight to each, rank 0
# waiting in PtlEQWait: the ACK and REPLYs libptl makes in their stead
# come within seconds, with and without a progress thread, and carry their
# uid and jid (each is another user), the bulk put's SEND_END rank 0's
# (tests/ptl/mp/mp_deadpeer.c).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
. "$(dirname "$0")/../../time_limit.sh"
run() {
	echo "deadpeer.sh: $*"
	limited "$(job_limit 90)" env "$@" "$PTL_TOP_BUILDDIR/tools/ptlrun" -n 4 --timeout "$(job_timeout 90)" \
		"$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_deadpeer" ||
		{ echo "FAIL: deadpeer.sh with $*"; exit 1; }
}
run PTL_PROGRESS_THREAD=1
run PTL_PROGRESS_THREAD=0
