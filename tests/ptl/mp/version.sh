#!/bin/sh
# A job of two libptl versions: rank 1 publishes its rank info as the
# libptl before uid and jid did (8 bytes: the test option
# PTL_TEST_INFO_LEN). PtlInit must fail saying so - which rank, what it
# published, what this one publishes - not that rank 1 published no
# address; nothing hangs. (Both ranks fail at once, and ptlrun ends the
# job at the first exit, so one of the two may be gone before it says
# it: at least one must, each that does in those words.) Then a
# PTL_TEST_INFO_LEN out of range is said and ignored (a job that runs
# clean). PTL_TEST_VALGRIND=1 (make check-valgrind): every rank under
# valgrind, as tests/ptl/mp/run.sh runs them.
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
: "${PTL_TOP_SRCDIR:=$PTL_TOP_BUILDDIR}"
. "$(dirname "$0")/../../time_limit.sh"
. "$(dirname "$0")/valgrind.sh"
prog=$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_api
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
ptl_job 300 -n 2 sh -c \
	'[ "$PTL_RT_RANK" = 1 ] && export PTL_TEST_INFO_LEN=8; exec $0 "$1"' "$MP_VG" "$prog" >"$out" 2>&1
rc=$?
cat "$out"
if [ "$rc" = 0 ]; then
	echo "version.sh: a job of two versions ran"
	exit 1
fi
said=0
for r in 0 1; do
	grep -q "^ptl: rank $r: rank 1 published" "$out" || continue
	want="ptl: rank $r: rank 1 published 8 bytes of rank info where this libptl publishes 16: another version of libptl (every rank of a job must run the same)"
	if ! grep -qxF "$want" "$out"; then
		echo "version.sh: rank $r did not say: $want"
		exit 1
	fi
	said=$((said + 1))
done
if [ "$said" = 0 ]; then
	echo "version.sh: no rank said that rank 1 runs another version"
	exit 1
fi
if grep -q "published no address" "$out"; then
	echo "version.sh: a rank of another version was called addressless"
	exit 1
fi
ptl_job 300 PTL_TEST_INFO_LEN=17 -n 2 $MP_VG "$prog" >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" = 0 ] || exit "$rc"
. "$(dirname "$0")/said.sh"
said_once "$out" version.sh "PTL_TEST_INFO_LEN=17 is not 1 to 16: ignored" || exit 1
echo "version.sh: a job of two versions fails saying so; a bad PTL_TEST_INFO_LEN is said and ignored"
