#!/bin/sh
# Instructions lib/ptl spends per message and per poll (callgrind), on an
# 8-byte ping-pong over shm between 2 pinned ranks: a count, not a time, so
# it holds on a loaded host where wall-clock A/B runs do not. Rank 0's
# figures (rank 1's are alike):
#   put     PtlPutRegion per call, and of that the NAL's send
#   recv    ptl_recv per message (target side: match, deposit, events)
#   pass    one pass of a waiting PtlEQPoll, lib/ptl's part and the NAL's
#           (what a pass costs besides the poll, over all passes of all
#           waits: each wait's entry and exit included)
# With --mpi SIZE, the same of bench/mpi_pingpong.c (SIZE bytes) built
# against ptl's MPI, and a posted receive's PtlMEInsert + PtlMDAttach +
# PtlMDUpdate, its auto-unlink and PtlEQGet per call (a few hundred calls
# in a run, from MPI_Init, the barriers and MPI_Finalize: most find the
# queue empty and make a progress pass, which the figure includes; the
# ping-pong's events are PtlEQPoll's). Its slow-core probes are off
# (PTL_BENCH_SLOW=off): their MPI_Allreduce calls would be counted too.
# With --mpi-bw SIZE, the instructions per message of windows of 32
# MPI_Isend/MPI_Irecv + MPI_Waitall (bench/mpi_pingpong.c's streaming
# rows) on each rank: copies, polls (PtlEQPoll and PtlEQGet - the takes
# of events and the passes - less the arrivals they processed) and the
# rest, with the calls they go to.
#
#   bench/ptl_pingpong_cost.sh [--mpi SIZE | --mpi-bw SIZE]   (from the build tree)
set -u
B=$(cd "$(dirname "$0")/.." && pwd)
S=${PTL_TOP_SRCDIR:-$B}
command -v valgrind >/dev/null 2>&1 || { echo "ptl_pingpong_cost: needs valgrind" >&2; exit 77; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
if [ "${1:-}" = --mpi-bw ]; then
	size=${2:-4096} windows=${PTL_COST_WINDOWS:-200}
	cat >"$W/stream.c" <<'EOF'
#include <mpi.h>
#include <stdlib.h>
#define WINDOW 32
static char sbuf[1 << 20], rbuf[1 << 20];
/* Counted (--toggle-collect): the windows and nothing else. */
__attribute__((noinline)) void stream_windows(int rank, int len, int n)
{
	MPI_Request req[WINDOW];
	for (int k = 0; k < n; k++) {
		for (int w = 0; w < WINDOW; w++) {
			if (rank == 0)
				MPI_Isend(sbuf, len, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &req[w]);
			else
				MPI_Irecv(rbuf, len, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &req[w]);
		}
		MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
		if (rank == 0)
			MPI_Recv(rbuf, 0, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else
			MPI_Send(sbuf, 0, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
	}
}
int main(int argc, char **argv)
{
	int rank, len = atoi(argv[1]), n = atoi(argv[2]);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (len > (int)sizeof sbuf)
		len = (int)sizeof sbuf;
	stream_windows(rank, len, n);
	MPI_Finalize();
	return 0;
}
EOF
	PTLCC_CC=${CC:-} "$B/tools/ptlcc" -O2 -o "$W/stream" "$W/stream.c" || exit 1
	LD_LIBRARY_PATH="$B/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		"$B/tools/ptlrun" -n 2 --bind-to core --timeout 900 \
		valgrind --tool=callgrind --collect-atstart=no --toggle-collect=stream_windows \
		--callgrind-out-file="$W/cg.%p" "$W/stream" "$size" "$windows" >/dev/null 2>&1 || exit 1
	msgs=$((windows * 32))
	echo "$size B, $windows windows of 32, instructions per message:"
	for f in "$W"/cg.*; do
		callgrind_annotate --inclusive=yes --tree=caller --threshold=100 "$f" 2>/dev/null >"$f.tree"
		# Rank 0 is the one that calls MPI_Isend.
		if grep -q ':PMPI_Isend ' "$f.tree"; then r=0; else r=1; fi
		awk -v rank=$r -v msgs=$msgs '
		/^ *[0-9,]+ .* < / {
			c = $0; sub(/.*\(/, "", c); sub(/x\).*/, "", c); gsub(/,/, "", c)
			v = $1; gsub(/,/, "", v); calls += c; cost += v
			next
		}
		/^ *[0-9,]+ .* \* / {
			n = $0; sub(/ \[.*/, "", n)
			if (n !~ /\.h:/) { sub(/.*:/, "", n); incl[n] += cost; ncalls[n] += calls }
			calls = 0; cost = 0
			next
		}
		/^$/ { calls = 0; cost = 0 }
		function m(n) { return incl[n] / msgs }
		END {
			copy = 0
			for (n in incl)
				if (n ~ /^(__memcpy|__memmove|memcpy|memmove|shm_nt_copy)/)
					copy += incl[n]
			# Waiting: PtlEQPoll and PtlEQGet (the take of an event, or a
			# pass that finds none; MPI_Waitall takes the queued events
			# of a window with PtlEQGet) and their passes, less what they did
			# besides polling - the arrivals (ptl_recv) and the puts
			# queued for room (backlogs) - which vary with how far one
			# rank runs ahead of the other, not with the code.
			poll = incl["PtlEQPoll"] + incl["PtlEQGet"] - incl["ptl_recv"] - incl["ptl_flush_backlogs"]
			printf "rank %d  all %.0f = copies %.0f + polls %.0f (%.2f passes; takes: %.2f PtlEQPoll, %.2f PtlEQGet) + the rest %.0f\n", rank,
			       m("stream_windows"), copy / msgs, poll / msgs, ncalls["ptl_progress_app"] / msgs,
			       ncalls["PtlEQPoll"] / msgs, ncalls["PtlEQGet"] / msgs, (incl["stream_windows"] - copy - poll) / msgs
			if (rank == 0)
				printf "rank 0  MPI_Isend %.0f (%.0f besides PtlPutRegion), MPI_Waitall %.0f, MPI_Recv %.0f; PtlPutRegion %.0f (shm_send %.0f)\n",
				       m("PMPI_Isend"), m("PMPI_Isend") - m("PtlPutRegion"), m("PMPI_Waitall"), m("PMPI_Recv"),
				       m("PtlPutRegion"), m("shm_send")
			else
				printf "rank 1  MPI_Irecv %.0f (%.0f besides PtlMDUpdate), MPI_Waitall %.0f, MPI_Send %.0f; ptl_recv %.0f, PtlMDUpdate %.0f\n",
				       m("PMPI_Irecv"), m("PMPI_Irecv") - m("PtlMDUpdate"), m("PMPI_Waitall"), m("PMPI_Send"),
				       m("ptl_recv"), m("PtlMDUpdate")
		}' "$f.tree"
		printf "rank %d  top:" $r
		callgrind_annotate --auto=no "$f" 2>/dev/null | awk -v msgs=$msgs '
			/^ *[0-9,]+ .*:/ && !/PROGRAM TOTALS/ {
				v = $1; gsub(/,/, "", v); n = $0; sub(/ \[.*/, "", n); sub(/.*:/, "", n)
				if (n ~ /(memcpy|memmove|shm_nt_copy|stream_windows)/) next
				self[n] += v
			}
			END {
				for (k = 0; k < 12; k++) {
					best = ""
					for (n in self) if (best == "" || self[n] > self[best]) best = n
					if (best == "") break
					printf " %s %.0f", best, self[best] / msgs
					delete self[best]
				}
			}'
		echo
	done
	exit 0
fi
if [ "${1:-}" = --mpi ]; then
	size=${2:-2048}
	PTLCC_CC=${CC:-} "$B/tools/ptlcc" -O2 -o "$W/mpi_pp" "$S/bench/mpi_pingpong.c" || exit 1
	set -- "$W/mpi_pp" 5 sizes "$size"
else
	set -- "$B/bench/.libs/ptl_pingpong" --max-lat 8 --max-bw 0 --iters 5000 1
fi
LD_LIBRARY_PATH="$B/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$B/tools/ptlrun" -n 2 --bind-to core --timeout 900 -x PTL_BENCH_SLOW=off \
	valgrind --tool=callgrind --callgrind-out-file="$W/cg.%p" "$@" >/dev/null 2>&1 || exit 1
f=$(ls "$W"/cg.* | head -1)
# Inclusive cost and calls of every function, from callgrind_annotate's
# caller tree: a block lists the callers ("<": the cost of their calls and
# how many), then the function ("*"). Its own "*" cost is not used: where
# the debug information names a function's file two ways, callgrind splits
# it in two entries. Blocks of code inlined from a header (".h:") skip.
callgrind_annotate --inclusive=yes --tree=caller --threshold=100 "$f" 2>/dev/null | awk '
	/^ *[0-9,]+ .* < / {
		c = $0; sub(/.*\(/, "", c); sub(/x\).*/, "", c); gsub(/,/, "", c)
		v = $1; gsub(/,/, "", v)
		calls += c; cost += v
		if ($0 ~ /:ptl_progress(_app)? /) # the NAL polled by a pass
			from_app += v
		next
	}
	/^ *[0-9,]+ .* \* / {
		n = $0; sub(/ \[.*/, "", n)
		if (n !~ /\.h:/) {
			sub(/.*:/, "", n)
			incl[n] += cost; ncalls[n] += calls; app[n] += from_app
		}
		calls = 0; cost = 0; from_app = 0
		next
	}
	/^$/ { calls = 0; cost = 0; from_app = 0 }
	function per(n) { return ncalls[n] ? incl[n] / ncalls[n] : 0 }
	END {
		nal = app["shm_progress"]; send = per("shm_send")
		passes = ncalls["ptl_progress_app"]
		printf "put   PtlPutRegion %.0f (lib/ptl %.0f, shm_send %.0f)\n", per("PtlPutRegion"), per("PtlPutRegion") - send, send
		printf "recv  ptl_recv %.0f\n", per("ptl_recv")
		if (passes)
			printf "pass  lib/ptl %.0f, shm %.0f (%d passes, %d waits)\n", (incl["PtlEQPoll"] - nal) / passes,
			       (nal - incl["ptl_recv"]) / passes, passes, ncalls["PtlEQPoll"]
		if (ncalls["PtlMDUpdate"] > 1000)
			printf "post  PtlMEInsert %.0f + PtlMDAttach %.0f + PtlMDUpdate %.0f = %.0f; auto-unlink %.0f; PtlEQGet %.0f\n",
			       per("PtlMEInsert"), per("PtlMDAttach"), per("PtlMDUpdate"),
			       per("PtlMEInsert") + per("PtlMDAttach") + per("PtlMDUpdate"), per("ptl_md_autounlink"), per("PtlEQGet")
	}'
