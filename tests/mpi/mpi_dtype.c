/* mpi_dtype: derived datatypes through point-to-point and collectives:
 * vector, indexed, struct, resized; sizes, extents, Get_count and
 * Get_elements; MPI-1's names for the constructors and queries. Needs 2
 * ranks (more are idle in the pair tests). */
#include "mpi_test.h"

#include <stddef.h>

struct part {
	double x;
	int id;
	char name[5];
};

/* The MPI-1 call's type (old) against its replacement's (repl), both
 * committed here: count elements of buf pack to the same bytes (the same
 * layout), and old's envelope names combiner. */
static void alias_ok(MPI_Datatype *old, MPI_Datatype *repl, const void *buf, int count, int combiner,
		     const char *name)
{
	char pa[512], pb[512];
	int na = 0, nb = 0, ni, nad, nd, comb = -1;
	OK(MPI_Type_commit(old));
	OK(MPI_Type_commit(repl));
	OK(MPI_Pack(buf, count, *old, pa, sizeof pa, &na, MPI_COMM_WORLD));
	OK(MPI_Pack(buf, count, *repl, pb, sizeof pb, &nb, MPI_COMM_WORLD));
	CHECK(na == nb && !memcmp(pa, pb, (size_t)na), "%s lays out unlike its replacement (%d, %d bytes)", name,
	      na, nb);
	MPI_Type_get_envelope(*old, &ni, &nad, &nd, &comb);
	CHECK(comb == combiner, "%s's combiner %d, want %d", name, comb, combiner);
}

/* MPI-1's names, removed by MPI-3.0 and still called (HPL's panels are
 * MPI_Type_struct of MPI_Address displacements): each builds the type its
 * replacement does, and fails as it does. */
