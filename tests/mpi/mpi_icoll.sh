#!/bin/sh
# Nonblocking collectives (mpi_icoll.c) on 1-5 ranks, with the ring,
# tree and ring_bidir algorithms, with every eager message acknowledged, and past the
# deadline of a collective whose rank 2 sends nothing, and with a rank dead.
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 4 5; do run $n -- mpi_icoll; done
run 4 PTL_COLL_ALGO=ring -- mpi_icoll
run 3 PTL_COLL_ALGO=tree -- mpi_icoll
# 2 ports on 3 ranks: ring_bidir, which cannot read sendbuf apart (copied in)
run 3 PTL_COLL_PORTS=2 -- mpi_icoll
run 5 PTL_COLL_ALGO=gather=linear,scatter=linear,scan=chain,exscan=chain -- mpi_icoll
run 2 PTL_MPI_NOACK_OFF=1 -- mpi_icoll
run 4 PTL_TEST_STALL_RANK=2 PTL_COLL_TIMEOUT=1 -- mpi_icoll stall
run 3 -- mpi_icoll dead
finish
