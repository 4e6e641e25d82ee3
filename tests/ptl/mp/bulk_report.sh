#!/bin/sh
# PTL_SHM_BULK_REPORT=1: at teardown each rank says on stderr how shm's
# bulk moves went, per peer and size class (the chooser's pick, each
# method's timed moves and median cost), or why nothing was chosen;
# without it, nothing. mp_bulk's moves: rank 1 reads 64 KiB (class 2:
# 64K-128K), 1 MiB, 16 MiB (class 7: 2M-) and pieces of other sizes from
# rank 0, which moves none; 32 KiB (class 1), and its 16 KiB messages go
# inline (class 0 none). Classes: below 32 KiB, then twice as wide.
set -u
: "${PTL_TOP_BUILDDIR:?run through make check (or set PTL_TOP_BUILDDIR)}"
case ${PTL_NAL:-shm} in
shm) ;;
*)	echo "bulk_report: shm's report, not run with PTL_NAL=$PTL_NAL"
	exit 77 ;;
esac
d=$(dirname "$0")
. "$d/../../job_output.sh"
. "$d/../../time_limit.sh"
err=$(mktemp)
trap 'rm -f "$err" "$err.out" "$err.all"' EXIT
fail() { echo "bulk_report: $*" >&2; sed 's/^/  /' "$err" >&2; exit 1; }
# job WHAT CMD...: runs the job CMD, its stderr's report lines in $err; one
# that fails fails the test, its output shown
job() {
	jw=$1
	shift
	"$@" >"$err.out" 2>"$err.all" || { job_output "$(cat "$err.out" "$err.all")"; : >"$err"; fail "$jw failed"; }
	grep '^ptl shm bulk: ' "$err.all" > "$err"
	rm -f "$err.out" "$err.all"
}
# run ENV...: mp_bulk on 2 ranks
run() { job "mp_bulk ($*)" env "$@" "$d/run.sh" 2 mp_bulk; }
m='[0-9][0-9]*:[0-9][0-9]*'
line="pick [a-z]* switches [0-9][0-9]* bounce $m cma $m nt $m\$"

run PTL_SHM_BULK_REPORT=1
if grep -Eq '^ptl shm bulk: rank 1 mode bounce \(crowded\)$' "$err"; then
	# 2 ranks on fewer CPUs (a 1-CPU runner, taskset): nothing is chosen
	grep -q ' class ' "$err" && fail "crowded: classes reported (nothing was chosen)"
	run
	[ -s "$err" ] && fail "reported without PTL_SHM_BULK_REPORT"
	exit 0
fi
for k in "2 64K-128K" "7 2M-"; do
	grep -q "^ptl shm bulk: rank 1 peer 0 class $k $line" "$err" || fail "no line for class $k"
done
# each class line names its own class's sizes
awk '$8 == "class" { split("0-32K 32K-64K 64K-128K 128K-256K 256K-512K 512K-1M 1M-2M 2M-", nm, " ");
	if ($10 != nm[$9 + 1]) bad = 1 } END { exit bad }' "$err" || fail "a class named wrongly"
# every move timed: 1 + 1 + 2 at least (warm-up moves too)
awk '$5 == 1 && $8 == "class" && $9 >= 1 { for (i = 16; i <= NF; i += 2) { split($i, v, ":"); t += v[1] } }
	END { exit !(t >= 4) }' "$err" || fail "fewer than 4 timed moves of 32 KiB and up"
grep -q '^ptl shm bulk: rank 0 mode none (no moves)$' "$err" || fail "rank 0 (no moves) did not say so"
grep -q ' class 0 ' "$err" && fail "a move below 32 KiB: 16 KiB payloads go inline (nal.h's NAL_HDR_ROOM)"
[ "$(grep -c . "$err")" -le 9 ] || fail "more lines than classes"

run PTL_SHM_BULK_REPORT=1 PTL_SHM_CMA=0
grep -q "^ptl shm bulk: rank 1 peer 0 class 7 2M- $line" "$err" || fail "PTL_SHM_CMA=0: no line for class 7"
grep -v ' mode ' "$err" | grep -qv ' cma 0:0 ' && fail "PTL_SHM_CMA=0: a CMA move reported"
grep -q ' pick cma ' "$err" && fail "PTL_SHM_CMA=0: CMA picked"
grep -q ' class 0 ' "$err" && fail "PTL_SHM_CMA=0: a move below 32 KiB (16 KiB payloads go inline)"

run PTL_SHM_BULK_REPORT=1 PTL_SHM_CMA=1
grep -q '^ptl shm bulk: rank 1 mode cma (PTL_SHM_CMA=1)$' "$err" || fail "PTL_SHM_CMA=1: not said"
grep -q ' class ' "$err" && fail "PTL_SHM_CMA=1: classes reported (nothing was chosen)"

run
[ -s "$err" ] && fail "reported without PTL_SHM_BULK_REPORT"

# A stream of 4 KiB puts (bench/ptl_pingpong's bandwidth row, when the
# tree built it): the sender says which copy its streamed sends took to
# the peer, the receiver, which streamed nothing, says nothing of it
pp=$PTL_TOP_BUILDDIR/bench/ptl_pingpong
if [ -x "$pp" ]; then
	job ptl_pingpong env PTL_SHM_BULK_REPORT=1 "$PTL_TOP_BUILDDIR/tools/ptlrun" -n 2 --timeout "$(job_timeout 60)" "$pp" \
		--max-lat 8 --max-bw 4096 2
	grep -q "^ptl shm bulk: rank 0 peer 1 stream pick [a-z]* switches [0-9][0-9]* plain $m nt $m\$" "$err" ||
		fail "no stream line for the 4 KiB puts"
	grep -q '^ptl shm bulk: rank 1 peer 0 stream ' "$err" && fail "a stream line from the receiver"
	# its runs counted (32 streamed sends each; the row sends ~24,000)
	awk '$8 == "stream" { split($14, a, ":"); split($16, b, ":"); n += a[1] + b[1] } END { exit !(n >= 1) }' "$err" ||
		fail "no run of streamed sends counted"
fi
exit 0
