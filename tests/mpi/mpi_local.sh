#!/bin/sh
# Process-local calls (mpi_local.c): Reduce_local, Type_create_hindexed_block,
# Type_set_name/get_name.
. "$(dirname "$0")/mpi_common.sh"
run 1 -- mpi_local
finish
