#!/bin/sh
# 2-D stencil under mpiexec.hydra at 1, 2, 4 and 8 ranks, both with
# MPI_PROC_NULL neighbours and with missing neighbours skipped: expand =
# flat dump, replay round trip.
d=$(dirname "$0")
"$d/trc_mpi_run.sh" trc_stencil 30 1 2 4 8 || exit 1
TRC_PROG_ARGS=skip exec "$d/trc_mpi_run.sh" trc_stencil 30 4 8
