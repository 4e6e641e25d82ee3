/* 2-D 5-point stencil on a non-periodic grid: halo exchange with
 * Irecv/Isend/Waitall, an Allreduce of the residual every iteration and a
 * Bcast every tenth. By default missing neighbours are MPI_PROC_NULL (what
 * MPI_Cart_shift gives); with "skip" as the second argument they are left
 * out instead, so edge ranks make fewer calls; with "persist" the halo
 * requests are persistent (Recv_init/Send_init once, Startall each
 * iteration, Request_free at the end).
 * usage: trc_stencil [ITERATIONS [skip|persist]] */
#include <string.h>

#include "trc_prog.h"

#define HALO 64

int main(int argc, char **argv)
{
	int rank, size, dims[2] = { 0, 0 };
	MPI_Init(&argc, &argv);
	int iters = trc_prog_iters(argc, argv, 20);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Dims_create(size, 2, dims);
	int x = rank % dims[0], y = rank / dims[0];
	int skip = argc > 2 && !strcmp(argv[2], "skip");
	int all[4] = { x > 0 ? rank - 1 : MPI_PROC_NULL, x < dims[0] - 1 ? rank + 1 : MPI_PROC_NULL,
		       y > 0 ? rank - dims[0] : MPI_PROC_NULL, y < dims[1] - 1 ? rank + dims[0] : MPI_PROC_NULL };
	int nbr[4], nn = 0;
	for (int k = 0; k < 4; k++)
		if (!skip || all[k] != MPI_PROC_NULL)
			nbr[nn++] = all[k];

	int persist = argc > 2 && !strcmp(argv[2], "persist");
	static double sendb[4][HALO], recvb[4][HALO];
	double u = rank, param = 0;
	MPI_Request req[8];
	for (int k = 0; persist && k < nn; k++) {
		MPI_Recv_init(recvb[k], HALO, MPI_DOUBLE, nbr[k], 7, MPI_COMM_WORLD, &req[k]);
		MPI_Send_init(sendb[k], HALO, MPI_DOUBLE, nbr[k], 7, MPI_COMM_WORLD, &req[nn + k]);
	}
	for (int it = 0; it < iters; it++) {
		MPI_Status st[8];
		if (it % 10 == 0) {
			param = it;
			MPI_Bcast(&param, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		}
		for (int k = 0; k < nn; k++) {
			for (int i = 0; i < HALO; i++)
				sendb[k][i] = u + i;
			if (!persist)
				MPI_Irecv(recvb[k], HALO, MPI_DOUBLE, nbr[k], 7, MPI_COMM_WORLD, &req[k]);
		}
		for (int k = 0; k < nn && !persist; k++)
			MPI_Isend(sendb[k], HALO, MPI_DOUBLE, nbr[k], 7, MPI_COMM_WORLD, &req[nn + k]);
		if (persist)
			MPI_Startall(2 * nn, req);
		MPI_Waitall(2 * nn, req, st);
		for (int k = 0; k < nn; k++)
			if (nbr[k] != MPI_PROC_NULL)
				u += 0.01 * (recvb[k][0] - u);
		double res = u, sum;
		MPI_Allreduce(&res, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	for (int k = 0; persist && k < 2 * nn; k++)
		MPI_Request_free(&req[k]);
	MPI_Finalize();
	return 0;
}
