/* Ring: a token goes around with blocking Send/Recv, then every rank
 * shifts a buffer one step with Sendrecv and Sendrecv_replace; an
 * optional second argument is microseconds of "compute" per step.
 * usage: trc_ring [ITERATIONS [USEC]] */
#include <time.h>

#include "trc_prog.h"

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	int iters = trc_prog_iters(argc, argv, 10);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	long usec = argc > 2 ? atol(argv[2]) : 0;
	for (int it = 0; it < iters; it++) {
		int token = it;
		if (usec > 0) {
			struct timespec ts = { usec / 1000000, (usec % 1000000) * 1000 };
			nanosleep(&ts, NULL);
		}
		if (size > 1) {
			if (rank == 0) {
				MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
				MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				trc_prog_check(token == it + size - 1, "token went round");
			} else {
				MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				token++;
				MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
			}
		}
		long out[16] = { rank }, in[16];
		MPI_Sendrecv(out, 16, MPI_LONG, right, 2, in, 16, MPI_LONG, left, 2, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		trc_prog_check(in[0] == left, "sendrecv from the left");
		MPI_Sendrecv_replace(out, 16, MPI_LONG, right, 3, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Finalize();
	return 0;
}
