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

/* A call that must fail with class cls and a message (MPI_Error_string of
 * its code) containing text; needs MPI_ERRORS_RETURN. True if it did. */
static inline int t_fails_with(int rc, int cls, const char *text, const char *what)
{
	int got = MPI_SUCCESS, len = 0;
	char msg[MPI_MAX_ERROR_STRING] = "";
	if (rc != MPI_SUCCESS) {
		MPI_Error_class(rc, &got);
		MPI_Error_string(rc, msg, &len);
	}
	CHECK(got == cls && strstr(msg, text), "%s: class %d, want %d; message '%s', want '%s'", what, got, cls,
	      msg, text);
	return got == cls && strstr(msg, text);
}

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
