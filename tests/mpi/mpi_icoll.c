/* mpi_icoll.c: nonblocking collectives (MPI-3.1 5.12) as programs use
 * them: each one's result against the blocking call's (the same bits for
 * a floating-point sum), non-commutative user ops in rank order, several
 * outstanding at once on one communicator with a blocking one among them
 * and completed in another order, every Wait/Test form, and the NBX sparse
 * exchange (Issend to the targets, Ibarrier once they are matched, receive
 * until the barrier completes), which only works if testing the barrier
 * lets it progress while point-to-point messages are taken. "stall" (run
 * with PTL_TEST_STALL_RANK and PTL_COLL_TIMEOUT): a rank that only tests
 * its MPI_Iallreduce gets the deadline's error, naming the call. "dead":
 * rank 1 leaves (_exit) instead of joining an Iallreduce; the others'
 * Wait fails with MPI_ERR_PROC_FAILED naming it, and they still talk. */
#include <unistd.h>

#include "mpi_test.h"

enum { BIG = 3000 }; /* doubles: above the small-vector direct path and the eager limit */

static double val(int rank, int k)
{
	return 1.0 / (1 + rank * 7 + k) + (k % 3) * 1e-9;
}

static void first_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	memcpy(inout, in, sizeof(int) * (size_t)*len); /* a op b = a */
}

