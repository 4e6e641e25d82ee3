#!/bin/sh
# The replay round trip on ptl's own MPI, no MPICH: record a program under
# ptlrun (PTL_TRACE_OUT), replay the trace with tools/ptlreplay under
# ptlrun while recording again, and check that `ptltool trace diff` calls
# the two traces equal (it ignores timing); replay the replay's trace once
# more for a second generation. A trace of a different run must differ.
: "${PTL_TOP_BUILDDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
B=$PTL_TOP_BUILDDIR
PTLRUN=$B/tools/ptlrun
PTLTOOL=$B/tools/ptltool
PTLREPLAY=$B/tools/ptlreplay
PROGS=$B/tests/tracer/programs
. "$(dirname "$0")/../job_output.sh"
. "$(dirname "$0")/../time_limit.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/trc-ptl.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run DIR OUT N PROG ARGS...: PROG on N ranks, its trace in DIR/OUT
run() {
	d=$1 out=$2 n=$3; shift 3
	(cd "$d" && limited "$(job_limit 120)" env PTL_TRACE_OUT="$d/$out" "$PTLRUN" -n "$n" --timeout 120 "$@" \
		>"$d/$out.log" 2>&1) ||
		{ fail "ptlrun -n $n $*: exit $?"; job_output "$(cat "$d/$out.log")"; return 1; }
	test -s "$d/$out" || { fail "ptlrun -n $n $*: no trace in $d/$out"; return 1; }
}

same() {
	limited "$PROGRAM_LIMIT" "$PTLTOOL" trace diff "$1" "$2" >"$1.diff" 2>&1 ||
		{ fail "$3: traces differ"; head -5 "$1.diff"; }
}

for spec in "trc_ring 10 1 2 4" "trc_colls 3 2 4" "trc_stencil 3 4" "trc_misc 2 2 3" "trc_nbc 2 1 3 4"; do
	set -- $spec
	prog=$1 iters=$2; shift 2
	for n in "$@"; do
		d=$WORK/$prog.$n
		mkdir -p "$d"
		run "$d" trace "$n" "$PROGS/${prog}_ptl" "$iters" || continue
		run "$d" replay "$n" "$PTLREPLAY" "$d/trace" || continue
		same "$d/trace" "$d/replay" "$prog -n $n: record vs replay"
		run "$d" replay2 "$n" "$PTLREPLAY" "$d/replay" || continue
		same "$d/replay" "$d/replay2" "$prog -n $n: replay vs replay of the replay"
		events=$(limited "$PROGRAM_LIMIT" "$PTLTOOL" trace stats "$d/trace" | sed -n 's/^events represented: *//p')
		echo "$prog -n $n: $events events, replayed twice, traces equal"
	done
done

# persistent requests: each MPI_Startall is recorded as the Irecv/Isend it
# starts (12 iterations x 2 neighbours on a 2x2 grid), so the replay posts
# the same operations
d=$WORK/persist
mkdir -p "$d"
if run "$d" trace 4 "$PROGS/trc_stencil_ptl" 12 persist && run "$d" replay 4 "$PTLREPLAY" "$d/trace"; then
	before=$fails
	same "$d/trace" "$d/replay" "trc_stencil persist -n 4: record vs replay"
	starts=$(limited "$PROGRAM_LIMIT" "$PTLTOOL" trace show "$d/trace" | grep -c '^ *Isend dest')
	[ "$starts" -ge 1 ] || fail "trc_stencil persist: no Isend recorded for the starts"
	[ $fails -eq $before ] && echo "trc_stencil persist -n 4: starts recorded as Isend/Irecv, replayed, traces equal"
fi

# the comparison can fail: one more iteration is a different trace
d=$WORK/neg
mkdir -p "$d"
if run "$d" a 2 "$PROGS/trc_ring_ptl" 3 && run "$d" b 2 "$PROGS/trc_ring_ptl" 4; then
	limited "$PROGRAM_LIMIT" "$PTLTOOL" trace diff "$d/a" "$d/b" >/dev/null 2>&1 && fail "traces of 3 and 4 iterations called equal"
fi

[ $fails -eq 0 ] && echo "ptl replay round trip: all passed" || { echo "$fails failed"; exit 1; }
