/* mpi_layout.c: datatype bounds as C programs rely on them. A struct type
 * built from a C struct's members has the C struct's extent (padding to
 * its most aligned member), so arrays of structs travel intact; explicit
 * bounds (MPI_Type_create_resized) are never padded; copies of a type with
 * a negative extent step downwards; blocks of length 0 have no say in the
 * bounds; MPI_Type_dup keeps all of it. MPI_Pack and MPI_Unpack move the
 * data of any type through a byte buffer, MPI_PACKED messages carry it,
 * and an overrun is an error that leaves the position alone. A type whose
 * parts cover a range in another order than the memory's (a transpose, a
 * reversal) is packed and sent in its type-map order. Subarrays in C and
 * Fortran order. */
#include <stddef.h>

#include "mpi_test.h"

struct ci { char c; int i; };                  /* 5 bytes of data, sizeof 8 */
struct dc { double d; char c; };               /* 9, sizeof 16 */
struct sld { short s; long double x; char c; }; /* sizeof 48 on x86-64 */

static MPI_Datatype two(MPI_Datatype a, MPI_Aint da, MPI_Datatype b, MPI_Aint db)
{
	int bl[2] = { 1, 1 };
	MPI_Aint d[2] = { da, db };
	MPI_Datatype t[2] = { a, b }, out;
	OK(MPI_Type_create_struct(2, bl, d, t, &out));
	OK(MPI_Type_commit(&out));
	return out;
}

static void expect_bounds(MPI_Datatype t, MPI_Aint lb, MPI_Aint extent, const char *what)
{
	MPI_Aint l, e;
	OK(MPI_Type_get_extent(t, &l, &e));
	CHECK(l == lb && e == extent, "%s: lb %ld extent %ld, want %ld %ld", what, (long)l, (long)e, (long)lb,
	      (long)extent);
}

static void padding(void)
{
	MPI_Datatype ci = two(MPI_CHAR, offsetof(struct ci, c), MPI_INT, offsetof(struct ci, i));
	MPI_Datatype dc = two(MPI_DOUBLE, offsetof(struct dc, d), MPI_CHAR, offsetof(struct dc, c));
	int bl[3] = { 1, 1, 1 };
	MPI_Aint d[3] = { offsetof(struct sld, s), offsetof(struct sld, x), offsetof(struct sld, c) };
	MPI_Datatype parts[3] = { MPI_SHORT, MPI_LONG_DOUBLE, MPI_CHAR }, sld, dup, resized, outer;
	int size;

	OK(MPI_Type_create_struct(3, bl, d, parts, &sld));
	OK(MPI_Type_commit(&sld));
	expect_bounds(ci, 0, sizeof(struct ci), "struct {char; int}");
	expect_bounds(dc, 0, sizeof(struct dc), "struct {double; char}");
	expect_bounds(sld, 0, sizeof(struct sld), "struct {short; long double; char}");
	OK(MPI_Type_size(ci, &size));
	CHECK(size == 5, "size of struct {char; int}: %d", size);
	/* A dup is the same layout; a struct of structs pads to the inner alignment. */
	OK(MPI_Type_dup(dc, &dup));
	expect_bounds(dup, 0, sizeof(struct dc), "dup of struct {double; char}");
	struct { char c; struct dc in; } nest;
	MPI_Datatype nested = two(MPI_CHAR, 0, dc, (char *)&nest.in - (char *)&nest);
	expect_bounds(nested, 0, sizeof(nest), "struct {char; struct {double; char}}");
	/* Resized: the bounds the user gave, no padding, also inside a struct. */
	OK(MPI_Type_create_resized(ci, 0, 5, &resized));
	OK(MPI_Type_commit(&resized));
	expect_bounds(resized, 0, 5, "struct {char; int} resized to 5");
	outer = two(resized, 0, MPI_CHAR, 5);
	expect_bounds(outer, 0, 6, "struct {resized(5); char}");
	/* Arrays of structs travel with their holes untouched. */
	struct dc send[4], recv[4];
	memset(send, 0x55, sizeof send);
	memset(recv, 0x77, sizeof recv);
	for (int k = 0; k < 4; k++) {
		send[k].d = k + 0.5;
		send[k].c = (char)('a' + k);
	}
	OK(MPI_Sendrecv(send, 4, dc, t_rank, 9, recv, 4, dc, t_rank, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	for (int k = 0; k < 4; k++)
		CHECK(recv[k].d == k + 0.5 && recv[k].c == 'a' + k, "element %d: %g %c", k, recv[k].d, recv[k].c);
	if (t_size > 1) {
		struct ci all[8];
		struct ci mine = { (char)('A' + t_rank), 1000 + t_rank };
		int n = t_size < 8 ? t_size : 8;
		MPI_Comm sub;
		OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank < n, t_rank, &sub));
		if (t_rank < n) {
			OK(MPI_Allgather(&mine, 1, ci, all, 1, ci, sub));
			for (int k = 0; k < n; k++)
				CHECK(all[k].c == 'A' + k && all[k].i == 1000 + k, "allgather block %d: %c %d", k,
				      all[k].c, all[k].i);
		}
		OK(MPI_Comm_free(&sub));
	}
	MPI_Datatype *all_types[] = { &ci, &dc, &sld, &dup, &nested, &resized, &outer };
	for (size_t k = 0; k < sizeof all_types / sizeof all_types[0]; k++)
		OK(MPI_Type_free(all_types[k]));
}

