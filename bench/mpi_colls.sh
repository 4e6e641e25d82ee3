#!/bin/sh
# bench/mpi_colls.sh: ptl's collectives other than allreduce against Open
# MPI's, interleaved launches of bench/mpi_colls.c (printed figures, not a
# test). From the build tree:
#
#   sh bench/mpi_colls.sh [ranks] [launches] [sizes]     (defaults 4 3 64,4096,65536,1048576)
#
# Ranks bound to cores as mpi_bench.sh binds them (ptlrun --bind-to core;
# Open MPI --bind-to core:overload-allowed --oversubscribe, btl self,vader),
# each launch after bench/core_rtt finds the cores near again (at most
# 60 s of waiting a launch; the host moves its vCPUs). Prints per
# collective and size the median over launches of each launch's median,
# us, and ptl / Open MPI. PTL_COLLS_FORCE="scatter=binomial,..." adds a
# ptl column run with PTL_COLL_ALGO set so (the choice an algorithm rule
# replaced, for before/after figures). Without mpicc.openmpi and
# mpirun.openmpi only ptl's columns.
B=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-4}
L=${2:-3}
S=${3:-64,4096,65536,1048576}
W=$(mktemp -d /tmp/mpi_colls.XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT
[ -x "$B/bench/mpi_colls_ptl" ] || { echo "mpi_colls.sh: build first (make): no $B/bench/mpi_colls_ptl" >&2; exit 1; }
OMPI=
if command -v mpicc.openmpi >/dev/null 2>&1 && command -v mpirun.openmpi >/dev/null 2>&1 &&
	mpicc.openmpi -O2 -o "$W/ompi" "$B/bench/mpi_colls.c" 2>"$W/cc.err"; then
	OMPI=1
else
	echo "# Open MPI not found or its build failed: ptl only" >&2
fi
low=
near() {
	[ -x "$B/bench/core_rtt" ] || return
	i=0
	while [ $i -lt 60 ]; do
		ns=$("$B/bench/core_rtt" 2>/dev/null | awk '{ print $4 }')
		case "$ns" in '' | *[!0-9]*) return ;; esac
		[ -z "$low" ] || [ "$ns" -lt "$low" ] && low=$ns
		[ "$ns" -le $((2 * low)) ] && return
		sleep 1
		i=$((i + 1))
	done
}
run() { # TAG CMD...
	tag=$1
	shift
	near
	"$@" 2>>"$W/err" | awk -v t="$tag" 'NF == 5 { print t, $1, $2, $3 }' >> "$W/all"
}
for l in $(seq "$L"); do
	run ptl "$B/tools/ptlrun" -n "$N" --bind-to core "$B/bench/mpi_colls_ptl" 7 "$S"
	[ -n "${PTL_COLLS_FORCE:-}" ] &&
		run forced env PTL_COLL_ALGO="$PTL_COLLS_FORCE" "$B/tools/ptlrun" -n "$N" --bind-to core \
			"$B/bench/mpi_colls_ptl" 7 "$S"
	[ -n "$OMPI" ] &&
		run ompi mpirun.openmpi --allow-run-as-root --oversubscribe -n "$N" --bind-to core:overload-allowed \
			--mca btl self,vader "$W/ompi" 7 "$S"
done
[ -s "$W/all" ] || { echo "mpi_colls.sh: no figures" >&2; cat "$W/err" >&2; exit 1; }
echo "# $N ranks, $L launches, us a call (median of launches' medians); ratio = ptl / Open MPI"
printf '%-22s %9s %10s %10s %10s %7s\n' op bytes ptl forced openmpi ratio
awk '
function med(k,   n, i, j, t, a) {
	n = split(v[k], a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j] + 0 < a[j - 1] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n ? a[int((n + 1) / 2)] : ""
}
{ k = $2 " " $3; v[$1 " " k] = v[$1 " " k] " " $4; if (!(k in seen)) { seen[k] = 1; order[++no] = k } }
END {
	for (i = 1; i <= no; i++) {
		split(order[i], o, " ")
		p = med("ptl " order[i]); f = med("forced " order[i]); m = med("ompi " order[i])
		printf "%-22s %9s %10s %10s %10s %7s\n", o[1], o[2], p, f == "" ? "-" : f, m == "" ? "-" : m,
			(p != "" && m != "" && m > 0) ? sprintf("%.2fx", p / m) : "-"
	}
}' "$W/all"
