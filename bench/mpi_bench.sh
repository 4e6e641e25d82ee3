#!/bin/sh
# ptl's MPI against MPICH and Open MPI, interleaved (A B C A B C ...) so all
# see the same machine: ping-pong latency 0 B - 4 MiB and streaming bandwidth
# (bench/mpi_pingpong.c) with 2 ranks pinned, and MPI_Allreduce 8 B - 1 MiB
# (bench/mpi_allreduce.c) with 2 ranks pinned and with 4 ranks on the cores
# there are. Medians of the rounds' medians, [min-max], ratio = ptl / other.
#
# Then ptl's allreduce once per algorithm (PTL_COLL_ALGO=ring, ring_bidir,
# halving_doubling, tree, recursive_doubling; in the same rounds) beside
# what the cost model (collectives/coll_cost.c, through ptltool coll)
# predicts for it, calibrated on this run's own figures: alpha = ptl's 8-byte
# half round trip, beta = 1 MiB over ptl's 1 MiB half round trip less alpha,
# gamma = the time per byte of adding two vectors of doubles here.
#
#   bench/mpi_bench.sh [rounds] [trials-per-round]       (from the build tree)
#   PTL_BENCH_ALGOS="ring tree" bench/mpi_bench.sh        (fewer algorithms)
set -u
B=$(cd "$(dirname "$0")/.." && pwd)
S=${PTL_TOP_SRCDIR:-$B}
ROUNDS=${1:-3}
TRIALS=${2:-3}
ALGOS=${PTL_BENCH_ALGOS:-ring ring_bidir halving_doubling tree recursive_doubling}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
PTLFLAGS="-I$S/include $B/lib/mpi-shim/.libs/libptlmpi.so -Wl,-rpath,$B/lib/mpi-shim/.libs:$B/lib/.libs"

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

# ring_bidir needs two ports per rank to be itself (else it is the ring)
ports_of() { [ "$1" = ring_bidir ] && echo 2 || echo 1; }

for r in $(seq "$ROUNDS"); do
	for i in $impls; do
		run "$i" 2 pingpong | sed "s/^/$i 2 /" >> "$W/all" || echo "mpi_bench.sh: $i pingpong failed" >&2
		run "$i" 2 allreduce | sed "s/^/$i 2 /" >> "$W/all" || echo "mpi_bench.sh: $i allreduce failed" >&2
		run "$i" 4 allreduce | sed "s/^/$i 4 /" >> "$W/all" || echo "mpi_bench.sh: $i 4-rank allreduce failed" >&2
	done
	for a in $ALGOS; do
		for n in 2 4; do
			PTL_COLL_ALGO=allreduce=$a PTL_COLL_PORTS=$(ports_of "$a") run ptl $n allreduce |
				sed "s/^/$a $n /" >> "$W/algo" || echo "mpi_bench.sh: ptl allreduce $a on $n ranks failed" >&2
		done
	done
done

# med FILE KEY...: median of the per-round medians of the rows that start with KEY
med() {
	f=$1; shift
	awk -v k="$*" 'index($0, k " ") == 1 { print $(NF - 2) }' "$f" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

echo "# ptl MPI vs MPICH / Open MPI: $ROUNDS interleaved rounds x $TRIALS trials; $(uname -r), $(nproc) cores"
echo "# medians of per-round medians [min-max]; lat/allreduce in us, bw in GB/s; ratio = ptl / other"
echo "# targets: lat <= MPICH, bw >= MPICH, allreduce <= Open MPI (lat, allreduce: ratio <= 1; bw: >= 1)"
grep -v ' gamma ' "$W/all" | awk -v impls="$impls" '
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
    print line } }'

# The cost model's prediction beside each algorithm's measured time.
alpha=$(med "$W/all" ptl 2 lat 8)
l1m=$(med "$W/all" ptl 2 lat 1048576)
gamma=$(med "$W/all" ptl 2 gamma 0)
[ -s "$W/algo" ] && [ -n "$alpha" ] && [ -n "$l1m" ] && [ -n "$gamma" ] || exit 0
beta=$(awk -v a="$alpha" -v l="$l1m" 'BEGIN { d = l - a; if (d <= 0) d = l; printf "%.0f", 1048576 / (d * 1e-6) }')
echo
echo "# predicted (collectives/coll_cost.c via ptltool coll) vs measured ptl allreduce, us; ratio = predicted / measured"
echo "# calibration from this run: alpha $alpha us (8 B half round trip), beta $beta B/s (1 MiB), gamma $gamma ns/B"
echo "# 4 ranks share 2 cores: the model assumes a core per rank, so expect it low there"
printf '%-2s %-18s %9s  %10s  %10s  %7s\n' n algorithm bytes measured predicted ratio
for a in $ALGOS; do
	for n in 2 4; do
		for bytes in $(awk -v k="$a $n allreduce" 'index($0, k " ") == 1 { print $4 }' "$W/algo" | sort -nu); do
			m=$(med "$W/algo" "$a" "$n" allreduce "$bytes")
			p=$("$B/tools/ptltool" coll --op allreduce --ranks "$n" --bytes "$bytes" --elem 8 --algo "$a" \
				--ports "$(ports_of "$a")" --alpha "$alpha" --beta "$beta" --gamma "$gamma" --json 2>/dev/null |
				sed -n 's/.*"predicted_us": \([0-9.e+-]*\).*/\1/p')
			awk -v n="$n" -v a="$a" -v b="$bytes" -v m="$m" -v p="${p:-0}" 'BEGIN {
				r = 0; if (m > 0) r = p / m
				off = ""; if (r > 1.1 || r < 0.9) off = "  (off by more than 10%)"
				printf "%-2s %-18s %9s  %10.3f  %10.3f  %6.2fx%s\n", n, a, b, m, p, r, off }'
		done
	done
done