static void negative_and_empty(void)
{
	MPI_Datatype four, neg, contig, vec, nvec, holes;

	OK(MPI_Type_contiguous(4, MPI_BYTE, &four));
	/* lb 6, extent -9: its upper bound (-3) lies below its lower bound. */
	OK(MPI_Type_create_resized(four, 6, -9, &neg));
	expect_bounds(neg, 6, -9, "resized(4 bytes, 6, -9)");
	OK(MPI_Type_contiguous(3, neg, &contig)); /* copies at 0, -9, -18 */
	expect_bounds(contig, -12, 9, "contiguous(3) of it");
	OK(MPI_Type_vector(3, 4, 5, neg, &vec)); /* blocks at 0, -45, -90 */
	expect_bounds(vec, -111, 108, "vector(3, 4, 5) of it");
	OK(MPI_Type_vector(3, 4, -5, neg, &nvec)); /* blocks at 0, 45, 90 */
	expect_bounds(nvec, -21, 108, "vector(3, 4, -5) of it");
	/* A zero-length block far away does not stretch the bounds. */
	int bl[3] = { 1, 0, 2 }, size;
	MPI_Aint d[3] = { 8, 1000, 16 };
	MPI_Datatype t[3] = { MPI_INT, MPI_DOUBLE, MPI_INT };
	OK(MPI_Type_create_struct(3, bl, d, t, &holes));
	OK(MPI_Type_commit(&holes));
	expect_bounds(holes, 8, 16, "struct with an empty block at 1000");
	OK(MPI_Type_size(holes, &size));
	CHECK(size == 12, "size %d", size);
	MPI_Datatype *all_types[] = { &four, &neg, &contig, &vec, &nvec, &holes };
	for (size_t k = 0; k < sizeof all_types / sizeof all_types[0]; k++)
		OK(MPI_Type_free(all_types[k]));
}

