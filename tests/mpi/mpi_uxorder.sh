#!/bin/sh
# Matching among thousands of queued unexpected messages (mpi_uxorder.c):
# 2 and 4 ranks; small limits (more rendezvous, overflow pulls, few
# credits); little unexpected memory with the default eager limit (sends
# from the user's buffer, MPI_Isend above 1 KiB, arrive as headers and are
# pulled); every eager message acknowledged; lib/ptl's queue of sends that
# wait for ring space growing under the flood.
. "$(dirname "$0")/mpi_common.sh"
run 2 -- mpi_uxorder
run 4 -- mpi_uxorder
run 3 PTL_MPI_EAGER_LIMIT=1024 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_CREDITS=8 -- mpi_uxorder
run 3 PTL_MPI_UNEXPECTED_MEM=1 -- mpi_uxorder
run 2 PTL_MPI_NOACK_OFF=1 -- mpi_uxorder
# queued-send slots in chunks of 2: the flood's ACKs and credits outrun the
# rings to the senders, and the slots must grow (a dropped ACK hangs it)
run 4 PTL_TEST_TX_CHUNK=2 -- mpi_uxorder
# ... and at most 4 requests queued (PTL_TEST_TX_REQ_MAX=4): the senders'
# puts refused (PTL_NO_SPACE) and made again, in order (gets, credits and
# pulls refused: mpi_p2p.sh's "refused" runs)
run 4 PTL_TEST_TX_CHUNK=2 PTL_TEST_TX_REQ_MAX=4 -- mpi_uxorder
finish
