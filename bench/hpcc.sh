#!/bin/sh
# hpcc.sh: the HPC Challenge benchmark (HPCC 1.5.0, the source Debian
# ships: HPL, PTRANS, MPI RandomAccess, MPI FFT, b_eff's ping-pong and
# ring latency and bandwidth) built unmodified against ptl's MPI
# (tools/ptlcc), MPICH and Open MPI, and run by each in turn, round after
# round: 2 ranks pinned (HPL's grid 1 x 2), then 4 ranks on 2 cores (2 x
# 2). Every run must pass HPCC's own checks (Success=1: HPL's residual,
# PTRANS, RandomAccess's errors, FFT's error); the figures print side by
# side, the median over the rounds, and "vs IMPL": ptl's cost against
# that reference's (ptl's time over theirs, or their rate over ptl's: below
# 1 ptl is ahead, either way).
#
#   bench/hpcc.sh [ROUNDS [N]]    (default 3 rounds, HPL's N 2000)
#
# PTL_HPCC_IMPLS (default "ptl mpich openmpi"), PTL_HPCC_RANKS (default
# "2 4"). Needs curl the first time (the source is kept in
# ~/.cache/ptl, scripts/debian-source.sh) and libblas-dev, which it
# installs when run as root. Open MPI 4 no longer declares MPI-1's
# MPI_Address and MPI_Type_struct, which HPL calls: its build maps them to
# MPI_Get_address and MPI_Type_create_struct (the same calls, by flags,
# not by editing the source); MPICH and ptl provide them.
set -u
B=$(cd "$(dirname "$0")/.." && pwd)
S=${PTL_TOP_SRCDIR:-$B}
. "$S/scripts/debian-source.sh"
ROUNDS=${1:-3}
N=${2:-2000}
IMPLS=${PTL_HPCC_IMPLS:-ptl mpich openmpi}
RANKS=${PTL_HPCC_RANKS:-2 4}
fail() { echo "hpcc.sh: $*" >&2; exit 1; }
case $ROUNDS$N in *[!0-9]* | '') fail "usage: bench/hpcc.sh [ROUNDS [N]]" ;; esac
[ -x "$B/tools/ptlcc" ] || fail "no tools/ptlcc: build ptl first (scripts/build.sh)"
if ! [ -e /usr/lib/x86_64-linux-gnu/libblas.so ] && ! ldconfig -p | grep -q 'libblas\.so '; then
	[ "$(id -u)" = 0 ] && apt-get install -y -q libblas-dev >/dev/null ||
		fail "needs libblas-dev (apt-get install libblas-dev)"
fi
tarball=$(debian_source main/h/hpcc hpcc_1.5.0.orig.tar.gz 0a6fef7ab9f3347e549fed65ebb98234feea9ee18aea0c8f59baefbe3cf7ffb8) || exit 1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# build IMPL CC [FLAGS]: HPCC in $W/IMPL with that compiler, HPL's
# makefile for a reference BLAS (its Linux_PII_FBLAS, paths filled in)
build() {
	mkdir -p "$W/$1" && tar -C "$W/$1" -xzf "$tarball" || return 1
	d=$W/$1/hpcc-1.5.0
	sed -e 's|^MPdir .*|MPdir =|' -e 's|^MPinc .*|MPinc =|' -e 's|^MPlib .*|MPlib =|' -e 's|^LAdir .*|LAdir =|' \
		-e 's|^LAlib .*|LAlib = -lblas|' -e "s|^CC  .*|CC = $2|" -e "s|^LINKER .*|LINKER = $2|" \
		-e "s|-O3 -funroll-loops -W -Wall|-O2 -fcommon ${3:-}|" \
		"$d/hpl/setup/Make.Linux_PII_FBLAS" >"$d/hpl/Make.bench" &&
		make -C "$d" arch=bench -j"$(nproc)" >"$W/$1.build.log" 2>&1 && [ -x "$d/hpcc" ] || {
		tail -20 "$W/$1.build.log" >&2
		echo "hpcc.sh: HPCC did not build with $1" >&2
		return 1
	}
}

impls=
for i in $IMPLS; do
	case $i in
	ptl) build ptl "$B/tools/ptlcc" && impls="$impls ptl" ;;
	mpich) command -v mpicc.mpich >/dev/null && command -v mpiexec.hydra >/dev/null &&
		build mpich mpicc.mpich && impls="$impls mpich" ;;
	openmpi) command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null &&
		build openmpi mpicc.openmpi "-DOMPI_OMIT_MPI1_COMPAT_DECLS=1 -DMPI_Address=MPI_Get_address -DMPI_Type_struct=MPI_Type_create_struct" &&
		impls="$impls openmpi" ;;
	*) fail "unknown implementation '$i' in PTL_HPCC_IMPLS" ;;
	esac
