#!/bin/sh
# PtlRtRankFailed: a rank that leaves without PtlFini is seen gone by the
# others, who stay alive to each other (tests/ptl/mp/mp_rankfail.c).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
. "$(dirname "$0")/../../time_limit.sh"
ptl_job 90 -n 3 "$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_rankfail"
