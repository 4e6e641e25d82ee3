/* Shared bits of the tracer's MPI test programs. Each program takes the
 * iteration count as its first argument. */
#ifndef TRC_PROG_H
#define TRC_PROG_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static inline int trc_prog_iters(int argc, char **argv, int def)
{
	int n = argc > 1 ? atoi(argv[1]) : def;
	return n > 0 ? n : def;
}

static inline void trc_prog_check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "check failed: %s\n", what);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
}

#endif
