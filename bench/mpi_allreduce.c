/*
 * mpi_allreduce: MPI_Allreduce (double, sum) time per call, 8 B - 1 MiB,
 * plain MPI for any implementation. Prints "allreduce <bytes> <median us>
 * <min> <max>" (medians over trials of the slowest rank's mean).
 *   ptlrun -n 2 bench/mpi_allreduce [trials]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, trials = argc > 1 ? atoi(argv[1]) : 5;
	if (trials < 1 || trials > 100)
		trials = 5;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	size_t max = 1 << 17; /* doubles: 1 MiB */
	double *in = calloc(max, sizeof(double)), *out = calloc(max, sizeof(double)), v[100];
	for (size_t n = 1; n <= max; n *= 8) {
		int iters = n <= 128 ? 2000 : n <= 8192 ? 200 : 20;
		for (int t = 0; t < trials; t++) {
			for (int w = 0; w < 10; w++)
				MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = MPI_Wtime();
			for (int i = 0; i < iters; i++)
				MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			double dt = (MPI_Wtime() - t0) / iters * 1e6, slowest;
			MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
			v[t] = slowest;
		}
		qsort(v, (size_t)trials, sizeof *v, cmp_double);
		if (rank == 0)
			printf("allreduce %zu %.3f %.3f %.3f\n", n * sizeof(double), v[trials / 2], v[0], v[trials - 1]);
		fflush(stdout);
	}
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
