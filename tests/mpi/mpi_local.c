/* mpi_local.c: calls that work on this process alone. MPI_Reduce_local
 * (inoutbuf = inbuf op inoutbuf, for contiguous and strided types, pair
 * types, a user operation whose order shows, and which NaN a floating sum
 * or product gives), MPI_Type_create_hindexed_block
 * (its layout, through MPI_Pack), MPI_Type_set_name / get_name (predefined
 * names, derived types unnamed until named, long names cut),
 * MPI_Type_get_envelope / get_contents (each constructor's record, a part
 * given back under its own handle that outlives the original one),
 * Fortran's and C++'s named types used from C, statuses a program sets
 * (elements, cancellation) and the MPI_Count forms, external32 packing,
 * MPI_Type_create_darray (block, cyclic, 2-D in both orders),
 * and each call's
 * refusals with their messages. */
#include "mpi_test.h"

#include <float.h>
#include <stdint.h>

static MPI_Datatype every2;	/* 3 ints, every other one */

/* Not commutative: inout = 10 * inout + in shows which operand is which.
 * Given every2, it works on that type's layout, as a user function must. */
static void digits(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int n = *dt == every2 ? 3 * *len : *len, step = *dt == every2 ? 2 : 1;
	for (int i = 0; i < n; i++) {
		int k = *dt == every2 ? (i / 3) * 5 + (i % 3) * step : i;	/* extent: 5 ints */
		((int *)inout)[k] = 10 * ((int *)inout)[k] + ((int *)in)[k];
	}
}

