# bench/mpi_*: ptl's MPI against MPICH and Open MPI (printed figures, not
# tests): sh bench/mpi_bench.sh [rounds] [trials] from the build tree.
EXTRA_DIST += bench/mpi_bench.sh bench/mpi_allreduce.c
noinst_PROGRAMS += bench/mpi_allreduce_ptl
bench_mpi_allreduce_ptl_SOURCES = bench/mpi_allreduce.c
bench_mpi_allreduce_ptl_LDADD = lib/mpi-shim/libptlmpi.la
