#!/bin/sh
# The progress thread sleeps without periodic wake-ups while nothing is in
# flight, and wakes about once a second while an answer is due from a
# peer that lives but does not answer (stopped), which is not taken for
# dead (tests/ptl/mp/mp_idle.c).
# shm's: the verbs NAL wakes for its keepalive while peers are up.
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
. "$(dirname "$0")/../../time_limit.sh"
case ${PTL_NAL:-shm} in
shm) ;;
*)	echo "idle.sh: counts the wake-ups of shm's sleep, not run with PTL_NAL=$PTL_NAL"
	exit 77 ;;
esac
if [ "${PTL_TEST_VALGRIND:-0}" = 1 ]; then
	echo "idle.sh: not run under valgrind (it counts the threads' sleeps)"
	exit 77
fi
ptl_job 60 PTL_PROGRESS_THREAD=1 -n 2 "$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_idle"
