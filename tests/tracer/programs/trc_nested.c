/* Nested loops with different trip counts, including a trip count that
 * depends on the rank: loops of equal counts must merge across ranks,
 * loops of different counts must not. */
#include "trc_prog.h"

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	int iters = trc_prog_iters(argc, argv, 3);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int partner = rank ^ 1;
	for (int i = 0; i < iters; i++) {
		for (int j = 0; j < 4; j++) {
			int v = j;
			if (partner < size) {
				if (rank % 2 == 0) {
					MPI_Send(&v, 1, MPI_INT, partner, j, MPI_COMM_WORLD);
					MPI_Recv(&v, 1, MPI_INT, partner, j, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				} else {
					MPI_Recv(&v, 1, MPI_INT, partner, j, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					MPI_Send(&v, 1, MPI_INT, partner, j, MPI_COMM_WORLD);
				}
			}
			for (int k = 0; k < 3; k++)
				MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		}
		/* rank-dependent trip count, on a private partner pair */
		int trips = 2 + rank % 3;
		for (int k = 0; k < trips; k++) {
			MPI_Request r;
			int v = k, w;
			MPI_Irecv(&w, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &r);
			MPI_Send(&v, 1, MPI_INT, rank, 9, MPI_COMM_WORLD);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
