/* trace_pingpong: recording overhead per MPI call, with and without the
 * tracer in the same run. Run under LD_PRELOAD=libptltrace-mpich.so with
 * two ranks: the same ping-pong is timed through MPI_Send/MPI_Recv (the
 * tracer's wrappers) and through PMPI_Send/PMPI_Recv (straight to MPICH),
 * interleaved in rounds so both see the same machine load. The difference
 * per call is the tracer's cost. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double round_trip(int traced, int peer, int rank, int n, char *buf)
{
	double t0 = MPI_Wtime();
	for (int i = 0; i < n; i++) {
		if (traced) {
			if (rank == 0) {
				MPI_Send(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
				MPI_Recv(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
			}
		} else {
			if (rank == 0) {
				PMPI_Send(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
				PMPI_Recv(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				PMPI_Recv(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				PMPI_Send(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
			}
		}
	}
	return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	int n = argc > 1 ? atoi(argv[1]) : 20000, rounds = argc > 2 ? atoi(argv[2]) : 10;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (!rank)
			fprintf(stderr, "trace_pingpong: run with -n 2\n");
		MPI_Finalize();
		return 2;
	}
	char buf[8] = { 0 };
	double best[2] = { 1e30, 1e30 };
	round_trip(0, 1 - rank, rank, n / 10, buf);	/* warm up both paths */
	round_trip(1, 1 - rank, rank, n / 10, buf);
	for (int r = 0; r < rounds; r++)
		for (int traced = 0; traced < 2; traced++) {
			PMPI_Barrier(MPI_COMM_WORLD);
			double t = round_trip(traced, 1 - rank, rank, n, buf);
			if (t < best[traced])
				best[traced] = t;
		}
	if (rank == 0) {
		/* a round trip has four calls on its critical path: the send
		 * and receive on each side */
		double plain = best[0] / n * 1e9, traced = best[1] / n * 1e9;
		printf("round trips: %d x %d rounds (best round kept)\n", n, rounds);
		printf("untraced round trip:  %8.1f ns\n", plain);
		printf("traced round trip:    %8.1f ns\n", traced);
		printf("overhead per call:    %8.1f ns (round-trip difference / 4 calls)\n", (traced - plain) / 4);
	}
	MPI_Finalize();
	return 0;
}
