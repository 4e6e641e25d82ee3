#!/bin/sh
# A dead rank (one that leaves with _exit(0), which ptlrun lets the others
# survive) becomes an error naming it within seconds: point to point (a
# blocking receive, a rendezvous send, MPI_ANY_SOURCE, MPI_Probe, MPI_Test,
# MPI_Waitany, MPI_Testall/any/some, MPI_Waitall), collectives, and operations started once it is known dead
# (also after the credits owed it for its last messages went back: credit);
# the survivors still talk afterwards; sends whose messages overflowed the
# dead rank's unexpected memory (waiting for a pull) fail too (overflow),
# and an MPI_ANY_SOURCE receive whose message's data is still at the rank
# that dies fails naming it (pullany); a pull waiting for a landing behind
# a dead rank's pulls still lands (landq).
# Under MPI_ERRORS_ARE_FATAL the job ends non-zero and the output names the
# dead rank.
. "$(dirname "$0")/mpi_common.sh"
for mode in p2p test tall tany tsome wall coll credit; do
	run 3 -- mpi_deadpeer $mode
done
run 3 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_CREDITS=30000 -- mpi_deadpeer overflow
run 3 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_CREDITS=30000 -- mpi_deadpeer pullany
run 3 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_CREDITS=30000 PTL_MPI_NOACK_OFF=1 -- mpi_deadpeer landq
out=$(limited "$(job_limit 60)" "$PTLRUN" -n 2 --timeout "$(job_timeout 60)" "$B/tests/mpi/mpi_deadpeer" fatal 2>&1); rc=$?
echo "$out" | tail -3
if [ $rc -eq 0 ] || ! echo "$out" | grep -q "ptlrun: rank 0 .*aborted the job.*MPI_Recv: rank 1 of MPI_COMM_WORLD died"; then
	jobfail "MPI_ERRORS_ARE_FATAL on a dead rank: exit $rc, want non-zero and ptlrun naming rank 1"
fi
finish
