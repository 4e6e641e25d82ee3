#!/bin/sh
# random under mpiexec.hydra at 1, 2, 4 and 8 ranks: expand = flat dump, replay round trip.
exec "$(dirname "$0")/trc_mpi_run.sh" trc_random 20 1 2 4 8
