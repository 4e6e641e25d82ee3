#!/bin/sh
# A program's own error handlers, classes, codes and strings (mpi_errh.c);
# MPI_Comm_call_errhandler under MPI_ERRORS_ARE_FATAL ends the job with
# the class as exit code and the code's string in ptlrun's message.
. "$(dirname "$0")/mpi_common.sh"
run 2 -- mpi_errh
out=$(limited "$(job_limit 60)" "$PTLRUN" -n 2 --timeout "$(job_timeout 60)" "$B/tests/mpi/mpi_errh" fatal 2>&1); rc=$?
echo "$out" | head -2
if [ $rc -ne 28 ] || ! echo "$out" | grep -q "rank 1 (pid [0-9]*) aborted the job with code 28: MPI_Comm_call_errhandler: error code [0-9]* (the library gave up)"; then
	jobfail "MPI_Comm_call_errhandler under MPI_ERRORS_ARE_FATAL: exit $rc, want 28 and the code's string"
fi
finish
