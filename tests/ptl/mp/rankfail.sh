#!/bin/sh
# PtlRtRankFailed: a rank that leaves without PtlFini is seen gone by the
# others, who stay alive to each other (tests/ptl/mp/mp_rankfail.c).
# PTL_TEST_VALGRIND=1: every rank under valgrind, its limits and the
# job's 50 times longer (valgrind.sh).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
. "$(dirname "$0")/../../time_limit.sh"
. "$(dirname "$0")/valgrind.sh"
ptl_job "$(test_limit 90)" -n 3 $MP_VG "$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_rankfail"
