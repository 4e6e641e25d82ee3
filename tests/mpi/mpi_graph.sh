#!/bin/sh
# Graph and distributed graph topologies, neighbourhood collectives and
# Alltoallw (mpi_graph.c) on 1 to 5 ranks.
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 4 5; do run $n PTL_COLL_TIMEOUT=20 -- mpi_graph; done
finish
