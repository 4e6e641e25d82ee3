#!/bin/sh
# Group ranges and set operations, MPI_Comm_create_group (mpi_group.c) on 1
# to 5 ranks; a group member that never calls MPI_Comm_create_group.
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 5; do run $n -- mpi_group; done
run 3 PTL_COLL_TIMEOUT=1 PTL_COLL_ALGO=ring -- mpi_group nocall
finish