static void reduce_local(void)
{
	int a[4] = { 1, 2, 3, 4 }, b[4] = { 10, 20, 30, 40 };
	OK(MPI_Reduce_local(a, b, 4, MPI_INT, MPI_SUM));
	CHECK(b[0] == 11 && b[3] == 44, "sum: %d %d", b[0], b[3]);
	OK(MPI_Reduce_local(a, b, 4, MPI_INT, MPI_MIN));
	CHECK(b[0] == 1 && b[3] == 4, "min: %d %d", b[0], b[3]);

	struct { double v; int i; } x[2] = { { 5.0, 1 }, { 1.0, 7 } }, y[2] = { { 3.0, 2 }, { 9.0, 3 } };
	OK(MPI_Reduce_local(x, y, 2, MPI_DOUBLE_INT, MPI_MAXLOC));
	CHECK(y[0].v == 5.0 && y[0].i == 1 && y[1].v == 9.0 && y[1].i == 3, "maxloc: %g/%d %g/%d", y[0].v, y[0].i,
	      y[1].v, y[1].i);

	/* every other int: the ints between stay as they were */
	OK(MPI_Type_vector(3, 1, 2, MPI_INT, &every2));
	OK(MPI_Type_commit(&every2));
	int in[6] = { 1, 100, 2, 100, 3, 100 }, io[6] = { 5, -1, 6, -1, 7, -1 };
	OK(MPI_Reduce_local(in, io, 1, every2, MPI_PROD));
	CHECK(io[0] == 5 && io[2] == 12 && io[4] == 21 && io[1] == -1 && io[5] == -1, "strided prod: %d %d %d %d %d",
	      io[0], io[1], io[2], io[4], io[5]);

	MPI_Op op;
	OK(MPI_Op_create(digits, 0, &op));
	int p = 3, q = 4;
	OK(MPI_Reduce_local(&p, &q, 1, MPI_INT, op));
	CHECK(q == 43, "user op: %d, want 43 (inout = 10 * inout + in)", q);
	OK(MPI_Reduce_local(in, io, 1, every2, op));	/* a user op on a strided type */
	CHECK(io[0] == 51 && io[2] == 122 && io[4] == 213 && io[1] == -1, "user op, strided: %d %d %d %d", io[0],
	      io[2], io[4], io[1]);
	OK(MPI_Op_free(&op));

	OK(MPI_Reduce_local(NULL, NULL, 0, MPI_INT, MPI_SUM));	/* nothing to do */
	t_fails_with(MPI_Reduce_local(a, b, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT, "count -1 < 0", "count -1");
	t_fails_with(MPI_Reduce_local(a, b, 1, MPI_INT, MPI_MAXLOC), MPI_ERR_OP, "does not apply", "MAXLOC on int");
	t_fails_with(MPI_Reduce_local(a, b, 1, 9999, MPI_SUM), MPI_ERR_TYPE, "invalid or uncommitted datatype 9999",
		     "a bad datatype");
	t_fails_with(MPI_Reduce_local(NULL, b, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER, "inbuf is NULL", "NULL inbuf");
	t_fails_with(MPI_Reduce_local(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
		     "inoutbuf is MPI_IN_PLACE", "MPI_IN_PLACE inoutbuf");
	CHECK(b[0] == 1, "a refused call changed the buffer: %d", b[0]);
	MPI_Type_free(&every2);
}

/* A quiet NaN of an element of size bytes at p: tag 1 positive, 2
 * negative, and tag and i in its payload (x87's long double: the 64-bit
 * significand with its integer bit, then sign and exponent) */
static void nan_at(unsigned char *p, size_t size, unsigned tag, size_t i)
{
	if (size == sizeof(float)) {
		uint32_t q = (tag == 2 ? 0xffc00000u : 0x7fc00000u) | tag << 8 | (uint32_t)i;
		memcpy(p, &q, sizeof q);
	} else if (size == sizeof(double)) {
		uint64_t q = (tag == 2 ? 0xfff8000000000000ull : 0x7ff8000000000000ull) | (uint64_t)tag << 32 | i;
		memcpy(p, &q, sizeof q);
	} else {
		uint64_t m = 0xc000000000000000ull | (uint64_t)tag << 32 | i;
		uint16_t e = tag == 2 ? 0xffff : 0x7fff;
		memcpy(p, &m, sizeof m);
		memcpy(p + 8, &e, sizeof e);
	}
}

/* 1.5 as an element of size bytes at p */
static void one_at(unsigned char *p, size_t size)
{
	float f = 1.5f;
	double d = 1.5;
	long double l = 1.5L;
	memcpy(p, size == sizeof f ? (void *)&f : size == sizeof d ? (void *)&d : (void *)&l, size);
}

/* A floating sum or product where the first operand (inbuf's) is a NaN
 * gives that NaN's bits, whichever loop (vector body or scalar tail)
 * takes the element and whatever inoutbuf holds; where only inoutbuf's is
 * a NaN, its bits. float, double, long double (its 10 bytes, where it is
 * x87's) and the parts of double complex. Counts that end in every tail
 * position. */
static void reduce_local_nan(void)
{
	enum { MAXN = 80 };
	static const struct {
		MPI_Datatype dt;
		size_t size, bits; /* element size; the bytes that count */
		MPI_Op op;
	} kinds[] = {
		{ MPI_FLOAT, sizeof(float), sizeof(float), MPI_SUM },
		{ MPI_FLOAT, sizeof(float), sizeof(float), MPI_PROD },
		{ MPI_DOUBLE, sizeof(double), sizeof(double), MPI_SUM },
		{ MPI_DOUBLE, sizeof(double), sizeof(double), MPI_PROD },
#if LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__)) /* x87's 80 bits, as nan_at builds them */
		{ MPI_LONG_DOUBLE, sizeof(long double), 10, MPI_SUM },
#endif
		{ MPI_C_DOUBLE_COMPLEX, sizeof(double), sizeof(double), MPI_SUM }, /* by parts */
	};
	static unsigned char in[MAXN * 16], io[MAXN * 16], want[MAXN * 16];
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
		for (int n = 1; n <= 67; n += n < 17 ? 1 : 25) {
			size_t size = kinds[k].size;
			int count = kinds[k].dt == MPI_C_DOUBLE_COMPLEX ? n / 2 + 1 : n;
			size_t parts = kinds[k].dt == MPI_C_DOUBLE_COMPLEX ? 2 * (size_t)count : (size_t)count;
			int bad = 0;
			for (int mix = 0; mix < 3; mix++) {
				/* mix 0: both NaNs; 1: in's alone; 2: inout's alone */
				memset(in, 0, sizeof in);
				memset(io, 0, sizeof io);
				for (size_t i = 0; i < parts; i++) {
					unsigned char *a = in + i * size, *b = io + i * size;
					mix == 2 ? one_at(a, size) : nan_at(a, size, 1, i);
					mix == 1 ? one_at(b, size) : nan_at(b, size, 2, i);
					memcpy(want + i * size, mix == 2 ? b : a, size);
				}
				OK(MPI_Reduce_local(in, io, count, kinds[k].dt, kinds[k].op));
				for (size_t i = 0; i < parts; i++)
					bad += memcmp(io + i * size, want + i * size, kinds[k].bits) != 0;
			}
			CHECK(bad == 0, "NaN %s of datatype %d, count %d: %d elements not the first NaN operand's bits",
			      kinds[k].op == MPI_SUM ? "sum" : "product", kinds[k].dt, count, bad);
		}
}

static void hindexed_block(void)
{
	int v[12];
	for (int i = 0; i < 12; i++)
		v[i] = i;
	/* blocks of 2 ints at bytes 0, 12 and 40: ints 0-1, 3-4, 10-11 */
	MPI_Aint at[3] = { 0, 12, 40 };
	MPI_Datatype t;
	OK(MPI_Type_create_hindexed_block(3, 2, at, MPI_INT, &t));
	OK(MPI_Type_commit(&t));
	int size;
	MPI_Aint lb, extent;
	OK(MPI_Type_size(t, &size));
	OK(MPI_Type_get_extent(t, &lb, &extent));
	CHECK(size == 24 && lb == 0 && extent == 48, "size %d lb %ld extent %ld", size, (long)lb, (long)extent);
	int out[6] = { 0 }, pos = 0;
	OK(MPI_Pack(v, 1, t, out, sizeof out, &pos, MPI_COMM_WORLD));
	CHECK(pos == 24 && out[0] == 0 && out[1] == 1 && out[2] == 3 && out[3] == 4 && out[4] == 10 && out[5] == 11,
	      "packed %d bytes: %d %d %d %d %d %d", pos, out[0], out[1], out[2], out[3], out[4], out[5]);
	MPI_Type_free(&t);
	MPI_Datatype none;
	t_fails_with(MPI_Type_create_hindexed_block(-2, 1, at, MPI_INT, &none), MPI_ERR_COUNT, "count -2 < 0",
		     "hindexed_block count -2");
}

static void names(void)
{
	char n[MPI_MAX_OBJECT_NAME];
	int len = -1;
	OK(MPI_Type_get_name(MPI_INT, n, &len));
	CHECK(!strcmp(n, "MPI_INT") && len == 7, "MPI_INT is named '%s' (%d)", n, len);
	OK(MPI_Type_get_name(MPI_DOUBLE_INT, n, &len));
	CHECK(!strcmp(n, "MPI_DOUBLE_INT"), "MPI_DOUBLE_INT is named '%s'", n);
	MPI_Datatype t, d;
	OK(MPI_Type_contiguous(3, MPI_INT, &t));
	OK(MPI_Type_get_name(t, n, &len));
	CHECK(n[0] == 0 && len == 0, "a new derived type is named '%s' (%d)", n, len);
	OK(MPI_Type_set_name(t, "triple"));
	OK(MPI_Type_get_name(t, n, &len));
	CHECK(!strcmp(n, "triple") && len == 6, "set 'triple', got '%s' (%d)", n, len);
	OK(MPI_Type_dup(t, &d));
	OK(MPI_Type_get_name(d, n, &len));
	CHECK(len == 0, "a duplicate took the name '%s'", n);
	char longname[300];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	OK(MPI_Type_set_name(d, longname));
	OK(MPI_Type_get_name(d, n, &len));
	CHECK(len == MPI_MAX_OBJECT_NAME - 1 && strlen(n) == (size_t)len, "a 299-char name kept %d chars", len);
	t_fails_with(MPI_Type_set_name(t, NULL), MPI_ERR_ARG, "name is NULL", "set_name(NULL)");
	t_fails_with(MPI_Type_get_name(t, NULL, &len), MPI_ERR_ARG, "name is NULL", "get_name(NULL)");
	t_fails_with(MPI_Type_get_name(9999, n, &len), MPI_ERR_TYPE, "invalid datatype 9999", "get_name of 9999");
	OK(MPI_Type_get_name(t, n, &len));
	CHECK(!strcmp(n, "triple"), "a refused set_name changed the name to '%s'", n);
	MPI_Type_free(&d);
	MPI_Type_free(&t);
}

/* The envelope of t: counts and combiner as want. */
static void envelope(MPI_Datatype t, int ni, int na, int nd, int comb, const char *what)
{
	int i = -1, a = -1, d = -1, c = -1;
	OK(MPI_Type_get_envelope(t, &i, &a, &d, &c));
	CHECK(i == ni && a == na && d == nd && c == comb, "%s: envelope %d %d %d combiner %d, want %d %d %d %d", what, i,
	      a, d, c, ni, na, nd, comb);
}

static void contents(void)
{
	envelope(MPI_INT, 0, 0, 0, MPI_COMBINER_NAMED, "MPI_INT");
	MPI_Datatype vec, st, sub, rs, dup, got[2];
	int ints[16];
	MPI_Aint addr[4];
	OK(MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &vec));
	envelope(vec, 3, 0, 1, MPI_COMBINER_VECTOR, "vector");
	OK(MPI_Type_get_contents(vec, 16, 4, 2, ints, addr, got));
	CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && got[0] == MPI_DOUBLE, "vector contents %d %d %d type %d",
	      ints[0], ints[1], ints[2], got[0]);
	/* a struct of the vector and an int: the vector comes back under a
	 * handle of its own, usable after the original handle is freed */
	int bl[2] = { 1, 4 };
	MPI_Aint at[2] = { 0, 256 };
	MPI_Datatype parts[2] = { vec, MPI_INT };
	OK(MPI_Type_create_struct(2, bl, at, parts, &st));
	MPI_Type_free(&vec);
	envelope(st, 3, 2, 2, MPI_COMBINER_STRUCT, "struct");
	OK(MPI_Type_get_contents(st, 16, 4, 2, ints, addr, got));
	CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 4 && addr[1] == 256 && got[1] == MPI_INT,
	      "struct contents %d %d %d @%ld", ints[0], ints[1], ints[2], (long)addr[1]);
	envelope(got[0], 3, 0, 1, MPI_COMBINER_VECTOR, "the struct's vector, through contents");
	int size = 0;
	OK(MPI_Type_size(got[0], &size));
	CHECK(size == 48, "the struct's vector has size %d, want 48", size);
	OK(MPI_Type_free(&got[0]));
	/* subarray, resized, dup, hindexed_block, indexed_block */
	int sizes[2] = { 4, 6 }, subs[2] = { 2, 3 }, starts[2] = { 1, 2 };
	OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub));
	envelope(sub, 8, 0, 1, MPI_COMBINER_SUBARRAY, "subarray");
	OK(MPI_Type_get_contents(sub, 16, 4, 2, ints, addr, got));
	CHECK(ints[0] == 2 && ints[2] == 6 && ints[4] == 3 && ints[6] == 2 && ints[7] == MPI_ORDER_C,
	      "subarray contents %d %d %d %d %d", ints[0], ints[2], ints[4], ints[6], ints[7]);
	OK(MPI_Type_create_resized(sub, -8, 200, &rs));
	envelope(rs, 0, 2, 1, MPI_COMBINER_RESIZED, "resized");
	OK(MPI_Type_get_contents(rs, 0, 2, 1, ints, addr, got));
	CHECK(addr[0] == -8 && addr[1] == 200, "resized contents %ld %ld", (long)addr[0], (long)addr[1]);
	OK(MPI_Type_free(&got[0]));
	OK(MPI_Type_dup(rs, &dup));
	envelope(dup, 0, 0, 1, MPI_COMBINER_DUP, "dup");
	MPI_Datatype hb, ib;
	MPI_Aint hd[2] = { 0, 64 };
	int id[3] = { 0, 4, 9 };
	OK(MPI_Type_create_hindexed_block(2, 3, hd, MPI_CHAR, &hb));
	envelope(hb, 2, 2, 1, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block");
	OK(MPI_Type_create_indexed_block(3, 2, id, MPI_INT, &ib));
	envelope(ib, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
	OK(MPI_Type_get_contents(ib, 16, 0, 1, ints, addr, got));
	CHECK(ints[0] == 3 && ints[1] == 2 && ints[4] == 9, "indexed_block contents %d %d %d", ints[0], ints[1],
	      ints[4]);
	t_fails_with(MPI_Type_get_contents(MPI_INT, 4, 4, 4, ints, addr, got), MPI_ERR_TYPE,
		     "MPI_INT is predefined: it has no contents", "contents of MPI_INT");
	t_fails_with(MPI_Type_get_contents(st, 2, 4, 2, ints, addr, got), MPI_ERR_ARG, "room for 2 integers",
		     "contents into too small arrays");
	t_fails_with(MPI_Type_get_envelope(9999, ints, ints, ints, ints), MPI_ERR_TYPE, "invalid datatype 9999",
		     "envelope of 9999");
	/* got[0] (the struct's vector) stays unfreed: MPI_Finalize lets it go */
	OK(MPI_Type_get_contents(st, 16, 4, 2, ints, addr, got));
	MPI_Type_free(&st);
	MPI_Type_free(&sub);
	MPI_Type_free(&rs);
	MPI_Type_free(&dup);
	MPI_Type_free(&hb);
	MPI_Type_free(&ib);
}

/* Fortran's and C++'s named types from C: their C equivalent's size and
 * reductions under their own names. */
static void other_languages(void)
{
	int a[2] = { 3, 4 }, b[2] = { 10, 20 }, size;
	OK(MPI_Reduce_local(a, b, 2, MPI_INTEGER, MPI_SUM));
	CHECK(b[0] == 13 && b[1] == 24, "MPI_INTEGER sum: %d %d", b[0], b[1]);
	int t[3] = { 1, 0, 5 }, u[3] = { 2, 7, 0 };
	OK(MPI_Reduce_local(t, u, 3, MPI_LOGICAL, MPI_LAND));
	CHECK(u[0] && !u[1] && !u[2], "MPI_LOGICAL land: %d %d %d", u[0], u[1], u[2]);
	double _Complex z = 1.0 + 2.0 * 1.0i, w = 3.0 - 1.0i;
	OK(MPI_Reduce_local(&z, &w, 1, MPI_DOUBLE_COMPLEX, MPI_PROD));
	CHECK(w == 5.0 + 5.0 * 1.0i, "MPI_DOUBLE_COMPLEX prod: %g%+gi", __real__ w, __imag__ w);
	int p[2] = { 9, 1 }, q[2] = { 4, 0 };
	OK(MPI_Reduce_local(p, q, 1, MPI_2INTEGER, MPI_MAXLOC));
	CHECK(q[0] == 9 && q[1] == 1, "MPI_2INTEGER maxloc: %d %d", q[0], q[1]);
	float r = 1.5f, s = 2.0f;
	OK(MPI_Reduce_local(&r, &s, 1, MPI_REAL, MPI_MAX));
	CHECK(s == 2.0f, "MPI_REAL max: %g", s);
	static const struct { MPI_Datatype t; int size; const char *name; } want[] = {
		{ MPI_INTEGER, 4, "MPI_INTEGER" }, { MPI_REAL, 4, "MPI_REAL" },
		{ MPI_DOUBLE_PRECISION, 8, "MPI_DOUBLE_PRECISION" }, { MPI_COMPLEX, 8, "MPI_COMPLEX" },
		{ MPI_DOUBLE_COMPLEX, 16, "MPI_DOUBLE_COMPLEX" }, { MPI_CHARACTER, 1, "MPI_CHARACTER" },
		{ MPI_INTEGER8, 8, "MPI_INTEGER8" }, { MPI_COMPLEX16, 16, "MPI_COMPLEX16" },
		{ MPI_CXX_BOOL, 1, "MPI_CXX_BOOL" }, { MPI_2INTEGER, 8, "MPI_2INTEGER" },
	};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		char name[MPI_MAX_OBJECT_NAME];
		int len;
		OK(MPI_Type_size(want[i].t, &size));
		OK(MPI_Type_get_name(want[i].t, name, &len));
		CHECK(size == want[i].size && !strcmp(name, want[i].name), "%s: size %d, name %s", want[i].name, size,
		      name);
	}
	t_fails_with(MPI_Reduce_local(a, b, 1, MPI_CHARACTER, MPI_MAXLOC), MPI_ERR_OP, "does not apply",
		     "MAXLOC on MPI_CHARACTER");
	MPI_Datatype d = MPI_INTEGER;
	t_fails_with(MPI_Type_free(&d), MPI_ERR_TYPE, "MPI_INTEGER is predefined", "freeing MPI_INTEGER");
}

