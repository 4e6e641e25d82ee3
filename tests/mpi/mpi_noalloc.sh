#!/bin/sh
# Collectives allocate nothing per call once warm (the nonblocking ones but
# small temporaries), and their kept engines follow each call's buffers and
# sizes (mpi_noalloc.c): 1-5 ranks, and the trees where one host of up to 8
# ranks runs gather and scatter linear.
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 4 5; do run $n -- mpi_noalloc; done
run 4 PTL_COLL_ALGO=gather=binomial,scatter=binomial,bcast=scatter_allgather -- mpi_noalloc
finish
