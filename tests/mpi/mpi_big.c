/* mpi_big.c: a collective whose schedule moves one message past 2 GiB (an
 * MPI_Bcast of 600 Mi ints, 2.4 GiB, on 2 ranks: one step of it all). The
 * schedule's byte counts went to the sends and receives as an int: the
 * send was refused and the receiver waited out PTL_COLL_TIMEOUT. Every
 * rank checks every page's first int and the last. */
#include "mpi_test.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	const size_t n = (size_t)600 << 20;
	int *b = malloc(n * sizeof *b);
	CHECK(b != NULL, "no memory for %zu ints", n);
	if (!b)
		return t_finish("mpi_big");
	for (size_t i = 0; i < n; i += 1024)
		b[i] = t_rank == 0 ? (int)(i * 7 + 1) : -1;
	b[n - 1] = t_rank == 0 ? 99 : -1;
	OK(MPI_Bcast(b, (int)n, MPI_INT, 0, MPI_COMM_WORLD));
	size_t bad = 0;
	for (size_t i = 0; i < n - 1; i += 1024)
		bad += b[i] != (int)(i * 7 + 1);
	CHECK(bad == 0 && b[n - 1] == 99, "%zu pages wrong, last int %d", bad, b[n - 1]);
	free(b);
	return t_finish("mpi_big");
}
