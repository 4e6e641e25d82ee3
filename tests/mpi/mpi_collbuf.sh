#!/bin/sh
# Collective temporaries reused per communicator (mpi_collbuf.c), on 1-4
# ranks and under the algorithms that use scratch differently.
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 4; do run $n -- mpi_collbuf; done
run 4 PTL_COLL_ALGO=ring -- mpi_collbuf
run 3 PTL_COLL_ALGO=tree -- mpi_collbuf
finish