static void mpi1_names(void)
{
	struct part p[2] = { { 1.25, 7, "ab" }, { 2.5, 8, "cd" } };
	MPI_Aint a0, a1, a2, a3;
	OK(MPI_Address(&p[0], &a0));
	OK(MPI_Address(&p[0].id, &a1));
	OK(MPI_Address(p[0].name, &a2));
	OK(MPI_Address(&p[1], &a3));
	CHECK(a1 - a0 == (MPI_Aint)offsetof(struct part, id) && a2 - a0 == (MPI_Aint)offsetof(struct part, name) &&
		      a3 - a0 == (MPI_Aint)sizeof(struct part),
	      "MPI_Address: %ld %ld %ld", (long)(a1 - a0), (long)(a2 - a0), (long)(a3 - a0));
	int bl[3] = { 1, 1, 3 };
	MPI_Aint d[3] = { 0, a1 - a0, a2 - a0 };
	MPI_Datatype ty[3] = { MPI_DOUBLE, MPI_INT, MPI_CHAR }, s1, s3;
	OK(MPI_Type_struct(3, bl, d, ty, &s1));
	OK(MPI_Type_create_struct(3, bl, d, ty, &s3));
	alias_ok(&s1, &s3, p, 2, MPI_COMBINER_STRUCT, "MPI_Type_struct");

	double m[6][5];
	for (int i = 0; i < 30; i++)
		m[i / 5][i % 5] = i;
	MPI_Datatype h1, h3, x1, x3;
	OK(MPI_Type_hvector(6, 2, 5 * sizeof(double), MPI_DOUBLE, &h1));
	OK(MPI_Type_create_hvector(6, 2, 5 * sizeof(double), MPI_DOUBLE, &h3));
	alias_ok(&h1, &h3, &m[0][1], 1, MPI_COMBINER_HVECTOR, "MPI_Type_hvector");
	int xbl[3] = { 2, 1, 3 };
	MPI_Aint xd[3] = { 0, 5 * sizeof(double), 17 * sizeof(double) };
	OK(MPI_Type_hindexed(3, xbl, xd, MPI_DOUBLE, &x1));
	OK(MPI_Type_create_hindexed(3, xbl, xd, MPI_DOUBLE, &x3));
	alias_ok(&x1, &x3, m, 1, MPI_COMBINER_HINDEXED, "MPI_Type_hindexed");

	/* the bounds: a type resized to [-8, 40) */
	MPI_Datatype r;
	MPI_Aint ext = 0, lb = 0, ub = 0;
	OK(MPI_Type_create_resized(MPI_INT, -8, 48, &r));
	OK(MPI_Type_commit(&r));
	OK(MPI_Type_extent(r, &ext));
	OK(MPI_Type_lb(r, &lb));
	OK(MPI_Type_ub(r, &ub));
	CHECK(ext == 48 && lb == -8 && ub == 40, "MPI_Type_extent/lb/ub: %ld [%ld, %ld)", (long)ext, (long)lb,
	      (long)ub);
	OK(MPI_Type_extent(h1, &ext));
	CHECK(ext == (MPI_Aint)(27 * sizeof(double)), "MPI_Type_extent of an hvector: %ld", (long)ext);

	/* bad arguments: the errors of the calls that replaced them, nothing made */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Datatype bad = MPI_DATATYPE_NULL;
	t_fails_with(MPI_Type_extent(MPI_DATATYPE_NULL, &ext), MPI_ERR_TYPE, "MPI_Type_extent", "MPI_Type_extent(NULL)");
	t_fails_with(MPI_Type_ub((MPI_Datatype)12345, &ub), MPI_ERR_TYPE, "MPI_Type_ub", "MPI_Type_ub(12345)");
	t_fails_with(MPI_Type_lb(MPI_DATATYPE_NULL, &lb), MPI_ERR_TYPE, "MPI_Type_lb", "MPI_Type_lb(NULL)");
	t_fails_with(MPI_Type_hvector(-1, 1, 8, MPI_INT, &bad), MPI_ERR_COUNT, "count -1", "MPI_Type_hvector(-1)");
	t_fails_with(MPI_Type_hindexed(-2, xbl, xd, MPI_INT, &bad), MPI_ERR_COUNT, "count -2", "MPI_Type_hindexed(-2)");
	t_fails_with(MPI_Type_struct(1, bl, d, &bad, &bad), MPI_ERR_TYPE, "", "MPI_Type_struct(NULL member)");
	CHECK(bad == MPI_DATATYPE_NULL, "a failed MPI-1 constructor made a type");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

	MPI_Datatype all[] = { s1, s3, h1, h3, x1, x3, r };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		OK(MPI_Type_free(&all[i]));
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	mpi1_names();
	int sz;
	MPI_Aint lb, ext;
	/* a column of a 6x5 double matrix */
	MPI_Datatype col;
	OK(MPI_Type_vector(6, 1, 5, MPI_DOUBLE, &col));
	OK(MPI_Type_commit(&col));
	MPI_Type_size(col, &sz);
	MPI_Type_get_extent(col, &lb, &ext);
	CHECK(sz == 48 && lb == 0 && ext == (MPI_Aint)(5 * 5 + 1) * 8, "vector size %d extent %ld", sz, (long)ext);
	/* struct with holes */
	MPI_Datatype pt;
	int bl[3] = { 1, 1, 5 };
	MPI_Aint d[3] = { offsetof(struct part, x), offsetof(struct part, id), offsetof(struct part, name) };
	MPI_Datatype ty[3] = { MPI_DOUBLE, MPI_INT, MPI_CHAR };
	OK(MPI_Type_create_struct(3, bl, d, ty, &pt));
	MPI_Datatype pts;
	OK(MPI_Type_create_resized(pt, 0, sizeof(struct part), &pts));
	OK(MPI_Type_commit(&pts));
	MPI_Type_size(pts, &sz);
	MPI_Type_get_extent(pts, &lb, &ext);
	CHECK(sz == 17 && ext == (MPI_Aint)sizeof(struct part), "struct size %d extent %ld", sz, (long)ext);
	/* indexed */
	MPI_Datatype idx;
	int ibl[3] = { 2, 1, 3 }, idp[3] = { 0, 5, 9 };
	OK(MPI_Type_indexed(3, ibl, idp, MPI_INT, &idx));
	OK(MPI_Type_commit(&idx));
	MPI_Type_size(idx, &sz);
	CHECK(sz == 24, "indexed size %d", sz);
	if (t_size >= 2 && t_rank < 2) {
		int peer = 1 - t_rank;
		double m[6][5];
		for (int i = 0; i < 6; i++)
			for (int j = 0; j < 5; j++)
				m[i][j] = t_rank == 0 ? i * 10 + j : -1;
		struct part p[3], q[3];
		memset(q, 0, sizeof q);
		for (int i = 0; i < 3; i++) {
			p[i].x = i + 0.5;
			p[i].id = 100 + i;
			snprintf(p[i].name, sizeof p[i].name, "p%d", i);
		}
		int iv[12], ov[12];
		for (int i = 0; i < 12; i++) {
			iv[i] = i;
			ov[i] = -1;
		}
		if (t_rank == 0) {
			OK(MPI_Send(&m[0][2], 1, col, peer, 1, MPI_COMM_WORLD));
			OK(MPI_Send(p, 3, pts, peer, 2, MPI_COMM_WORLD));
			OK(MPI_Send(iv, 1, idx, peer, 3, MPI_COMM_WORLD));
			OK(MPI_Send(iv, 7, MPI_INT, peer, 4, MPI_COMM_WORLD));
			struct { double v; int k; } pr[2] = { { 1.5, 3 }, { 2.5, 4 } };
			OK(MPI_Send(pr, 2, MPI_DOUBLE_INT, peer, 5, MPI_COMM_WORLD));
		} else {
			MPI_Status st;
			double c[6];
			OK(MPI_Recv(c, 6, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &st));
			int bad = 0;
			for (int i = 0; i < 6; i++)
				bad += c[i] != i * 10 + 2;
			CHECK(!bad, "column");
			OK(MPI_Recv(q, 3, pts, 0, 2, MPI_COMM_WORLD, &st));
			int cnt;
			MPI_Get_count(&st, pts, &cnt);
			CHECK(cnt == 3, "struct count %d", cnt);
			MPI_Get_elements(&st, pts, &cnt);
			CHECK(cnt == 21, "struct elements %d", cnt);
			CHECK(q[2].x == 2.5 && q[2].id == 102 && !strcmp(q[1].name, "p1"), "struct data");
			OK(MPI_Recv(ov, 1, idx, 0, 3, MPI_COMM_WORLD, &st));
			CHECK(ov[0] == 0 && ov[1] == 1 && ov[2] == -1 && ov[5] == 5 && ov[9] == 9 && ov[11] == 11 && ov[8] == -1,
			      "indexed data");
			/* 7 ints into an indexed type of 6: truncation would be an error, so
			 * receive into 2 of them and ask Get_count/Get_elements */
			int big[24];
			OK(MPI_Recv(big, 2, idx, 0, 4, MPI_COMM_WORLD, &st));
			MPI_Get_count(&st, idx, &cnt);
			CHECK(cnt == MPI_UNDEFINED, "partial count %d", cnt);
			MPI_Get_elements(&st, idx, &cnt);
			CHECK(cnt == 7, "partial elements %d", cnt);
			struct { double v; int k; } pr[2];
			OK(MPI_Recv(pr, 2, MPI_DOUBLE_INT, 0, 5, MPI_COMM_WORLD, &st));
			CHECK(pr[1].v == 2.5 && pr[1].k == 4, "pair type");
			MPI_Get_elements(&st, MPI_DOUBLE_INT, &cnt);
			CHECK(cnt == 4, "pair elements %d", cnt);
		}
	}
	/* a vector type through a collective */
	double m[4][3];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 3; j++)
			m[i][j] = t_rank == 0 ? i + j * 0.25 : 0;
	MPI_Datatype c2;
	OK(MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &c2));
	OK(MPI_Type_commit(&c2));
	OK(MPI_Bcast(&m[0][1], 1, c2, 0, MPI_COMM_WORLD));
	CHECK(m[3][1] == 3.25 && (t_rank == 0 || m[3][0] == 0), "bcast vector");
	double s[4][3], r[4][3];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 3; j++)
			s[i][j] = 1, r[i][j] = -1;
	OK(MPI_Allreduce(&s[0][0], &r[0][0], 1, c2, MPI_SUM, MPI_COMM_WORLD));
	CHECK(r[2][0] == t_size && r[2][1] == -1, "allreduce vector");
	/* MPI_Type_free while a receive (and a send) with the type is pending:
	 * the operations complete with the type as it was, even when a new
	 * type has taken the freed handle. Small (eager) and large (rendezvous). */
	for (int big = 0; big < 2 && t_size >= 2; big++) {
		int n = big ? 40000 : 16, *buf = calloc((size_t)n * 2, sizeof(int));
		MPI_Datatype every2, other;
		OK(MPI_Type_vector(n, 1, 2, MPI_INT, &every2));
		OK(MPI_Type_commit(&every2));
		MPI_Request req = MPI_REQUEST_NULL;
		if (t_rank == 1) {
			for (int i = 0; i < 2 * n; i++)
				buf[i] = -1;
			OK(MPI_Irecv(buf, 1, every2, 0, 77, MPI_COMM_WORLD, &req));
		} else if (t_rank == 0) {
			for (int i = 0; i < 2 * n; i++)
				buf[i] = i % 2 ? -2 : i / 2 + 1;
			OK(MPI_Isend(buf, 1, every2, 1, 77, MPI_COMM_WORLD, &req));
		}
		OK(MPI_Type_free(&every2));
		CHECK(every2 == MPI_DATATYPE_NULL, "type_free with a pending operation");
		OK(MPI_Type_contiguous(3, MPI_CHAR, &other));
		OK(MPI_Type_commit(&other));
		if (t_rank <= 1) {
			MPI_Status st;
			OK(MPI_Wait(&req, &st));
		}
		int bad = 0;
		for (int i = 0; t_rank == 1 && i < 2 * n; i++)
			bad += buf[i] != (i % 2 ? -1 : i / 2 + 1);
		CHECK(!bad, "receive into a freed vector type (%d ints): %d wrong", n, bad);
		OK(MPI_Type_free(&other));
		free(buf);
	}
	OK(MPI_Type_free(&col));
	OK(MPI_Type_free(&pt));
	OK(MPI_Type_free(&pts));
	OK(MPI_Type_free(&idx));
	OK(MPI_Type_free(&c2));
	CHECK(c2 == MPI_DATATYPE_NULL, "type_free");
	return t_finish("mpi_dtype");
}
