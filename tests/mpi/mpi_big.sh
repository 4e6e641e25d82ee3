#!/bin/sh
# A collective message past 2 GiB (mpi_big.c): 2 ranks, about 5 GiB of
# memory in all, some 20 s on 2 cores.
. "$(dirname "$0")/mpi_common.sh"
run 2 PTL_COLL_TIMEOUT=120 -- mpi_big
finish
