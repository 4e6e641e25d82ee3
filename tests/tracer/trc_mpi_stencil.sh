#!/bin/sh
# 2-D stencil under mpiexec.hydra at 1, 2, 4 and 8 ranks, both with
# MPI_PROC_NULL neighbours and with missing neighbours skipped: expand =
# flat dump, replay round trip. The merged trace must not grow from 4 to 8
# ranks (within 5%): call-site signatures agree across ranks under ASLR,
# and edge ranks share the interior's nodes.
d=$(dirname "$0")
TRC_SIZES=$(mktemp)
export TRC_SIZES
trap 'rm -f "$TRC_SIZES"' EXIT
"$d/trc_mpi_run.sh" trc_stencil 30 1 2 4 8 || exit 1
s4=$(awk '$1 == 4 { print $2 }' "$TRC_SIZES")
s8=$(awk '$1 == 8 { print $2 }' "$TRC_SIZES")
if [ $((s8 * 100)) -gt $((s4 * 105)) ]; then
	echo "FAIL: merged stencil trace grew from $s4 bytes at 4 ranks to $s8 at 8"
	exit 1
fi
TRC_SIZES= TRC_PROG_ARGS=skip exec "$d/trc_mpi_run.sh" trc_stencil 30 4 8
