#!/bin/sh
# Every collective at 1-5 ranks and 8 (the v-variants also at 6 and 7), and
# under each algorithm choice.
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 4 5; do run $n -- mpi_coll; done
run 8 -- mpi_coll
for a in ring ring_sendrecv tree halving_doubling; do run 3 PTL_COLL_ALGO=$a -- mpi_coll; run 4 PTL_COLL_ALGO=$a -- mpi_coll; done
run 4 PTL_COLL_PORTS=2 -- mpi_coll
# short allreduces on shared cores (every input to every rank) and not
# (recursive doubling's rounds), whatever the host has; the first runs
# shared_rd_bits (past 64 KiB to below 192 KiB by recursive doubling) on
# any host, as the plain 4-rank runs do where the host has fewer than 4
# cores
run 4 PTL_COLL_CORES=1 -- mpi_coll
run 4 PTL_COLL_CORES=64 -- mpi_coll
# gather/scatter by the binomial tree and alltoall(v) by pairwise steps
# (on one host up to 8 ranks they are linear by default), scan/exscan
# along the chain
run 5 PTL_COLL_ALGO=gather=binomial,scatter=binomial,alltoall=pairwise,scan=chain,exscan=chain -- mpi_coll
run 8 PTL_COLL_ALGO=gather=binomial,scatter=binomial,alltoall=pairwise -- mpi_coll
run 7 PTL_COLL_ALGO=alltoall=pairwise -- mpi_coll v
run 8 PTL_COLL_ALGO=chain -- mpi_coll
run 3 PTL_COLL_PORTS=2 PTL_COLL_ALGO=allreduce=ring_bidir,bcast=scatter_allgather -- mpi_coll
# Allgatherv/Alltoallv at the sizes left out above, and each allgather
# algorithm (auto picks by size: recursive doubling, bruck or the ring)
for n in 6 7; do run $n -- mpi_coll v; done
for a in ring bruck recursive_doubling; do
	run 4 PTL_COLL_ALGO=allgather=$a -- mpi_coll
	run 7 PTL_COLL_ALGO=allgather=$a -- mpi_coll v
done
finish
