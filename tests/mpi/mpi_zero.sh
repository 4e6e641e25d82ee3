#!/bin/sh
# Zero-count calls with NULL buffers (mpi_zero.c) on 1-4 ranks and under
# the algorithms that lay out data differently.
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 4; do run $n -- mpi_zero; done
run 4 PTL_COLL_ALGO=ring -- mpi_zero
run 3 PTL_COLL_ALGO=tree -- mpi_zero
finish
