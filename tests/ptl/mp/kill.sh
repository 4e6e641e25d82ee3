#!/bin/sh
# A rank killed mid-job: ptlrun names it and the signal, exits 128+9, and
# no shared-memory object of the job (segment, views, EQ rings) is left.
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
if [ "${PTL_TEST_VALGRIND:-0}" = 1 ]; then
	echo "kill.sh: not run under valgrind (the kill is the test)"
	exit 77
fi
. "${PTL_TOP_SRCDIR:-$(dirname "$0")/../../..}/tests/own_shm.sh"
. "$(dirname "$0")/../../time_limit.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ptl-mp-kill.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ptl_job 60 -n 3 "$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_kill" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err"
fail=0
[ "$rc" -eq 137 ] || { echo "FAIL: ptlrun exited $rc, expected 137"; fail=1; }
grep -Eq '^ptlrun: rank 1 \(pid [0-9]+\) killed by signal 9 \(Killed\)$' "$tmp/err" ||
	{ echo "FAIL: ptlrun did not say that rank 1 was killed by signal 9"; fail=1; }
[ "$(grep -c '^jobid ' "$tmp/out")" -eq 3 ] || { echo "FAIL: not every rank started"; fail=1; }
job=$(sed -n 's/^jobid \([0-9a-f]*\) .*/\1/p' "$tmp/out" | head -1)
[ -n "$job" ] || { echo "FAIL: no job id"; fail=1; }
sleep 0.2
for f in /dev/shm/ptl."$job"*; do
	[ -e "$f" ] && { echo "FAIL: $f left behind"; fail=1; }
done
for pid in $(sed -n 's/.* pid \([0-9]*\)$/\1/p' "$tmp/out"); do
	for f in /dev/shm/ptl.view."$pid" /dev/shm/ptl.view."$pid".*; do
		[ -e "$f" ] && { echo "FAIL: $f left behind"; fail=1; }
	done
done
exit $fail
