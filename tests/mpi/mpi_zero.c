/* mpi_zero.c: zero-count calls with NULL buffers, as outside test suites
 * and applications make them (an empty block on some ranks, a "nothing to
 * do" call on all): every point-to-point and collective call succeeds, moves
 * nothing, and reports zero elements. Arguments the standard says are
 * ignored (send count and type with MPI_IN_PLACE, the receive side of
 * non-roots) may hold anything. */
#include "mpi_test.h"

static void p2p(void)
{
	MPI_Status st;
	MPI_Request rq[2];
	int count = -1, peer = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;

	OK(MPI_Sendrecv(NULL, 0, MPI_INT, peer, 1, NULL, 0, MPI_INT, from, 1, MPI_COMM_WORLD, &st));
	OK(MPI_Get_count(&st, MPI_INT, &count));
	CHECK(count == 0 && st.MPI_SOURCE == from && st.MPI_TAG == 1, "count %d source %d tag %d", count,
	      st.MPI_SOURCE, st.MPI_TAG);
	OK(MPI_Irecv(NULL, 0, MPI_DOUBLE, from, 2, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Isend(NULL, 0, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &rq[1]));
	OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	/* A zero-count message matches a receive with room, and says 0. */
	int room[4] = { 7, 7, 7, 7 };
	OK(MPI_Sendrecv(NULL, 0, MPI_INT, peer, 3, room, 4, MPI_INT, from, 3, MPI_COMM_WORLD, &st));
	OK(MPI_Get_count(&st, MPI_INT, &count));
	CHECK(count == 0 && room[0] == 7 && room[3] == 7, "count %d, room %d %d", count, room[0], room[3]);
	if (t_size > 1) {
		if (t_rank == 0)
			OK(MPI_Ssend(NULL, 0, MPI_BYTE, 1, 4, MPI_COMM_WORLD));
		else if (t_rank == 1)
			OK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	}
}

static void colls(void)
{
	int n = t_size;
	int *zeros = calloc((size_t)n, sizeof(int));

	OK(MPI_Bcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
	OK(MPI_Reduce(NULL, NULL, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
	OK(MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	OK(MPI_Allreduce(MPI_IN_PLACE, NULL, 0, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
	OK(MPI_Gather(NULL, 0, MPI_BYTE, NULL, 0, MPI_BYTE, 0, MPI_COMM_WORLD));
	OK(MPI_Scatter(NULL, 0, MPI_BYTE, NULL, 0, MPI_BYTE, n - 1, MPI_COMM_WORLD));
	OK(MPI_Gatherv(NULL, 0, MPI_INT, NULL, zeros, zeros, MPI_INT, 0, MPI_COMM_WORLD));
	OK(MPI_Scatterv(NULL, zeros, zeros, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
	OK(MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));
	/* With MPI_IN_PLACE the send count and type are ignored. */
	OK(MPI_Allgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, NULL, 0, MPI_BYTE, MPI_COMM_WORLD));
	OK(MPI_Allgatherv(NULL, 0, MPI_INT, NULL, zeros, zeros, MPI_INT, MPI_COMM_WORLD));
	OK(MPI_Alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));
	OK(MPI_Alltoallv(NULL, zeros, zeros, MPI_INT, NULL, zeros, zeros, MPI_INT, MPI_COMM_WORLD));
	OK(MPI_Reduce_scatter(NULL, NULL, zeros, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	OK(MPI_Reduce_scatter_block(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	OK(MPI_Scan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	OK(MPI_Exscan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	/* A non-contiguous type with nothing in it takes the packing paths. */
	MPI_Datatype vec;
	OK(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
	OK(MPI_Type_commit(&vec));
	OK(MPI_Bcast(NULL, 0, vec, 0, MPI_COMM_WORLD));
	OK(MPI_Allreduce(NULL, NULL, 0, vec, MPI_SUM, MPI_COMM_WORLD));
	OK(MPI_Gather(NULL, 0, vec, NULL, 0, vec, 0, MPI_COMM_WORLD));
	OK(MPI_Allgather(NULL, 0, vec, NULL, 0, vec, MPI_COMM_WORLD));
	OK(MPI_Scan(NULL, NULL, 0, vec, MPI_SUM, MPI_COMM_WORLD));
	OK(MPI_Type_free(&vec));
	/* Empty blocks on some ranks only: the others still get their data. */
	int *counts = calloc((size_t)n, sizeof(int)), *displs = calloc((size_t)n, sizeof(int));
	int total = 0;
	for (int j = 0; j < n; j++) {
		counts[j] = j % 2;
		displs[j] = total;
		total += counts[j];
	}
	int *all = total ? malloc((size_t)total * sizeof(int)) : NULL, mine = 100 + t_rank;
	OK(MPI_Allgatherv(counts[t_rank] ? &mine : NULL, counts[t_rank], MPI_INT, all, counts, displs,
			  MPI_INT, MPI_COMM_WORLD));
	for (int j = 0; j < n; j++)
		if (counts[j])
			CHECK(all[displs[j]] == 100 + j, "block of rank %d: %d", j, all[displs[j]]);
	free(all);
	free(counts);
	free(displs);
	free(zeros);
}

/* The nonblocking forms the same way, each request waited. */
static void icolls(void)
{
	int n = t_size, *zeros = calloc((size_t)n, sizeof(int));
	MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)n);
	MPI_Request r[18];
	int k = 0;

	for (int i = 0; i < n; i++)
		types[i] = MPI_INT;
	for (int i = 0; i < 18; i++) /* a call that fails leaves its slot null */
		r[i] = MPI_REQUEST_NULL;

	OK(MPI_Ibcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Ireduce(NULL, NULL, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Iallreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Igather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Iscatter(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Igatherv(NULL, 0, MPI_INT, NULL, zeros, zeros, MPI_INT, 0, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Iscatterv(NULL, zeros, zeros, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD, &r[k++]));
	/* these two said "out of memory" once: a zero-size block's NULL
	 * buffer was taken for a failed allocation */
	OK(MPI_Iallgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Ialltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Iallgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, NULL, 0, MPI_BYTE, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, NULL, 0, MPI_INT, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Ialltoallw(NULL, zeros, zeros, types, NULL, zeros, zeros, types, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Iallgatherv(NULL, 0, MPI_INT, NULL, zeros, zeros, MPI_INT, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Ialltoallv(NULL, zeros, zeros, MPI_INT, NULL, zeros, zeros, MPI_INT, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Ireduce_scatter(NULL, NULL, zeros, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Ireduce_scatter_block(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Iscan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Iexscan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[k++]));
	OK(MPI_Waitall(k, r, MPI_STATUSES_IGNORE));
	free(types);
	free(zeros);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	p2p();
	colls();
	icolls();
	return t_finish("mpi_zero");
}
