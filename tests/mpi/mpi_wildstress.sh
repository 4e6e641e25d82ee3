#!/bin/sh
# Wildcard receives racing arrivals (mpi_wildstress.c), a few seconds each:
# 2 and 4 ranks; small eager limit and unexpected memory (rendezvous and
# overflow pulls); no progress thread (only API calls make progress).
. "$(dirname "$0")/mpi_common.sh"
S=${PTL_TEST_SECONDS:-2}
run 2 PTL_TEST_SECONDS=$S -- mpi_wildstress
run 4 PTL_TEST_SECONDS=$S -- mpi_wildstress
run 3 PTL_TEST_SECONDS=$S PTL_MPI_EAGER_LIMIT=64 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_CREDITS=4 -- mpi_wildstress
run 4 PTL_TEST_SECONDS=$S PTL_PROGRESS_THREAD=0 -- mpi_wildstress
finish
