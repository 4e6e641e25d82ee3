#!/bin/sh
# Datatype bounds as C lays structs out (mpi_layout.c), alone and on 3 ranks.
. "$(dirname "$0")/mpi_common.sh"
run 1 -- mpi_layout
run 3 -- mpi_layout
finish
