/* mpi_test.h: checks for the tests/mpi programs (plain MPI, any MPI). */
#ifndef MPI_TEST_H
#define MPI_TEST_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_rank, t_size, t_fails;

#define CHECK(cond, ...)                                                                     \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", t_rank, __FILE__, \
				__LINE__, #cond);                                            \
			fprintf(stderr, __VA_ARGS__);                                        \
			fputc('\n', stderr);                                                 \
			t_fails++;                                                           \
		}                                                                            \
	} while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s", #call)

static inline void t_init(int *argc, char ***argv)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &t_size);
}

/* Every rank's failures count; rank 0 prints one line. */
static inline int t_finish(const char *name)
{
	int all = 0;
	MPI_Allreduce(&t_fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (t_rank == 0)
		printf("%s: %d ranks: %s (%d failed checks)\n", name, t_size, all ? "FAIL" : "ok", all);
	MPI_Finalize();
	return all ? 1 : 0;
}
#endif