static void packing(void)
{
	int vals[6] = { 1, 2, 3, 4, 5, 6 }, got[6] = { 0 }, n = 42, m = 0, size, total, pos = 0;
	double x = 2.5, y = 0;
	MPI_Datatype every_other;
	char buf[64];

	OK(MPI_Type_vector(3, 1, 2, MPI_INT, &every_other)); /* vals[0], [2], [4] */
	OK(MPI_Type_commit(&every_other));
	OK(MPI_Pack_size(2, every_other, MPI_COMM_WORLD, &size));
	CHECK(size == 6 * (int)sizeof(int), "Pack_size of 2 vectors: %d", size);
	OK(MPI_Pack_size(1, MPI_DOUBLE, MPI_COMM_WORLD, &size));
	total = 3 * (int)sizeof(int) + (int)sizeof(int) + size;
	OK(MPI_Pack(&n, 1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
	OK(MPI_Pack(vals, 1, every_other, buf, sizeof buf, &pos, MPI_COMM_WORLD));
	OK(MPI_Pack(&x, 1, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD));
	CHECK(pos == total, "position %d after packing, want %d", pos, total);
	/* A pack that does not fit fails and leaves the position alone. */
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	int before = pos;
	int rc = MPI_Pack(vals, 6, MPI_INT, buf, pos + 4, &pos, MPI_COMM_SELF);
	t_fails_with(rc, MPI_ERR_TRUNCATE, "overrun the", "pack overrun");
	CHECK(pos == before, "overrun moved the position to %d", pos);
	t_fails_with(MPI_Pack(vals, -1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_SELF), MPI_ERR_COUNT, "count -1 < 0",
		     "negative count");
	t_fails_with(MPI_Pack_size(1, MPI_DATATYPE_NULL, MPI_COMM_SELF, &size), MPI_ERR_TYPE,
		     "invalid or uncommitted datatype", "null type");
	rc = MPI_Pack(vals, 1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_NULL);
	CHECK(rc != MPI_SUCCESS && pos == before, "null communicator accepted");
	/* The packed bytes travel as MPI_PACKED and unpack into other types. */
	char in[64];
	int peer = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
	MPI_Status st;
	OK(MPI_Sendrecv(buf, pos, MPI_PACKED, peer, 5, in, sizeof in, MPI_PACKED, from, 5, MPI_COMM_WORLD, &st));
	int count;
	OK(MPI_Get_count(&st, MPI_PACKED, &count));
	CHECK(count == total, "MPI_PACKED count %d, want %d", count, total);
	pos = 0;
	OK(MPI_Unpack(in, count, &pos, &m, 1, MPI_INT, MPI_COMM_WORLD));
	OK(MPI_Unpack(in, count, &pos, got + 1, 1, every_other, MPI_COMM_WORLD)); /* into [1], [3], [5] */
	OK(MPI_Unpack(in, count, &pos, &y, 1, MPI_DOUBLE, MPI_COMM_WORLD));
	CHECK(m == 42 && y == 2.5, "unpacked %d %g", m, y);
	CHECK(got[1] == 1 && got[3] == 3 && got[5] == 5 && got[0] == 0 && got[2] == 0 && got[4] == 0,
	      "unpacked vector %d %d %d %d %d %d", got[0], got[1], got[2], got[3], got[4], got[5]);
	/* Reading past the end fails, position unchanged. */
	before = pos;
	rc = MPI_Unpack(in, count, &pos, &m, 1, MPI_INT, MPI_COMM_SELF);
	t_fails_with(rc, MPI_ERR_TRUNCATE, "read past the", "unpack past the end");
	CHECK(pos == before, "reading past the end moved the position to %d", pos);
	OK(MPI_Type_free(&every_other));
}

static void reordered(void)
{
	enum { N = 8 };
	int a[N][N], b[N][N], rev[N], out[N], pos = 0;
	MPI_Datatype col, xpose, backwards;
	MPI_Aint lb, ext;
	char buf[sizeof a];

	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			a[i][j] = i * 100 + j;
	/* Column j after column j-1: covers a[][] exactly, in transposed order. */
	OK(MPI_Type_vector(N, 1, N, MPI_INT, &col));
	OK(MPI_Type_get_extent(MPI_INT, &lb, &ext));
	OK(MPI_Type_create_hvector(N, 1, ext, col, &xpose));
	OK(MPI_Type_commit(&xpose));
	OK(MPI_Pack(a, 1, xpose, buf, sizeof buf, &pos, MPI_COMM_WORLD));
	memcpy(b, buf, sizeof b);
	int bad = 0;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			bad += b[i][j] != a[j][i];
	CHECK(bad == 0, "packed transpose: %d of %d elements out of place", bad, N * N);
	memset(b, 0, sizeof b);
	OK(MPI_Sendrecv(a, 1, xpose, t_rank, 6, b, N * N, MPI_INT, t_rank, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	bad = 0;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			bad += b[i][j] != a[j][i];
	CHECK(bad == 0, "sent transpose: %d of %d elements out of place", bad, N * N);
	/* Blocks at 7, 6, ..., 0: one run of memory, sent last element first. */
	int bl[N], displs[N];
	for (int k = 0; k < N; k++) {
		bl[k] = 1;
		displs[k] = N - 1 - k;
		rev[k] = k;
	}
	OK(MPI_Type_indexed(N, bl, displs, MPI_INT, &backwards));
	OK(MPI_Type_commit(&backwards));
	int peer = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
	OK(MPI_Sendrecv(rev, 1, backwards, peer, 7, out, N, MPI_INT, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	for (int k = 0; k < N; k++)
		CHECK(out[k] == N - 1 - k, "reversed element %d: %d", k, out[k]);
	OK(MPI_Type_free(&xpose));
	OK(MPI_Type_free(&col));
	OK(MPI_Type_free(&backwards));
}

static void subarrays(void)
{
	int a[4][5], pos = 0, size;
	MPI_Datatype c, f, bad;
	MPI_Aint lb, ext;
	int sizes[2] = { 4, 5 }, subs[2] = { 2, 3 }, starts[2] = { 1, 1 };
	int fsizes[2] = { 5, 4 }, fsubs[2] = { 3, 2 }, fstarts[2] = { 1, 1 };
	char pc[64], pf[64];

	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 5; j++)
			a[i][j] = 10 * i + j;
	OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &c));
	OK(MPI_Type_commit(&c));
	OK(MPI_Type_size(c, &size));
	OK(MPI_Type_get_extent(c, &lb, &ext));
	CHECK(size == 6 * (int)sizeof(int) && lb == 0 && ext == (MPI_Aint)sizeof a, "subarray: size %d lb %ld extent %ld",
	      size, (long)lb, (long)ext);
	OK(MPI_Pack(a, 1, c, pc, sizeof pc, &pos, MPI_COMM_WORLD));
	int got[6], want[6] = { 11, 12, 13, 21, 22, 23 };
	memcpy(got, pc, sizeof got);
	CHECK(!memcmp(got, want, sizeof got), "C subarray packs %d %d %d %d %d %d", got[0], got[1], got[2], got[3],
	      got[4], got[5]);
	/* The same block described in Fortran order (first index fastest). */
	pos = 0;
	OK(MPI_Type_create_subarray(2, fsizes, fsubs, fstarts, MPI_ORDER_FORTRAN, MPI_INT, &f));
	OK(MPI_Type_commit(&f));
	OK(MPI_Pack(a, 1, f, pf, sizeof pf, &pos, MPI_COMM_WORLD));
	CHECK(!memcmp(pc, pf, 6 * sizeof(int)), "Fortran-order subarray differs from the C one");
	/* A face of a 3-D array goes straight into a contiguous receive. */
	static double cube[4][4][4], face[4][4];
	int s3[3] = { 4, 4, 4 }, sub3[3] = { 4, 1, 4 }, st3[3] = { 0, 2, 0 };
	MPI_Datatype plane;
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			for (int k = 0; k < 4; k++)
				cube[i][j][k] = 100 * i + 10 * j + k;
	OK(MPI_Type_create_subarray(3, s3, sub3, st3, MPI_ORDER_C, MPI_DOUBLE, &plane));
	OK(MPI_Type_commit(&plane));
	OK(MPI_Sendrecv(cube, 1, plane, t_rank, 8, face, 16, MPI_DOUBLE, t_rank, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	int bad_cells = 0;
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 4; k++)
			bad_cells += face[i][k] != 100 * i + 20 + k;
	CHECK(bad_cells == 0, "face j = 2: %d of 16 values wrong", bad_cells);
	/* A block that does not fit, and an unknown order. */
	int over[2] = { 3, 1 };
	t_fails_with(MPI_Type_create_subarray(2, sizes, subs, over, MPI_ORDER_C, MPI_INT, &bad), MPI_ERR_ARG,
		     "dimension 0: size 4, subsize 2, start 3 do not fit", "start 3 + 2 rows past 4");
	t_fails_with(MPI_Type_create_subarray(2, sizes, subs, starts, 3, MPI_INT, &bad), MPI_ERR_ARG,
		     "order 3 is neither", "order 3");
	OK(MPI_Type_free(&c));
	OK(MPI_Type_free(&f));
	OK(MPI_Type_free(&plane));
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	padding();
	negative_and_empty();
	packing();
	reordered();
	subarrays();
	return t_finish("mpi_layout");
}
