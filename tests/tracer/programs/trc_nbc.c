/* The calls the tracer records since nonblocking collectives, matched
 * probes and topologies came: every I-collective outstanding at once and
 * completed by one Waitall, on MPI_COMM_WORLD and on communicators made
 * by Cart_create, Cart_sub, Comm_split_type, Comm_dup_with_info and
 * Comm_create_group (called by the even ranks only), and the merge of an
 * intercommunicator (Intercomm_create, a Sendrecv across, Allreduce, Bcast
 * from MPI_ROOT, Allgather and Barrier on it, Intercomm_merge);
 * graph topologies and the neighbourhood collectives;
 * Irsend and Ibsend; Mprobe, Improbe, Mrecv, Imrecv, receiving messages
 * in another order than they were probed. Outcomes do not depend on
 * timing, so the replay round trip is exact. Ranks pair as (r, r^1) for
 * the point-to-point part; an unpaired last rank only joins collectives. */
#include <string.h>

#include "trc_prog.h"

#define NC 16	/* the nonblocking collectives posted per round */

/* Every nonblocking collective on comm, all in flight together; checks
 * a few results so a replay that garbles arguments would be caught by
 * the run itself, not only by the trace comparison. */
static void all_icolls(MPI_Comm comm, int it)
{
	int rank, n;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &n);
	int root = it % n;
	int one = rank + 1, sum = 0, red = 0, bc = rank == root ? 42 + it : 0, scan = 0, exscan = 0;
	int *ag = calloc((size_t)n, sizeof *ag), *agv = calloc((size_t)n, sizeof *agv);
	int *ga = calloc((size_t)n, sizeof *ga), *gav = calloc((size_t)n, sizeof *gav);
	int *src = calloc((size_t)n, sizeof *src), *a2a = calloc((size_t)n, sizeof *a2a);
	int *a2av = calloc((size_t)n, sizeof *a2av), *rsin = calloc((size_t)n, sizeof *rsin);
	int *ones = calloc((size_t)n, sizeof *ones), *displs = calloc((size_t)n, sizeof *displs);
	trc_prog_check(ag && agv && ga && gav && src && a2a && a2av && rsin && ones && displs, "memory");
	for (int i = 0; i < n; i++) {
		src[i] = rank * 100 + i;
		rsin[i] = i;
		ones[i] = 1;
		displs[i] = i;
	}
	int sc = -1, scv = -1, rs = 0, rsb = 0;
	MPI_Request r[NC];
	MPI_Ibarrier(comm, &r[0]);
	MPI_Ibcast(&bc, 1, MPI_INT, root, comm, &r[1]);
	MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm, &r[2]);
	MPI_Ireduce(&one, &red, 1, MPI_INT, MPI_SUM, root, comm, &r[3]);
	MPI_Iallgather(&one, 1, MPI_INT, ag, 1, MPI_INT, comm, &r[4]);
	MPI_Iallgatherv(&one, 1, MPI_INT, agv, ones, displs, MPI_INT, comm, &r[5]);
	MPI_Igather(&one, 1, MPI_INT, ga, 1, MPI_INT, root, comm, &r[6]);
	MPI_Igatherv(&one, 1, MPI_INT, gav, ones, displs, MPI_INT, root, comm, &r[7]);
	MPI_Iscatter(src, 1, MPI_INT, &sc, 1, MPI_INT, root, comm, &r[8]);
	MPI_Iscatterv(src, ones, displs, MPI_INT, &scv, 1, MPI_INT, root, comm, &r[9]);
	MPI_Ialltoall(src, 1, MPI_INT, a2a, 1, MPI_INT, comm, &r[10]);
	MPI_Ialltoallv(src, ones, displs, MPI_INT, a2av, ones, displs, MPI_INT, comm, &r[11]);
	MPI_Ireduce_scatter(rsin, &rs, ones, MPI_INT, MPI_SUM, comm, &r[12]);
	MPI_Ireduce_scatter_block(rsin, &rsb, 1, MPI_INT, MPI_SUM, comm, &r[13]);
	MPI_Iscan(&one, &scan, 1, MPI_INT, MPI_SUM, comm, &r[14]);
	MPI_Iexscan(&one, &exscan, 1, MPI_INT, MPI_SUM, comm, &r[15]);
	MPI_Status sts[NC];	/* not MPI_STATUSES_IGNORE: gcc flags MPICH's as an empty array */
	MPI_Waitall(NC, r, sts);
	trc_prog_check(bc == 42 + it, "ibcast");
	trc_prog_check(sum == n * (n + 1) / 2, "iallreduce");
	trc_prog_check(rank != root || red == sum, "ireduce");
	trc_prog_check(ag[n - 1] == n && agv[0] == 1, "iallgather(v)");
	trc_prog_check(rank != root || (ga[n - 1] == n && gav[n - 1] == n), "igather(v)");
	trc_prog_check(sc == root * 100 + rank && scv == sc, "iscatter(v)");
	trc_prog_check(a2a[n - 1] == (n - 1) * 100 + rank && a2av[0] == rank, "ialltoall(v)");
	trc_prog_check(rs == rank * n && rsb == rank * n, "ireduce_scatter(_block)");
	trc_prog_check(scan == (rank + 1) * (rank + 2) / 2 && (rank == 0 || exscan == rank * (rank + 1) / 2),
		       "iscan / iexscan");
	free(ag), free(agv), free(ga), free(gav), free(src), free(a2a);
	free(a2av), free(rsin), free(ones), free(displs);
}

