#!/bin/sh
# Attribute caching on communicators and datatypes (mpi_attr.c).
. "$(dirname "$0")/mpi_common.sh"
run 2 -- mpi_attr
run 3 -- mpi_attr
finish
