#!/bin/sh
# ptl's MPI against MPICH and Open MPI, interleaved (A B C A B C ...) so all
# see the same machine: ping-pong latency 0 B - 4 MiB and streaming bandwidth
# (bench/mpi_pingpong.c) with 2 ranks pinned, the 8-byte half round trip
# with 0 and 20,000 unexpected messages of another tag queued (uxlat:
# MPI_Recv, uxpost: MPI_Irecv then MPI_Wait), and MPI_Allreduce 8 B - 1 MiB
# (bench/mpi_allreduce.c) with 2 ranks pinned and with 4 ranks on the cores
# there are. Medians of the rounds' medians, [min-max], ratio = ptl / other.
#
# Then ptl's allreduce once per algorithm (PTL_COLL_ALGO=ring, ring_bidir,
# halving_doubling, tree, recursive_doubling; in the same rounds) beside
# what the cost model (collectives/coll_cost.c, through ptltool coll)
# predicts for it. Every parameter comes from its own measurement in this
# run (ptl's, 2 ranks, medians), none from the allreduce rows it predicts:
#   o      CPU per message: mpi_allreduce's "overhead" (send and receive
#          of 64 messages that do not wait on the wire)
#   alpha  mpi_allreduce's 8-byte half round trip ("pingpong", in the
#          same processes as the rows) less 2 o (a ping-pong pays o twice)
#   beta   (1 MiB - 64 KiB) over the difference of their half round trips
#          (mpi_allreduce's "pingpong", both above the eager limit: the
#          rendezvous, whose copy is the only part that grows)
#   rndv   the 64 KiB half round trip less 64 KiB/beta and what the model
#          gives it without (3 alpha + 3 o: header, request, reply): the
#          sender's CPU per rendezvous (buffer exposed, get served, the
#          copy's system call)
#   gamma  adding two vectors of doubles ("gamma")
#   call   per call: an MPI_Barrier less what the model gives it without a
#          call term, plus MPI_Allreduce on MPI_COMM_SELF at the same size
#          (the checks and the copy of the input before any schedule; up
#          to 4 KiB recursive doubling reads the input where it is, so its
#          8-byte call: the checks alone)
#   acked sends  ptl's MPI finishes a send of more than 1024 B on the
#          receiver's ACK (o at each end and the 2-rank alpha, also on
#          shared cores); up to 1024 B at once (none with PTL_MPI_NOACK_OFF)
#   rendezvous  above the eager limit (PTL_MPI_EAGER_LIMIT, 8192 B) a send
#          is a header, the receiver's get, and the copy on the sender's
#          CPU (on shm the rank that serves a get copies), so the copy
#          takes turns with that rank's reductions: --rndv-min
#   ranks per core  the run's ranks over nproc; with more ranks than cores
#          the latency is mostly waiting for the peer to get a core, so
#          alpha there is solved from the same run's barrier on as many ranks
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
	ptl) "$B/tools/ptlrun" -n "$2" --bind-to $bind --timeout 900 "$W/ptl_$3" "$TRIALS" ${4:-} ;;
	mpich) mpiexec.hydra -n "$2" -bind-to $bind "$W/mpich_$3" "$TRIALS" ${4:-} ;;
	openmpi) mpirun.openmpi --allow-run-as-root --oversubscribe -n "$2" --bind-to $bind \
		--mca btl self,vader "$W/ompi_$3" "$TRIALS" ${4:-} ;;
	esac
}

# ring_bidir needs two ports per rank to be itself (else it is the ring)
ports_of() { [ "$1" = ring_bidir ] && echo 2 || echo 1; }

