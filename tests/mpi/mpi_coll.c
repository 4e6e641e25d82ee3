/* mpi_coll: every collective, checked against values computed locally,
 * with MPI_IN_PLACE where the standard allows it, every predefined op on a
 * type it applies to, user ops (a non-commutative one included) and
 * determinism (the same float allreduce gives the same bits every time and
 * on every rank, also with a commutative user op whose bits depend on the
 * order, at the short sizes of the direct path), the v-variants over zero and uneven blocks and strided
 * types. Runs at any size; "mpi_coll v" runs the v-variants only. */
#include "mpi_test.h"

#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

static void barrier_bcast(void)
{
	for (int i = 0; i < 3; i++)
		OK(MPI_Barrier(MPI_COMM_WORLD));
	static const int counts[] = { 0, 1, 3, 1000, 70000 };
	for (size_t k = 0; k < sizeof counts / sizeof *counts; k++)
		for (int root = 0; root < t_size; root += (t_size > 3 ? t_size - 1 : 1)) {
			int n = counts[k];
			int *v = malloc(sizeof(int) * (size_t)(n + 1));
			for (int i = 0; i < n; i++)
				v[i] = t_rank == root ? i * 3 + root : -1;
			OK(MPI_Bcast(v, n, MPI_INT, root, MPI_COMM_WORLD));
			int bad = 0;
			for (int i = 0; i < n; i++)
				bad += v[i] != i * 3 + root;
			CHECK(bad == 0, "bcast n=%d root=%d: %d wrong", n, root, bad);
			free(v);
		}
}

