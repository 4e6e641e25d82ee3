# bench/mpi_*: ptl's MPI against MPICH and Open MPI (printed figures, not
# tests): sh bench/mpi_bench.sh [rounds] [trials] from the build tree.
EXTRA_DIST += bench/mpi_bench.sh bench/mpi_allreduce.c bench/mpi_collcal.c bench/mpi_reduce_scatter.c \
	bench/mpi_colls.sh bench/mpi_colls.c
# bench/mpi_pingpong_ptl: ptl's build of the ping-pong rows (mpi_bench.sh
# and pingpong.sh build the others' from the same source)
noinst_PROGRAMS += bench/mpi_pingpong_ptl
bench_mpi_pingpong_ptl_SOURCES = bench/mpi_pingpong.c bench/bench_bw.h bench/bench_slow.h bench/bench_speed.h bench/bench_clock.h
bench_mpi_pingpong_ptl_LDADD = lib/mpi-shim/libptlmpi.la
noinst_PROGRAMS += bench/mpi_allreduce_ptl
bench_mpi_allreduce_ptl_SOURCES = bench/mpi_allreduce.c bench/bench_slow.h bench/bench_speed.h bench/bench_clock.h
bench_mpi_allreduce_ptl_LDADD = lib/mpi-shim/libptlmpi.la
noinst_PROGRAMS += bench/mpi_collcal_ptl
bench_mpi_collcal_ptl_SOURCES = bench/mpi_collcal.c
bench_mpi_collcal_ptl_LDADD = lib/mpi-shim/libptlmpi.la
# bench/mpi_reduce_scatter_ptl: MPI_Reduce_scatter with uneven blocks beside
# MPI_Allreduce of the same vector (ptlrun -n 2 --bind-to core, or -n 4)
noinst_PROGRAMS += bench/mpi_reduce_scatter_ptl
bench_mpi_reduce_scatter_ptl_SOURCES = bench/mpi_reduce_scatter.c
bench_mpi_reduce_scatter_ptl_LDADD = lib/mpi-shim/libptlmpi.la
# bench/mpi_turns_ptl: a call's time and each rank's scheduler slices a
# call (ptlrun -n 4 --bind-to core: the turns ptltool coll --bound counts)
noinst_PROGRAMS += bench/mpi_turns_ptl
bench_mpi_turns_ptl_SOURCES = bench/mpi_turns.c
bench_mpi_turns_ptl_LDADD = lib/mpi-shim/libptlmpi.la
# bench/mpi_colls_ptl: loops of the other collectives (bench/mpi_colls.sh
# runs them against Open MPI's, interleaved)
noinst_PROGRAMS += bench/mpi_colls_ptl
bench_mpi_colls_ptl_SOURCES = bench/mpi_colls.c
bench_mpi_colls_ptl_LDADD = lib/mpi-shim/libptlmpi.la
