#!/bin/sh
# Portals put ping-pong against MPI ping-pong, interleaved (A B A B ...) so
# every implementation sees the same machine state, 2 ranks pinned to two
# cores. Prints medians, ranges and ratios (ptl / reference), beside the
# floors: a shared cache line crossing between the cores and memcpy.
#
#   bench/pingpong.sh [rounds] [trials-per-round]     (from the build tree)
set -u
B=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-3}
TRIALS=${2:-3}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT

impls="ptl"
if command -v mpicc.mpich >/dev/null 2>&1 && command -v mpiexec.hydra >/dev/null 2>&1; then
	mpicc.mpich -O2 -o "$W/mpich_pp" "$B/bench/mpi_pingpong.c" && impls="$impls mpich"
fi
if command -v mpicc.openmpi >/dev/null 2>&1 && command -v mpirun.openmpi >/dev/null 2>&1; then
	mpicc.openmpi -O2 -o "$W/ompi_pp" "$B/bench/mpi_pingpong.c" && impls="$impls openmpi"
fi

run() {
	case $1 in
	ptl) "$B/tools/ptlrun" -n 2 --bind-to core --timeout 600 "$B/bench/ptl_pingpong" "$TRIALS" ;;
	mpich) mpiexec.hydra -n 2 -bind-to core "$W/mpich_pp" "$TRIALS" ;;
	openmpi) mpirun.openmpi --allow-run-as-root -n 2 --bind-to core --mca btl self,vader "$W/ompi_pp" "$TRIALS" ;;
	esac
}

for r in $(seq "$ROUNDS"); do
	for i in $impls; do
		# (ptl_pingpong's "mean" lines are for bench/verbs_vm.sh; the MPI
		# ping-pong's "slow" line counts trials run again, not a row)
		run "$i" | sed -n "/^mean /d; /^slow /d; s/^/$i /p" >> "$W/all" || echo "pingpong.sh: the $i run failed" >&2
	done
done

echo "# ptl put ping-pong vs MPI ping-pong: $ROUNDS interleaved rounds x $TRIALS trials, 2 ranks on cores 0 and 1"
echo "# $(uname -r), $(nproc) cores; medians of the per-trial medians, [min-max]; ratio = ptl / reference"
# Median of each implementation's per-round medians, with overall ranges.
awk -v impls="$impls" '
{ key = $1 " " $2 " " $3; n[key]++; val[key, n[key]] = $4
  if (!(key in lo) || $5 < lo[key]) lo[key] = $5
  if (!(key in hi) || $6 > hi[key]) hi[key] = $6
  if (!(($2 " " $3) in seen)) { seen[$2 " " $3] = 1; order[++no] = $2 " " $3 } }
function med(key,   i, j, t, m, a) { m = n[key]; for (i = 1; i <= m; i++) a[i] = val[key, i]
  for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return a[int((m + 1) / 2)] }
END {
  k = split(impls, im, " ")
  hdr = sprintf("%-4s %9s", "", "bytes"); for (i = 1; i <= k; i++) hdr = hdr sprintf("  %-26s", im[i])
  for (i = 2; i <= k; i++) hdr = hdr sprintf("  ptl/%-8s", im[i]); print hdr
  for (o = 1; o <= no; o++) {
    split(order[o], f, " "); unit = f[1] == "lat" ? "us" : "GB/s"
    line = sprintf("%-4s %9s", f[1], f[2])
    for (i = 1; i <= k; i++) { key = im[i] " " order[o]
      if (key in n) line = line sprintf("  %7.3f %-4s [%.3f-%.3f]", med(key), unit, lo[key], hi[key]); else line = line sprintf("  %-26s", "-") }
    for (i = 2; i <= k; i++) { a = "ptl " order[o]; b = im[i] " " order[o]
      if ((a in n) && (b in n) && med(b) > 0) line = line sprintf("  %8.2fx   ", med(a) / med(b)); else line = line sprintf("  %-12s", "-") }
    print line } }' "$W/all"

if [ -x "$B/bench/shm_ring" ]; then
	echo "# floors on this machine (bench/shm_ring):"
	"$B/bench/shm_ring" 5 2>/dev/null | grep -E "cache line|memcpy (4096|16384) KiB" | sed 's/^/#   /'
fi