static void reductions(void)
{
	static const int counts[] = { 1, 5, 4099, 100000 };
	for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
		int n = counts[k];
		long long *in = malloc(sizeof(long long) * (size_t)n), *out = malloc(sizeof(long long) * (size_t)n);
		for (int i = 0; i < n; i++)
			in[i] = (long long)(t_rank + 1) * (i + 1);
		long long tri = (long long)t_size * (t_size + 1) / 2;
		OK(MPI_Allreduce(in, out, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
		int bad = 0;
		for (int i = 0; i < n; i++)
			bad += out[i] != tri * (i + 1);
		CHECK(bad == 0, "allreduce sum n=%d: %d wrong", n, bad);
		memcpy(out, in, sizeof(long long) * (size_t)n);
		OK(MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
		bad = 0;
		for (int i = 0; i < n; i++)
			bad += out[i] != (long long)t_size * (i + 1);
		CHECK(bad == 0, "allreduce in-place max n=%d: %d wrong", n, bad);
		for (int root = 0; root < t_size; root += (t_size > 2 ? t_size - 1 : 1)) {
			memset(out, 0, sizeof(long long) * (size_t)n);
			if (t_rank == root) {
				memcpy(out, in, sizeof(long long) * (size_t)n);
				OK(MPI_Reduce(MPI_IN_PLACE, out, n, MPI_LONG_LONG, MPI_MIN, root, MPI_COMM_WORLD));
			} else {
				OK(MPI_Reduce(in, NULL, n, MPI_LONG_LONG, MPI_MIN, root, MPI_COMM_WORLD));
			}
			if (t_rank == root) {
				bad = 0;
				for (int i = 0; i < n; i++)
					bad += out[i] != i + 1;
				CHECK(bad == 0, "reduce min n=%d root %d: %d wrong", n, root, bad);
			}
		}
		free(in);
		free(out);
	}
	/* every predefined op */
	int a = t_rank + 1, r;
	OK(MPI_Allreduce(&a, &r, 1, MPI_INT, MPI_PROD, MPI_COMM_WORLD));
	long f = 1;
	for (int i = 1; i <= t_size; i++)
		f *= i;
	CHECK(r == (int)f, "prod %d", r);
	int b = t_rank == 0;
	OK(MPI_Allreduce(&b, &r, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
	CHECK(r == (t_size == 1), "land %d", r);
	OK(MPI_Allreduce(&b, &r, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
	CHECK(r == 1, "lor %d", r);
	OK(MPI_Allreduce(&b, &r, 1, MPI_INT, MPI_LXOR, MPI_COMM_WORLD));
	CHECK(r == 1, "lxor %d", r);
	unsigned u = 1u << (t_rank % 32), ur;
	OK(MPI_Allreduce(&u, &ur, 1, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD));
	CHECK(ur == (t_size >= 32 ? 0xffffffffu : (1u << t_size) - 1), "bor %x", ur);
	OK(MPI_Allreduce(&u, &ur, 1, MPI_UNSIGNED, MPI_BAND, MPI_COMM_WORLD));
	CHECK(ur == (t_size == 1 ? 1u : 0u), "band %x", ur);
	OK(MPI_Allreduce(&u, &ur, 1, MPI_UNSIGNED, MPI_BXOR, MPI_COMM_WORLD));
	CHECK(ur == (t_size >= 32 ? 0xffffffffu : (1u << t_size) - 1), "bxor %x", ur);
	unsigned char by = (unsigned char)(1u << (t_rank % 8)), byr;
	OK(MPI_Allreduce(&by, &byr, 1, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD));
	double d = t_rank * 0.5, dr;
	OK(MPI_Allreduce(&d, &dr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
	CHECK(dr == (t_size - 1) * 0.5, "double max %g", dr);
	struct { double v; int k; } p = { (double)((t_rank * 7) % t_size), t_rank }, pr;
	OK(MPI_Allreduce(&p, &pr, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
	int wantk = 0;
	for (int i = 0; i < t_size; i++)
		if ((i * 7) % t_size > (wantk * 7) % t_size)
			wantk = i;
	CHECK(pr.k == wantk && pr.v == (double)((wantk * 7) % t_size), "maxloc %g@%d want @%d", pr.v, pr.k, wantk);
	struct { int v, k; } q = { t_rank % 3, t_rank }, qr;
	OK(MPI_Allreduce(&q, &qr, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
	CHECK(qr.v == 0 && qr.k == 0, "minloc %d@%d", qr.v, qr.k);
	float fc[2] = { 1.0f, (float)t_rank }, fcr[2];
	OK(MPI_Allreduce(fc, fcr, 1, MPI_C_FLOAT_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
	CHECK(fcr[0] == (float)t_size, "complex sum %g", (double)fcr[0]);
}

/* 2x2 integer matrices: product is not commutative. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	int *a = in, *b = inout;
	for (int i = 0; i < *len; i++, a += 4, b += 4) {
		int c[4] = { a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
			     a[2] * b[1] + a[3] * b[3] };
		memcpy(b, c, sizeof c);
	}
}

/* The 2x2 int matrix type and the non-commutative matmul op over it. */
static void mat_op_new(MPI_Datatype *mat, MPI_Op *op)
{
	OK(MPI_Type_contiguous(4, MPI_INT, mat));
	OK(MPI_Type_commit(mat));
	OK(MPI_Op_create(matmul, 0, op));
}

static void mat_op_free(MPI_Datatype *mat, MPI_Op *op)
{
	OK(MPI_Op_free(op));
	OK(MPI_Type_free(mat));
}

/* a user sum of longs, whatever the type's layout (it is given elements) */
static void lsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	const long *a = in;
	long *b = inout;
	for (int i = 0; i < *len; i++)
		b[-1 + 2 * i] += a[-1 + 2 * i]; /* each element: the long 8 bytes before its address */
}

/* A user op on a type whose data lies below its address (true lower bound
 * -8): the library's element temporaries must reach that far down (they
 * once started at the address, and the op wrote before the block). */
static void neg_lb_op(void)
{
	int bl = 1;
	MPI_Aint d = -8;
	MPI_Datatype lt, t;
	OK(MPI_Type_create_hindexed(1, &bl, &d, MPI_LONG, &lt));
	OK(MPI_Type_create_resized(lt, 0, 16, &t)); /* elements 16 bytes apart */
	OK(MPI_Type_commit(&t));
	MPI_Op op;
	OK(MPI_Op_create(lsum, 1, &op));
	enum { N = 3 };
	long s[2 * N + 1], r[2 * N + 1];
	for (int i = 0; i < 2 * N + 1; i++) {
		s[i] = 1000 * t_rank + i;
		r[i] = -7;
	}
	OK(MPI_Allreduce(s + 1, r + 1, N, t, op, MPI_COMM_WORLD));
	long base = 1000L * t_size * (t_size - 1) / 2;
	for (int i = 0; i < N; i++)
		CHECK(r[2 * i] == base + (long)t_size * 2 * i, "negative-lb user op element %d: %ld want %ld", i, r[2 * i],
		      base + (long)t_size * 2 * i);
	for (int i = 0; i < N; i++)
		CHECK(r[2 * i + 1] == -7, "negative-lb user op: gap %d written (%ld)", i, r[2 * i + 1]);
	OK(MPI_Op_free(&op));
	OK(MPI_Type_free(&t));
	OK(MPI_Type_free(&lt));
}

static void user_ops(void)
{
	MPI_Datatype mat;
	MPI_Op op;
	mat_op_new(&mat, &op);
	/* rank r's matrix [[1, r], [0, 1]]: the product in rank order is [[1, sum r], [0, 1]]
	 * whatever the order - so use [[1,1],[0,1]] on even and [[1,0],[1,1]] on odd ranks */
	int m[4] = { 1, t_rank % 2 == 0, t_rank % 2 == 1, 1 }, res[4];
	OK(MPI_Allreduce(m, res, 1, mat, op, MPI_COMM_WORLD));
	int want[4] = { 1, 0, 0, 1 };
	for (int r = 0; r < t_size; r++) {
		int x[4] = { 1, r % 2 == 0, r % 2 == 1, 1 };
		int c[4] = { want[0] * x[0] + want[1] * x[2], want[0] * x[1] + want[1] * x[3],
			     want[2] * x[0] + want[3] * x[2], want[2] * x[1] + want[3] * x[3] };
		memcpy(want, c, sizeof c);
	}
	CHECK(!memcmp(res, want, sizeof want), "non-commutative allreduce [%d %d %d %d] want [%d %d %d %d]", res[0],
	      res[1], res[2], res[3], want[0], want[1], want[2], want[3]);
	OK(MPI_Reduce(m, res, 1, mat, op, t_size - 1, MPI_COMM_WORLD));
	if (t_rank == t_size - 1)
		CHECK(!memcmp(res, want, sizeof want), "non-commutative reduce");
	OK(MPI_Scan(m, res, 1, mat, op, MPI_COMM_WORLD));
	OK(MPI_Op_free(&op));
	CHECK(op == MPI_OP_NULL, "op_free");
	OK(MPI_Type_free(&mat));
	neg_lb_op();
}

static void gathers(void)
{
	int n = t_size;
	int *all = malloc(sizeof(int) * (size_t)n * 3), mine[3] = { t_rank, t_rank * 2, t_rank * 3 };
	OK(MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, MPI_COMM_WORLD));
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += all[3 * i] != i || all[3 * i + 1] != 2 * i || all[3 * i + 2] != 3 * i;
	CHECK(!bad, "allgather");
	memset(all, 0, sizeof(int) * (size_t)n * 3);
	memcpy(all + 3 * t_rank, mine, sizeof mine);
	OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 3, MPI_INT, MPI_COMM_WORLD));
	bad = 0;
	for (int i = 0; i < n; i++)
		bad += all[3 * i] != i || all[3 * i + 2] != 3 * i;
	CHECK(!bad, "allgather in place");
	int root = n - 1;
	memset(all, 0, sizeof(int) * (size_t)n * 3);
	OK(MPI_Gather(mine, 3, MPI_INT, all, 3, MPI_INT, root, MPI_COMM_WORLD));
	if (t_rank == root) {
		bad = 0;
		for (int i = 0; i < n; i++)
			bad += all[3 * i + 1] != 2 * i;
		CHECK(!bad, "gather");
	}
	int got[3] = { -1, -1, -1 };
	OK(MPI_Scatter(all, 3, MPI_INT, got, 3, MPI_INT, root, MPI_COMM_WORLD));
	CHECK(got[0] == t_rank && got[2] == 3 * t_rank, "scatter %d %d", got[0], got[2]);
	/* v-forms: rank i has i+1 ints */
	int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n), tot = 0;
	for (int i = 0; i < n; i++) {
		counts[i] = i + 1;
		displs[i] = tot;
		tot += i + 1;
	}
	int *v = malloc(sizeof(int) * (size_t)tot), *mv = malloc(sizeof(int) * (size_t)(t_rank + 1));
	for (int i = 0; i <= t_rank; i++)
		mv[i] = t_rank * 100 + i;
	OK(MPI_Allgatherv(mv, t_rank + 1, MPI_INT, v, counts, displs, MPI_INT, MPI_COMM_WORLD));
	bad = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j <= i; j++)
			bad += v[displs[i] + j] != i * 100 + j;
	CHECK(!bad, "allgatherv");
	memset(v, 0, sizeof(int) * (size_t)tot);
	OK(MPI_Gatherv(mv, t_rank + 1, MPI_INT, v, counts, displs, MPI_INT, 0, MPI_COMM_WORLD));
	if (t_rank == 0) {
		bad = 0;
		for (int i = 0; i < n; i++)
			bad += v[displs[i] + i] != i * 100 + i;
		CHECK(!bad, "gatherv");
	}
	memset(mv, 0, sizeof(int) * (size_t)(t_rank + 1));
	OK(MPI_Scatterv(v, counts, displs, MPI_INT, mv, t_rank + 1, MPI_INT, 0, MPI_COMM_WORLD));
	CHECK(mv[t_rank] == t_rank * 100 + t_rank, "scatterv");
	/* alltoall(v) */
	int *s = malloc(sizeof(int) * (size_t)n * 2), *r = malloc(sizeof(int) * (size_t)n * 2);
	for (int i = 0; i < n; i++) {
		s[2 * i] = t_rank * 1000 + i;
		s[2 * i + 1] = -i;
	}
	OK(MPI_Alltoall(s, 2, MPI_INT, r, 2, MPI_INT, MPI_COMM_WORLD));
	bad = 0;
	for (int i = 0; i < n; i++)
		bad += r[2 * i] != i * 1000 + t_rank || r[2 * i + 1] != -t_rank;
	CHECK(!bad, "alltoall");
	memcpy(r, s, sizeof(int) * (size_t)n * 2);
	OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, 2, MPI_INT, MPI_COMM_WORLD));
	bad = 0;
	for (int i = 0; i < n; i++)
		bad += r[2 * i] != i * 1000 + t_rank;
	CHECK(!bad, "alltoall in place");
	int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++) {
		sc[i] = 1;
		sd[i] = 2 * i;
	}
	OK(MPI_Alltoallv(s, sc, sd, MPI_INT, r, sc, sd, MPI_INT, MPI_COMM_WORLD));
	bad = 0;
	for (int i = 0; i < n; i++)
		bad += r[2 * i] != i * 1000 + t_rank;
	CHECK(!bad, "alltoallv");
	/* reduce_scatter(_block), scan, exscan */
	int *in = malloc(sizeof(int) * (size_t)n * 2), out2[2];
	for (int i = 0; i < 2 * n; i++)
		in[i] = i + t_rank;
	OK(MPI_Reduce_scatter_block(in, out2, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	int base = n * (n - 1) / 2;
	CHECK(out2[0] == n * 2 * t_rank + base && out2[1] == n * (2 * t_rank + 1) + base, "reduce_scatter_block %d %d",
	      out2[0], out2[1]);
	int *rc = malloc(sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++)
		rc[i] = i == 0 ? 2 * n - (n - 1) : 1;
	int *o = malloc(sizeof(int) * (size_t)(2 * n));
	OK(MPI_Reduce_scatter(in, o, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	int first = t_rank == 0 ? 0 : rc[0] + t_rank - 1;
	CHECK(o[0] == n * first + base, "reduce_scatter %d want %d", o[0], n * first + base);
	int x = t_rank + 1, sx = 0, ex = -7;
	OK(MPI_Scan(&x, &sx, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(sx == (t_rank + 1) * (t_rank + 2) / 2, "scan %d", sx);
	OK(MPI_Exscan(&x, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	if (t_rank > 0)
		CHECK(ex == t_rank * (t_rank + 1) / 2, "exscan %d", ex);
	free(all); free(counts); free(displs); free(v); free(mv); free(s); free(r); free(sc); free(sd); free(in);
	free(rc); free(o);
}

/* [[1,1],[0,1]] on even ranks, [[1,0],[1,1]] on odd: the product of ranks
 * lo..hi-1 in rank order, which no other order gives. */
static void mat_prefix(int lo, int hi, int out[4])
{
	int want[4] = { 1, 0, 0, 1 };
	for (int r = lo; r < hi; r++) {
		int x[4] = { 1, r % 2 == 0, r % 2 == 1, 1 };
		int c[4] = { want[0] * x[0] + want[1] * x[2], want[0] * x[1] + want[1] * x[3],
			     want[2] * x[0] + want[3] * x[2], want[2] * x[1] + want[3] * x[3] };
		memcpy(want, c, sizeof c);
	}
	memcpy(out, want, sizeof want);
}

/* Scan and Exscan from their schedules: rank order with a non-commutative
 * op, MPI_IN_PLACE, a non-contiguous type, and the same bits every time. */
static void scans(void)
{
	MPI_Datatype mat;
	MPI_Op op;
	mat_op_new(&mat, &op);
	int m[8], res[8], want[4];
	for (int k = 0; k < 2; k++) {
		int x[4] = { 1, t_rank % 2 == 0, t_rank % 2 == 1, 1 };
		memcpy(m + 4 * k, x, sizeof x);
	}
	OK(MPI_Scan(m, res, 2, mat, op, MPI_COMM_WORLD));
	mat_prefix(0, t_rank + 1, want);
	CHECK(!memcmp(res, want, sizeof want) && !memcmp(res + 4, want, sizeof want),
	      "non-commutative scan [%d %d %d %d]", res[0], res[1], res[2], res[3]);
	memcpy(res, m, sizeof m);
	OK(MPI_Scan(MPI_IN_PLACE, res, 2, mat, op, MPI_COMM_WORLD));
	CHECK(!memcmp(res + 4, want, sizeof want), "scan in place");
	for (int i = 0; i < 8; i++)
		res[i] = -5;
	OK(MPI_Exscan(m, res, 2, mat, op, MPI_COMM_WORLD));
	mat_prefix(0, t_rank, want);
	if (t_rank > 0)
		CHECK(!memcmp(res + 4, want, sizeof want), "non-commutative exscan [%d %d %d %d]", res[4], res[5],
		      res[6], res[7]);
	else
		CHECK(res[0] == -5 && res[7] == -5, "exscan wrote rank 0's buffer");
	memcpy(res, m, sizeof m);
	OK(MPI_Exscan(MPI_IN_PLACE, res, 2, mat, op, MPI_COMM_WORLD));
	if (t_rank > 0)
		CHECK(!memcmp(res, want, sizeof want), "exscan in place");
	mat_op_free(&mat, &op);

	/* every other int of a vector: a packed image goes through the schedule */
	MPI_Datatype every2;
	OK(MPI_Type_vector(3, 1, 2, MPI_LONG, &every2));
	OK(MPI_Type_commit(&every2));
	long lv[6] = { t_rank, -1, 2 * t_rank, -1, 1, -1 }, lr[6] = { 0, 9, 0, 9, 0, 9 };
	OK(MPI_Scan(lv, lr, 1, every2, MPI_SUM, MPI_COMM_WORLD));
	long tri = (long)t_rank * (t_rank + 1) / 2;
	CHECK(lr[0] == tri && lr[2] == 2 * tri && lr[4] == t_rank + 1 && lr[1] == 9 && lr[5] == 9,
	      "vector scan %ld %ld %ld", lr[0], lr[2], lr[4]);
	OK(MPI_Type_free(&every2));

	/* floats whose sum depends on the order of adding: the same bits each time */
	enum { N = 513 };
	float in[N], out[N], first[N];
	for (int i = 0; i < N; i++)
		in[i] = (float)(t_rank + 1) * 1e-3f * (float)(i + 1) + (t_rank % 3 ? 1e6f : -7.0f);
	for (int rep = 0; rep < 4; rep++) {
		OK(MPI_Scan(in, out, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
		if (!rep)
			memcpy(first, out, sizeof out);
		CHECK(!memcmp(first, out, sizeof out), "scan repetition %d differs", rep);
	}
}

/* Gather(v)/Scatter(v) at every root, MPI_IN_PLACE at the root, a strided
 * receive type and displacements out of rank order; Alltoallv in place. */
static void rooted(void)
{
	int n = t_size, mine[2] = { t_rank * 10 + 1, t_rank * 10 + 2 };
	int *all = malloc(sizeof(int) * (size_t)n * 4);
	MPI_Datatype pair_gap; /* 2 ints, stride 2 pairs: ints 0,1 of each 4 */
	OK(MPI_Type_vector(1, 2, 4, MPI_INT, &pair_gap));
	MPI_Datatype spaced;
	OK(MPI_Type_create_resized(pair_gap, 0, (MPI_Aint)(4 * sizeof(int)), &spaced));
	OK(MPI_Type_commit(&spaced));
	for (int root = 0; root < n; root++) {
		for (int i = 0; i < 4 * n; i++)
			all[i] = -1;
		OK(MPI_Gather(mine, 2, MPI_INT, all, 1, spaced, root, MPI_COMM_WORLD));
		int bad = 0;
		for (int i = 0; t_rank == root && i < n; i++)
			bad += all[4 * i] != i * 10 + 1 || all[4 * i + 1] != i * 10 + 2 || all[4 * i + 2] != -1;
		CHECK(!bad, "strided gather at root %d", root);
		/* in place: the root's block is already there */
		for (int i = 0; i < 2 * n; i++)
			all[i] = t_rank == root && i / 2 == root ? root * 10 + 1 + i % 2 : -1;
		if (t_rank == root)
			OK(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 2, MPI_INT, root, MPI_COMM_WORLD));
		else
			OK(MPI_Gather(mine, 2, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD));
		bad = 0;
		for (int i = 0; t_rank == root && i < n; i++)
			bad += all[2 * i] != i * 10 + 1 || all[2 * i + 1] != i * 10 + 2;
		CHECK(!bad, "gather in place at root %d", root);
		/* scatter it back; the root keeps its own block in place */
		int got[2] = { -1, -1 };
		if (t_rank == root) {
			OK(MPI_Scatter(all, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, root, MPI_COMM_WORLD));
		} else {
			OK(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, got, 2, MPI_INT, root, MPI_COMM_WORLD));
			CHECK(got[0] == mine[0] && got[1] == mine[1], "scatter from root %d: %d %d", root, got[0], got[1]);
		}
		/* v-forms with blocks in reverse rank order, rank i sends i % 3 ints */
		int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n), tot = 0;
		for (int i = n - 1; i >= 0; i--) {
			counts[i] = i % 3;
			displs[i] = tot;
			tot += i % 3;
		}
		int v[64], mv[2] = { t_rank * 7, t_rank * 7 + 1 };
		for (int i = 0; i < 64; i++)
			v[i] = -1;
		OK(MPI_Gatherv(mv, t_rank % 3, MPI_INT, v, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
		bad = 0;
		for (int i = 0; t_rank == root && i < n; i++)
			for (int j = 0; j < counts[i]; j++)
				bad += v[displs[i] + j] != i * 7 + j;
		CHECK(!bad && (t_rank != root || v[tot] == -1), "gatherv at root %d", root);
		int back[2] = { -3, -3 };
		if (t_rank == root)
			OK(MPI_Scatterv(v, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, root, MPI_COMM_WORLD));
		else
			OK(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, back, t_rank % 3, MPI_INT, root, MPI_COMM_WORLD));
		if (t_rank != root)
			for (int j = 0; j < 2; j++)
				CHECK(back[j] == (j < t_rank % 3 ? t_rank * 7 + j : -3), "scatterv from %d: [%d] = %d", root,
				      j, back[j]);
		free(counts);
		free(displs);
	}
	OK(MPI_Type_free(&spaced));
	OK(MPI_Type_free(&pair_gap));
	free(all);

	/* Alltoallv in place: rank r gets (r + j) % 3 + 1 ints from j, laid out
	 * in reverse peer order with a gap */
	int *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n), *buf = malloc(sizeof(int) * 8 * (size_t)n);
	int off = 0;
	for (int j = n - 1; j >= 0; j--) {
		rc[j] = (t_rank + j) % 3 + 1;
		rd[j] = off;
		off += rc[j] + 1;
	}
	for (int j = 0; j < n; j++)
		for (int k = 0; k <= rc[j]; k++)
			buf[rd[j] + k] = k < rc[j] ? t_rank * 1000 + j * 10 + k : -9;
	OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, buf, rc, rd, MPI_INT, MPI_COMM_WORLD));
	int bad = 0;
	for (int j = 0; j < n; j++)
		for (int k = 0; k <= rc[j]; k++)
			bad += buf[rd[j] + k] != (k < rc[j] ? j * 1000 + t_rank * 10 + k : -9);
	CHECK(!bad, "alltoallv in place");
	free(rc);
	free(rd);
	free(buf);
}

/* Allgatherv and Alltoallv: zero-size blocks, displacements out of rank
 * order with holes that must stay untouched, a strided (non-contiguous)
 * type on either side, MPI_IN_PLACE, and sizes on both sides of the 64 KiB
 * short rule (recursive doubling or bruck below it, the ring above). */
static int vcnt(int from, int to, int unit)
{
	return (from + 2 * to) % 4 == 0 ? 0 : ((from + to) % 3 + 1) * unit;
}

static int vval(int from, int to, int k) { return (from * 16 + to) * 100000 + k; }

static void vcolls(void)
{
	int n = t_size, me = t_rank;
	MPI_Datatype gap1, gap; /* one int, then a one-int hole */
	OK(MPI_Type_vector(1, 1, 2, MPI_INT, &gap1));
	OK(MPI_Type_create_resized(gap1, 0, (MPI_Aint)(2 * sizeof(int)), &gap));
	OK(MPI_Type_commit(&gap));
	int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
	int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
	int *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n);
	for (int big = 0; big < 2; big++) {
		/* small: blocks in reverse rank order with a hole of one int
		 * after each; big: back to back in rank order (with MPI_INT, the
		 * buffer the schedule works in) */
		int unit = big ? 6000 : 1, hole = !big, tot = 0;
		/* allgatherv: every third rank has nothing */
		for (int u = 0; u < n; u++) {
			int i = big ? u : n - 1 - u;
			counts[i] = i % 3 == 1 ? 0 : (i + 1) * unit;
			displs[i] = tot;
			tot += counts[i] + hole;
		}
		int *all = malloc(sizeof(int) * 2 * (size_t)tot), *mine = malloc(sizeof(int) * (size_t)(counts[me] + 1));
		for (int k = 0; k < counts[me]; k++)
			mine[k] = vval(me, 0, k);
		for (int mode = 0; mode < 3; mode++) {
			/* 0: ints, 1: in place, 2: the strided receive type */
			int stride = mode == 2 ? 2 : 1;
			for (int i = 0; i < stride * tot; i++)
				all[i] = -1;
			if (mode == 1)
				memcpy(all + displs[me], mine, sizeof(int) * (size_t)counts[me]);
			if (mode == 1)
				OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT,
						  MPI_COMM_WORLD));
			else
				OK(MPI_Allgatherv(mine, counts[me], MPI_INT, all, counts, displs, mode == 2 ? gap : MPI_INT,
						  MPI_COMM_WORLD));
			int bad = 0, holes = 0;
			for (int i = 0; i < n; i++) {
				for (int k = 0; k < counts[i]; k++)
					bad += all[stride * (displs[i] + k)] != vval(i, 0, k);
				holes += hole && all[stride * (displs[i] + counts[i])] != -1;
			}
			for (int i = 1; mode == 2 && i < 2 * tot; i += 2)
				holes += all[i] != -1;
			CHECK(!bad && !holes, "allgatherv mode %d unit %d: %d wrong, %d holes written", mode, unit, bad,
			      holes);
		}
		free(all);
		free(mine);

		/* alltoallv: sizes per pair with zeros; small: sends in reverse
		 * peer order, holes after every block */
		int stot = 0, rtot = 0;
		for (int u = 0; u < n; u++) {
			int j = big ? u : n - 1 - u;
			sc[j] = vcnt(me, j, unit);
			sd[j] = stot;
			stot += sc[j] + hole;
		}
		for (int j = 0; j < n; j++) {
			rc[j] = vcnt(j, me, unit);
			rd[j] = rtot;
			rtot += rc[j] + 2 * hole;
		}
		int *sb = malloc(sizeof(int) * 2 * (size_t)stot), *rb = malloc(sizeof(int) * 2 * (size_t)rtot);
		for (int mode = 0; mode < 3; mode++) {
			/* 0: ints, 1: strided send type, 2: strided receive type */
			int ss = mode == 1 ? 2 : 1, rs = mode == 2 ? 2 : 1;
			for (int i = 0; i < ss * stot; i++)
				sb[i] = -5;
			for (int j = 0; j < n; j++)
				for (int k = 0; k < sc[j]; k++)
					sb[ss * (sd[j] + k)] = vval(me, j, k);
			for (int i = 0; i < rs * rtot; i++)
				rb[i] = -1;
			OK(MPI_Alltoallv(sb, sc, sd, mode == 1 ? gap : MPI_INT, rb, rc, rd, mode == 2 ? gap : MPI_INT,
					 MPI_COMM_WORLD));
			int bad = 0, holes = 0;
			for (int j = 0; j < n; j++) {
				for (int k = 0; k < rc[j]; k++)
					bad += rb[rs * (rd[j] + k)] != vval(j, me, k);
				holes += hole && (rb[rs * (rd[j] + rc[j])] != -1 || rb[rs * (rd[j] + rc[j] + 1)] != -1);
			}
			CHECK(!bad && !holes, "alltoallv mode %d unit %d: %d wrong, %d holes written", mode, unit, bad, holes);
		}
		free(sb);
		free(rb);
	}
	OK(MPI_Type_free(&gap));
	OK(MPI_Type_free(&gap1));
	free(counts);
	free(displs);
	free(sc);
	free(sd);
	free(rc);
	free(rd);
}

/* Declared commutative but not symmetric in its bits: inout = in / 2 +
 * inout / 4 depends on which operand is which, so ranks agree only if
 * every combination is made once, or in the same order everywhere. */
static void lopsided(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	const double *a = in;
	double *b = inout;
	for (int i = 0; i < *len; i++)
		b[i] = a[i] * 0.5 + b[i] * 0.25;
}

/* Vectors around the paths' limits (the direct recursive-doubling path
 * on 2^k ranks up to 4 KiB, its ACK-free sends up to 1 KiB; the schedule
 * with the input apart above: recursive doubling up to 8 KiB, then the
 * ring, whose blocks are combined from the input in 16 KiB pieces): sums
 * right out of place and in place, sendbuf left as it was, and a
 * commutative user op whose bits depend on the order giving the same bits
 * on every rank, every time, in place or not. */
static void short_allreduce(void)
{
	static const int counts[] = { 1, 2, 3, 127, 128, 129, 511, 512, 513, 1023, 1025, 6001 };
	MPI_Op op;
	OK(MPI_Op_create(lopsided, 1, &op));
	MPI_Datatype pair;
	OK(MPI_Type_contiguous(2, MPI_DOUBLE, &pair));
	OK(MPI_Type_commit(&pair));
	for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
		int n = counts[k];
		double *in = malloc(sizeof(double) * (size_t)n), *keep = malloc(sizeof(double) * (size_t)n);
		double *out = malloc(sizeof(double) * (size_t)n), *first = malloc(sizeof(double) * (size_t)n);
		for (int i = 0; i < n; i++)
			in[i] = keep[i] = (t_rank + 1) * 1.5 + i;
		OK(MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
		int bad = 0;
		for (int i = 0; i < n; i++)
			bad += out[i] != 1.5 * t_size * (t_size + 1) / 2 + (double)t_size * i;
		CHECK(bad == 0, "allreduce double sum n=%d: %d wrong", n, bad);
		CHECK(!memcmp(in, keep, sizeof(double) * (size_t)n), "allreduce n=%d wrote its sendbuf", n);
		if (n % 2 == 0) {
			OK(MPI_Allreduce(in, out, n / 2, pair, MPI_MAX, MPI_COMM_WORLD));
			bad = 0;
			for (int i = 0; i < n; i++)
				bad += out[i] != t_size * 1.5 + i;
			CHECK(bad == 0, "allreduce pair max n=%d: %d wrong", n / 2, bad);
		}
		for (int rep = 0; rep < 3; rep++) {
			bool inplace = rep == 2;
			if (inplace)
				memcpy(out, in, sizeof(double) * (size_t)n);
			OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, n, MPI_DOUBLE, op, MPI_COMM_WORLD));
			if (rep == 0)
				memcpy(first, out, sizeof(double) * (size_t)n);
			CHECK(!memcmp(first, out, sizeof(double) * (size_t)n), "lopsided n=%d: repetition %d%s differs", n,
			      rep, inplace ? " (in place)" : "");
		}
		CHECK(!memcmp(in, keep, sizeof(double) * (size_t)n), "lopsided allreduce n=%d wrote its sendbuf", n);
		memcpy(out, first, sizeof(double) * (size_t)n);
		OK(MPI_Bcast(out, n, MPI_DOUBLE, 0, MPI_COMM_WORLD));
		CHECK(!memcmp(out, first, sizeof(double) * (size_t)n), "lopsided n=%d: ranks disagree", n);
		free(in); free(keep); free(out); free(first);
	}
	OK(MPI_Type_free(&pair));
	OK(MPI_Op_free(&op));
}

/* The short double sum (combined in one pass on the direct recursive
 * doubling) adds in the schedule's order on every rank: values whose sum
 * depends on the order give the same bits everywhere, every time, in
 * place or not; and the check of an operation against a type, which
 * remembers the last predefined pair it accepted, still refuses a wrong
 * pair after a right one, on a communicator that returns errors. */
static void short_sum_bits(void)
{
	static const int counts[] = { 1, 8, 64, 512 };
	for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
		int n = counts[k];
		double in[512], out[512], first[512], r0[512];
		for (int i = 0; i < n; i++)
			in[i] = (t_rank % 2 ? 1e16 : 1.0 + i) * (t_rank % 4 < 2 ? 1.0 : -1.0) + t_rank * 0.1;
		for (int rep = 0; rep < 3; rep++) {
			bool inplace = rep == 2;
			if (inplace)
				memcpy(out, in, sizeof(double) * (size_t)n);
			OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
			if (rep == 0)
				memcpy(first, out, sizeof(double) * (size_t)n);
			CHECK(!memcmp(first, out, sizeof(double) * (size_t)n), "short sum n=%d: repetition %d%s differs", n,
			      rep, inplace ? " (in place)" : "");
		}
		memcpy(r0, first, sizeof(double) * (size_t)n);
		OK(MPI_Bcast(r0, n, MPI_DOUBLE, 0, MPI_COMM_WORLD));
		CHECK(!memcmp(r0, first, sizeof(double) * (size_t)n), "short sum n=%d: ranks disagree", n);
	}
	MPI_Comm c;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
	double v = 1, w = 0;
	int cls = -1;
	OK(MPI_Allreduce(&v, &w, 1, MPI_DOUBLE, MPI_SUM, c));
	MPI_Error_class(MPI_Allreduce(&v, &w, 1, MPI_DOUBLE, MPI_BAND, c), &cls);
	CHECK(cls == MPI_ERR_OP, "MPI_BAND on MPI_DOUBLE after a sum: class %d, want MPI_ERR_OP", cls);
	cls = -1;
	MPI_Error_class(MPI_Allreduce(&v, &w, 1, MPI_DOUBLE_INT, MPI_SUM, c), &cls);
	CHECK(cls == MPI_ERR_OP, "MPI_SUM on MPI_DOUBLE_INT after a double sum: class %d, want MPI_ERR_OP", cls);
	OK(MPI_Allreduce(&v, &w, 1, MPI_DOUBLE, MPI_SUM, c));
	cls = -1;
	MPI_Error_class(MPI_Allreduce(&v, &w, -1, MPI_DOUBLE, MPI_SUM, c), &cls);
	CHECK(cls == MPI_ERR_COUNT, "count -1 of the pair accepted last: class %d, want MPI_ERR_COUNT", cls);
	OK(MPI_Allreduce(&v, &w, 1, MPI_DOUBLE, MPI_SUM, c));
	CHECK(w == t_size, "double sum after refused ones: %g, want %d", w, t_size);
	OK(MPI_Comm_free(&c));
}

/* Short vectors on 2^k ranks combine in recursive doubling's order,
 * whichever way they travel (the rounds of recursive doubling, or on
 * shared cores every input to every rank, combined by each: mpi_coll.sh
 * runs both through PTL_COLL_CORES): with the lopsided op the result is
 * the block tree computed here from every rank's input, at mask m
 * f(in = ranks [b + m, b + 2m)'s partial, inout = [b, b + m)'s), bit for
 * bit, in place or not, and MPI_Iallreduce's schedule gives the same
 * (under the automatic choice). */
static double rd_input(int rank, int i) { return 1.0 / (rank * 7 + i + 3) * (i % 3 ? 1e16 : 1.0); }

/* Recursive doubling's result with the lopsided op, in part's row 0: row
 * r (stride doubles apart) gets rank r's n inputs, then at mask m row b
 * takes f(in = row b + m, inout = row b). */
static void rd_expect(double *part, size_t stride, int nranks, int n)
{
	for (int r = 0; r < nranks; r++)
		for (int i = 0; i < n; i++)
			part[(size_t)r * stride + (size_t)i] = rd_input(r, i);
	for (int m = 1; m < nranks; m <<= 1)
		for (int b = 0; b < nranks; b += 2 * m)
			lopsided(part + (size_t)(b + m) * stride, part + (size_t)b * stride, &n, NULL);
}

/* Every rank of the job on this host (tests/hosts runs these on two). */
static bool all_on_one_host(void)
{
	MPI_Comm local;
	int here;
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local));
	OK(MPI_Comm_size(local, &here));
	OK(MPI_Comm_free(&local));
	return here == t_size;
}

static void rd_order_bits(void)
{
	const char *algo = getenv("PTL_COLL_ALGO"); /* a named algorithm has its own order */
	if ((t_size & (t_size - 1)) || (algo && *algo))
		return;
	/* 8 KiB everywhere; 16 KiB on one host (coll_choose.c's
	 * COLL_ALLREDUCE_SHORT_HOST_BYTES), elsewhere not short */
	static const int counts[] = { 1, 3, 8, 64, 128, 512, 1024, 2048 };
	enum { MAXN = 2048, MAXR = 16 };
	if (t_size > MAXR)
		return;
	size_t ncounts = sizeof counts / sizeof *counts - !all_on_one_host();
	MPI_Op op;
	OK(MPI_Op_create(lopsided, 1, &op));
	for (size_t k = 0; k < ncounts; k++) {
		int n = counts[k];
		static double in[MAXN], out[MAXN], ip[MAXN], nb[MAXN], part[MAXR][MAXN];
		rd_expect(&part[0][0], MAXN, t_size, n);
		for (int i = 0; i < n; i++)
			in[i] = ip[i] = rd_input(t_rank, i);
		OK(MPI_Allreduce(in, out, n, MPI_DOUBLE, op, MPI_COMM_WORLD));
		OK(MPI_Allreduce(MPI_IN_PLACE, ip, n, MPI_DOUBLE, op, MPI_COMM_WORLD));
		MPI_Request rq;
		OK(MPI_Iallreduce(in, nb, n, MPI_DOUBLE, op, MPI_COMM_WORLD, &rq));
		OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
		CHECK(!memcmp(out, part[0], sizeof(double) * (size_t)n), "n=%d: not recursive doubling's order", n);
		CHECK(!memcmp(ip, part[0], sizeof(double) * (size_t)n), "n=%d in place: not recursive doubling's order", n);
		CHECK(!memcmp(nb, part[0], sizeof(double) * (size_t)n), "n=%d: MPI_Iallreduce differs", n);
		for (int i = 0; i < n; i++)
			CHECK(in[i] == rd_input(t_rank, i), "n=%d: sendbuf written", n);
	}
	OK(MPI_Op_free(&op));
}

/* The allreduce of in (n doubles, op) three ways: into out, in place in ip
 * (which holds in), and by MPI_Iallreduce into nb. */
static void allreduce_3ways(const double *in, double *out, double *ip, double *nb, int n, MPI_Op op)
{
	OK(MPI_Allreduce(in, out, n, MPI_DOUBLE, op, MPI_COMM_WORLD));
	OK(MPI_Allreduce(MPI_IN_PLACE, ip, n, MPI_DOUBLE, op, MPI_COMM_WORLD));
	MPI_Request rq;
	OK(MPI_Iallreduce(in, nb, n, MPI_DOUBLE, op, MPI_COMM_WORLD, &rq));
	OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
}

/* 2 ranks, 16 - 64 KiB: recursive doubling's one exchange of the whole
 * vector (coll_choose.c's COLL_ALLREDUCE_PAIR_*), so with the lopsided
 * op every element is f(in = rank 1's, inout = rank 0's), on both ranks,
 * in place or not, and MPI_Iallreduce the same; the ring would combine
 * its second half the other way round (f(in = rank 0's, inout = rank
 * 1's), at rank 1). Under the automatic choice only. */
static void pair_rd_bits(void)
{
	const char *algo = getenv("PTL_COLL_ALGO");
	if (t_size != 2 || (algo && *algo))
		return;
	enum { MAXN = 8192 };
	static const int counts[] = { 2049, 3072, 4096, 6000, MAXN };
	static double in[MAXN], out[MAXN], ip[MAXN], nb[MAXN], want[MAXN], up[MAXN];
	MPI_Op op;
	OK(MPI_Op_create(lopsided, 1, &op));
	for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
		int n = counts[k], len = n;
		size_t sz = sizeof(double) * (size_t)n;
		for (int i = 0; i < n; i++) {
			in[i] = ip[i] = rd_input(t_rank, i);
			want[i] = rd_input(0, i);
			up[i] = rd_input(1, i);
		}
		lopsided(up, want, &len, NULL);
		allreduce_3ways(in, out, ip, nb, n, op);
		CHECK(!memcmp(out, want, sz), "n=%d: not recursive doubling's order", n);
		CHECK(!memcmp(ip, want, sz), "n=%d in place: not recursive doubling's order", n);
		CHECK(!memcmp(nb, want, sz), "n=%d: MPI_Iallreduce not in recursive doubling's order", n);
		for (int i = 0; i < n; i++)
			CHECK(in[i] == rd_input(t_rank, i), "n=%d: sendbuf written", n);
	}
	OK(MPI_Op_free(&op));
}

/* 4 ranks of one host on shared cores (the ranks outnumber the cores, or
 * PTL_COLL_CORES says so), above 64 KiB to below 192 KiB: recursive
 * doubling (coll_choose.c's COLL_SHARED_BIDIR_MAX, COLL_SHARED_HD_MIN),
 * so with the lopsided op the result is rd_order_bits' block tree,
 * f(rank 2's and 3's, rank 0's and 1's), on every rank, in place or not,
 * and MPI_Iallreduce the same; the rings, the tree and halving-doubling
 * combine halves or quarters otherwise. Under the automatic choice only. */
static void shared_rd_bits(void)
{
	const char *algo = getenv("PTL_COLL_ALGO"), *cores = getenv("PTL_COLL_CORES");
	long ncores = cores && *cores ? atol(cores) : sysconf(_SC_NPROCESSORS_ONLN);
	if (t_size != 4 || (algo && *algo) || ncores <= 0 || ncores >= t_size || !all_on_one_host())
		return;
	enum { MAXN = 24575 }; /* 192 KiB of doubles less one */
	static const int counts[] = { 8193, 16384, MAXN };
	static double in[MAXN], out[MAXN], ip[MAXN], nb[MAXN], part[4][MAXN];
	MPI_Op op;
	OK(MPI_Op_create(lopsided, 1, &op));
	for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
		int n = counts[k];
		size_t sz = sizeof(double) * (size_t)n;
		rd_expect(&part[0][0], MAXN, 4, n);
		for (int i = 0; i < n; i++)
			in[i] = ip[i] = rd_input(t_rank, i);
		allreduce_3ways(in, out, ip, nb, n, op);
		CHECK(!memcmp(out, part[0], sz), "n=%d: not recursive doubling's order", n);
		CHECK(!memcmp(ip, part[0], sz), "n=%d in place: not recursive doubling's order", n);
		CHECK(!memcmp(nb, part[0], sz), "n=%d: MPI_Iallreduce not in recursive doubling's order", n);
		for (int i = 0; i < n; i++)
			CHECK(in[i] == rd_input(t_rank, i), "n=%d: sendbuf written", n);
	}
	OK(MPI_Op_free(&op));
}

