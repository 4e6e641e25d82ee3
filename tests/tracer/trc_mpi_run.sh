#!/bin/sh
# trc_mpi_run.sh PROGRAM ITERS [RANKS...]: record PROGRAM under the tracer
# at each job size; check that the merged trace expands, rank by rank, to
# exactly the flat dump of the same run; replay the trace under the tracer
# and check that `ptltool trace diff` calls the two traces equal.
. "$(dirname "$0")/trc_mpi_common.sh"
prog=$1
iters=$2
shift 2
sizes=${*:-1 2 4 8}
for n in $sizes; do
	d=$WORK/$prog.$n
	mkdir -p "$d"
	if ! (cd "$d" && limited "$RUN_TIMEOUT" env LD_PRELOAD="$PRELOAD" PTL_TRACE_OUT="$d/trace" \
		PTL_TRACE_FLAT="$d/flat" "$MPIEXEC" -n "$n" "$PROGS/$prog" "$iters" $TRC_PROG_ARGS >"$d/out" 2>&1); then
		jobfail "$prog -n $n: run failed" "$d/out"; continue
	fi
	test -s "$d/trace" || { jobfail "$prog -n $n: no trace written" "$d/out"; continue; }
	r=0
	while [ $r -lt "$n" ]; do
		limited "$PROGRAM_LIMIT" "$PTLTOOL" trace expand "$d/trace" --rank $r >"$d/exp.$r" || fail "$prog -n $n: expand rank $r"
		limited "$PROGRAM_LIMIT" "$PTLTOOL" trace expand "$d/flat.$r" >"$d/dump.$r" || fail "$prog -n $n: reading flat dump $r"
		test -s "$d/dump.$r" || fail "$prog -n $n: empty flat dump of rank $r"
		if ! cmp -s "$d/exp.$r" "$d/dump.$r"; then
			fail "$prog -n $n: rank $r: expand(trace) differs from the flat dump"
			diff "$d/exp.$r" "$d/dump.$r" | head -5
		fi
		r=$((r + 1))
	done
	limited "$PROGRAM_LIMIT" "$PTLTOOL" trace stats "$d/trace" >"$d/stats" || fail "$prog -n $n: stats"
	bytes=$(sed -n 's/^compressed bytes: *//p' "$d/stats")
	events=$(sed -n 's/^events represented: *//p' "$d/stats")
	echo "$prog -n $n: $events events, merged trace $bytes bytes"
	[ -n "$TRC_SIZES" ] && echo "$n $bytes" >>"$TRC_SIZES"
	# replay round trip
	if ! (cd "$d" && limited "$RUN_TIMEOUT" env LD_PRELOAD="$PRELOAD" PTL_TRACE_OUT="$d/replay" \
		"$MPIEXEC" -n "$n" "$PTLREPLAY" "$d/trace" >"$d/rout" 2>&1); then
		jobfail "$prog -n $n: replay failed" "$d/rout"; continue
	fi
	limited "$PROGRAM_LIMIT" "$PTLTOOL" trace diff "$d/trace" "$d/replay" >"$d/diff" 2>&1 ||
		{ fail "$prog -n $n: replay round trip differs"; head -5 "$d/diff"; }
done
test $FAILS -eq 0
