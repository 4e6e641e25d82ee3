/*
 * mpi_allreduce: MPI_Allreduce (double, sum) time per call, 8 B - 1 MiB,
 * plain MPI for any implementation. Prints "allreduce <bytes> <median us>
 * <min> <max>" (medians over trials of the slowest rank's mean), and first
 * "gamma <ns per byte>": what adding a vector of doubles into another costs
 * here (the reduction term of the cost model; bench/mpi_bench.sh feeds it to
 * ptltool coll).
 *   ptlrun -n 2 bench/mpi_allreduce [trials]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Best of a few passes of out[i] += in[i] over n doubles, in ns per byte. */
static double gamma_ns(double *in, double *out, size_t n)
{
	double best = 1e30;
	for (int pass = 0; pass < 8; pass++) {
		double t0 = MPI_Wtime();
		for (size_t i = 0; i < n; i++)
			out[i] += in[i];
		double t = (MPI_Wtime() - t0) * 1e9 / (double)(n * sizeof(double));
		if (t < best)
			best = t;
	}
	return best;
}

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
	double g = gamma_ns(in, out, max);
	if (rank == 0)
		printf("gamma 0 %.4f %.4f %.4f\n", g, g, g);
	/* 8 B, x8 up to 256 KiB, then 1 MiB */
	for (size_t n = 1; n <= max; n = n < max && n * 8 > max ? max : n * 8) {
		int iters = n <= 128 ? 2000 : n <= 8192 ? 200 : 20;
		/* At most about 0.2 s a trial: an implementation that spins on
		 * oversubscribed cores takes milliseconds a call. */
		double tw = MPI_Wtime(), slow;
		for (int w = 0; w < 10; w++)
			MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		tw = (MPI_Wtime() - tw) / 10;
		MPI_Allreduce(&tw, &slow, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (slow * iters > 0.2)
			iters = slow > 0.2 / 5 ? 5 : (int)(0.2 / slow);
		for (int t = 0; t < trials; t++) {
			for (int w = 0; w < 10 && t > 0; w++)
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
