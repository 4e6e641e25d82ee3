/*
 * mpi_reduce_scatter: MPI_Reduce_scatter of doubles (MPI_SUM) with blocks of
 * their own sizes, rank i's (i + 1) shares of the vector, beside
 * MPI_Allreduce of the same vector in the same launch: what an
 * implementation that reduces the whole vector and keeps a block would pay
 * (ptl's MPI_Reduce_scatter before 2026-12-02). Plain MPI, any
 * implementation. Prints per size "reduce_scatter <bytes> <median us>
 * <min> <max> allreduce <median us> ratio <rs/ar>", medians of the trials'
 * means.
 *   ptlrun -n 2 --bind-to core bench/mpi_reduce_scatter_ptl [trials] [sizes]
 *   ptlrun -n 4 bench/mpi_reduce_scatter_ptl 7 65536,1048576
 * sizes: bytes of the whole vector, comma-separated (default 16 B - 8 MiB).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* mean us per call of `iters` calls, the slowest rank's; rs: reduce_scatter */
static double trial(int rs, double *in, double *out, const int *counts, int total, int iters)
{
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++)
		if (rs)
			MPI_Reduce_scatter(in, out, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		else
			MPI_Allreduce(in, out, total, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	double t = (MPI_Wtime() - t0) / iters * 1e6, worst;
	MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return worst;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, n, trials = argc > 1 ? atoi(argv[1]) : 7;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (trials < 1 || trials > 99)
		trials = 7;
	char *sizes = strdup(argc > 2 ? argv[2] : "16,256,4096,32768,262144,1048576,8388608");
	int *counts = malloc(sizeof(int) * (size_t)n);
	for (char *tok = strtok(sizes, ","); tok; tok = strtok(NULL, ",")) {
		int total = (int)(atol(tok) / 8), given = 0;
		for (int i = 0; i < n; i++)
			given += counts[i] = (int)((long)total * 2 * (i + 1) / ((long)n * (n + 1)));
		counts[n - 1] += total - given;
		double *in = malloc(8 * (size_t)total + 8), *out = malloc(8 * (size_t)total + 8);
		for (int i = 0; i < total; i++)
			in[i] = rank + i;
		int iters = total > 100000 ? 50 : 400;
		double rs[99], ar[99];
		for (int k = 0; k < trials; k++) {
			rs[k] = trial(1, in, out, counts, total, iters);
			ar[k] = trial(0, in, out, counts, total, iters);
		}
		qsort(rs, (size_t)trials, sizeof *rs, cmp);
		qsort(ar, (size_t)trials, sizeof *ar, cmp);
		if (rank == 0)
			printf("reduce_scatter %d %.3f %.3f %.3f allreduce %.3f ratio %.2f\n", total * 8, rs[trials / 2], rs[0],
			       rs[trials - 1], ar[trials / 2], rs[trials / 2] / ar[trials / 2]);
		free(in);
		free(out);
	}
	free(counts);
	free(sizes);
	MPI_Finalize();
	return 0;
}
