#!/bin/sh
# ptl's MPI against MPICH and Open MPI, interleaved (A B C A B C ...) so all
# see the same machine: ping-pong latency and streaming bandwidth
# (bench/mpi_pingpong.c) with 2 ranks pinned, and MPI_Allreduce
# (bench/mpi_allreduce.c) with 2 ranks pinned and with 4 ranks on the cores
# there are. Medians of the rounds' medians, [min-max], ratio = ptl / other.
#
#   bench/mpi_bench.sh [rounds] [trials-per-round]       (from the build tree)
set -u
B=$(cd "$(dirname "$0")/.." && pwd)
S=${PTL_TOP_SRCDIR:-$B}
ROUNDS=${1:-3}
TRIALS=${2:-3}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
PTLFLAGS="-I$S/include $B/lib/mpi-shim/.libs/libptlmpi.so -Wl,-rpath,$B/lib/mpi-shim/.libs:$B/lib/.libs"

impls=""
for p in pingpong allreduce; do
	${CC:-cc} -O2 -o "$W/ptl_$p" "$S/bench/mpi_$p.c" $PTLFLAGS || exit 1
done
impls="ptl"
if command -v mpicc.mpich >/dev/null 2>&1 && command -v mpiexec.hydra >/dev/null 2>&1; then
	mpicc.mpich -O2 -o "$W/mpich_pingpong" "$S/bench/mpi_pingpong.c" &&
	mpicc.mpich -O2 -o "$W/mpich_allreduce" "$S/bench/mpi_allreduce.c" && impls="$impls mpich"
fi
if command -v mpicc.openmpi >/dev/null 2>&1 && command -v mpirun.openmpi >/dev/null 2>&1; then
	mpicc.openmpi -O2 -o "$W/ompi_pingpong" "$S/bench/mpi_pingpong.c" &&
	mpicc.openmpi -O2 -o "$W/ompi_allreduce" "$S/bench/mpi_allreduce.c" && impls="$impls openmpi"
fi

# run IMPL NRANKS PROG: 2 ranks pinned to cores 0 and 1; more ranks unpinned
run() {
	bind=none; [ "$2" -le 2 ] && bind=core
	case $1 in
	ptl) "$B/tools/ptlrun" -n "$2" --bind-to $bind --timeout 900 "$W/ptl_$3" "$TRIALS" ;;
	mpich) mpiexec.hydra -n "$2" -bind-to $bind "$W/mpich_$3" "$TRIALS" ;;
	openmpi) mpirun.openmpi --allow-run-as-root --oversubscribe -n "$2" --bind-to $bind \
		--mca btl self,vader "$W/ompi_$3" "$TRIALS" ;;
	esac
}

for r in $(seq "$ROUNDS"); do
	for i in $impls; do
		run "$i" 2 pingpong | sed "s/^/$i 2 /" >> "$W/all" || echo "mpi_bench.sh: $i pingpong failed" >&2
		run "$i" 2 allreduce | sed "s/^/$i 2 /" >> "$W/all" || echo "mpi_bench.sh: $i allreduce failed" >&2
		run "$i" 4 allreduce | sed "s/^/$i 4 /" >> "$W/all" || echo "mpi_bench.sh: $i 4-rank allreduce failed" >&2
	done
done

echo "# ptl MPI vs MPICH / Open MPI: $ROUNDS interleaved rounds x $TRIALS trials; $(uname -r), $(nproc) cores"
echo "# medians of per-round medians [min-max]; lat/allreduce in us, bw in GB/s; ratio = ptl / other"
awk -v impls="$impls" '
{ key = $1 " " $2 " " $3 " " $4; n[key]++; val[key, n[key]] = $5
  if (!(key in lo) || $6 < lo[key]) lo[key] = $6
  if (!(key in hi) || $7 > hi[key]) hi[key] = $7
  row = $2 " " $3 " " $4; if (!(row in seen)) { seen[row] = 1; order[++no] = row } }
function med(key,   i, j, t, m, a) { m = n[key]; for (i = 1; i <= m; i++) a[i] = val[key, i]
  for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return a[int((m + 1) / 2)] }
END {
  k = split(impls, im, " ")
  hdr = sprintf("%-2s %-9s %9s", "n", "figure", "bytes"); for (i = 1; i <= k; i++) hdr = hdr sprintf("  %-24s", im[i])
  for (i = 2; i <= k; i++) hdr = hdr sprintf("  ptl/%-7s", im[i]); print hdr
  for (o = 1; o <= no; o++) {
    split(order[o], f, " ")
    line = sprintf("%-2s %-9s %9s", f[1], f[2], f[3])
    for (i = 1; i <= k; i++) { key = im[i] " " order[o]
      if (key in n) line = line sprintf("  %8.3f [%.3f-%.3f]", med(key), lo[key], hi[key]); else line = line sprintf("  %-24s", "-") }
    for (i = 2; i <= k; i++) { a = "ptl " order[o]; b = im[i] " " order[o]
      if ((a in n) && (b in n) && med(b) > 0) line = line sprintf("  %8.2fx  ", med(a) / med(b)); else line = line sprintf("  %-11s", "-") }
    print line } }' "$W/all"
