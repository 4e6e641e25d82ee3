/*
 * mpi_pingpong: the same figures as ptl_pingpong, with plain MPI, to be
 * built against the system's MPICH or Open MPI (bench/pingpong.sh does).
 * Output lines: "lat <bytes> <median us> <min> <max>", "bw <bytes> <GB/s> ...".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LAT (4 * 1024 * 1024)
#define MAX_BW (16 * 1024 * 1024)
#define WINDOW 32

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void report(const char *kind, size_t len, double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	printf("%s %zu %.3f %.3f %.3f\n", kind, len, v[n / 2], v[0], v[n - 1]);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, trials = argc > 1 ? atoi(argv[1]) : 5;
	if (trials < 1 || trials > 1000)
		trials = 5;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_pingpong: run with exactly 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	char *rbuf = calloc(1, MAX_BW), *sbuf = calloc(1, MAX_BW);
	memset(sbuf, rank + 1, MAX_BW);
	int peer = 1 - rank;
	double v[1000];
	for (size_t len = 0; len <= MAX_LAT; len = len ? len * 2 : 1) {
		int iters = len <= 4096 ? 20000 : len <= 65536 ? 2000 : 200;
		for (int t = 0; t < trials; t++) {
			for (int i = -100; i < iters; i++) {
				if (i == 0) {
					MPI_Barrier(MPI_COMM_WORLD);
					v[t] = MPI_Wtime();
				}
				if (rank == 0) {
					MPI_Send(sbuf, (int)len, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
					MPI_Recv(rbuf, (int)len, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				} else {
					MPI_Recv(rbuf, (int)len, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					MPI_Send(sbuf, (int)len, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
				}
			}
			v[t] = (MPI_Wtime() - v[t]) * 1e6 / iters / 2;
		}
		if (rank == 0)
			report("lat", len, v, trials);
	}
	MPI_Request req[WINDOW];
	MPI_Status st[WINDOW];
	for (size_t len = 4096; len <= MAX_BW; len *= 4) {
		int rounds = len <= 65536 ? 20 : len <= 1048576 ? 4 : 1;
		for (int t = 0; t < trials; t++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = MPI_Wtime();
			for (int k = 0; k < rounds; k++) {
				if (rank == 0) {
					for (int w = 0; w < WINDOW; w++)
						MPI_Isend(sbuf, (int)len, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[w]);
					MPI_Waitall(WINDOW, req, st);
					MPI_Recv(rbuf, 0, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				} else {
					/* One receive buffer, as the ptl benchmark's one MD. */
					for (int w = 0; w < WINDOW; w++)
						MPI_Irecv(rbuf, (int)len, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[w]);
					MPI_Waitall(WINDOW, req, st);
					MPI_Send(sbuf, 0, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
				}
			}
			v[t] = (double)len * WINDOW * rounds / ((MPI_Wtime() - t0) * 1e9);
		}
		if (rank == 0)
			report("bw", len, v, trials);
	}
	free(rbuf);
	free(sbuf);
	MPI_Finalize();
	return 0;
}
