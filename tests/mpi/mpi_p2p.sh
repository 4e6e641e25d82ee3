#!/bin/sh
# Point-to-point at 2-4 ranks, with the default limits and with small ones
# (eager limit 1 KiB: more rendezvous; 2 unexpected buffers and 8 credits:
# the flood overflows into pulls and the sender is slowed down), with a
# 64 KiB eager limit and little unexpected memory (eager sends larger than
# the shm ring takes inline: read by the receiver, or overflowed and
# pulled), and with every eager message acknowledged (PTL_MPI_NOACK_OFF).
# "units" first thing in a run: how many 2 KiB sends go ACK-free (1 KiB
# credit units), with no progress thread and the receiver held out of the
# library until the sender has counted, so no credit comes back meanwhile;
# then again once the receiver has given the credits back. "stream":
# windows of 4 KiB MPI_Isend from one sender, then two, which keep going
# ACK-free on the credits the receiver gives back. "shift": a ring of
# 8 KiB MPI_Isends at 4 ranks, each rank hearing from one peer only,
# keeps going ACK-free on the one receiver's grants while the other
# peers' promises sit unused. "sendmem": small MPI_Isends that outrun a
# receiver out of the library keep the sender within
# PTL_MPI_SEND_COPY_MEM (contiguous data, and with "vec" not);
# "exchange": 20,000 1 KiB MPI_Sends each way before any receive, buffered;
# again (and after all the sections, with no progress thread) with
# lib/ptl's queue of sends waiting for ring space cut to 16
# requests (PTL_TEST_TX_REQ_MAX=16) and no progress thread (which would
# drain the ring of a rank out of the library, so that whether the queue
# ever filled was down to timing): past it PtlPut says PTL_NO_SPACE and the
# MPI layer must put the send (or credit, or pull) again later, in order,
# neither failing the send nor dropping it; and with 30,000 credits, more
# than lib/ptl queues at its own bound. "refused": the same for floods of
# eager, acknowledged and rendezvous sends (refused puts, gets, credits)
# and, "late", of overflowed messages (refused pulls' puts); "hub": rank 0
# exchanges with ranks 1 and 2 while rank 2 is out of the library, and the
# calls to rank 2 that wait must not hold back those to rank 1.
. "$(dirname "$0")/mpi_common.sh"
run 2 -- mpi_p2p
run 4 -- mpi_p2p
run 3 PTL_MPI_EAGER_LIMIT=1024 -- mpi_p2p
run 2 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_CREDITS=8 -- mpi_p2p
run 2 PTL_MPI_EAGER_LIMIT=64K PTL_MPI_UNEXPECTED_MEM=1 -- mpi_p2p
run 2 PTL_MPI_NOACK_OFF=1 -- mpi_p2p
run 2 PTL_PROGRESS_THREAD=0 -- mpi_p2p units
run 4 PTL_PROGRESS_THREAD=0 -- mpi_p2p units
run 2 PTL_PROGRESS_THREAD=0 -- mpi_p2p stream
run 3 PTL_PROGRESS_THREAD=0 -- mpi_p2p stream
run 4 -- mpi_p2p shift
run 2 PTL_PROGRESS_THREAD=0 PTL_MPI_SEND_COPY_MEM=1M -- mpi_p2p sendmem
run 2 PTL_PROGRESS_THREAD=0 PTL_MPI_SEND_COPY_MEM=1M -- mpi_p2p sendmem vec
run 2 -- mpi_p2p exchange
run 3 PTL_PROGRESS_THREAD=0 -- mpi_p2p exchange
run 2 PTL_PROGRESS_THREAD=0 PTL_TEST_TX_CHUNK=16 PTL_TEST_TX_REQ_MAX=16 -- mpi_p2p exchange
run 3 PTL_PROGRESS_THREAD=0 PTL_TEST_TX_CHUNK=16 PTL_TEST_TX_REQ_MAX=16 -- mpi_p2p exchange
run 2 PTL_PROGRESS_THREAD=0 PTL_MPI_CREDITS=30000 -- mpi_p2p exchange
run 4 PTL_PROGRESS_THREAD=0 PTL_TEST_TX_CHUNK=16 PTL_TEST_TX_REQ_MAX=16 -- mpi_p2p
run 2 PTL_TEST_TX_CHUNK=2 PTL_TEST_TX_REQ_MAX=4 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_CREDITS=1000 -- mpi_p2p refused
run 4 PTL_PROGRESS_THREAD=0 PTL_TEST_TX_CHUNK=2 PTL_TEST_TX_REQ_MAX=4 PTL_MPI_UNEXPECTED_MEM=1 -- mpi_p2p refused
run 2 PTL_TEST_TX_CHUNK=2 PTL_TEST_TX_REQ_MAX=2 PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_CREDITS=3000 -- mpi_p2p refused late
run 3 PTL_PROGRESS_THREAD=0 PTL_TEST_TX_CHUNK=2 PTL_TEST_TX_REQ_MAX=4 PTL_MPI_UNEXPECTED_MEM=1 -- mpi_p2p refused hub
finish
