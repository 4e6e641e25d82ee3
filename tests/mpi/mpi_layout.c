/* mpi_layout.c: datatype bounds as C programs rely on them. A struct type
 * built from a C struct's members has the C struct's extent (padding to
 * its most aligned member), so arrays of structs travel intact; explicit
 * bounds (MPI_Type_create_resized) are never padded; copies of a type with
 * a negative extent step downwards; blocks of length 0 have no say in the
 * bounds; MPI_Type_dup keeps all of it. */
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

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	padding();
	negative_and_empty();
	return t_finish("mpi_layout");
}
