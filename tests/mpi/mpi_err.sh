#!/bin/sh
# Error paths: MPI_ERRORS_RETURN classes and messages; a fatal error and
# MPI_Abort end the job with a message and the code; a stalled rank makes
# the collective's deadline pass with an error naming the collective, the
# communicator, the step and the missing rank, and the next job runs clean;
# receives past the match entries allowed, and past those of a network
# interface the program opened before MPI_Init.
. "$(dirname "$0")/mpi_common.sh"
run 2 -- mpi_err
out=$(limited "$(job_limit 60)" "$PTLRUN" -n 2 --timeout "$(job_timeout 60)" "$B/tests/mpi/mpi_err" fatal 2>&1); rc=$?
echo "$out" | head -2
if [ $rc -eq 0 ] || ! echo "$out" | grep -q "MPI_ERR_RANK"; then jobfail "fatal error (exit $rc)"; fi
out=$(limited "$(job_limit 60)" "$PTLRUN" -n 3 --timeout "$(job_timeout 60)" "$B/tests/mpi/mpi_err" abort 2>&1); rc=$?
echo "$out" | head -2
if [ $rc -ne 7 ] || ! echo "$out" | grep -Eq "ptlrun: rank [0-9]+ \(pid [0-9]+\) aborted the job with code 7: MPI_Abort\(MPI_COMM_WORLD, 7\)"; then
	jobfail "MPI_Abort exit $rc, want 7 and ptlrun naming the rank and MPI_Abort(MPI_COMM_WORLD, 7)"; fi
out=$(limited "$(job_limit 60)" "$PTLRUN" -n 4 --timeout "$(job_timeout 60)" -x PTL_TEST_STALL_RANK=2 -x PTL_COLL_TIMEOUT=1 "$B/tests/mpi/mpi_err" stall 2>&1); rc=$?
echo "$out" | grep "rank 3:"
if [ $rc -ne 0 ] || ! echo "$out" | grep -q "rank 3: MPI_Allreduce: MPI_Allreduce on MPI_COMM_WORLD .* step [0-9]* waiting for rank(s) 2"; then
	jobfail "stall message (exit $rc)"
fi
# Receives past the match entries PTL_MPI_MAX_MES allows: MPI_ERR_NO_MEM
# saying why, an MPI_Sendrecv whose send went saying so, nothing lost;
# a value out of range is refused, by name, and the default taken
run 2 PTL_MPI_MAX_MES=256 PTL_MPI_UNEXPECTED_MEM=8M PTL_MPI_EAGER_LIMIT=8192 -- mpi_err melimit
out=$(limited "$(job_limit 60)" "$PTLRUN" -n 1 --timeout "$(job_timeout 60)" -x PTL_MPI_MAX_MES=12 "$B/tests/mpi/mpi_zero" 2>&1); rc=$?
if [ $rc -ne 0 ] || ! echo "$out" | grep -q "ignoring PTL_MPI_MAX_MES=12 (want 256 - 524288)"; then
	jobfail "PTL_MPI_MAX_MES=12 (exit $rc): want it ignored, by name"
fi
# The network interface opened by the program before MPI_Init, with
# fewer match entries than the MPI layer asks: its receives get what the
# library's own leave (it says how many on each rank; rank 0 posts just
# that many before the refusal), the rest as in melimit; with too few
# for the library's own the job stops in MPI_Init, saying what it needs
run 2 PTL_TEST_NI_MES=67584 PTL_MPI_UNEXPECTED_MEM=8M PTL_MPI_EAGER_LIMIT=8192 -- mpi_err niearly
said=$(echo "$out" | sed -n 's/.*rank 0: the network interface, opened before MPI_Init (max_mes 67584, max_me_list 67584, max_mds 135168, 1 match entries in use), holds \([0-9]*\) posted receives at once.*/\1/p')
posted=$(echo "$out" | sed -n 's/^rank 0: \([0-9]*\) receives posted, the limit .*/\1/p' | head -n 1)
if [ -z "$said" ] || [ "$said" != "$posted" ]; then
	jobfail "niearly: the library said rank 0 holds '$said' posted receives, it posted '$posted'"