/* What a program sets in a status (for requests it completes itself),
 * read back in elements of the type given and of others. */
static void statuses(void)
{
	MPI_Datatype three; /* 3 ints, every other one: elements are ints */
	OK(MPI_Type_vector(3, 1, 2, MPI_INT, &three));
	OK(MPI_Type_commit(&three));
	MPI_Status st;
	int n = -1, flag = -1;
	MPI_Count x = -1;
	OK(MPI_Status_set_elements(&st, three, 7)); /* two whole and one int */
	OK(MPI_Get_elements(&st, three, &n));
	CHECK(n == 7, "elements set 7, read %d", n);
	OK(MPI_Get_elements(&st, MPI_INT, &n));
	CHECK(n == 7, "as ints: %d", n);
	OK(MPI_Get_count(&st, three, &n));
	CHECK(n == MPI_UNDEFINED, "a count of 7 ints in threes: %d", n);
	OK(MPI_Get_elements_x(&st, MPI_SHORT, &x));
	CHECK(x == (MPI_Count)(7 * sizeof(int) / sizeof(short)), "as shorts: %lld", (long long)x);
	OK(MPI_Status_set_elements_x(&st, MPI_DOUBLE, (MPI_Count)3 << 31));
	OK(MPI_Get_elements_x(&st, MPI_DOUBLE, &x));
	CHECK(x == (MPI_Count)3 << 31, "a large count: %lld", (long long)x);
	OK(MPI_Get_elements(&st, MPI_DOUBLE, &n));
	CHECK(n == MPI_UNDEFINED, "a count past INT_MAX as int: %d", n);
	OK(MPI_Status_set_cancelled(&st, 1));
	OK(MPI_Test_cancelled(&st, &flag));
	CHECK(flag, "set cancelled, read %d", flag);
	OK(MPI_Status_set_cancelled(&st, 0));
	OK(MPI_Test_cancelled(&st, &flag));
	CHECK(!flag, "set not cancelled, read %d", flag);
	MPI_Count lb = -1, ext = -1;
	OK(MPI_Type_size_x(three, &x));
	CHECK(x == 3 * (MPI_Count)sizeof(int), "Type_size_x %lld", (long long)x);
	OK(MPI_Type_get_extent_x(three, &lb, &ext));
	CHECK(lb == 0 && ext == 5 * (MPI_Count)sizeof(int), "Type_get_extent_x %lld %lld", (long long)lb, (long long)ext);
	OK(MPI_Type_get_true_extent_x(three, &lb, &ext));
	CHECK(lb == 0 && ext == 5 * (MPI_Count)sizeof(int), "true extent %lld %lld", (long long)lb, (long long)ext);
	t_fails_with(MPI_Status_set_elements(&st, three, -1), MPI_ERR_COUNT, "count -1 < 0", "negative elements");
	t_fails_with(MPI_Status_set_elements(NULL, three, 1), MPI_ERR_ARG, "status is NULL", "NULL status");
	t_fails_with(MPI_Get_elements_x(&st, 5555, &x), MPI_ERR_TYPE, "invalid datatype 5555", "a bad datatype");
	t_fails_with(MPI_Type_size_x(5555, &x), MPI_ERR_TYPE, "invalid datatype 5555", "Type_size_x, a bad datatype");
	OK(MPI_Type_free(&three));
}

