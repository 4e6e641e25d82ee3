#!/bin/sh
# Info objects (mpi_info.c), alone and on 2 ranks; the communicator hints
# at 3 and 4 ranks too, and the allreduce algorithm the hints leave over
# PTL_COLL_ALGO's (ring): the stalled allreduce's message names it. Each
# case "SAYS HINT..." (algo:VALUE, ports:VALUE, set in turn): ring_bidir
# is itself with the hint of 2 ports, the ring with the one port shm has;
# a later ptl_coll_algo replaces an earlier one whole, an empty one
# removes it.
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 4; do run $n PTL_COLL_TIMEOUT=30 -- mpi_info; done
while read -r says hints; do
	out=$(limited "$(job_limit 60)" "$PTLRUN" -n 4 --timeout "$(job_timeout 60)" -x PTL_TEST_STALL_RANK=2 -x PTL_COLL_TIMEOUT=1 -x PTL_COLL_ALGO=allreduce=ring \
		"$B/tests/mpi/mpi_info" stall $hints 2>&1); rc=$?
	printf '%s\n' "$out" | grep "rank 3:"
	if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q "MPI_Allreduce on MPI_COMM_WORLD (4 ranks, algorithm $says,"; then
		jobfail "the stalled allreduce under $hints: want algorithm $says (exit $rc)"
	fi
done <<EOF
tree algo:allreduce=tree
halving_doubling algo:allreduce=halving_doubling
ring_bidir algo:allreduce=ring_bidir ports:2
ring algo:allreduce=ring_bidir
ring algo:allreduce=halving_doubling algo:bcast=binomial
ring algo:allreduce=halving_doubling algo:
tree algo:tree ports:2 ports:
EOF
finish