for r in $(seq "$ROUNDS"); do
	for i in $impls; do
		run "$i" 2 pingpong | sed "s/^/$i 2 /" >> "$W/all" || echo "mpi_bench.sh: $i pingpong failed" >&2
		run "$i" 2 pingpong ux | sed "s/^/$i 2 /" >> "$W/all" || echo "mpi_bench.sh: $i pingpong ux failed" >&2
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
awk '$3 == "lat" || $3 == "uxlat" || $3 == "uxpost" || $3 == "bw" || $3 == "allreduce"' "$W/all" | awk -v impls="$impls" '
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
# cal N FIG BYTES: median of ptl's calibration figure over all its N-rank runs
cal() {
	awk -v n="$1" -v f="$2" -v b="$3" '(FILENAME ~ /algo$/ || $1 == "ptl") && $2 == n && $3 == f && $4 == b { print $5 }' \
		"$W/all" "$W/algo" 2>/dev/null | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
# predict ARGS...: the model's time in us (ptltool coll --json)
predict() {
	"$B/tools/ptltool" coll "$@" --json 2>/dev/null | sed -n 's/.*"predicted_us": \([0-9.e+-]*\).*/\1/p'
}
calc() { awk "BEGIN { v = $1; printf \"%.6g\", v }"; }
hrt=$(cal 2 pingpong 8)
gamma=$(cal 2 gamma 0)
o=$(cal 2 overhead 8)
bar2=$(cal 2 barrier 0)
[ -s "$W/algo" ] && [ -n "$hrt" ] && [ -n "$gamma" ] && [ -n "$o" ] && [ -n "$bar2" ] || exit 0
alpha=$(calc "$hrt - 2 * $o > 0.001 ? $hrt - 2 * $o : 0.001")
pp64k=$(cal 2 pingpong 65536)
pp1m=$(cal 2 pingpong 1048576)
[ -n "$pp64k" ] && [ -n "$pp1m" ] || exit 0
beta=$(awk -v a="$pp64k" -v l="$pp1m" 'BEGIN { d = l - a; if (d <= 0) d = l; printf "%.0f", (1048576 - 65536) / (d * 1e-6) }')
rndv=$(calc "$pp64k - 65536 / $beta * 1e6 - 3 * $alpha - 3 * $o")
rndv=$(calc "$rndv > 0 ? $rndv : 0")
eager=${PTL_MPI_EAGER_LIMIT:-8192}
b0=$(predict --op barrier --ranks 2 --bytes 0 --alpha "$alpha" --beta "$beta" --overhead "$o")
callb=$(calc "$bar2 - $b0 > 0 ? $bar2 - $b0 : 0")
cores=$(nproc)
noack=1024; [ -n "${PTL_MPI_NOACK_OFF:-}" ] && noack=0
echo
echo "# predicted (collectives/coll_cost.c via ptltool coll) vs measured ptl allreduce, us; ratio = predicted / measured"
echo "# calibration from this run (2 ranks, a core each): o $o us/message; alpha $alpha us ($hrt us 8 B half round trip - 2 o);"
echo "#   beta $beta B/s (ping-pong 1 MiB - 64 KiB); rendezvous above $eager B, $rndv us each (64 KiB ping-pong - bytes/beta - 3 alpha - 3 o); gamma $gamma ns/B; call $callb us (barrier $bar2 us - model's $b0 us) + MPI_COMM_SELF allreduce of the size;"
bc8=$(cal 2 bcast 8)
bc1m=$(cal 2 bcast 1048576)
[ -n "$bc8" ] && [ -n "$bc1m" ] &&
	echo "#   acked sends. For comparison with beta: a 2-rank MPI_Bcast (1 MiB - 8 B) moves $(calc "1048568 / (($bc1m - $bc8) * 1e-6)") B/s"
for n in 2 4; do
	eval "k$n=1 alpha$n=$alpha"
	[ "$n" -gt "$cores" ] || continue
	k=$(calc "$n / $cores")
	barn=$(cal "$n" barrier 0)
	[ -n "$barn" ] || continue
	# the barrier's time is linear in alpha: solve it for this sharing
	p0=$(predict --op barrier --ranks "$n" --bytes 0 --alpha 0 --beta "$beta" --overhead "$o" --call "$callb" --ranks-per-core "$k")
	p1=$(predict --op barrier --ranks "$n" --bytes 0 --alpha 1 --beta "$beta" --overhead "$o" --call "$callb" --ranks-per-core "$k")
	an=$(calc "($barn - $p0) / ($p1 - $p0)")
	an=$(calc "$an > $alpha ? $an : $alpha")
	eval "k$n=$k alpha$n=$an"
	echo "# $n ranks on $cores cores: $k ranks per core (o, gamma, call, copies x $k); alpha $an us from the $n-rank barrier ($barn us)"
done
printf '%-2s %-18s %9s  %10s  %10s  %7s  %s\n' n algorithm bytes predicted measured ratio "within 10%"
for a in $ALGOS; do
	for n in 2 4; do
		eval "k=\$k$n an=\$alpha$n"
		for bytes in $(awk -v k="$a $n allreduce" 'index($0, k " ") == 1 { print $4 }' "$W/algo" | sort -nu); do
			m=$(med "$W/algo" "$a" "$n" allreduce "$bytes")
			self=$(cal 2 self "$bytes")
			# up to 4 KiB ptl's MPI runs recursive doubling directly on
			# the input (no copy first; coll.h's req.input): the call
			# is then the checks alone, MPI_COMM_SELF's 8-byte call
			apart=
			if [ "$a" = recursive_doubling ] && [ "$bytes" -le 4096 ]; then
				apart=--input
				self=$(cal 2 self 8)
			fi
			call=$(calc "$callb + ${self:-0}")
			p=$(predict --op allreduce --ranks "$n" --bytes "$bytes" --elem 8 --algo "$a" --ports "$(ports_of "$a")" $apart \
				--alpha "$an" --beta "$beta" --gamma "$gamma" --overhead "$o" --call "$call" --ranks-per-core "$k" \
				--acked-sends="$alpha" --noack-max "$noack" --rndv-min "$eager" --rndv-cost "$rndv")
			awk -v n="$n" -v a="$a" -v b="$bytes" -v m="$m" -v p="${p:-0}" 'BEGIN {
				r = 0; if (m > 0) r = p / m
				printf "%-2s %-18s %9s  %10.3f  %10.3f  %6.2fx  %s\n", n, a, b, p, m, r, (r > 1.1 || r < 0.9) ? "no" : "yes" }'
		done
	done
done > "$W/table"
cat "$W/table"
awk '{ n[$1]++; if ($NF == "yes") y[$1]++ } END { for (k in n) printf "# %s ranks: %d of %d rows within 10%%\n", k, y[k], n[k] }' "$W/table" | sort
