/* mpi_turns: how often each rank gets its core, call by call.
 *
 * Where ranks outnumber the cores they take turns on them, and a call's
 * time is mostly its turns: each a switch and the rank's work until it
 * waits again. This prints, for back-to-back calls of one collective, the
 * time a call and each rank's scheduler slices a call (the third field of
 * /proc/self/schedstat: times the kernel put the thread on a CPU), so the
 * turns a schedule takes can be set beside what ptltool coll --bound
 * makes of it. Any MPI; the figures doc/bench-notes.md and ptltool-coll(1)
 * quote:
 *
 *   PTL_COLL_ALGO=recursive_doubling ptlrun -n 4 --bind-to core \
 *       bench/mpi_turns_ptl allreduce 2000 8 32768
 *
 * usage: mpi_turns allreduce|barrier|shift|bcast [calls] [bytes...]
 * (shift: each rank sends to the next and receives from the one before,
 * MPI_Irecv, MPI_Isend, MPI_Waitall). Prints per size
 * "OP BYTES: US us a call, SLICES slices a rank a call (rank r: ...)". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WARMUP = 200 };

/* this thread's scheduler slices so far (0 where schedstat is missing) */
static unsigned long long slices(void)
{
	unsigned long long run, wait, n = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	if (f && fscanf(f, "%llu %llu %llu", &run, &wait, &n) != 3)
		n = 0;
	if (f)
		fclose(f);
	return n;
}

static void one_call(const char *op, char *a, char *b, int n, int rank, int size)
{
	if (!strcmp(op, "allreduce")) {
		MPI_Allreduce(a, b, n / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	} else if (!strcmp(op, "barrier")) {
		MPI_Barrier(MPI_COMM_WORLD);
	} else if (!strcmp(op, "bcast")) {
		MPI_Bcast(a, n, MPI_BYTE, 0, MPI_COMM_WORLD);
	} else {
		MPI_Request q[2];
		MPI_Irecv(b, n, MPI_BYTE, (rank + size - 1) % size, 1, MPI_COMM_WORLD, &q[0]);
		MPI_Isend(a, n, MPI_BYTE, (rank + 1) % size, 1, MPI_COMM_WORLD, &q[1]);
		MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const char *op = argc > 1 ? argv[1] : "allreduce";
	int calls = argc > 2 ? atoi(argv[2]) : 2000;
	if (strcmp(op, "allreduce") && strcmp(op, "barrier") && strcmp(op, "shift") && strcmp(op, "bcast")) {
		if (rank == 0)
			fprintf(stderr, "mpi_turns: OP is allreduce, barrier, shift or bcast, not '%s'\n", op);
		MPI_Finalize();
		return 2;
	}
	if (calls < 1)
		calls = 2000;
	int nsizes = argc > 3 ? argc - 3 : 1;
	for (int k = 0; k < nsizes; k++) {
		long v = argc > 3 ? atol(argv[3 + k]) : 8;
		int n = v < 8 ? 8 : v > (64 << 20) ? 64 << 20 : (int)v;
		char *a = calloc(1, (size_t)n), *b = calloc(1, (size_t)n);
		if (!a || !b)
			MPI_Abort(MPI_COMM_WORLD, 1);
		for (int i = 0; i < WARMUP; i++)
			one_call(op, a, b, n, rank, size);
		MPI_Barrier(MPI_COMM_WORLD);
		unsigned long long s0 = slices();
		double t0 = MPI_Wtime();
		for (int i = 0; i < calls; i++)
			one_call(op, a, b, n, rank, size);
		double mine[2] = { (MPI_Wtime() - t0) / calls * 1e6, (double)(slices() - s0) / calls };
		double *all = rank == 0 ? malloc(2 * sizeof(double) * (size_t)size) : NULL;
		MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		if (rank == 0) {
			double us = 0, sl = 0;
			for (int r = 0; r < size; r++) {
				us += all[2 * r] / size;
				sl += all[2 * r + 1] / size;
			}
			printf("%s %d: %.3f us a call, %.2f slices a rank a call (rank r:", op, n, us, sl);
			for (int r = 0; r < size; r++)
				printf(" %.2f", all[2 * r + 1]);
			printf(")\n");
			fflush(stdout);
		}
		free(all);
		free(a);
		free(b);
	}
	MPI_Finalize();
	return 0;
}
