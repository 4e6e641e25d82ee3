#!/bin/sh
# Info objects (mpi_info.c), alone and on 2 ranks.
. "$(dirname "$0")/mpi_common.sh"
run 1 -- mpi_info
run 2 -- mpi_info
finish
