#!/bin/sh
# Matched probes (mpi_mprobe.c) on 2-4 ranks; with every eager message
# acknowledged; with unexpected memory small enough that a flood overflows
# and its messages are pulled; and a rank that dies (mpi_mprobe dead).
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 4; do run $n -- mpi_mprobe; done
run 2 PTL_MPI_NOACK_OFF=1 -- mpi_mprobe
run 2 PTL_MPI_UNEXPECTED_MEM=2M -- mpi_mprobe
run 2 -- mpi_mprobe dead
finish
