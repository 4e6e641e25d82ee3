#!/bin/sh
# trace_overhead.sh: the tracer's cost per MPI call (ns), untraced and
# traced ping-pong in the same run. Run from the build tree after `make
# check` built bench/trace_pingpong:  sh bench/trace_overhead.sh [ITERS]
B=$(cd "${PTL_TOP_BUILDDIR:-.}" && pwd)
PRELOAD=$B/tracer/.libs/libptltrace-mpich.so
export UCX_TLS=${UCX_TLS:-self,sm,tcp}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for depth in 1 4; do
	echo "== call-site signature depth $depth (PTL_TRACE_DEPTH)"
	(cd "$tmp" && timeout 300 env LD_PRELOAD="$PRELOAD" PTL_TRACE_DEPTH=$depth PTL_TRACE_OUT="$tmp/t" \
		mpiexec.hydra -n 2 "$B/bench/trace_pingpong" "${1:-20000}" 10)
done
echo "== trace of the ping-pong"
"$B/tools/ptltool" trace stats "$tmp/t" | sed -n '/events represented/p;/compressed bytes/p'
