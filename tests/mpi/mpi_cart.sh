#!/bin/sh
# Cartesian topologies (mpi_cart.c) on 1 to 6 ranks (1x1, 2x1, 3x1, 2x2, 3x2).
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 4 6; do run $n -- mpi_cart; done
finish
