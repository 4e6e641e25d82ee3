#!/bin/sh
# Communicators, groups and isolation (MPI_Comm_idup too); datatypes.
. "$(dirname "$0")/mpi_common.sh"
for n in 1 3 4; do run $n -- mpi_comm; done
for n in 1 2 3; do run $n -- mpi_dtype; done
for n in 1 2 3; do run $n -- mpi_idup; done
finish