/* external32: big-endian elements in type-map order, whatever the host. */
static void external32(void)
{
	int v[3] = { 0x01020304, 0x7f, 0x0a0b0c0d }; /* every other one of v[0..2]: v[0], v[2] */
	short h = 0x1122;
	unsigned char buf[32] = { 0 };
	MPI_Aint pos = 0, size = 0;
	MPI_Datatype two;
	OK(MPI_Type_vector(2, 1, 2, MPI_INT, &two));
	OK(MPI_Type_commit(&two));
	OK(MPI_Pack_external_size("external32", 1, two, &size));
	CHECK(size == 8, "external32 size of two ints: %ld", (long)size);
	OK(MPI_Pack_external("external32", v, 1, two, buf, sizeof buf, &pos));
	OK(MPI_Pack_external("external32", &h, 1, MPI_SHORT, buf, sizeof buf, &pos));
	static const unsigned char want[10] = { 1, 2, 3, 4, 0x0a, 0x0b, 0x0c, 0x0d, 0x11, 0x22 };
	CHECK(pos == 10 && !memcmp(buf, want, 10), "external32 bytes (pos %ld): %02x %02x %02x %02x .. %02x %02x",
	      (long)pos, buf[0], buf[1], buf[2], buf[3], buf[8], buf[9]);
	int back[3] = { -1, -1, -1 };
	short hb = 0;
	pos = 0;
	OK(MPI_Unpack_external("external32", buf, 10, &pos, back, 1, two));
	OK(MPI_Unpack_external("external32", buf, 10, &pos, &hb, 1, MPI_SHORT));
	CHECK(back[0] == v[0] && back[1] == -1 && back[2] == v[2] && hb == h && pos == 10,
	      "external32 round trip: %x %x %x %x", back[0], back[1], back[2], hb);
	CHECK(buf[0] == 1, "MPI_Unpack_external changed its input");
	/* the table's sizes: long in 4 bytes (sign back on unpacking), a complex's parts each big-endian */
	long l[2] = { -2, 0x01020304 }, lb[2] = { 0, 0 };
	double _Complex zc = 1.0 + 2.0 * 1.0i, zb = 0;
	OK(MPI_Pack_external_size("external32", 2, MPI_LONG, &size));
	CHECK(size == 8, "external32 size of two longs: %ld, want 8", (long)size);
	pos = 0;
	OK(MPI_Pack_external("external32", l, 2, MPI_LONG, buf, sizeof buf, &pos));
	OK(MPI_Pack_external("external32", &zc, 1, MPI_C_DOUBLE_COMPLEX, buf, sizeof buf, &pos));
	static const unsigned char lwant[12] = { 0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4, 0x3f, 0xf0, 0, 0 };
	CHECK(pos == 24 && !memcmp(buf, lwant, 12) && buf[16] == 0x40 && buf[17] == 0,
	      "external32 longs and complex (pos %ld): %02x %02x %02x %02x | %02x %02x | %02x", (long)pos, buf[0], buf[1],
	      buf[2], buf[3], buf[8], buf[9], buf[16]);
	pos = 0;
	OK(MPI_Unpack_external("external32", buf, 24, &pos, lb, 2, MPI_LONG));
	OK(MPI_Unpack_external("external32", buf, 24, &pos, &zb, 1, MPI_C_DOUBLE_COMPLEX));
	CHECK(lb[0] == -2 && lb[1] == 0x01020304 && zb == zc, "external32 back: %ld %ld %g%+gi", lb[0], lb[1],
	      __real__ zb, __imag__ zb);
	pos = 4;
	t_fails_with(MPI_Pack_external("external32", v, 1, two, buf, 8, &pos), MPI_ERR_TRUNCATE,
		     "8 bytes at position 4 do not fit the 8-byte buffer", "external32 overrun");
	CHECK(pos == 4, "a refused pack moved the position to %ld", (long)pos);
	t_fails_with(MPI_Pack_external_size("native", 1, MPI_INT, &size), MPI_ERR_ARG,
		     "data representation \"native\" (only \"external32\")", "another representation");
	OK(MPI_Type_free(&two));
}

