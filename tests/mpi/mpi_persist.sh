#!/bin/sh
# Persistent requests (mpi_persist.c) on 1-4 ranks, and with every eager
# message acknowledged.
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 4; do run $n -- mpi_persist; done
run 2 PTL_MPI_NOACK_OFF=1 -- mpi_persist
finish
