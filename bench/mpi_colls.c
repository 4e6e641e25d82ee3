/*
 * mpi_colls: loops of each collective besides allreduce, per-rank block
 * sizes, plain MPI (any implementation; bench/mpi_colls.sh builds it
 * against Open MPI too and compares). A trial times CALLS calls back to
 * back, the slowest rank's mean; the row is the median of the trials.
 *
 *   ptlrun -n 4 --bind-to core bench/mpi_colls_ptl [trials] [sizes]
 *
 * sizes: bytes a rank's block, comma-separated (default 64,4096,65536,
 * 1048576). Prints "<op> <bytes> <median us> <min> <max>" for bcast,
 * allgather, reduce, gather, scatter, reduce_scatter_block, scan,
 * alltoall, ialltoallv (blocks back to back, started and waited for
 * at once) and ibcast (started and waited for). Doubles, MPI_SUM, root
 * 0. Algorithms follow the implementation's own choice (ptl:
 * PTL_COLL_ALGO to force one).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TRIALS = 99 };

static const char *const op_name[] = { "bcast",	  "allgather", "reduce",     "gather",	  "scatter",
				       "reduce_scatter_block", "scan", "alltoall", "ialltoallv", "ibcast" };
#define NOPS ((int)(sizeof op_name / sizeof op_name[0]))

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* one call of op k on blocks of cnt doubles */
static void call(int k, double *a, double *b, int cnt, int *counts, int *displs)
{
	MPI_Request rq;
	switch (k) {
	case 0: MPI_Bcast(a, cnt, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
	case 1: MPI_Allgather(a, cnt, MPI_DOUBLE, b, cnt, MPI_DOUBLE, MPI_COMM_WORLD); break;
	case 2: MPI_Reduce(a, b, cnt, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
	case 3: MPI_Gather(a, cnt, MPI_DOUBLE, b, cnt, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
	case 4: MPI_Scatter(a, cnt, MPI_DOUBLE, b, cnt, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
	case 5: MPI_Reduce_scatter_block(a, b, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
	case 6: MPI_Scan(a, b, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
	case 7: MPI_Alltoall(a, cnt, MPI_DOUBLE, b, cnt, MPI_DOUBLE, MPI_COMM_WORLD); break;
	case 8:
		MPI_Ialltoallv(a, counts, displs, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		break;
	default:
		MPI_Ibcast(a, cnt, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, n, trials = argc > 1 ? atoi(argv[1]) : 7;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (trials < 1 || trials > MAX_TRIALS)
		trials = 7;
	char *list = strdup(argc > 2 ? argv[2] : "64,4096,65536,1048576");
	int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
	for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
		size_t len = strtoul(s, NULL, 0);
		int cnt = (int)(len / sizeof(double)), calls = len >= 262144 ? 5 : 20;
		double *a = calloc((size_t)cnt * (size_t)n + 1, sizeof(double));
		double *b = calloc((size_t)cnt * (size_t)n + 1, sizeof(double));
		for (int j = 0; j < n; j++) {
			counts[j] = cnt;
			displs[j] = j * cnt;
		}
		for (int k = 0; k < NOPS; k++) {
			double v[MAX_TRIALS];
			for (int t = -1; t < trials; t++) { /* trial -1 warms up */
				MPI_Barrier(MPI_COMM_WORLD);
				double t0 = MPI_Wtime();
				for (int i = 0; i < calls; i++)
					call(k, a, b, cnt, counts, displs);
				double us = (MPI_Wtime() - t0) / calls * 1e6, worst;
				MPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
				if (t >= 0)
					v[t] = worst;
			}
			qsort(v, (size_t)trials, sizeof v[0], cmp);
			if (rank == 0)
				printf("%s %zu %.2f %.2f %.2f\n", op_name[k], len, v[trials / 2], v[0], v[trials - 1]);
			fflush(stdout);
		}
		free(a);
		free(b);
	}
	free(list);
	free(counts);
	free(displs);
	MPI_Finalize();
	return 0;
}