/* A commutative user op that adds doubles as MPI_SUM does (in + inout):
 * it takes mpi_op_apply's path, the input copied before each combination. */
static void dsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		((double *)inout)[i] = ((double *)in)[i] + ((double *)inout)[i];
}

/* Long double sums go by a schedule with the input apart (its first
 * combination of each byte starts from sendbuf), where MPI_SUM of
 * MPI_DOUBLE takes mpi_coll.c's one-pass combine_fast: right, and the
 * same bits as the same sum by a user op through mpi_op_apply (values
 * whose sum depends on the order, odd counts: a tail past the four-wide
 * loop), blocking or not, in place or not, on every rank; sendbuf
 * unwritten. On 2 ranks the ring's halves of the longest (280 KiB) go
 * eagerly, read by the receiver (MPI_MODE_PULL). */
static void long_sum_bits(void)
{
	enum { MAXN = 70001 };
	static const int counts[] = { 1000, 5003, MAXN };
	static double in[MAXN], out[MAXN], ref[MAXN], ip[MAXN], nb[MAXN];
	MPI_Op op;
	OK(MPI_Op_create(dsum, 1, &op));
	for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
		int n = counts[k];
		size_t sz = sizeof(double) * (size_t)n;
		for (int i = 0; i < n; i++)
			in[i] = ip[i] = rd_input(t_rank, i) * (t_rank % 2 ? -1.0 : 1.0);
		OK(MPI_Allreduce(in, ref, n, MPI_DOUBLE, op, MPI_COMM_WORLD));
		allreduce_3ways(in, out, ip, nb, n, MPI_SUM);
		int bad = 0;
		for (int i = 0; i < n; i++) {
			double want = 0, mag = 0;
			for (int r = 0; r < t_size; r++) {
				double v = rd_input(r, i) * (r % 2 ? -1.0 : 1.0);
				want += v;
				mag += fabs(v);
			}
			bad += fabs(out[i] - want) > 1e-12 * mag;
		}
		CHECK(bad == 0, "n=%d: %d sums wrong", n, bad);
		CHECK(!memcmp(out, ref, sz), "n=%d: MPI_SUM differs from the same sum by a user op", n);
		CHECK(!memcmp(ip, ref, sz), "n=%d in place: MPI_SUM differs from the user op's", n);
		CHECK(!memcmp(nb, ref, sz), "n=%d: MPI_Iallreduce's MPI_SUM differs from the user op's", n);
		for (int i = 0; i < n; i++)
			CHECK(in[i] == rd_input(t_rank, i) * (t_rank % 2 ? -1.0 : 1.0), "n=%d: sendbuf written", n);
		memcpy(ip, out, sz);
		OK(MPI_Bcast(ip, n, MPI_DOUBLE, 0, MPI_COMM_WORLD));
		CHECK(!memcmp(ip, out, sz), "n=%d: ranks disagree", n);
	}
	OK(MPI_Op_free(&op));
}

