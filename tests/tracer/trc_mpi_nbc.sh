#!/bin/sh
# nonblocking collectives, Irsend/Ibsend, matched probes, and communicators
# from Cart_create, Cart_sub, Comm_split_type, Comm_dup_with_info, at 1-4 ranks.
exec "$(dirname "$0")/trc_mpi_run.sh" trc_nbc 3 1 2 3 4
