#!/bin/sh
# run.sh NPROCS PROGRAM [ENV=VALUE...]: runs a tests/ptl/mp program under
# the build tree's ptlrun, every rank running the same cmocka group.
# PTL_TEST_VALGRIND=1 runs every rank under valgrind memcheck (make
# check-valgrind) with small sizes (PTL_TEST_SMALL=1) and a longer timeout
# (valgrind.sh). ptlrun itself runs limited (tests/time_limit.sh): past its
# --timeout and its report on the ranks, a ptlrun that hangs is stopped
# and named.
set -u
: "${PTL_TOP_BUILDDIR:?run through make check (or set PTL_TOP_BUILDDIR)}"
: "${PTL_TOP_SRCDIR:=$PTL_TOP_BUILDDIR}"
. "$(dirname "$0")/../../time_limit.sh"
. "$(dirname "$0")/valgrind.sh"
np=$1
prog=$PTL_TOP_BUILDDIR/tests/ptl/mp/$2
shift 2
for kv in "$@"; do
	export "$kv"
done
t=60
[ -n "$MP_VG" ] && t=900
ptl_job "$t" -n "$np" $MP_VG "$prog"