done
case $impls in *ptl*) ;; *) fail "ptl's HPCC did not build" ;; esac

# hpccinf.txt for P x Q ranks: HPL at N (NB 80), PTRANS at HPL's sizes
input() {
	cat <<EOF
HPLinpack benchmark input file
written by ptl's bench/hpcc.sh
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
$N           Ns
1            # of NBs
80           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
$1           Ps
$2           Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                               Number of additional problem sizes for PTRANS
1200                            values of N
0                               number of additional blocking sizes for PTRANS
40                              values of NB
EOF
}

# launch IMPL RANKS: one HPCC run in its directory, under a time limit
launch() {
	d=$W/$1/hpcc-1.5.0
	rm -f "$d/hpccoutf.txt"
	case $1 in
	ptl) (cd "$d" && timeout 600 "$B/tools/ptlrun" -n "$2" --bind-to core --timeout 590 ./hpcc) ;;
	mpich) (cd "$d" && timeout 600 mpiexec.hydra -n "$2" -bind-to core ./hpcc) ;;
	openmpi) (cd "$d" && timeout 600 mpirun.openmpi --allow-run-as-root --oversubscribe -n "$2" \
		--bind-to core:overload-allowed --mca btl self,vader ./hpcc) ;;
	esac >"$W/run.log" 2>&1
}

KEYS='HPL_Tflops PTRANS_GBs MPIRandomAccess_GUPs MPIFFT_Gflops AvgPingPongLatency_usec AvgPingPongBandwidth_GBytes RandomlyOrderedRingLatency_usec RandomlyOrderedRingBandwidth_GBytes'
status=0
for n in $RANKS; do
	case $n in 2) p=1 q=2 ;; 4) p=2 q=2 ;; *) fail "PTL_HPCC_RANKS: 2 or 4, not '$n'" ;; esac
	for i in $impls; do input $p $q >"$W/$i/hpcc-1.5.0/hpccinf.txt"; done
	: >"$W/figs"
	for r in $(seq "$ROUNDS"); do
		for i in $impls; do
			out=$W/$i/hpcc-1.5.0/hpccoutf.txt
			if ! launch "$i" "$n" || ! grep -q '^Success=1$' "$out" 2>/dev/null ||
				! grep -q 'PASSED' "$out"; then
				echo "hpcc.sh: $i, $n ranks, round $r: HPCC failed or its checks did not pass:" >&2
				tail -20 "$W/run.log" >&2
				[ -f "$out" ] && grep -E 'FAILED|Success=|error' "$out" | head -20 >&2
				status=1
				continue
			fi
			for k in $KEYS; do
				printf '%s %s %s\n' "$i" "$k" "$(sed -n "s/^$k=//p" "$out")" >>"$W/figs"
			done
		done
	done
	echo "# HPCC 1.5.0, $n ranks ($( [ "$n" = 2 ] && echo "pinned, one a core" || echo "on 2 cores")), HPL N $N NB 80 grid ${p}x$q (the other tests sized by HPCC from it), reference BLAS; medians of $ROUNDS rounds; vs: ptl's time over theirs, their rate over ptl's"
	awk -v impls="$impls" -v keys="$KEYS" '
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{ k = $1 SUBSEP $2; v[k, ++cnt[k]] = $3 }
	END {
		ni = split(impls, im, " "); nk = split(keys, ky, " ")
		printf "%-36s", "figure"
		for (i = 1; i <= ni; i++) printf " %12s", im[i]
		for (i = 2; i <= ni; i++) printf " %10s", "vs " im[i]
		printf "\n"
		for (j = 1; j <= nk; j++) {
			printf "%-36s", ky[j]
			for (i = 1; i <= ni; i++) {
				k = im[i] SUBSEP ky[j]; n = cnt[k]
				for (x = 1; x <= n; x++) a[x] = v[k, x]
				m[i] = n ? median(a, n) : ""
				printf " %12s", n ? sprintf("%.4g", m[i]) : "-"
			}
			time = ky[j] ~ /usec/
			for (i = 2; i <= ni; i++) {
				if (m[1] == "" || m[i] == "" || m[1] == 0 || m[i] == 0) { printf " %10s", "-"; continue }
				printf " %9.2fx", time ? m[1] / m[i] : m[i] / m[1]
			}
			printf "\n"
		}
	}' "$W/figs"
done
exit $status
