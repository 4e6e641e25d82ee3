#!/bin/sh
# PtlFini while threads wait in PtlEQWait, then PtlInit again and a put
# exchanged: no hang, the waits end (tests/ptl/mp/mp_refini.c).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
. "$(dirname "$0")/../../time_limit.sh"
ptl_job 90 -n 2 "$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_refini"