/* The elements of a global array of ints valued by index that process
 * `rank`'s darray type picks, in its order; their number. */
static int darray_picks(int size, int rank, int ndims, const int *g, const int *dist, const int *darg, const int *p,
			int order, int *out, int max)
{
	MPI_Datatype t;
	int all[64], n = -1;
	for (int i = 0; i < 64; i++)
		all[i] = i;
	if (MPI_Type_create_darray(size, rank, ndims, g, dist, darg, p, order, MPI_INT, &t) != MPI_SUCCESS)
		return -1;
	MPI_Type_commit(&t);
	MPI_Aint lb, ext;
	MPI_Type_size(t, &n);
	MPI_Type_get_extent(t, &lb, &ext);
	int total = 1, pos = 0;
	for (int d = 0; d < ndims; d++)
		total *= g[d];
	CHECK(lb == 0 && ext == total * (MPI_Aint)sizeof(int), "darray extent %ld, want the whole array's", (long)ext);
	n /= (int)sizeof(int);
	if (n <= max)
		MPI_Pack(all, 1, t, out, max * (int)sizeof(int), &pos, MPI_COMM_SELF);
	MPI_Type_free(&t);
	return n;
}

static void darray(void)
{
	int got[64], g1 = 10, p3 = 3, blk = MPI_DISTRIBUTE_BLOCK, cyc = MPI_DISTRIBUTE_CYCLIC, dflt = MPI_DISTRIBUTE_DFLT_DARG,
	    two = 2;
	static const int block_want[3][4] = { { 0, 1, 2, 3 }, { 4, 5, 6, 7 }, { 8, 9 } }, block_n[3] = { 4, 4, 2 };
	static const int cyc_want[3][4] = { { 0, 1, 6, 7 }, { 2, 3, 8, 9 }, { 4, 5 } }, cyc_n[3] = { 4, 4, 2 };
	for (int r = 0; r < 3; r++) {
		int n = darray_picks(3, r, 1, &g1, &blk, &dflt, &p3, MPI_ORDER_C, got, 64);
		CHECK(n == block_n[r] && !memcmp(got, block_want[r], sizeof(int) * (size_t)n), "block, rank %d: %d elements",
		      r, n);
		n = darray_picks(3, r, 1, &g1, &cyc, &two, &p3, MPI_ORDER_C, got, 64);
		CHECK(n == cyc_n[r] && !memcmp(got, cyc_want[r], sizeof(int) * (size_t)n),
		      "cyclic(2), rank %d: %d elements, first %d %d", r, n, got[0], got[1]);
	}
	/* 4 x 6 over a 2 x 2 grid, rows in blocks, columns cyclic: rank 1 is (0, 1) (row-major grid) */
	int g2[2] = { 4, 6 }, d2[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC }, a2[2] = { dflt, dflt }, p2[2] = { 2, 2 };
	static const int c_want[6] = { 1, 3, 5, 7, 9, 11 }, f_want[6] = { 4, 5, 12, 13, 20, 21 };
	int n = darray_picks(4, 1, 2, g2, d2, a2, p2, MPI_ORDER_C, got, 64);
	CHECK(n == 6 && !memcmp(got, c_want, sizeof c_want), "2-D C order: %d elements, first %d", n, got[0]);
	n = darray_picks(4, 1, 2, g2, d2, a2, p2, MPI_ORDER_FORTRAN, got, 64);
	CHECK(n == 6 && !memcmp(got, f_want, sizeof f_want), "2-D Fortran order: %d elements, first %d", n, got[0]);

	MPI_Datatype t;
	int none = MPI_DISTRIBUTE_NONE, one = 1;
	t_fails_with(MPI_Type_create_darray(4, 0, 1, &g1, &blk, &dflt, &p3, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
		     "the process grid does not have 4 processes", "a grid of 3 for 4 processes");
	t_fails_with(MPI_Type_create_darray(3, 0, 1, &g1, &none, &dflt, &p3, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
		     "MPI_DISTRIBUTE_NONE over more than one process", "NONE over 3");
	t_fails_with(MPI_Type_create_darray(3, 0, 1, &g1, &blk, &one, &p3, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
		     "leaves elements to no process", "blocks of 1 for 10 over 3");
	t_fails_with(MPI_Type_create_darray(3, 3, 1, &g1, &blk, &dflt, &p3, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
		     "rank 3 of 3", "a rank past the size");
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	reduce_local();
	reduce_local_nan();
	hindexed_block();
	names();
	contents();
	other_languages();
	statuses();
	external32();
	darray();
	/* handles through Fortran and back */
	MPI_Fint f = MPI_Comm_c2f(MPI_COMM_WORLD);
	CHECK(MPI_Comm_f2c(f) == MPI_COMM_WORLD && MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE &&
		      MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL &&
		      MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM && MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) ==
		      MPI_REQUEST_NULL,
	      "a handle changed through MPI_Fint");
	MPI_Datatype m;
	OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, sizeof(double), &m));
	CHECK(m == MPI_DOUBLE, "match_size(real, 8) gave %d", m);
	OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, sizeof(short), &m));
	CHECK(m == MPI_SHORT, "match_size(integer, 2) gave %d", m);
	OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 2 * sizeof(float), &m));
	CHECK(m == MPI_C_FLOAT_COMPLEX, "match_size(complex, 8) gave %d", m);
	t_fails_with(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &m), MPI_ERR_ARG, "no type of class 1 has 3 bytes",
		     "a real of 3 bytes");
	t_fails_with(MPI_Type_match_size(9, 4, &m), MPI_ERR_ARG, "typeclass 9", "typeclass 9");
	return t_finish("mpi_local");
}
