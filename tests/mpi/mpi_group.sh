#!/bin/sh
# Group ranges and set operations (mpi_group.c) on 1 to 5 ranks.
. "$(dirname "$0")/mpi_common.sh"
for n in 1 2 3 5; do run $n -- mpi_group; done
finish
