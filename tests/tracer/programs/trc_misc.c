/* The rest of the wrapped point-to-point calls, in a pattern whose
 * outcomes do not depend on timing (so the replay round trip is exact):
 * Init_thread, Ssend, Rsend, Bsend, Issend, Probe, Iprobe, Test, Testall,
 * Testany, Testsome, Waitany, Waitsome, Cancel, Request_free. Ranks work
 * in pairs (r, r^1); an unpaired last rank only joins the barriers. */
#include <string.h>

#include "trc_prog.h"

/* Until a request is complete, without completing it (not recorded). */
static void settle(MPI_Request r)
{
	int flag = 0;
	while (!flag)
		MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
	int rank, size, provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	int iters = trc_prog_iters(argc, argv, 4);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int p = rank ^ 1, paired = p < size, lo = rank < p;
	static char bsbuf[1 << 16];
	MPI_Buffer_attach(bsbuf, sizeof bsbuf);
	int a[4] = { 0 }, b[4] = { 0 };
	MPI_Status st, sts[2];
	for (int it = 0; it < iters; it++) {
		MPI_Request r[2];
		int flag, idx, outc, ind[2];
		if (paired) {
			/* Ssend / Recv */
			if (lo)
				MPI_Ssend(a, 4, MPI_INT, p, 1, MPI_COMM_WORLD);
			else
				MPI_Recv(b, 4, MPI_INT, p, 1, MPI_COMM_WORLD, &st);
			/* Rsend into a posted receive */
			if (!lo)
				MPI_Irecv(b, 4, MPI_INT, p, 2, MPI_COMM_WORLD, &r[0]);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (paired) {
			if (lo) {
				MPI_Rsend(a, 4, MPI_INT, p, 2, MPI_COMM_WORLD);
			} else {
				settle(r[0]);
				MPI_Test(&r[0], &flag, &st);
				trc_prog_check(flag, "test after the request settled");
			}
			/* Bsend, Probe then Iprobe (which then finds it) */
			if (lo) {
				MPI_Bsend(a, 4, MPI_INT, p, 3, MPI_COMM_WORLD);
			} else {
				MPI_Probe(p, 3, MPI_COMM_WORLD, &st);
				MPI_Iprobe(p, 3, MPI_COMM_WORLD, &flag, &st);
				trc_prog_check(flag, "iprobe after probe");
				MPI_Recv(b, 4, MPI_INT, p, 3, MPI_COMM_WORLD, &st);
			}
			/* Issend + Irecv both ways; Testall, Testany, Testsome,
			 * Waitany and Waitsome once everything has settled */
			MPI_Irecv(b, 4, MPI_INT, p, 4, MPI_COMM_WORLD, &r[0]);
			MPI_Issend(a, 4, MPI_INT, p, 4, MPI_COMM_WORLD, &r[1]);
			settle(r[0]);
			settle(r[1]);
			switch (it % 4) {
			case 0:
				MPI_Testall(2, r, &flag, sts);
				trc_prog_check(flag, "testall");
				break;
			case 1:
				MPI_Testany(2, r, &idx, &flag, &st);
				MPI_Waitany(2, r, &idx, &st);
				break;
			case 2:
				MPI_Testsome(2, r, &outc, ind, sts);
				trc_prog_check(outc == 2, "testsome");
				break;
			default:
				MPI_Waitsome(2, r, &outc, ind, sts);
				trc_prog_check(outc == 2, "waitsome");
			}
			/* a receive nobody matches, cancelled */
			MPI_Irecv(b, 4, MPI_INT, p, 999, MPI_COMM_WORLD, &r[0]);
			MPI_Cancel(&r[0]);
			MPI_Wait(&r[0], &st);
			/* a send whose request is freed */
			if (lo) {
				MPI_Isend(a, 4, MPI_INT, p, 5, MPI_COMM_WORLD, &r[1]);
				MPI_Request_free(&r[1]);
			} else {
				MPI_Recv(b, 4, MPI_INT, p, 5, MPI_COMM_WORLD, &st);
			}
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	void *bp;
	int bs;
	MPI_Buffer_detach(&bp, &bs);
	MPI_Finalize();
	return 0;
}