fi
out=$(limited "$(job_limit 60)" "$PTLRUN" -n 2 --timeout "$(job_timeout 60)" -x PTL_TEST_NI_MES=1000 "$B/tests/mpi/mpi_err" niearly 2>&1); rc=$?
if [ $rc -eq 0 ] || ! echo "$out" | grep -q "fatal: the network interface, opened before MPI_Init, has max_mes 1000, max_me_list 1000, max_mds 2000 and max_pt_index 15, 1 match entries in use; the MPI layer needs [0-9]* entries free (256 receives and [0-9]* of its own), twice as many MDs"; then
	jobfail "niearly with 1000 entries (exit $rc): want MPI_Init to stop the job saying what it needs"
fi
# entries enough, MDs not (the default 4096)
out=$(limited "$(job_limit 60)" "$PTLRUN" -n 2 --timeout "$(job_timeout 60)" -x PTL_TEST_NI_MES=200000 -x PTL_TEST_NI_MDS=4096 "$B/tests/mpi/mpi_err" niearly 2>&1); rc=$?
if [ $rc -eq 0 ] || ! echo "$out" | grep -q "fatal: the network interface, opened before MPI_Init, has max_mes 200000, max_me_list 200000, max_mds 4096 "; then
	jobfail "niearly with 4096 MDs (exit $rc): want MPI_Init to stop the job saying what it needs"
fi
# Sends above the eager limit in flight past the match entries the
# library keeps for its own: refused, saying why, while unexpected
# messages still flow, overflowed ones pulled (the least unexpected
# memory, credits for more, every message acknowledged), everything sent
# arrives, and the entries come back; collectives at the end of that room
# fail saying why
run 2 PTL_MPI_MAX_MES=256 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_CREDITS=3000 PTL_MPI_NOACK_OFF=1 PTL_MPI_EAGER_LIMIT=8192 PTL_COLL_TIMEOUT=1 -- mpi_err ownlimit
# Every receive that may be posted posted, and more pulls at once than
# they have landings: the messages all come, whole, in order
run 2 PTL_MPI_MAX_MES=256 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_CREDITS=4000 PTL_MPI_NOACK_OFF=1 PTL_MPI_EAGER_LIMIT=8192 -- mpi_err pullroom
# A collective that passed its deadline while its part was being pulled:
# the part, pulled later, lands nowhere, not in the buffer
# the call returned
run 2 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_NOACK_OFF=1 PTL_MPI_CREDITS=4000 PTL_COLL_TIMEOUT=0.5 -- mpi_err lateland
# the same with its pull queued for a landing (more pulls at once than
# there are landings)
run 2 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_NOACK_OFF=1 PTL_MPI_CREDITS=4000 PTL_COLL_TIMEOUT=0.5 -- mpi_err lateq
# and with its rendezvous get refused for room and deferred (its peer
# not reading): the get, made later, lands in the library's memory
run 2 PTL_PROGRESS_THREAD=0 PTL_TEST_TX_REQ_MAX=4 PTL_MPI_CREDITS=4000 PTL_COLL_TIMEOUT=0.5 -- mpi_err lateget
# One whose sends waited for the peer (a buffer exposed for its get, an
# eager part overflowed and waiting for its pull): the peer, later, gets
# the data as it was sent, not what the caller unmapped or rewrote after
run 2 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_NOACK_OFF=1 PTL_MPI_CREDITS=4000 PTL_COLL_TIMEOUT=0.5 -- mpi_err latesend
# and one whose eager part was still being read (a bulk move, its peer
# away): the call waits for the move to end before it returns, and past
# its deadline more says whom it waits for
run 2 PTL_PROGRESS_THREAD=0 PTL_COLL_TIMEOUT=0.5 -- mpi_err latebulk
if ! printf '%s\n' "$out" | grep -q "rank 1: a call that failed waits, [0-9.]* s now, for its transfer with world rank 0 to end"; then
	jobfail "latebulk: rank 1 did not say it waits for world rank 0"
fi
run 4 -- mpi_coll
finish