static void reductions(void)
{
	static const int counts[] = { 1, 7, 600, BIG };
	double *in = malloc(BIG * sizeof *in), *nb = malloc(BIG * sizeof *nb), *bl = malloc(BIG * sizeof *bl);
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
		int n = counts[i];
		for (int k = 0; k < n; k++)
			in[k] = val(t_rank, k);
		MPI_Request rq;
		OK(MPI_Iallreduce(in, nb, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq));
		OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
		CHECK(rq == MPI_REQUEST_NULL, "Wait left the request");
		OK(MPI_Allreduce(in, bl, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
		CHECK(memcmp(nb, bl, sizeof *nb * (size_t)n) == 0, "Iallreduce of %d doubles differs from Allreduce", n);
		int root = t_size - 1;
		memset(nb, 0, sizeof *nb * (size_t)n);
		OK(MPI_Ireduce(in, nb, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD, &rq));
		int flag = 0;
		while (!flag)
			OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
		OK(MPI_Reduce(in, bl, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD));
		if (t_rank == root)
			CHECK(memcmp(nb, bl, sizeof *nb * (size_t)n) == 0, "Ireduce of %d doubles differs from Reduce", n);
		int kept = 0;
		for (int k = 0; k < n; k++)
			kept += in[k] == val(t_rank, k);
		CHECK(kept == n, "Ireduce and Reduce of %d doubles wrote sendbuf (%d kept)", n, kept);
	}
	/* in place */
	for (int k = 0; k < 5; k++)
		nb[k] = t_rank + k;
	MPI_Request rq;
	OK(MPI_Iallreduce(MPI_IN_PLACE, nb, 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	for (int k = 0; k < 5; k++)
		CHECK(nb[k] == t_size - 1 + k, "in-place Iallreduce MAX [%d] = %g", k, nb[k]);
	/* a non-commutative op: rank order decides */
	MPI_Op first;
	OK(MPI_Op_create(first_op, 0, &first));
	int mine[3] = { 100 + t_rank, 200 + t_rank, 300 + t_rank }, got[3] = { -1, -1, -1 };
	OK(MPI_Iallreduce(mine, got, 3, MPI_INT, first, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	CHECK(got[0] == 100 && got[2] == 300, "non-commutative Iallreduce gave %d %d", got[0], got[2]);
	int root = t_size / 2;
	got[0] = -1;
	OK(MPI_Ireduce(mine, got, 3, MPI_INT, first, root, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	if (t_rank == root)
		CHECK(got[0] == 100 && got[1] == 200, "non-commutative Ireduce to %d gave %d %d", root, got[0], got[1]);
	OK(MPI_Op_free(&first));
	free(in);
	free(nb);
	free(bl);
}

/* Iscan, Iexscan and Ireduce_scatter_block against their blocking forms,
 * with a commutative op and the non-commutative one. */
static void prefixes(void)
{
	MPI_Op first;
	OK(MPI_Op_create(first_op, 0, &first));
	MPI_Op ops[2] = { MPI_SUM, first };
	int in[6 * 4], nb[4], bl[4];
	for (int k = 0; k < 6 * 4; k++)
		in[k] = t_rank * 7 + k;
	for (int o = 0; o < 2; o++) {
		for (int kind = 0; kind < 3; kind++) {
			MPI_Request rq;
			for (int k = 0; k < 4; k++)
				nb[k] = bl[k] = -7;
			if (kind == 0) {
				OK(MPI_Iscan(in, nb, 4, MPI_INT, ops[o], MPI_COMM_WORLD, &rq));
				OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
				OK(MPI_Scan(in, bl, 4, MPI_INT, ops[o], MPI_COMM_WORLD));
			} else if (kind == 1) {
				OK(MPI_Iexscan(in, nb, 4, MPI_INT, ops[o], MPI_COMM_WORLD, &rq));
				OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
				OK(MPI_Exscan(in, bl, 4, MPI_INT, ops[o], MPI_COMM_WORLD));
			} else {
				OK(MPI_Ireduce_scatter_block(in, nb, 4, MPI_INT, ops[o], MPI_COMM_WORLD, &rq));
				OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
				OK(MPI_Reduce_scatter_block(in, bl, 4, MPI_INT, ops[o], MPI_COMM_WORLD));
			}
			CHECK(!memcmp(nb, bl, sizeof nb), "op %d kind %d: %d %d %d %d, blocking %d %d %d %d", o, kind, nb[0],
			      nb[1], nb[2], nb[3], bl[0], bl[1], bl[2], bl[3]);
		}
	}
	/* the values themselves, for the sum */
	MPI_Request rq;
	OK(MPI_Iscan(in, nb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	CHECK(nb[0] == 7 * t_rank * (t_rank + 1) / 2, "Iscan sum %d", nb[0]);
	OK(MPI_Op_free(&first));
}

/* Igather and Iscatter to and from every root, in place too, with a
 * strided type at the root. */
static void gathers(void)
{
	int n = t_size;
	MPI_Datatype vec, every2;
	OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
	OK(MPI_Type_create_resized(vec, 0, 6 * sizeof(int), &every2));
	OK(MPI_Type_free(&vec));
	OK(MPI_Type_commit(&every2));
	for (int root = 0; root < n; root++) {
		int mine[3] = { t_rank, t_rank * 10, t_rank * 100 }, all[6 * 6], got[3] = { -1, -1, -1 };
		for (int k = 0; k < 6 * 6; k++)
			all[k] = -1;
		MPI_Request rq[2];
		OK(MPI_Igather(mine, 3, MPI_INT, all, 1, every2, root, MPI_COMM_WORLD, &rq[0]));
		OK(MPI_Waitall(1, rq, MPI_STATUSES_IGNORE));
		for (int j = 0; j < n && t_rank == root; j++)
			CHECK(all[6 * j] == j && all[6 * j + 2] == 10 * j && all[6 * j + 4] == 100 * j && all[6 * j + 1] == -1,
			      "Igather to %d: block %d = %d %d %d", root, j, all[6 * j], all[6 * j + 2], all[6 * j + 4]);
		/* scatter back what was gathered; the root in place */
		OK(MPI_Iscatter(all, 1, every2, t_rank == root ? MPI_IN_PLACE : got, 3, MPI_INT, root, MPI_COMM_WORLD,
				&rq[1]));
		OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
		if (t_rank != root)
			CHECK(got[0] == t_rank && got[1] == 10 * t_rank && got[2] == 100 * t_rank, "Iscatter from %d: %d %d %d",
			      root, got[0], got[1], got[2]);
		/* gather in place at the root */
		int flat[6 * 3];
		for (int k = 0; k < 3 * n; k++)
			flat[k] = t_rank == root && k / 3 == root ? mine[k % 3] : -1;
		OK(MPI_Igather(t_rank == root ? MPI_IN_PLACE : mine, 3, MPI_INT, flat, 3, MPI_INT, root, MPI_COMM_WORLD,
			       &rq[0]));
		OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
		for (int k = 0; k < 3 * n && t_rank == root; k++)
			CHECK(flat[k] == (k / 3) * (k % 3 == 0 ? 1 : k % 3 == 1 ? 10 : 100), "in-place Igather to %d [%d] = %d",
			      root, k, flat[k]);
	}
	OK(MPI_Type_free(&every2));
}

/* Iallgather and Ialltoall with MPI_IN_PLACE. */
static void in_place(void)
{
	int n = t_size, ag[6], a2a[6 * 2];
	for (int j = 0; j < n; j++) {
		ag[j] = j == t_rank ? 5 * t_rank : -1;
		a2a[2 * j] = t_rank * 100 + j;
		a2a[2 * j + 1] = -(t_rank * 100 + j);
	}
	MPI_Request rq[2];
	OK(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, 1, MPI_INT, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a2a, 2, MPI_INT, MPI_COMM_WORLD, &rq[1]));
	OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	for (int j = 0; j < n; j++) {
		CHECK(ag[j] == 5 * j, "in-place Iallgather [%d] = %d", j, ag[j]);
		CHECK(a2a[2 * j] == j * 100 + t_rank && a2a[2 * j + 1] == -(j * 100 + t_rank),
		      "in-place Ialltoall from %d: %d %d", j, a2a[2 * j], a2a[2 * j + 1]);
	}
}

/* Iallgatherv and Ialltoallv with uneven blocks in an order of their own,
 * against the blocking forms. */
static void vectors(void)
{
	int n = t_size, counts[6], displs[6], sc[6], sd[6], rc[6], rd[6], at = 0, sat = 0, rat = 0;
	for (int j = n - 1; j >= 0; j--) { /* blocks laid out backwards, a gap after each */
		counts[j] = j + 1;
		displs[j] = at;
		at += counts[j] + 1;
	}
	for (int j = 0; j < n; j++) {
		sc[j] = (t_rank + j) % 3;
		sd[j] = sat;
		sat += sc[j];
		rc[j] = (j + t_rank) % 3;
		rd[j] = rat;
		rat += rc[j] + 2;
	}
	int mine[6], out[6 * 8], bl[6 * 8], in[6 * 3];
	for (int k = 0; k < 6; k++)
		mine[k] = t_rank * 10 + k;
	for (int k = 0; k < 6 * 3; k++)
		in[k] = t_rank * 100 + k;
	for (int k = 0; k < 6 * 8; k++)
		out[k] = bl[k] = -1;
	MPI_Request rq;
	OK(MPI_Iallgatherv(mine, t_rank + 1, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	OK(MPI_Allgatherv(mine, t_rank + 1, MPI_INT, bl, counts, displs, MPI_INT, MPI_COMM_WORLD));
	CHECK(!memcmp(out, bl, sizeof out), "Iallgatherv differs from Allgatherv");
	CHECK(out[displs[0]] == 0 && out[displs[n - 1] + n - 1] == (n - 1) * 10 + n - 1, "Iallgatherv: %d %d",
	      out[displs[0]], out[displs[n - 1] + n - 1]);
	for (int k = 0; k < 6 * 8; k++)
		out[k] = bl[k] = -1;
	OK(MPI_Ialltoallv(in, sc, sd, MPI_INT, out, rc, rd, MPI_INT, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	OK(MPI_Alltoallv(in, sc, sd, MPI_INT, bl, rc, rd, MPI_INT, MPI_COMM_WORLD));
	CHECK(!memcmp(out, bl, sizeof out), "Ialltoallv differs from Alltoallv");
	/* blocks back to back on both sides: read from sendbuf and received
	 * into recvbuf where they are, sendbuf left as it was */
	int pd[6], pr[6], pat = 0, in0[6 * 3];
	for (int j = 0; j < n; j++) {
		pd[j] = pat;
		pat += rc[j];
	}
	memcpy(in0, in, sizeof in);
	for (int k = 0; k < 6 * 8; k++)
		out[k] = bl[k] = -1;
	OK(MPI_Ialltoallv(in, sc, sd, MPI_INT, out, rc, pd, MPI_INT, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	OK(MPI_Alltoallv(in, sc, sd, MPI_INT, bl, rc, pd, MPI_INT, MPI_COMM_WORLD));
	CHECK(!memcmp(out, bl, sizeof out), "packed Ialltoallv differs from Alltoallv");
	CHECK(!memcmp(in, in0, sizeof in), "Ialltoallv wrote in its sendbuf");
	for (int j = 0, at2 = 0; j < n; j++) { /* rank j's block for us: its sc[t_rank] ints from its sd[t_rank] */
		int jsd = 0;
		for (int i = 0; i < t_rank; i++)
			jsd += (j + i) % 3;
		for (int k = 0; k < rc[j]; k++, at2++)
			CHECK(out[at2] == j * 100 + jsd + k, "packed Ialltoallv: [%d] from %d = %d", at2, j, out[at2]);
	}
	for (int j = 0, a = 0; j < n; j++) {
		pr[j] = a;
		a += counts[j];
	}
	for (int k = 0; k < 6 * 8; k++)
		out[k] = bl[k] = -1;
	OK(MPI_Iallgatherv(mine, t_rank + 1, MPI_INT, out, counts, pr, MPI_INT, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	OK(MPI_Allgatherv(mine, t_rank + 1, MPI_INT, bl, counts, pr, MPI_INT, MPI_COMM_WORLD));
	CHECK(!memcmp(out, bl, sizeof out), "packed Iallgatherv differs from Allgatherv");
	CHECK(out[pr[n - 1] + n - 1] == (n - 1) * 10 + n - 1 && out[pr[n - 1] + n] == -1, "packed Iallgatherv: %d %d",
	      out[pr[n - 1] + n - 1], out[pr[n - 1] + n]);
	/* in place into packed blocks: the result lands in recvbuf itself */
	for (int k = 0; k < 6 * 8; k++)
		out[k] = bl[k] = -1;
	memcpy(out + pr[t_rank], mine, sizeof(int) * (size_t)(t_rank + 1));
	memcpy(bl + pr[t_rank], mine, sizeof(int) * (size_t)(t_rank + 1));
	OK(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, counts, pr, MPI_INT, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, bl, counts, pr, MPI_INT, MPI_COMM_WORLD));
	CHECK(!memcmp(out, bl, sizeof out), "in-place packed Iallgatherv differs from Allgatherv");
	CHECK(out[pr[n - 1] + n - 1] == (n - 1) * 10 + n - 1, "in-place packed Iallgatherv: %d",
	      out[pr[n - 1] + n - 1]);
	/* Ialltoallv in place, blocks back to back (rc both ways: a square
	 * pair matrix of sizes) */
	int sq[6], sqd[6], sat2 = 0;
	for (int j = 0; j < n; j++) {
		sq[j] = (t_rank + j) % 3;
		sqd[j] = sat2;
		sat2 += sq[j];
	}
	for (int k = 0; k < 6 * 8; k++)
		out[k] = bl[k] = -1;
	for (int k = 0; k < sat2; k++)
		out[k] = bl[k] = t_rank * 100 + k;
	OK(MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, out, sq, sqd, MPI_INT, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, bl, sq, sqd, MPI_INT, MPI_COMM_WORLD));
	CHECK(!memcmp(out, bl, sizeof out), "in-place packed Ialltoallv differs from Alltoallv");
	for (int j = 0, at3 = 0; j < n; j++) { /* rank j's block for us, from its own layout */
		int jsd = 0;
		for (int i = 0; i < t_rank; i++)
			jsd += (j + i) % 3;
		for (int k = 0; k < sq[j]; k++, at3++)
			CHECK(out[at3] == j * 100 + jsd + k, "in-place packed Ialltoallv: [%d] from %d = %d", at3, j,
			      out[at3]);
	}
	/* Igatherv to the last rank and Iscatterv back from it, same layout */
	int root = n - 1;
	for (int k = 0; k < 6 * 8; k++)
		out[k] = bl[k] = -1;
	OK(MPI_Igatherv(mine, t_rank + 1, MPI_INT, out, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	OK(MPI_Gatherv(mine, t_rank + 1, MPI_INT, bl, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
	CHECK(!memcmp(out, bl, sizeof out), "Igatherv differs from Gatherv");
	int back[6] = { -1, -1, -1, -1, -1, -1 };
	OK(MPI_Iscatterv(bl, counts, displs, MPI_INT, back, t_rank + 1, MPI_INT, root, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	CHECK(!memcmp(back, mine, sizeof(int) * (size_t)(t_rank + 1)) && (t_rank == 5 || back[t_rank + 1] == -1),
	      "Iscatterv gave %d..%d", back[0], back[t_rank]);
	/* Ireduce_scatter with those uneven counts */
	double d[6 * 7], dn[6], db[6];
	int total = 0;
	for (int j = 0; j < n; j++)
		total += counts[j];
	for (int k = 0; k < total; k++)
		d[k] = val(t_rank, k);
	OK(MPI_Ireduce_scatter(d, dn, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	OK(MPI_Reduce_scatter(d, db, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
	CHECK(!memcmp(dn, db, sizeof *dn * (size_t)counts[t_rank]), "Ireduce_scatter differs from Reduce_scatter");
}

/* Ialltoallw: block j to rank j as (j + 1) ints every other int (a vector
 * freed while the call is under way), received as contiguous ints at byte
 * displacements of their own, against MPI_Alltoallw; then MPI_IN_PLACE,
 * two under way at once, and the refusals. */
static void w_forms(void)
{
	int n = t_size, sc[6], sd[6], rc[6], rd[6], at = 0;
	MPI_Datatype st[6], rt[6];
	int in[12], out[6 * 8], bl[6 * 8];
	for (int k = 0; k < 12; k++)
		in[k] = t_rank * 100 + k;
	for (int j = 0; j < n; j++) {
		/* a one-block vector of every other int, j + 1 of them: its
		 * own type per block, so made here */
		OK(MPI_Type_vector(j + 1, 1, 2, MPI_INT, &st[j]));
		OK(MPI_Type_commit(&st[j]));
		sc[j] = 1;
		sd[j] = (int)sizeof(int) * (j % 2); /* bytes */
		rt[j] = MPI_INT;
		rc[j] = t_rank + 1;
		rd[j] = at;
		at += (int)sizeof(int) * (rc[j] + 1);
	}
	for (int k = 0; k < 6 * 8; k++)
		out[k] = bl[k] = -1;
	MPI_Request rq[2];
	OK(MPI_Ialltoallw(in, sc, sd, st, out, rc, rd, rt, MPI_COMM_WORLD, &rq[0]));
	for (int j = 0; j < n; j++)
		OK(MPI_Type_free(&st[j]));
	OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
	for (int j = 0; j < n; j++) {
		OK(MPI_Type_vector(j + 1, 1, 2, MPI_INT, &st[j]));
		OK(MPI_Type_commit(&st[j]));
	}
	OK(MPI_Alltoallw(in, sc, sd, st, bl, rc, rd, rt, MPI_COMM_WORLD));
	CHECK(!memcmp(out, bl, sizeof out), "Ialltoallw differs from Alltoallw");
	int from = n - 1; /* rank n-1's block: its ints 0/1, 2/3, ... */
	CHECK(out[rd[from] / 4] == from * 100 + t_rank % 2 && out[rd[from] / 4 + t_rank] == from * 100 + t_rank % 2 + 2 * t_rank,
	      "Ialltoallw: block of rank %d starts %d", from, out[rd[from] / 4]);
	/* MPI_IN_PLACE: ints of rank r's block j go to rank j's block r */
	int ip[6 * 2], cnt[6], dis[6];
	for (int j = 0; j < n; j++) {
		cnt[j] = 2;
		dis[j] = (int)sizeof(int) * 2 * j;
		ip[2 * j] = t_rank * 10 + j;
		ip[2 * j + 1] = -t_rank;
		rt[j] = MPI_INT;
	}
	int other[6 * 2];
	OK(MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, ip, cnt, dis, rt, MPI_COMM_WORLD, &rq[0]));
	for (int k = 0; k < 2 * n; k++)
		other[k] = k;
	int back[6 * 2];
	OK(MPI_Ialltoallw(other, cnt, dis, rt, back, cnt, dis, rt, MPI_COMM_WORLD, &rq[1]));
	OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	int bad = 0;
	for (int j = 0; j < n; j++)
		bad += ip[2 * j] != j * 10 + t_rank || ip[2 * j + 1] != -j || back[2 * j] != 2 * t_rank ||
		       back[2 * j + 1] != 2 * t_rank + 1;
	CHECK(bad == 0, "Ialltoallw in place / beside another: %d blocks wrong", bad);
	/* refusals */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	rc[n - 1] = -2;
	t_fails_with(MPI_Ialltoallw(in, sc, sd, st, out, rc, rd, rt, MPI_COMM_WORLD, &rq[0]), MPI_ERR_COUNT,
		     "MPI_Ialltoallw: recvcounts[", "a negative receive count");
	rc[n - 1] = 1;
	MPI_Datatype keep = st[0];
	st[0] = (MPI_Datatype)4242;
	t_fails_with(MPI_Ialltoallw(in, sc, sd, st, out, rc, rd, rt, MPI_COMM_WORLD, &rq[0]), MPI_ERR_TYPE,
		     "sendtypes[0]: invalid or uncommitted datatype 4242", "a bad send type");
	st[0] = keep;
	t_fails_with(MPI_Ialltoallw(in, sc, sd, st, out, rc, rd, rt, MPI_COMM_WORLD, NULL), MPI_ERR_ARG,
		     "NULL request", "a NULL request");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	for (int j = 0; j < n; j++)
		OK(MPI_Type_free(&st[j]));
}

/* Many outstanding at once (fewer than the 256 the tags tell apart),
 * completed together; one freed while under way still completes. */
static void many(void)
{
	enum { M = 60 };
	int in[M], out[M];
	MPI_Request rq[M], freed;
	for (int i = 0; i < M; i++) {
		in[i] = t_rank + i;
		OK(MPI_Iallreduce(&in[i], &out[i], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[i]));
	}
	OK(MPI_Ibarrier(MPI_COMM_WORLD, &freed));
	OK(MPI_Request_free(&freed));
	CHECK(freed == MPI_REQUEST_NULL, "Request_free left the handle");
	OK(MPI_Waitall(M, rq, MPI_STATUSES_IGNORE));
	for (int i = 0; i < M; i++)
		CHECK(out[i] == t_size * (t_size - 1) / 2 + t_size * i, "Iallreduce %d of %d: %d", i, M, out[i]);
	OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Five collectives and a blocking one outstanding at once, completed in
 * reverse order (and by Waitany/Waitsome/Testall). */
static void overlapped(int form)
{
	int n = t_size;
	int bc[BIG], ar_in[4], ar[4], ag[6 * 2], a2a_in[6 * 3], a2a[6 * 3], blk[4];
	int root = (form + 1) % n;
	for (int k = 0; k < BIG; k++)
		bc[k] = t_rank == root ? k * 3 + form : -1;
	for (int k = 0; k < 4; k++)
		ar_in[k] = t_rank * 10 + k;
	int mine[2] = { t_rank, -t_rank };
	for (int j = 0; j < n; j++)
		for (int k = 0; k < 3; k++)
			a2a_in[j * 3 + k] = t_rank * 1000 + j * 10 + k;
	MPI_Request rq[5];
	OK(MPI_Ibcast(bc, BIG, MPI_INT, root, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Iallreduce(ar_in, ar, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[1]));
	OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[2]));
	OK(MPI_Allreduce(ar_in, blk, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
	OK(MPI_Iallgather(mine, 2, MPI_INT, ag, 2, MPI_INT, MPI_COMM_WORLD, &rq[3]));
	OK(MPI_Ialltoall(a2a_in, 3, MPI_INT, a2a, 3, MPI_INT, MPI_COMM_WORLD, &rq[4]));
	if (form == 0) {
		for (int i = 4; i >= 0; i--)
			OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
	} else if (form == 1) {
		for (int left = 5, idx; left; left--)
			OK(MPI_Waitany(5, rq, &idx, MPI_STATUS_IGNORE));
	} else if (form == 2) {
		int out, idx[5];
		for (int left = 5; left > 0; left -= out)
			OK(MPI_Waitsome(5, rq, &out, idx, MPI_STATUSES_IGNORE));
	} else {
		int flag = 0;
		while (!flag)
			OK(MPI_Testall(5, rq, &flag, MPI_STATUSES_IGNORE));
	}
	for (int i = 0; i < 5; i++)
		CHECK(rq[i] == MPI_REQUEST_NULL, "form %d: request %d still active", form, i);
	for (int k = 0; k < BIG; k++)
		if (bc[k] != k * 3 + form) {
			CHECK(0, "form %d: Ibcast [%d] = %d", form, k, bc[k]);
			break;
		}
	for (int k = 0; k < 4; k++) {
		CHECK(ar[k] == 10 * n * (n - 1) / 2 + n * k, "form %d: Iallreduce [%d] = %d", form, k, ar[k]);
		CHECK(blk[k] == (n - 1) * 10 + k, "form %d: Allreduce among them [%d] = %d", form, k, blk[k]);
	}
	for (int j = 0; j < n; j++) {
		CHECK(ag[2 * j] == j && ag[2 * j + 1] == -j, "form %d: Iallgather block %d", form, j);
		for (int k = 0; k < 3; k++) {
			CHECK(a2a[j * 3 + k] == j * 1000 + t_rank * 10 + k, "form %d: Ialltoall from %d [%d] = %d", form, j, k,
			      a2a[j * 3 + k]);
			/* read where it is, never written */
			CHECK(a2a_in[j * 3 + k] == t_rank * 1000 + j * 10 + k, "form %d: Ialltoall wrote its sendbuf", form);
		}
	}
}

/* NBX: each rank sends to a few targets it alone knows; nobody knows how
 * many messages it will get. A tag per round: a rank out of its barrier
 * may send the next round's messages to one still receiving this one's. */
static void nbx(int round)
{
	enum { NT = 2 };
	const int TAG = 77 + round;
	int targets[NT] = { (t_rank + 1) % t_size, (t_rank + 2 + round) % t_size };
	int out[NT], expect = 0, got = 0, sum = 0, want = 0;
	for (int r = 0; r < t_size; r++)
		for (int i = 0; i < NT; i++) {
			int to = i == 0 ? (r + 1) % t_size : (r + 2 + round) % t_size;
			if (to == t_rank) {
				expect++;
				want += r * 100 + i + round;
			}
		}
	MPI_Request sends[NT], bar = MPI_REQUEST_NULL;
	for (int i = 0; i < NT; i++) {
		out[i] = t_rank * 100 + i + round;
		OK(MPI_Issend(&out[i], 1, MPI_INT, targets[i], TAG, MPI_COMM_WORLD, &sends[i]));
	}
	if (t_rank == round % t_size) {
		/* a late rank: the others' barriers wait for it */
		double t = MPI_Wtime();
		while (MPI_Wtime() - t < 0.05) {
		}
	}
	int done = 0;
	int barrier = 0;
	while (!done) {
		int flag;
		MPI_Status st;
		OK(MPI_Iprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag, &st));
		if (flag) {
			int v;
			OK(MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			got++;
			sum += v;
		}
		if (barrier) {
			OK(MPI_Test(&bar, &done, MPI_STATUS_IGNORE));
		} else {
			int all;
			OK(MPI_Testall(NT, sends, &all, MPI_STATUSES_IGNORE));
			if (all) {
				OK(MPI_Ibarrier(MPI_COMM_WORLD, &bar));
				barrier = 1;
			}
		}
	}
	CHECK(got == expect && sum == want, "NBX round %d: got %d messages (sum %d), want %d (sum %d)", round, got, sum,
	      expect, want);
}

/* A rank blocked in MPI_Recv still moves its collective on: the sender
 * waits for the collective first. */
static void progress_in_recv(void)
{
	if (t_size < 2)
		return;
	MPI_Request rq;
	int v = 0;
	OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq));
	if (t_rank == 0) {
		OK(MPI_Recv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(v == 42, "got %d", v);
	}
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	if (t_rank == 1) {
		v = 42;
		OK(MPI_Send(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
	}
}

static int stall(void)
{
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	const char *e = getenv("PTL_TEST_STALL_RANK");
	int sr = e ? atoi(e) : -1, in = t_rank, out = 0, flag = 0, rc = MPI_SUCCESS;
	MPI_Request rq;
	OK(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
	while (!flag && rc == MPI_SUCCESS)
		rc = MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
	char s[MPI_MAX_ERROR_STRING] = "";
	int len = 0, cls = MPI_SUCCESS;
	MPI_Error_string(rc, s, &len);
	MPI_Error_class(rc, &cls);
	printf("rank %d: %s\n", t_rank, rc ? s : "no error");
	CHECK(rq == MPI_REQUEST_NULL, "the failed request is still active");
	if (t_rank != sr) {
		CHECK(cls == MPI_ERR_TIMEOUT, "class %d", cls);
		CHECK(strstr(s, "MPI_Iallreduce on MPI_COMM_WORLD") && strstr(s, "PTL_COLL_TIMEOUT"), "message '%s'", s);
	}
	fflush(stdout);
	MPI_Finalize(); /* no collective after a timeout */
	return t_fails ? 1 : 0;
}

static int dead(void)
{
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	if (t_rank == 1) {
		fflush(stdout);
		_exit(0);
	}
	int in = t_rank, out = 0;
	MPI_Request rq;
	OK(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
	int rc = MPI_Wait(&rq, MPI_STATUS_IGNORE), cls = MPI_SUCCESS, len = 0;
	char s[MPI_MAX_ERROR_STRING] = "";
	MPI_Error_class(rc, &cls);
	MPI_Error_string(rc, s, &len);
	printf("rank %d: %s\n", t_rank, rc ? s : "no error");
	CHECK(cls == MPI_ERR_PROC_FAILED && strstr(s, "MPI_Iallreduce") && strstr(s, "rank 1 of MPI_COMM_WORLD died"),
	      "class %d: '%s'", cls, s);
	/* the survivors still talk */
	int v = t_rank, w = -1, peer = t_rank == 0 ? 2 : 0;
	if (t_rank == 0 || t_rank == 2)
		OK(MPI_Sendrecv(&v, 1, MPI_INT, peer, 3, &w, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	if (t_rank == 0 || t_rank == 2)
		CHECK(w == peer, "after the death: got %d from %d", w, peer);
	fflush(stdout);
	MPI_Finalize();
	return t_fails ? 1 : 0;
}

/* The same shapes on a communicator of the same size where this process
 * has another rank (reversed), between calls on MPI_COMM_WORLD: a kept
 * schedule holds one rank's part, so a call must not take one expanded for
 * its rank elsewhere (it moved nothing, or another rank's part, and its
 * peers waited). */
static void other_rank(void)
{
	MPI_Comm rev;
	OK(MPI_Comm_split(MPI_COMM_WORLD, 0, t_size - t_rank, &rev));
	for (int k = 0; k < 4; k++) {
		MPI_Comm c = k % 2 ? rev : MPI_COMM_WORLD;
		int me, b[16], x, y = -1, z[4] = { 0 };
		MPI_Comm_rank(c, &me);
		for (int i = 0; i < 16; i++)
			b[i] = me == 0 ? 100 * k + i : -1;
		x = me + 1;
		MPI_Request rq[3];
		OK(MPI_Ibcast(b, 16, MPI_INT, 0, c, &rq[0]));
		OK(MPI_Iscan(&x, &y, 1, MPI_INT, MPI_SUM, c, &rq[1]));
		OK(MPI_Iallreduce(&x, z, 1, MPI_INT, MPI_SUM, c, &rq[2]));
		OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
		int bad = 0;
		for (int i = 0; i < 16; i++)
			bad += b[i] != 100 * k + i;
		CHECK(!bad && y == (me + 1) * (me + 2) / 2 && z[0] == t_size * (t_size + 1) / 2,
		      "round %d on %s (rank %d there): Ibcast %d wrong, Iscan %d, Iallreduce %d", k,
		      k % 2 ? "the reversed communicator" : "MPI_COMM_WORLD", me, bad, y, z[0]);
	}
	OK(MPI_Comm_free(&rev));
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	if (argc > 1 && !strcmp(argv[1], "stall"))
		return stall();
	if (argc > 1 && !strcmp(argv[1], "dead") && t_size > 1)
		return dead();
	reductions();
	prefixes();
	gathers();
	in_place();
	vectors();
	w_forms();
	many();
	for (int form = 0; form < 4; form++)
		overlapped(form);
	for (int round = 0; round < 4; round++)
		nbx(round);
	progress_in_recv();
	other_rank();
	/* a datatype that is not contiguous: the image goes back at the end */
	MPI_Datatype every2;
	OK(MPI_Type_vector(4, 1, 2, MPI_INT, &every2));
	OK(MPI_Type_commit(&every2));
	int b[8];
	for (int k = 0; k < 8; k++)
		b[k] = t_rank == 0 ? k : -1;
	MPI_Request rq;
	OK(MPI_Ibcast(b, 1, every2, 0, MPI_COMM_WORLD, &rq));
	OK(MPI_Type_free(&every2));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	for (int k = 0; k < 8; k++)
		CHECK(b[k] == (k % 2 == 0 || t_rank == 0 ? k : -1), "vector Ibcast [%d] = %d", k, b[k]);
	return t_finish("mpi_icoll");
}
