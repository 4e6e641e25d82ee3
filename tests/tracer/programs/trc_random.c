/* Irregular: each step every rank sends to a random peer and receives
 * from whoever picked it (the same seeded generator on every rank), with
 * random sizes and tags; Waitany and Waitall complete them. */
#include <string.h>

#include "trc_prog.h"

static unsigned long long rng = 88172645463325252ULL;
static unsigned long long next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	int iters = trc_prog_iters(argc, argv, 20);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int *perm = malloc(size * sizeof *perm), *inv = malloc(size * sizeof *inv);
	static char sbuf[4096], rbuf[4096];
	for (int it = 0; it < iters; it++) {
		for (int i = 0; i < size; i++)
			perm[i] = i;
		for (int i = size - 1; i > 0; i--) {
			int j = (int)(next_rand() % (unsigned)(i + 1)), t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (int i = 0; i < size; i++)
			inv[perm[i]] = i;
		int len = (int)(next_rand() % 4096) + 1, tag = (int)(next_rand() % 100);
		MPI_Request r[2];
		MPI_Status st[2];
		MPI_Irecv(rbuf, len, MPI_CHAR, inv[rank], tag, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(sbuf, len, MPI_CHAR, perm[rank], tag, MPI_COMM_WORLD, &r[1]);
		/* Waitany over one live request, so that which one completes
		 * (and so the replay) does not depend on timing */
		int idx;
		MPI_Waitany(1, &r[1], &idx, MPI_STATUS_IGNORE);
		MPI_Waitall(2, r, st);
		if (next_rand() % 3 == 0)
			MPI_Barrier(MPI_COMM_WORLD);
	}
	free(perm);
	free(inv);
	MPI_Finalize();
	return 0;
}
