#!/bin/sh
# A job of two libptl versions: rank 1 publishes its rank info as the
# libptl before uid and jid did (8 bytes: the test option
# PTL_TEST_INFO_LEN). Each rank's PtlInit must fail saying so - which rank,
# what it published, what this one publishes - not that rank 1 published
# no address; nothing hangs. Then a PTL_TEST_INFO_LEN out of range is said
# and ignored (a job that runs clean).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
prog=$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_api
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
"$PTL_TOP_BUILDDIR/tools/ptlrun" -n 2 --timeout 60 sh -c \
	'[ "$PTL_RT_RANK" = 1 ] && export PTL_TEST_INFO_LEN=8; exec "$0"' "$prog" >"$out" 2>&1
rc=$?
cat "$out"
if [ "$rc" = 0 ]; then
	echo "version.sh: a job of two versions ran"
	exit 1
fi
for r in 0 1; do
	want="ptl: rank $r: rank 1 published 8 bytes of rank info where this libptl publishes 16: another version of libptl (every rank of a job must run the same)"
	if ! grep -qF "$want" "$out"; then
		echo "version.sh: not said: $want"
		exit 1
	fi
done
if grep -q "published no address" "$out"; then
	echo "version.sh: a rank of another version was called addressless"
	exit 1
fi
PTL_TEST_INFO_LEN=17 "$PTL_TOP_BUILDDIR/tools/ptlrun" -n 2 --timeout 60 "$prog" >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" = 0 ] || exit "$rc"
for r in 0 1; do
	want="ptl: rank $r: PTL_TEST_INFO_LEN=17 is not 1 to 16: ignored"
	n=$(grep -cF "$want" "$out")
	if [ "$n" != 1 ]; then
		echo "version.sh: said $n times, want once: $want"
		exit 1
	fi
done
echo "version.sh: a job of two versions fails saying so; a bad PTL_TEST_INFO_LEN is said and ignored"