/* Long vectors of contiguous types go by schedules that read the input
 * apart: each rank's first combination of a block writes in[] OP what
 * came into out[] in one pass (mpi_op_apply3), for every predefined op
 * and type as for MPI_SUM of doubles: a pair op writes whichever pair it
 * keeps (MAXLOC of MPI_2INT), complex and byte types; sendbuf unwritten.
 * A non-commutative user op over long vectors (rank order kept: reduced
 * to rank 0, its function writing a copy of its second operand), in place
 * and not. MPI_Reduce reads the input where it is too, its root not in
 * place (tree; owner for the non-commutative op, then sent to the root),
 * and so does MPI_Reduce_scatter_block (the ring's reduce-scatter). */
static int pick(int r, int i) { return (r * 5 + i * 3) % 7; }

/* The least of every rank's pick(r, i) - 3: long_ops' MPI_MIN. */
static int min_at(int i)
{
	int m = pick(0, i) - 3;
	for (int r = 1; r < t_size; r++)
		m = pick(r, i) - 3 < m ? pick(r, i) - 3 : m;
	return m;
}

/* Rank r's matrix i of long_ops' non-commutative vectors; got, the
 * product of every rank's in rank order? */
static void mat_of(int r, int i, int m[4])
{
	int odd = (r + i) % 2;
	m[0] = 1, m[1] = !odd, m[2] = odd, m[3] = 1;
}