/* Irsend and Ibsend to the partner, and matched probes of two messages
 * received in the other order than probed (message offsets 1 and 2; their
 * sizes differ, so a replay receiving the wrong one fails truncated), and
 * a matched probe of MPI_PROC_NULL. */
static void pair_p2p(int p, int lo)
{
	int a = 7, b = 0, c = 0;
	MPI_Request r;
	MPI_Status st;
	if (!lo)
		MPI_Irecv(&b, 1, MPI_INT, p, 1, MPI_COMM_WORLD, &r);
	MPI_Sendrecv(&a, 0, MPI_INT, p, 9, &c, 0, MPI_INT, p, 9, MPI_COMM_WORLD, &st);	/* receive is posted */
	if (lo) {
		MPI_Irsend(&a, 1, MPI_INT, p, 1, MPI_COMM_WORLD, &r);
		MPI_Wait(&r, &st);
		MPI_Ibsend(&a, 1, MPI_INT, p, 2, MPI_COMM_WORLD, &r);
		MPI_Wait(&r, &st);
		int m5 = 5, m6[2] = { 6, 6 };
		MPI_Send(&m5, 1, MPI_INT, p, 5, MPI_COMM_WORLD);
		MPI_Send(m6, 2, MPI_INT, p, 6, MPI_COMM_WORLD);
		return;
	}
	MPI_Wait(&r, &st);
	MPI_Recv(&c, 1, MPI_INT, p, 2, MPI_COMM_WORLD, &st);
	trc_prog_check(b == 7 && c == 7, "irsend / ibsend");
	MPI_Message m6, m5, mnull;
	int flag = 0, v5 = 0, v6[2] = { 0, 0 }, vn = -1;
	MPI_Mprobe(p, 6, MPI_COMM_WORLD, &m6, &st);
	MPI_Probe(p, 5, MPI_COMM_WORLD, &st);	/* so the Improbe finds it */
	MPI_Improbe(p, 5, MPI_COMM_WORLD, &flag, &m5, &st);
	trc_prog_check(flag, "improbe after probe");
	MPI_Mrecv(&v5, 1, MPI_INT, &m5, &st);
	MPI_Imrecv(v6, 2, MPI_INT, &m6, &r);
	MPI_Wait(&r, &st);
	trc_prog_check(v5 == 5 && v6[1] == 6, "mrecv / imrecv");
	MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &mnull, &st);
	MPI_Mrecv(&vn, 1, MPI_INT, &mnull, &st);
	trc_prog_check(vn == -1, "mrecv of MPI_PROC_NULL leaves the buffer");
}

/* Graph topologies and the neighbourhood collectives on them and on a
 * Cartesian communicator: a weighted directed ring (adjacent), a star
 * given by both ends (Dist_graph_create, unweighted), a ring graph. */
