/*
 * ptlcc_app: an MPI program built by ptlcc at test time (tests/tools/
 * ptlcc.sh, and `make installcheck` against an installed tree), as a user
 * builds one: each rank passes its rank round the ring and sums the ranks
 * with MPI_Allreduce. Prints "ptlcc_app: rank R of N: ok" and exits 0, or
 * names what was wrong and exits 1.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, left, got = -1, sum = -1;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	left = (rank + size - 1) % size;
	MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	int ok = got == left && sum == size * (size - 1) / 2;
	if (ok)
		printf("ptlcc_app: rank %d of %d: ok\n", rank, size);
	else
		printf("ptlcc_app: rank %d of %d: received %d (want %d), sum %d (want %d)\n", rank, size, got, left,
		       sum, size * (size - 1) / 2);
	MPI_Finalize();
	return ok ? 0 : 1;
}
