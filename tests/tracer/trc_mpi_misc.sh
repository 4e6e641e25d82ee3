#!/bin/sh
# the rest of the point-to-point calls (Ssend, Rsend, Bsend, Issend, Probe,
# Iprobe, Test*, Waitany, Waitsome, Cancel, Request_free) at 1, 2, 4, 5 ranks.
exec "$(dirname "$0")/trc_mpi_run.sh" trc_misc 8 1 2 4 5