static bool mat_ok(const int got[4], int i)
{
	int want[4] = { 1, 0, 0, 1 };
	for (int r = 0; r < t_size; r++) {
		int x[4];
		mat_of(r, i, x);
		int c[4] = { want[0] * x[0] + want[1] * x[2], want[0] * x[1] + want[1] * x[3],
			     want[2] * x[0] + want[3] * x[2], want[2] * x[1] + want[3] * x[3] };
		memcpy(want, c, sizeof c);
	}
	return !memcmp(got, want, sizeof want);
}

static void long_ops(void)
{
	enum { N = 9001 };
	static int iin[N], iout[N];
	static struct { int v, k; } pin[N], pout[N];
	static double complex cin[N], cout[N];
	static unsigned char bin[N], bout[N];
	static int min[N][4], mout[N][4];
	int bad = 0;
	for (int i = 0; i < N; i++) {
		iin[i] = pick(t_rank, i) - 3;
		pin[i].v = pick(t_rank, i);
		pin[i].k = t_rank;
		cin[i] = (double)(t_rank + 1) + (double)i * I;
		bin[i] = (unsigned char)(1u << ((t_rank + i) % 8));
	}
	OK(MPI_Allreduce(iin, iout, N, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
	for (int i = 0; i < N; i++)
		bad += iout[i] != min_at(i) || iin[i] != pick(t_rank, i) - 3;
	CHECK(bad == 0, "long int min: %d wrong (or sendbuf written)", bad);
	OK(MPI_Allreduce(pin, pout, N, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD));
	bad = 0;
	for (int i = 0; i < N; i++) {
		int wk = 0;
		for (int r = 1; r < t_size; r++)
			wk = pick(r, i) > pick(wk, i) ? r : wk;
		bad += pout[i].v != pick(wk, i) || pout[i].k != wk;
	}
	CHECK(bad == 0, "long maxloc: %d wrong", bad);
	OK(MPI_Allreduce(cin, cout, N, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
	bad = 0;
	for (int i = 0; i < N; i++)
		bad += cout[i] != (double)t_size * (t_size + 1) / 2 + (double)t_size * i * I;
	CHECK(bad == 0, "long complex sum: %d wrong", bad);
	OK(MPI_Allreduce(bin, bout, N, MPI_UNSIGNED_CHAR, MPI_BXOR, MPI_COMM_WORLD));
	bad = 0;
	for (int i = 0; i < N; i++) {
		unsigned want = 0;
		for (int r = 0; r < t_size; r++)
			want ^= 1u << ((r + i) % 8);
		bad += bout[i] != (unsigned char)want;
	}
	CHECK(bad == 0, "long byte bxor: %d wrong", bad);
	MPI_Datatype mat;
	MPI_Op op;
	mat_op_new(&mat, &op);
	for (int inplace = 0; inplace < 2; inplace++) {
		for (int i = 0; i < N; i++) {
			mat_of(t_rank, i, min[i]);
			mat_of(t_rank, i, mout[i]);
		}
		OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : (void *)min, mout, N, mat, op, MPI_COMM_WORLD));
		bad = 0;
		for (int i = 0; i < N; i++)
			bad += !mat_ok(mout[i], i);
		CHECK(bad == 0, "long non-commutative allreduce%s: %d of %d matrices wrong", inplace ? " in place" : "",
		      bad, N);
	}
	for (int root = 0; root < t_size; root += t_size > 2 ? t_size - 1 : 1) {
		memset(iout, 0x5a, sizeof iout);
		OK(MPI_Reduce(iin, t_rank == root ? iout : NULL, N, MPI_INT, MPI_MIN, root, MPI_COMM_WORLD));
		bad = 0;
		for (int i = 0; i < N; i++)
			bad += (t_rank == root && iout[i] != min_at(i)) || iin[i] != pick(t_rank, i) - 3;
		CHECK(bad == 0, "long reduce min to %d: %d wrong (or sendbuf written)", root, bad);
		for (int i = 0; i < N; i++)
			mat_of(t_rank, i, min[i]);
		memset(mout, 0, sizeof mout);
		OK(MPI_Reduce(min, mout, N, mat, op, root, MPI_COMM_WORLD));
		bad = 0;
		for (int i = 0; i < N && t_rank == root; i++)
			bad += !mat_ok(mout[i], i);
		for (int i = 0; i < N; i++)
			bad += min[i][1] != !((t_rank + i) % 2);
		CHECK(bad == 0, "long non-commutative reduce to %d: %d wrong (or sendbuf written)", root, bad);
	}
	mat_op_free(&mat, &op);
	enum { B = 3001 };
	int *rin = malloc(sizeof(int) * B * (size_t)t_size), rout[B];
	for (int i = 0; i < B * t_size; i++)
		rin[i] = pick(t_rank, i) - 3;
	OK(MPI_Reduce_scatter_block(rin, rout, B, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
	bad = 0;
	for (int i = 0; i < B; i++)
		bad += rout[i] != min_at(t_rank * B + i);
	for (int i = 0; i < B * t_size; i++)
		bad += rin[i] != pick(t_rank, i) - 3;
	CHECK(bad == 0, "long reduce_scatter_block min: %d wrong (or sendbuf written)", bad);
	free(rin);
}

/* MPI_Reduce_scatter with blocks of their own sizes (one empty, one
 * several times the others): every rank's whole block, by MPI_MIN (the
 * reduce-scatter schedule with counts, sendbuf read where it is and left
 * as it was), in place (recvbuf holds the vector, its block ends up at its
 * start), and by a non-commutative op (rank order kept). */
static int rs_count(int r) { return r == 1 ? 0 : r == 2 ? 4001 : 300 + (r * 1237) % 700; }

static void uneven_reduce_scatter(void)
{
	int *rc = malloc(sizeof(int) * (size_t)t_size), total = 0, at = 0, bad = 0;
	for (int r = 0; r < t_size; r++) {
		rc[r] = rs_count(r);
		at += r < t_rank ? rc[r] : 0;
		total += rc[r];
	}
	int mine = rc[t_rank];
	int *in = malloc(sizeof(int) * (size_t)total), *out = malloc(sizeof(int) * (size_t)(mine + 1));
	int *ip = malloc(sizeof(int) * (size_t)total);
	for (int i = 0; i < total; i++)
		ip[i] = in[i] = pick(t_rank, i) - 3;
	out[mine] = 0x5a5a;
	OK(MPI_Reduce_scatter(in, out, rc, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
	for (int i = 0; i < mine; i++)
		bad += out[i] != min_at(at + i);
	for (int i = 0; i < total; i++)
		bad += in[i] != pick(t_rank, i) - 3;
	CHECK(bad == 0 && out[mine] == 0x5a5a, "uneven reduce_scatter min: %d wrong (or sendbuf written, or past "
	      "the block)", bad);
	OK(MPI_Reduce_scatter(MPI_IN_PLACE, ip, rc, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
	bad = 0;
	for (int i = 0; i < mine; i++)
		bad += ip[i] != min_at(at + i);
	CHECK(bad == 0, "uneven reduce_scatter min in place: %d wrong", bad);
	MPI_Datatype mat;
	MPI_Op op;
	mat_op_new(&mat, &op);
	int (*min)[4] = malloc(sizeof *min * (size_t)total), (*mout)[4] = malloc(sizeof *mout * (size_t)(mine + 1));
	for (int i = 0; i < total; i++)
		mat_of(t_rank, i, min[i]);
	OK(MPI_Reduce_scatter(min, mout, rc, mat, op, MPI_COMM_WORLD));
	bad = 0;
	for (int i = 0; i < mine; i++)
		bad += !mat_ok(mout[i], at + i);
	CHECK(bad == 0, "uneven non-commutative reduce_scatter: %d of %d matrices wrong", bad, mine);
	mat_op_free(&mat, &op);
	free(rc); free(in); free(out); free(ip); free(min); free(mout);
}

/* Same inputs, same bits: on every rank, every time. */
static void determinism(void)
{
	enum { N = 10007 };
	float *in = malloc(sizeof(float) * N), *out = malloc(sizeof(float) * N), *first = malloc(sizeof(float) * N);
	unsigned s = 12345u + (unsigned)t_rank * 7919u;
	for (int i = 0; i < N; i++) {
		s = s * 1103515245u + 12345u;
		in[i] = (float)((s >> 8) & 0xffff) * 1e-3f * (i % 2 ? 1.0f : -3.7f);
	}
	for (int rep = 0; rep < 5; rep++) {
		OK(MPI_Allreduce(in, out, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
		if (rep == 0)
			memcpy(first, out, sizeof(float) * N);
		CHECK(!memcmp(first, out, sizeof(float) * N), "repetition %d differs", rep);
	}
	/* every rank holds the same bits: compare with rank 0's */
	float *r0 = malloc(sizeof(float) * N);
	memcpy(r0, first, sizeof(float) * N);
	OK(MPI_Bcast(r0, N, MPI_FLOAT, 0, MPI_COMM_WORLD));
	CHECK(!memcmp(r0, first, sizeof(float) * N), "ranks disagree");
	free(in); free(out); free(first); free(r0);
}

/* n doubles of quiet NaNs: payload rank + 1 and the element, sign by rank */
static void nan_fill(double *v, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t bits = 0x7ff8000000000000ull | ((uint64_t)(t_rank + 1) << 32) | (uint64_t)i |
				((uint64_t)(t_rank & 1) << 63);
		memcpy(&v[i], &bits, sizeof bits);
	}
}

/* Sums and products of NaNs agree to the bit on every rank and between
 * the blocking and non-blocking forms. Where both operands of an add are
 * NaNs, x86 keeps the first source's payload and sign, and which operand
 * a compiled loop puts first is the compiler's choice, loop by loop: each
 * loop must pick the first operand's NaN itself (MPI_OP_NAN_FIRST), as
 * two partners that each add the other's part (recursive doubling's
 * rounds, the direct path up to 4 KiB and the schedule above it) and a
 * reduce-scatter's two forms (in place, and packed first) run different
 * loops. Every rank's inputs are NaNs with a payload and sign of its own,
 * at counts whose tails the vector loops leave to scalar code (odd, not a
 * multiple of 4), either side of 512 B (where mpi_coll.c's combine_fast
 * hands over to mpi_op.c's loop) and of 4 KiB, by MPI_SUM and MPI_PROD
 * of doubles and MPI_PROD of double complex (one call an element, its
 * operands in the same order in every loop). Reduce-scatters up to 8 ranks. */
static void nan_bits(void)
{
	static const struct {
		MPI_Datatype dt;
		MPI_Op op;
		int per; /* doubles an element */
		const char *what;
	} kinds[] = {
		{ MPI_DOUBLE, MPI_SUM, 1, "sum" },
		{ MPI_DOUBLE, MPI_PROD, 1, "product" },
		{ MPI_C_DOUBLE_COMPLEX, MPI_PROD, 2, "complex product" },
	};
	static const int counts[] = { 3, 63, 65, 511, 513, 2049, 4097 };
	enum { MAXN = 2 * 4097 };
	static double in[MAXN], out[MAXN], nb[MAXN], r0[MAXN], rs_in[MAXN * 8];
	for (size_t o = 0; o < sizeof kinds / sizeof *kinds; o++)
		for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
			int n = counts[k], per = kinds[o].per;
			size_t sz = sizeof(double) * (size_t)(n * per);
			const char *what = kinds[o].what;
			nan_fill(in, n * per);
			/* different bytes where a call leaves something unwritten */
			memset(out, 0, sz);
			memset(nb, 0xff, sz);
			OK(MPI_Allreduce(in, out, n, kinds[o].dt, kinds[o].op, MPI_COMM_WORLD));
			MPI_Request rq;
			OK(MPI_Iallreduce(in, nb, n, kinds[o].dt, kinds[o].op, MPI_COMM_WORLD, &rq));
			OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
			memcpy(r0, out, sz);
			OK(MPI_Bcast(r0, n * per, MPI_DOUBLE, 0, MPI_COMM_WORLD));
			for (int i = 0; i < n * per; i++)
				CHECK(isnan(out[i]), "NaN %s n=%d: element %d part %d not a NaN", what, n, i / per, i % per);
			CHECK(!memcmp(r0, out, sz), "NaN %s n=%d: ranks disagree", what, n);
			CHECK(!memcmp(nb, out, sz), "NaN %s n=%d: MPI_Iallreduce differs", what, n);
			if (t_size > 8) /* rs_in's size */
				continue;
			/* n per rank: blocking reads the input in place, the
			 * non-blocking form packs it first (other loops) */
			nan_fill(rs_in, n * per * t_size);
			memset(out, 0, sz);
			memset(nb, 0xff, sz);
			OK(MPI_Reduce_scatter_block(rs_in, out, n, kinds[o].dt, kinds[o].op, MPI_COMM_WORLD));
			OK(MPI_Ireduce_scatter_block(rs_in, nb, n, kinds[o].dt, kinds[o].op, MPI_COMM_WORLD, &rq));
			OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
			for (int i = 0; i < n * per; i++)
				CHECK(isnan(out[i]), "NaN %s n=%d: reduce-scatter element %d part %d not a NaN", what, n,
				      i / per, i % per);
			CHECK(!memcmp(nb, out, sz), "NaN %s n=%d: MPI_Ireduce_scatter_block differs from MPI_Reduce_scatter_block",
			      what, n);
		}
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	if (argc > 1 && !strcmp(argv[1], "v")) {
		/* the v-variants alone, for the sizes and algorithms the whole
		 * program would take too long at */
		vcolls();
		return t_finish("mpi_coll v");
	}
	vcolls();
	barrier_bcast();
	reductions();
	user_ops();
	gathers();
	scans();
	rooted();
	determinism();
	short_sum_bits();
	short_allreduce();
	rd_order_bits();
	long_sum_bits();
	long_ops();
	uneven_reduce_scatter();
	pair_rd_bits();
	shared_rd_bits();
	nan_bits();
	return t_finish("mpi_coll");
}