static void graphs(MPI_Comm cart, int it)
{
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int src = (rank + size - 1) % size, dst = (rank + 1) % size, w = 3;
	MPI_Comm ring, star, graph;
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &w, 1, &dst, &w, MPI_INFO_NULL, 0, &ring);
	int me[1] = { rank }, deg[1] = { rank ? 1 : size - 1 }, *to = malloc(sizeof(int) * (size_t)size);
	for (int r = 1; r < size; r++)
		to[r - 1] = r;
	if (rank)
		to[0] = 0;
	MPI_Dist_graph_create(MPI_COMM_WORLD, 1, me, deg, to, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &star);
	int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 2 * (size_t)size);
	for (int i = 0; i < size; i++) {
		index[i] = 2 * (i + 1);
		edges[2 * i] = (i + size - 1) % size;
		edges[2 * i + 1] = (i + 1) % size;
	}
	MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph);
	int v = 10 * rank + it, in[64], cnt[64], dsp[64], one[2] = { 1, 1 }, two[2] = { 0, 1 };
	for (int i = 0; i < 64; i++)
		cnt[i] = 1, dsp[i] = i;
	MPI_Neighbor_allgather(&v, 1, MPI_INT, in, 1, MPI_INT, ring);
	trc_prog_check(in[0] == 10 * src + it, "neighbour allgather on the ring");
	MPI_Neighbor_allgatherv(&v, 1, MPI_INT, in, cnt, dsp, MPI_INT, star);
	int sum = 0, want = 0;	/* Dist_graph_create's order of neighbours is the library's */
	for (int k = 0; k < (rank ? 1 : size - 1); k++) {
		sum += in[k];
		want += rank ? it : 10 * (k + 1) + it;
	}
	trc_prog_check(sum == want, "neighbour allgatherv on the star");
	int out[2] = { v, v + 1 };
	MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, graph);
	MPI_Neighbor_alltoallv(out, one, two, MPI_INT, in, one, two, MPI_INT, cart);
	/* the w-forms: a datatype per block */
	MPI_Datatype pair, t2[2];
	MPI_Type_contiguous(2, MPI_INT, &pair);
	MPI_Type_commit(&pair);
	MPI_Aint ad[2] = { 0, sizeof(int) };
	t2[0] = t2[1] = MPI_INT;
	MPI_Neighbor_alltoallw(out, one, ad, t2, in, one, ad, t2, cart);
	int *cnt1 = malloc(sizeof(int) * 2 * (size_t)size), *dsp1 = cnt1 + size;
	MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)size);
	int *rbuf = malloc(sizeof(int) * 2 * (size_t)size);
	for (int r = 0; r < size; r++) {
		cnt1[r] = 1, dsp1[r] = r * 2 * (int)sizeof(int), ty[r] = pair;
	}
	for (int r = 0; r < 2 * size; r++)
		rbuf[r] = rank;
	MPI_Alltoallw(rbuf, cnt1, dsp1, ty, in, cnt1, dsp1, ty, MPI_COMM_WORLD);
	MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rbuf, cnt1, dsp1, ty, MPI_COMM_WORLD);
	trc_prog_check(rbuf[2 * (size - 1)] == size - 1, "alltoallw in place");
	/* and nonblocking, two under way: one in place */
	int *wout = malloc(sizeof(int) * 4 * (size_t)size), *ipb = wout + 2 * size;
	for (int r = 0; r < 2 * size; r++)
		ipb[r] = rank * 100 + r / 2;
	MPI_Request wr[2];
	MPI_Status wst[2];
	MPI_Ialltoallw(rbuf, cnt1, dsp1, ty, wout, cnt1, dsp1, ty, MPI_COMM_WORLD, &wr[0]);
	MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, ipb, cnt1, dsp1, ty, MPI_COMM_WORLD, &wr[1]);
	MPI_Waitall(2, wr, wst);
	trc_prog_check(wout[2 * (size - 1)] == rank, "ialltoallw");
	trc_prog_check(ipb[2 * (size - 1)] == (size - 1) * 100 + rank, "ialltoallw in place");
	free(wout);
	MPI_Type_free(&pair);
	free(cnt1), free(ty), free(rbuf);
	MPI_Comm_free(&ring);
	MPI_Comm_free(&star);
	MPI_Comm_free(&graph);
	free(to), free(index), free(edges);
}

