#!/bin/sh
# Info objects (mpi_info.c), alone and on 2 ranks; the communicator hints
# at 3 and 4 ranks too, and the algorithm a hint names against
# PTL_COLL_ALGO's: the stalled allreduce's message names the hint's
# ("ALGO[:PORTS] SAYS": ring_bidir is itself with the hint of 2 ports,
# the ring with the one port shm has).
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 4; do run $n -- mpi_info; done
for c in tree:-:tree halving_doubling:-:halving_doubling ring_bidir:2:ring_bidir ring_bidir:-:ring; do
	a=${c%%:*} p=${c#*:} p=${p%%:*} says=${c##*:}
	[ "$p" = - ] && p=
	out=$("$PTLRUN" -n 4 --timeout 60 -x PTL_TEST_STALL_RANK=2 -x PTL_COLL_TIMEOUT=1 -x PTL_COLL_ALGO=allreduce=tree \
		"$B/tests/mpi/mpi_info" stall $a $p 2>&1); rc=$?
	echo "$out" | grep "rank 3:"
	if [ $rc -ne 0 ] || ! echo "$out" | grep -q "MPI_Allreduce on MPI_COMM_WORLD (4 ranks, algorithm $says,"; then
		echo "FAIL: the stalled allreduce under ptl_coll_algo allreduce=$a${p:+, ptl_coll_ports $p} (exit $rc)"; echo "$out"; fails=$((fails + 1))
	fi
done
finish
