#!/bin/sh
# Blocking collectives allocate nothing per call once warm, and their cached
# engines follow each call's buffers (mpi_noalloc.c): 1-5 ranks, and the
# trees where one host of up to 8 ranks runs gather and scatter linear.
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 4 5; do run $n -- mpi_noalloc; done
run 4 PTL_COLL_ALGO=gather=binomial,scatter=binomial,bcast=scatter_allgather -- mpi_noalloc
finish
