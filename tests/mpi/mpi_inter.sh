#!/bin/sh
# Intercommunicators (mpi_inter.c) between the even and odd ranks of 2-5
# ranks; a merge the other side never joins.
. "$(dirname "$0")/mpi_common.sh"
for n in 2 3 5; do run $n -- mpi_inter; done
run 3 PTL_COLL_TIMEOUT=2 -- mpi_inter nomerge   # the leader gives up after 1 s, the others wait 2
finish
