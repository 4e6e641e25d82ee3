#!/bin/sh
# make check's LOG_COMPILER for the test programs it runs itself (cmocka
# unit tests and the like; Makefile.am): limited_test.sh DEFAULT 'LIMITS'
# [WRAPPER...] PROGRAM runs PROGRAM under tests/time_limit.sh's limited,
# so a program that hangs (a deadlock, a lock a failed cmocka test left
# held) is stopped, said to have hung, and FAILs, instead of holding up
# make check until CI's own limit ends it with nothing said. The .sh tests
# do not come here: each bounds what it runs itself (SH_LOG_COMPILER).
#
# WRAPPER: make check's LOG_FLAGS, which automake puts between this
# script's arguments (AM_LOG_FLAGS) and the test, the program last: a
# program run under another, PTL_TEST_VALGRIND=1 make check
# LOG_FLAGS='valgrind -q --error-exitcode=1', keeps its limit (50 times
# longer, as below), where LOG_COMPILER=valgrind would replace this script
# and the limit with it.
#
# PROGRAM's limit, in seconds:
#   PTL_TEST_LIMIT, if set: every program's, as given (0: none);
#   else PROGRAM's entry in LIMITS ("tests/dir/prog=SECONDS ...", from
#   PTL_TEST_LIMITS in the Makefile.inc beside it), for one that needs
#   longer; else DEFAULT. Those two are 50 times longer under
#   PTL_TEST_VALGRIND=1 (make check with valgrind'ed ranks): valgrind
#   slows a program 20 to 50 times (time_limit.sh's test_limit).
. "$(dirname "$0")/time_limit.sh"

default=$1
limits=$2
shift 2
# the test: the last argument (LOG_FLAGS' words come before it)
for prog; do :; done
prog=${prog#./}

if [ -n "${PTL_TEST_LIMIT+set}" ]; then
	limit=$PTL_TEST_LIMIT
	case $limit in
	'' | *[!0-9]*)
		echo "$(basename "$0"): PTL_TEST_LIMIT='$limit' is not a number of seconds (0: no limit); unset it for the default ($default s)" >&2
		exit 99
		;;
	esac
else
	limit=$default
	for entry in $limits; do
		[ "${entry%=*}" = "$prog" ] && limit=${entry##*=}
	done
	case $limit in
	'' | *[!0-9]*)
		echo "$(basename "$0"): $prog's limit '$limit' (from '$default' '$limits') is not a number of seconds: see PTL_TEST_LIMITS in Makefile.am" >&2
		exit 99
		;;
	esac
	limit=$(test_limit "$limit")
fi

[ "$limit" -eq 0 ] && exec "$@"
t0=$(date +%s)
limited "$limit" "$@"
rc=$?
# limited has said it hung (124 alone may be the program's own status)
if [ $rc -eq 124 ] && [ $(($(date +%s) - t0)) -ge "$limit" ]; then
	echo "$(basename "$0"): if $prog only needs longer: PTL_TEST_LIMIT=SECONDS (0: no limit), or an entry for it in PTL_TEST_LIMITS" >&2
fi
exit $rc
