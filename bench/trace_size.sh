#!/bin/sh
# trace_size.sh: merged trace size of the 2-D stencil (halo exchange with
# Isend/Irecv/Waitall, an Allreduce per step, a Bcast every tenth) against
# the job size and the iteration count, beside the flat dump of the same
# run. Run from the build tree after `make check`:
#     sh bench/trace_size.sh ["RANKS"] ["ITERATIONS"]
B=$(cd "${PTL_TOP_BUILDDIR:-.}" && pwd)
PRELOAD=$B/tracer/.libs/libptltrace-mpich.so
RANKS=${1:-2 4 8 16 32}
ITERS=${2:-100 1000 10000}
export UCX_TLS=${UCX_TLS:-self,sm,tcp}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%6s %7s %10s %12s %14s %8s\n' ranks iters events merged_B flat_dump_B ratio
for n in $RANKS; do
	for it in $ITERS; do
		rm -f "$tmp"/*
		(cd "$tmp" && timeout 900 env LD_PRELOAD="$PRELOAD" PTL_TRACE_OUT="$tmp/t" PTL_TRACE_FLAT="$tmp/flat" \
			mpiexec.hydra -n "$n" "$B/tests/tracer/programs/trc_stencil" "$it" >/dev/null) ||
			{ echo "$n ranks, $it iterations: run failed"; continue; }
		merged=$(wc -c <"$tmp/t")
		flat=$(cat "$tmp"/flat.* | wc -c)
		events=$("$B/tools/ptltool" trace stats "$tmp/t" | sed -n 's/^events represented: *//p')
		printf '%6d %7d %10d %12d %14d %8.0f\n' "$n" "$it" "$events" "$merged" "$flat" \
			"$(echo "$flat $merged" | awk '{print $1 / $2}')"
	done
done