/* Collectives on the intercommunicator of the even and the odd ranks:
 * each group's results come from the other; a broadcast rooted (MPI_ROOT,
 * MPI_PROC_NULL) at the even side's first rank. */
static void inter_colls(MPI_Comm inter, int rank, int size, int it)
{
	int v = rank + it, sum = -1, want = 0, all[64], nremote = 0;
	for (int r = 1 - rank % 2; r < size; r += 2)
		want += r + it, nremote++;
	MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, inter);
	trc_prog_check(sum == want, "intercommunicator allreduce");
	int b = rank == 0 ? 100 + it : -1;
	MPI_Bcast(&b, 1, MPI_INT, rank % 2 ? 0 : rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
	trc_prog_check(rank % 2 == 0 || b == 100 + it, "intercommunicator bcast");
	MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, inter);
	trc_prog_check(nremote < 1 || all[nremote - 1] == 2 * (nremote - 1) + 1 - rank % 2 + it,
		       "intercommunicator allgather");
	MPI_Barrier(inter);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int iters = trc_prog_iters(argc, argv, 3), rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	static char bsbuf[1 << 14];
	MPI_Buffer_attach(bsbuf, sizeof bsbuf);

	int dims[2] = { 0, 0 }, periods[2] = { 1, 0 }, keep[2] = { 0, 1 };
	MPI_Dims_create(size, 2, dims);
	MPI_Comm cart, row, node, dup;
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
	MPI_Cart_sub(cart, keep, &row);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &node);
	MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dup);
	MPI_Group world, evens;
	MPI_Comm even = MPI_COMM_NULL;
	int r0[1][3] = { { 0, size - 1, 2 } };
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_range_incl(world, 1, r0, &evens);
	if (rank % 2 == 0)
		MPI_Comm_create_group(MPI_COMM_WORLD, evens, 7, &even);
	MPI_Group_free(&evens);
	MPI_Group_free(&world);

	/* an intercommunicator between the even and the odd ranks: a message
	 * across, then the merge, which the loop's collectives use */
	MPI_Comm inter = MPI_COMM_NULL, merged = MPI_COMM_NULL;
	if (size > 1) {
		MPI_Comm half;
		int x = rank, y = -1;
		MPI_Status ist;
		MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
		MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 3, &inter);
		MPI_Comm_free(&half);
		if (rank < 2)
			MPI_Sendrecv(&x, 1, MPI_INT, 0, 4, &y, 1, MPI_INT, 0, 4, inter, &ist);
		trc_prog_check(rank >= 2 || y == 1 - rank, "intercommunicator sendrecv");
		MPI_Intercomm_merge(inter, rank % 2, &merged);
	}
	int p = rank ^ 1;
	for (int it = 0; it < iters; it++) {
		all_icolls(MPI_COMM_WORLD, it);
		all_icolls(cart, it);
		all_icolls(row, it);
		all_icolls(node, it);
		all_icolls(dup, it);
		if (even != MPI_COMM_NULL)
			all_icolls(even, it);
		if (merged != MPI_COMM_NULL)
			all_icolls(merged, it);
		if (inter != MPI_COMM_NULL)
			inter_colls(inter, rank, size, it);
		graphs(row, it);
		if (p < size)
			pair_p2p(p, rank < p);
	}
	MPI_Comm_free(&dup);
	if (inter != MPI_COMM_NULL) {
		MPI_Comm_free(&merged);
		MPI_Comm_free(&inter);
	}
	if (even != MPI_COMM_NULL)
		MPI_Comm_free(&even);
	MPI_Comm_free(&node);
	MPI_Comm_free(&row);
	MPI_Comm_free(&cart);
	void *b;
	int bs;
	MPI_Buffer_detach(&b, &bs);
	MPI_Finalize();
	return 0;
}
