/* A loop over every collective the tracer wraps, on MPI_COMM_WORLD and on
 * communicators made by Comm_dup, Comm_split and Comm_create. */
#include <string.h>

#include "trc_prog.h"

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	int iters = trc_prog_iters(argc, argv, 5);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int *cnt = malloc(size * sizeof *cnt), *dsp = malloc(size * sizeof *dsp);
	double *a = calloc(4 * size, sizeof *a), *b = calloc(4 * size, sizeof *b);
	for (int i = 0; i < size; i++) {
		cnt[i] = 2;
		dsp[i] = 2 * i;
	}
	MPI_Comm dup, half, evens;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	MPI_Group wg, eg;
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	int ne = (size + 1) / 2, *er = malloc(ne * sizeof *er);
	for (int i = 0; i < ne; i++)
		er[i] = 2 * i;
	MPI_Group_incl(wg, ne, er, &eg);
	MPI_Comm_create(MPI_COMM_WORLD, eg, &evens);
	for (int it = 0; it < iters; it++) {
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Bcast(a, 4, MPI_DOUBLE, it % size, MPI_COMM_WORLD);
		MPI_Reduce(a, b, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		MPI_Allreduce(a, b, 4, MPI_DOUBLE, MPI_SUM, dup);
		MPI_Allgather(a, 2, MPI_DOUBLE, b, 2, MPI_DOUBLE, MPI_COMM_WORLD);
		MPI_Allgatherv(a, 2, MPI_DOUBLE, b, cnt, dsp, MPI_DOUBLE, MPI_COMM_WORLD);
		MPI_Gather(a, 2, MPI_DOUBLE, b, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		MPI_Gatherv(a, 2, MPI_DOUBLE, b, cnt, dsp, MPI_DOUBLE, size - 1, MPI_COMM_WORLD);
		MPI_Scatter(a, 2, MPI_DOUBLE, b, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		MPI_Scatterv(a, cnt, dsp, MPI_DOUBLE, b, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		MPI_Alltoall(a, 2, MPI_DOUBLE, b, 2, MPI_DOUBLE, MPI_COMM_WORLD);
		MPI_Alltoallv(a, cnt, dsp, MPI_DOUBLE, b, cnt, dsp, MPI_DOUBLE, MPI_COMM_WORLD);
		MPI_Reduce_scatter(a, b, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		MPI_Reduce_scatter_block(a, b, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		int v = rank, s;
		MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		trc_prog_check(s == rank * (rank + 1) / 2, "scan");
		MPI_Exscan(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_MIN, half);
		trc_prog_check(s == rank % 2, "allreduce on the split communicator");
		if (evens != MPI_COMM_NULL)
			MPI_Bcast(&v, 1, MPI_INT, 0, evens);
	}
	if (evens != MPI_COMM_NULL)
		MPI_Comm_free(&evens);
	MPI_Comm_free(&half);
	MPI_Comm_free(&dup);
	MPI_Group_free(&eg);
	MPI_Group_free(&wg);
	free(er);
	free(a);
	free(b);
	free(cnt);
	free(dsp);
	MPI_Finalize();
	return 0;
}
