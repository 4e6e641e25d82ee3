# Sourced by the tests/ptl/mp scripts that start jobs (run.sh, and those
# that start their own), after tests/time_limit.sh. PTL_TEST_VALGRIND=1
# (make check-valgrind, or PTL_TEST_VALGRIND=1 make check) runs every rank
# under valgrind memcheck, with small sizes (PTL_TEST_SMALL=1, for the
# cmocka programs, mp_common.c) and longer limits: the scripts' through
# time_limit.sh's test_limit, the dead-peer programs' own through
# mp_plain.h's mp_plain_slow (PTL_TEST_VALGRIND reaches the ranks with the
# rest of the environment).
#
# MP_VG: the words that run a rank's program under valgrind, to put before
# it unquoted ($MP_VG: its options are words of their own); empty without
# PTL_TEST_VALGRIND=1. A definite leak or a memory error fails the rank
# (exit 99); valgrind.supp beside this script holds what lies outside ptl.
: "${PTL_TOP_SRCDIR:=${PTL_TOP_BUILDDIR:?run through make check}}"
MP_VG=
if [ "${PTL_TEST_VALGRIND:-0}" = 1 ]; then
	MP_VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
	MP_VG="$MP_VG --suppressions=$PTL_TOP_SRCDIR/tests/ptl/mp/valgrind.supp"
	PTL_TEST_SMALL=1
	export PTL_TEST_SMALL
fi
