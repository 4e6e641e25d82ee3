/* mpi_dtype.c: datatypes as flattened typemaps.
 *
 * Every datatype is a list of byte segments (offset, length, basic type),
 * adjacent segments of one basic type merged, plus lb/extent. Packing walks
 * the segments, so a contiguous type is one copy (or none: the engine
 * sends and receives it in place) and a vector of doubles is one copy per
 * block (nal_copy). */
#include "config.h"

#include <complex.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "nal/nal_copy.h"
#include "mpi_impl.h"

#define DT_MAX MPI_DT_MAX

struct mpi_dtype *mpi_types[DT_MAX];
int mpi_ntypes = PTL_MPI_NUM_PREDEFINED;
static struct mpi_dtype predef[PTL_MPI_NUM_PREDEFINED];
static struct mpi_seg predef_segs[PTL_MPI_NUM_PREDEFINED][2];

struct pair_float_int { float a; int b; };
struct pair_double_int { double a; int b; };
struct pair_long_int { long a; int b; };
struct pair_short_int { short a; int b; };
struct pair_int_int { int a; int b; };
struct pair_ldouble_int { long double a; int b; };

static void def(MPI_Datatype h, const char *name, size_t size, size_t align)
{
	struct mpi_dtype *t = &predef[h];
	t->in_use = t->committed = t->predefined = true;
	t->refs = 1;
	t->size = size;
	t->lb = 0;
	t->extent = (MPI_Aint)size;
	t->true_lb = 0;
	t->true_ub = (MPI_Aint)size;
	t->contig = true;
	t->basic = h;
	t->name = name;
	t->align = align;
	t->nsegs = 1;
	t->segs = predef_segs[h];
	t->segs[0] = (struct mpi_seg){ 0, size, (uint32_t)size, h };
	mpi_types[h] = t;
}

/* Pair types: two segments; basic stays the pair (reductions take it whole). */
static void defpair(MPI_Datatype h, const char *name, size_t a, size_t boff, size_t extent, size_t align)
{
	def(h, name, boff + sizeof(int), align);
	struct mpi_dtype *t = &predef[h];
	t->extent = (MPI_Aint)extent;
	t->true_ub = (MPI_Aint)(boff + sizeof(int));
	t->contig = boff == a && extent == boff + sizeof(int);
	/* Two segments even when adjacent: Get_elements counts each part. */
	t->nsegs = 2;
	t->segs[0] = (struct mpi_seg){ 0, a, (uint32_t)a, h };
	t->segs[1] = (struct mpi_seg){ (MPI_Aint)boff, sizeof(int), (uint32_t)sizeof(int), h };
	/* the element size for Get_elements is the pair's payload */
	t->size = a + sizeof(int);
}

/* A predefined type for the C type T: its size and alignment as C has
 * them; a pair type from its C struct S { A a; int b; }. */
#define DEF(h, T) def(h, #h, sizeof(T), _Alignof(T))
#define DEFPAIR(h, A, S) defpair(h, #h, sizeof(A), offsetof(S, b), sizeof(S), _Alignof(S))

void mpi_dtype_init(void)
{
	DEF(MPI_CHAR, char);
	DEF(MPI_SIGNED_CHAR, signed char);
	DEF(MPI_UNSIGNED_CHAR, unsigned char);
	DEF(MPI_BYTE, unsigned char);
	DEF(MPI_SHORT, short);
	DEF(MPI_UNSIGNED_SHORT, unsigned short);
	DEF(MPI_INT, int);
	DEF(MPI_UNSIGNED, unsigned);
	DEF(MPI_LONG, long);
	DEF(MPI_UNSIGNED_LONG, unsigned long);
	DEF(MPI_LONG_LONG_INT, long long);
	DEF(MPI_UNSIGNED_LONG_LONG, unsigned long long);
	DEF(MPI_FLOAT, float);
	DEF(MPI_DOUBLE, double);
	DEF(MPI_LONG_DOUBLE, long double);
	DEF(MPI_WCHAR, wchar_t);
	DEF(MPI_C_BOOL, _Bool);
	DEF(MPI_INT8_T, int8_t);
	DEF(MPI_INT16_T, int16_t);
	DEF(MPI_INT32_T, int32_t);
	DEF(MPI_INT64_T, int64_t);
	DEF(MPI_UINT8_T, uint8_t);
	DEF(MPI_UINT16_T, uint16_t);
	DEF(MPI_UINT32_T, uint32_t);
	DEF(MPI_UINT64_T, uint64_t);
	DEF(MPI_AINT, MPI_Aint);
	DEF(MPI_OFFSET, MPI_Offset);
	DEF(MPI_COUNT, MPI_Count);
	DEF(MPI_PACKED, unsigned char);
	DEF(MPI_C_COMPLEX, float _Complex);
	DEF(MPI_C_FLOAT_COMPLEX, float _Complex);
	DEF(MPI_C_DOUBLE_COMPLEX, double _Complex);
	DEF(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex);
	DEFPAIR(MPI_FLOAT_INT, float, struct pair_float_int);
	DEFPAIR(MPI_DOUBLE_INT, double, struct pair_double_int);
	DEFPAIR(MPI_LONG_INT, long, struct pair_long_int);
	DEFPAIR(MPI_2INT, int, struct pair_int_int);
	DEFPAIR(MPI_SHORT_INT, short, struct pair_short_int);
	DEFPAIR(MPI_LONG_DOUBLE_INT, long double, struct pair_ldouble_int);
	/* Other languages' types: reductions and layouts are their C equivalent's. */
	static const struct { MPI_Datatype h, as; const char *name; } alias[] = {
		{ MPI_INTEGER, MPI_INT, "MPI_INTEGER" }, { MPI_REAL, MPI_FLOAT, "MPI_REAL" },
		{ MPI_DOUBLE_PRECISION, MPI_DOUBLE, "MPI_DOUBLE_PRECISION" },
		{ MPI_COMPLEX, MPI_C_FLOAT_COMPLEX, "MPI_COMPLEX" },
		{ MPI_DOUBLE_COMPLEX, MPI_C_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX" }, { MPI_LOGICAL, MPI_INT, "MPI_LOGICAL" },
		{ MPI_CHARACTER, MPI_CHAR, "MPI_CHARACTER" }, { MPI_2INTEGER, MPI_2INT, "MPI_2INTEGER" },
		{ MPI_INTEGER1, MPI_INT8_T, "MPI_INTEGER1" }, { MPI_INTEGER2, MPI_INT16_T, "MPI_INTEGER2" },
		{ MPI_INTEGER4, MPI_INT32_T, "MPI_INTEGER4" }, { MPI_INTEGER8, MPI_INT64_T, "MPI_INTEGER8" },
		{ MPI_REAL4, MPI_FLOAT, "MPI_REAL4" }, { MPI_REAL8, MPI_DOUBLE, "MPI_REAL8" },
		{ MPI_COMPLEX8, MPI_C_FLOAT_COMPLEX, "MPI_COMPLEX8" },
		{ MPI_COMPLEX16, MPI_C_DOUBLE_COMPLEX, "MPI_COMPLEX16" }, { MPI_CXX_BOOL, MPI_C_BOOL, "MPI_CXX_BOOL" },
		{ MPI_CXX_FLOAT_COMPLEX, MPI_C_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX" },
		{ MPI_CXX_DOUBLE_COMPLEX, MPI_C_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX" },
		{ MPI_CXX_LONG_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX" },
	};
	for (size_t i = 0; i < sizeof alias / sizeof *alias; i++) {
		struct mpi_dtype *t = &predef[alias[i].h];
		*t = predef[alias[i].as];
		t->name = alias[i].name;
		t->segs = predef_segs[alias[i].h];
		memcpy(t->segs, predef_segs[alias[i].as], sizeof predef_segs[0]);
		mpi_types[alias[i].h] = t;
	}
}

void mpi_dtype_fini(void)
{
	/* by releasing each handle: several may name one type (MPI_Type_get_contents) */
	for (int i = PTL_MPI_NUM_PREDEFINED; i < mpi_ntypes; i++) {
		struct mpi_dtype *t = mpi_types[i];
		mpi_types[i] = NULL;
		mpi_dtype_release(t);
	}
}

int mpi_dtype_check(MPI_Datatype dt, int count)
{
	(void)count;
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t || !t->committed)
		return MPI_ERR_TYPE;
	return MPI_SUCCESS;
}

void mpi_pack(const struct mpi_dtype *t, const void *buf, int count, void *out)
{
	char *o = out;
	const char *b = buf;
	/* nothing to move: the buffers of a zero-size call may be NULL */
	if (!count || !t->size)
		return;
	if (t->contig) {
		nal_copy(o, b + t->true_lb, t->size * (size_t)count);
		return;
	}
	for (int i = 0; i < count; i++, b += t->extent)
		for (size_t s = 0; s < t->nsegs; s++) {
			nal_copy(o, b + t->segs[s].off, t->segs[s].len);
			o += t->segs[s].len;
		}
}

void mpi_unpack(const struct mpi_dtype *t, void *buf, int count, const void *in, size_t bytes)
{
	const char *p = in;
	char *b = buf;
	if (!count || !bytes)
		return;
	if (t->contig) {
		size_t n = t->size * (size_t)count;
		nal_copy(b + t->true_lb, p, bytes < n ? bytes : n);
		return;
	}
	for (int i = 0; i < count && bytes; i++, b += t->extent)
		for (size_t s = 0; s < t->nsegs && bytes; s++) {
			size_t n = t->segs[s].len < bytes ? t->segs[s].len : bytes;
			nal_copy(b + t->segs[s].off, p, n);
			p += n;
			bytes -= n;
		}
}

/* ---------------------------------------------------------------- building */

/* Whether count elements of t are one run of bytes in type-map order: its
 * segments back to back, in order, and the extent their total. A type
 * whose parts only cover a range in another order (a transpose) is not. */
static bool is_contig(const struct mpi_dtype *t)
{
	if (t->extent != (MPI_Aint)t->size)
		return false;
	for (size_t s = 1; s < t->nsegs; s++)
		if (t->segs[s].off != t->segs[s - 1].off + (MPI_Aint)t->segs[s - 1].len)
			return false;
	return true;
}

struct builder {
	struct mpi_seg *segs;
	size_t n, cap;
	bool fail;
};

static void add_seg(struct builder *b, MPI_Aint off, size_t len, uint32_t esize, int basic)
{
	if (!len)
		return;
	if (b->n) {
		struct mpi_seg *l = &b->segs[b->n - 1];
		if (l->basic == basic && l->esize == esize && l->off + (MPI_Aint)l->len == off) {
			l->len += len;
			return;
		}
	}
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 8;
		struct mpi_seg *s = realloc(b->segs, nc * sizeof *s);
		if (!s) {
			b->fail = true;
			return;
		}
		b->segs = s;
		b->cap = nc;
	}
	b->segs[b->n++] = (struct mpi_seg){ off, len, esize, basic };
}

/* The general constructor: count blocks of blocklens[i] elements of
 * types[i] at byte displacement displs[i]. */
/* A free handle number for a derived type, or -1. */
static int new_slot(void)
{
	for (int i = PTL_MPI_NUM_PREDEFINED; i < mpi_ntypes; i++)
		if (!mpi_types[i])
			return i;
	return mpi_ntypes < DT_MAX ? mpi_ntypes++ : -1;
}

MPI_Datatype mpi_dtype_new_handle(struct mpi_dtype *t)
{
	if (t->predefined)
		return (MPI_Datatype)(t - predef);
	int h = new_slot();
	if (h < 0)
		return MPI_DATATYPE_NULL;
	mpi_types[h] = mpi_dtype_hold(t);
	return h;
}

static int build(int count, const int *blocklens, const MPI_Aint *displs, const MPI_Datatype *olds,
		 MPI_Datatype *newtype, const char *fn, bool pad)
{
	if (count < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_COUNT, fn, "count %d < 0", count);
	struct builder b = { 0 };
	size_t size = 0;
	MPI_Aint lb = 0, ub = 0;
	bool any = false, resized = false;
	size_t align = 1;
	int basic = -2;
	for (int i = 0; i < count; i++) {
		struct mpi_dtype *o = mpi_dtype_get(olds[i]);
		if (!o) {
			free(b.segs);
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d (block %d)", olds[i], i);
		}
		if (blocklens[i] < 0) {
			free(b.segs);
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "block length %d < 0 (block %d)", blocklens[i], i);
		}
		if (o->align > align)
			align = o->align;
		resized |= o->resized;
		if (blocklens[i] == 0)
			continue; /* no entries in the type map: no say in its bounds */
		/* Copy j of the block sits at j extents, so with a negative
		 * extent the last copy is the lowest (MPI-3.1 4.1.2). */
		MPI_Aint span = (MPI_Aint)(blocklens[i] - 1) * o->extent;
		MPI_Aint blb = displs[i] + o->lb + (span < 0 ? span : 0);
		MPI_Aint bub = displs[i] + o->lb + o->extent + (span > 0 ? span : 0);
		if (!any || blb < lb)
			lb = blb;
		if (!any || bub > ub)
			ub = bub;
		any = true;
		if (basic == -2)
			basic = o->basic;
		else if (basic != o->basic)
			basic = -1;
		for (int j = 0; j < blocklens[i]; j++) {
			MPI_Aint base = displs[i] + (MPI_Aint)j * o->extent;
			for (size_t s = 0; s < o->nsegs; s++)
				add_seg(&b, base + o->segs[s].off, o->segs[s].len, o->segs[s].esize, o->segs[s].basic);
		}
		size += o->size * (size_t)blocklens[i];
	}
	struct mpi_dtype *t = calloc(1, sizeof *t);
	if (!t || b.fail) {
		free(t);
		free(b.segs);
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	t->in_use = true;
	t->refs = 1;
	t->size = size;
	t->lb = lb;
	t->extent = ub - lb;
	t->align = align;
	t->resized = resized;
	/* A struct of basic types is laid out as C would lay it out: an array
	 * of them steps by the extent padded to the most aligned member
	 * (MPI-3.1 4.1.6), as sizeof does. Explicit bounds stay as they are. */
	if (pad && !resized && t->extent > 0 && t->extent % (MPI_Aint)align)
		t->extent += (MPI_Aint)align - t->extent % (MPI_Aint)align;
	t->segs = b.segs;
	t->nsegs = b.n;
	t->basic = basic < 0 ? -1 : basic;
	t->true_lb = b.n ? b.segs[0].off : 0;
	t->true_ub = t->true_lb;
	for (size_t s = 0; s < b.n; s++) {
		if (b.segs[s].off < t->true_lb)
			t->true_lb = b.segs[s].off;
		if (b.segs[s].off + (MPI_Aint)b.segs[s].len > t->true_ub)
			t->true_ub = b.segs[s].off + (MPI_Aint)b.segs[s].len;
	}
	t->contig = is_contig(t);
	t->name = "derived";
	int h = new_slot();
	if (h < 0) {
		free(t->segs);
		free(t);
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "more than %d datatypes", DT_MAX);
	}
	mpi_types[h] = t;
	*newtype = h;
	return MPI_SUCCESS;
}

/* Records how *newtype was made (mpi_dtenv.c) once the constructor
 * succeeded (rc 0); without memory for the record (ints NULL where ni
 * asks for some: the caller's array of them could not be made) the new
 * type is taken back and the call fails. */
static int made(int rc, MPI_Datatype *newtype, const char *fn, int combiner, int ni, const int *ints, int na,
		const MPI_Aint *aints, int nd, const MPI_Datatype *dts)
{
	if (rc)
		return rc;
	if ((ni == 0 || ints) && mpi_dtype_envelope(*newtype, combiner, ni, ints, na, aints, nd, dts) == MPI_SUCCESS)
		return MPI_SUCCESS;
	PMPI_Type_free(newtype);
	return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
}

/* [a, b[0..n), c[0..n)] as one int array, for the records; NULL if out of memory. */
static int *ints_of(int a, int n, const int *b, const int *c)
{
	int *v = malloc(sizeof(int) * (1 + (size_t)n * (c ? 2 : 1)));
	if (!v)
		return NULL;
	v[0] = a;
	memcpy(v + 1, b, sizeof(int) * (size_t)n);
	if (c)
		memcpy(v + 1 + n, c, sizeof(int) * (size_t)n);
	return v;
}

int PMPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *newtype)
{
	MPI_CHECK_INIT("MPI_Type_contiguous");
	MPI_Aint d = 0;
	int rc = build(1, &count, &d, &old, newtype, "MPI_Type_contiguous", false);
	return made(rc, newtype, "MPI_Type_contiguous", MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &old);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *newtype)
{
	MPI_CHECK_INIT("MPI_Type_create_hvector");
	if (count < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Type_create_hvector", "count %d < 0", count);
	int *bl = malloc(sizeof(int) * (size_t)(count + 1));
	MPI_Aint *d = malloc(sizeof(MPI_Aint) * (size_t)(count + 1));
	MPI_Datatype *o = malloc(sizeof(MPI_Datatype) * (size_t)(count + 1));
	int rc;
	if (!bl || !d || !o) {
		rc = mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Type_create_hvector", "out of memory");
	} else {
		for (int i = 0; i < count; i++) {
			bl[i] = blocklength;
			d[i] = (MPI_Aint)i * stride;
			o[i] = old;
		}
		rc = build(count, bl, d, o, newtype, "MPI_Type_create_hvector", false);
	}
	free(bl);
	free(d);
	free(o);
	int ints[2] = { count, blocklength };
	return made(rc, newtype, "MPI_Type_create_hvector", MPI_COMBINER_HVECTOR, 2, ints, 1, &stride, 1, &old);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype old, MPI_Datatype *newtype)
{
	struct mpi_dtype *o = mpi_dtype_get(old);
	if (!o)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_vector", "invalid datatype %d", old);
	int rc = PMPI_Type_create_hvector(count, blocklength, (MPI_Aint)stride * o->extent, old, newtype);
	int ints[3] = { count, blocklength, stride };
	return made(rc, newtype, "MPI_Type_vector", MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 1, &old);
}

int PMPI_Type_create_hindexed(int count, const int bl[], const MPI_Aint displs[], MPI_Datatype old,
			      MPI_Datatype *newtype)
{
	MPI_CHECK_INIT("MPI_Type_create_hindexed");
	if (count < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Type_create_hindexed", "count %d < 0", count);
	MPI_Datatype *o = malloc(sizeof(MPI_Datatype) * (size_t)(count + 1));
	if (!o)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Type_create_hindexed", "out of memory");
	for (int i = 0; i < count; i++)
		o[i] = old;
	int rc = build(count, bl, displs, o, newtype, "MPI_Type_create_hindexed", false);
	free(o);
	int *ints = rc ? NULL : ints_of(count, count, bl, NULL);
	rc = made(rc, newtype, "MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED,
		  count + 1, ints, count, displs, 1, &old);
	free(ints);
	return rc;
}

int PMPI_Type_indexed(int count, const int bl[], const int displs[], MPI_Datatype old, MPI_Datatype *newtype)
{
	MPI_CHECK_INIT("MPI_Type_indexed");
	struct mpi_dtype *o = mpi_dtype_get(old);
	if (!o)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_indexed", "invalid datatype %d", old);
	if (count < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Type_indexed", "count %d < 0", count);
	/* calloc: with mpi_dtype_get inline gcc sees count 0 pass d unwritten */
	MPI_Aint *d = calloc((size_t)count + 1, sizeof(MPI_Aint));
	if (!d)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Type_indexed", "out of memory");
	for (int i = 0; i < count; i++)
		d[i] = (MPI_Aint)displs[i] * o->extent;
	int rc = PMPI_Type_create_hindexed(count, bl, d, old, newtype);
	free(d);
	int *ints = rc ? NULL : ints_of(count, count, bl, displs);
	rc = made(rc, newtype, "MPI_Type_indexed", MPI_COMBINER_INDEXED, 2 * count + 1,
		  ints, 0, NULL, 1, &old);
	free(ints);
	return rc;
}

int PMPI_Type_create_indexed_block(int count, int blocklength, const int displs[], MPI_Datatype old,
				   MPI_Datatype *newtype)
{
	MPI_CHECK_INIT("MPI_Type_create_indexed_block");
	if (count < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Type_create_indexed_block", "count %d < 0", count);
	int *bl = malloc(sizeof(int) * (size_t)(count + 1));
	if (!bl)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Type_create_indexed_block", "out of memory");
	for (int i = 0; i < count; i++)
		bl[i] = blocklength;
	int rc = PMPI_Type_indexed(count, bl, displs, old, newtype);
	free(bl);
	int *ints = rc ? NULL : malloc(sizeof(int) * ((size_t)count + 2));
	if (ints) {	/* count, blocklength, displs[] */
		ints[0] = count;
		ints[1] = blocklength;
		memcpy(ints + 2, displs, sizeof(int) * (size_t)count);
	}
	rc = made(rc, newtype, "MPI_Type_create_indexed_block",
		  MPI_COMBINER_INDEXED_BLOCK, count + 2, ints, 0, NULL, 1, &old);
	free(ints);
	return rc;
}

/* Blocks of one length at byte displacements: hindexed with that length. */
int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displs[], MPI_Datatype old,
				    MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_create_hindexed_block";
	MPI_CHECK_INIT(fn);
	if (count < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_COUNT, fn, "count %d < 0", count);
	int *bl = malloc(sizeof(int) * (size_t)(count + 1));
	MPI_Datatype *o = malloc(sizeof(MPI_Datatype) * (size_t)(count + 1));
	int rc = MPI_ERR_NO_MEM;
	if (bl && o) {
		for (int i = 0; i < count; i++) {
			bl[i] = blocklength;
			o[i] = old;
		}
		rc = build(count, bl, displs, o, newtype, fn, false);
	} else {
		rc = mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	free(bl);
	free(o);
	int ints[2] = { count, blocklength };
	return made(rc, newtype, fn, MPI_COMBINER_HINDEXED_BLOCK, 2, ints, count, displs, 1, &old);
}

int PMPI_Type_create_struct(int count, const int bl[], const MPI_Aint displs[], const MPI_Datatype olds[],
			    MPI_Datatype *newtype)
{
	MPI_CHECK_INIT("MPI_Type_create_struct");
	int rc = build(count, bl, displs, olds, newtype, "MPI_Type_create_struct", true);
	int *ints = rc ? NULL : ints_of(count, count, bl, NULL);
	rc = made(rc, newtype, "MPI_Type_create_struct", MPI_COMBINER_STRUCT, count + 1,
		  ints, count, displs, count, olds);
	free(ints);
	return rc;
}

/* Part of an ndims-dimensional array of sizes[] elements of old, in C
 * (last index fastest) or Fortran order: along dimension d the indices
 * own[d][0..n[d]), ascending. One block per run of consecutive indices
 * along the fastest dimension, and the whole array's extent, so
 * consecutive elements of the type step over whole arrays (MPI-3.1 4.1.3,
 * 4.1.4). The envelope records combiner and ints[0..ni). */
int mpi_dtype_grid(const char *fn, int ndims, const int sizes[], int order, int *const own[], const int n[],
		   MPI_Datatype old, MPI_Datatype *newtype, int combiner, int ni, const int *ints)
{
	struct mpi_dtype *o = mpi_dtype_get(old);
	long total = 1;
	for (int d = 0; d < ndims; d++)
		total *= sizes[d];
	/* ax[k]: the dimension at position k from slowest to fastest; f the fastest. */
	int *ax = malloc(sizeof(int) * 2 * (size_t)ndims);
	long *stride = malloc(sizeof(long) * (size_t)ndims);
	if (!ax || !stride) {
		free(ax);
		free(stride);
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	int *idx = ax + ndims;
	for (int k = 0; k < ndims; k++) {
		ax[k] = order == MPI_ORDER_C ? k : ndims - 1 - k;
		idx[k] = 0;
	}
	stride[ndims - 1] = 1;
	for (int k = ndims - 2; k >= 0; k--)
		stride[k] = stride[k + 1] * sizes[ax[k + 1]];
	int f = order == MPI_ORDER_C ? ndims - 1 : 0, runs = 0; /* = ax[ndims - 1] */
	for (int i = 0; i < n[f]; i++)
		runs += i == 0 || own[f][i] != own[f][i - 1] + 1;
	long nblocks = runs;
	for (int k = 0; k < ndims - 1; k++)
		nblocks *= n[ax[k]];
	int *bl = malloc(sizeof(int) * (size_t)(nblocks ? nblocks : 1));
	MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)(nblocks ? nblocks : 1));
	MPI_Datatype *olds = malloc(sizeof(MPI_Datatype) * (size_t)(nblocks ? nblocks : 1));
	int rc = MPI_SUCCESS;
	if (!bl || !displs || !olds)
		rc = mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory for %ld blocks", nblocks);
	for (long b = 0; !rc && b < nblocks;) {
		long at = 0;
		for (int k = 0; k < ndims - 1; k++)
			at += own[ax[k]][idx[k]] * stride[k];
		for (int i = 0; i < n[f]; b++) { /* the runs along the fastest dimension */
			int j = i;
			while (j + 1 < n[f] && own[f][j + 1] == own[f][j] + 1)
				j++;
			bl[b] = j - i + 1;
			displs[b] = (MPI_Aint)(at + own[f][i]) * o->extent;
			olds[b] = old;
			i = j + 1;
		}
		for (int k = ndims - 2; k >= 0 && ++idx[k] == n[ax[k]]; k--) /* odometer */
			idx[k] = 0;
	}
	if (!rc)
		rc = build((int)nblocks, bl, displs, olds, newtype, fn, false);
	if (!rc) {
		struct mpi_dtype *t = mpi_types[*newtype];
		t->lb = 0;
		t->extent = (MPI_Aint)total * o->extent;
		t->resized = true;
		t->contig = is_contig(t);
	}
	rc = made(rc, newtype, fn, combiner, ni, ints, 0, NULL, 1, &old);
	free(ax);
	free(stride);
	free(bl);
	free(displs);
	free(olds);
	return rc;
}

/* The part [starts, starts + subsizes) of an array of sizes. */
int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
			      MPI_Datatype old, MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_create_subarray";
	MPI_CHECK_INIT(fn);
	if (!mpi_dtype_get(old))
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", old);
	if (ndims <= 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "ndims %d < 1", ndims);
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN",
			       order);
	long total = 1, owned = 0;
	for (int i = 0; i < ndims; i++) {
		if (sizes[i] <= 0 || subsizes[i] <= 0 || subsizes[i] > sizes[i] || starts[i] < 0 ||
		    starts[i] > sizes[i] - subsizes[i])
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn,
				       "dimension %d: size %d, subsize %d, start %d do not fit", i, sizes[i], subsizes[i],
				       starts[i]);
		total *= sizes[i];
		owned += subsizes[i];
		if (total > INT_MAX)
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "the array has more than %d elements", INT_MAX);
	}
	/* ndims, sizes[], subsizes[], starts[], order; then the indices each dimension takes */
	int *ints = malloc(sizeof(int) * (3 * (size_t)ndims + 2 + (size_t)owned));
	int **own = malloc(sizeof(int *) * (size_t)ndims);
	if (!ints || !own) {
		free(ints);
		free(own);
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	ints[0] = ndims;
	memcpy(ints + 1, sizes, sizeof(int) * (size_t)ndims);
	memcpy(ints + 1 + ndims, subsizes, sizeof(int) * (size_t)ndims);
	memcpy(ints + 1 + 2 * ndims, starts, sizeof(int) * (size_t)ndims);
	ints[1 + 3 * ndims] = order;
	int *next = ints + 3 * ndims + 2;
	for (int d = 0; d < ndims; d++) {
		own[d] = next;
		for (int i = 0; i < subsizes[d]; i++)
			*next++ = starts[d] + i;
	}
	int rc = mpi_dtype_grid(fn, ndims, sizes, order, own, subsizes, old, newtype, MPI_COMBINER_SUBARRAY,
				3 * ndims + 2, ints);
	free(ints);
	free(own);
	return rc;
}

int PMPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
	MPI_CHECK_INIT("MPI_Type_create_resized");
	int one = 1;
	MPI_Aint d = 0;
	int rc = build(1, &one, &d, &old, newtype, "MPI_Type_create_resized", false);
	if (rc)
		return rc;
	struct mpi_dtype *t = mpi_types[*newtype];
	t->lb = lb;
	t->extent = extent;
	t->resized = true;
	t->contig = is_contig(t);
	MPI_Aint a[2] = { lb, extent };
	return made(rc, newtype, "MPI_Type_create_resized", MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &old);
}

int PMPI_Type_dup(MPI_Datatype old, MPI_Datatype *newtype)
{
	MPI_CHECK_INIT("MPI_Type_dup");
	struct mpi_dtype *o = mpi_dtype_get(old);
	if (!o)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_dup", "invalid datatype %d", old);
	int rc = PMPI_Type_create_resized(old, o->lb, o->extent, newtype);
	if (!rc) {
		mpi_types[*newtype]->committed = o->committed;
		mpi_types[*newtype]->resized = o->resized;
	}
	rc = made(rc, newtype, "MPI_Type_dup", MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &old);
	if (!rc && (rc = mpi_attr_copy(true, old, *newtype, "MPI_Type_dup"))) {
		mpi_attr_forget(true, *newtype);
		PMPI_Type_free(newtype);
	}
	return rc;
}

int PMPI_Type_commit(MPI_Datatype *dt)
{
	MPI_CHECK_INIT("MPI_Type_commit");
	struct mpi_dtype *t = dt ? mpi_dtype_get(*dt) : NULL;
	if (!t)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_commit", "invalid datatype");
	t->committed = true;
	return MPI_SUCCESS;
}

struct mpi_dtype *mpi_dtype_hold(struct mpi_dtype *t)
{
	if (t && !t->predefined)
		t->refs++;
	return t;
}

void mpi_dtype_release(struct mpi_dtype *t)
{
	if (!t || t->predefined || --t->refs > 0)
		return;
	mpi_dtype_env_free(t);
	free(t->segs);
	free(t);
}

/* The handle goes at once (and its slot may name a new type); the type
 * itself stays while a pending receive holds it. */
int PMPI_Type_free(MPI_Datatype *dt)
{
	MPI_CHECK_INIT("MPI_Type_free");
	struct mpi_dtype *t = dt ? mpi_dtype_get(*dt) : NULL;
	if (!t)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_free", "invalid datatype");
	if (t->predefined)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_free", "%s is predefined and cannot be freed",
			       t->name);
	int rc = mpi_attr_drop(true, *dt, "MPI_Type_free");
	if (rc)
		return rc;
	mpi_types[*dt] = NULL;
	*dt = MPI_DATATYPE_NULL;
	mpi_dtype_release(t);
	return MPI_SUCCESS;
}

int PMPI_Get_count(const MPI_Status *st, MPI_Datatype dt, int *count)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!st || !count)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_count", "status or count is NULL");
	if (!t)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Get_count", "invalid datatype %d", dt);
	size_t n = t->size ? (size_t)st->ptl_count / t->size : 0;
	/* not a whole number of elements, or more than an int holds */
	if (t->size && ((size_t)st->ptl_count % t->size || n > INT_MAX))
		*count = MPI_UNDEFINED;
	else
		*count = (int)n;
	return MPI_SUCCESS;
}

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
	*address = (MPI_Aint)location;
	return MPI_SUCCESS;
}

/* MPI-1's names for the calls above (mpi.h). Errors name the call that
 * replaced them; the envelope's combiner is that call's, which is also
 * what MPI-2 gives the C binding of the MPI-1 name (MPI_COMBINER_STRUCT,
 * not the _INTEGER ones of Fortran's). */
int PMPI_Address(void *location, MPI_Aint *address)
{
	return PMPI_Get_address(location, address);
}

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *newtype)
{
	return PMPI_Type_create_hvector(count, blocklength, stride, old, newtype);
}

int PMPI_Type_hindexed(int count, int bl[], MPI_Aint displs[], MPI_Datatype old, MPI_Datatype *newtype)
{
	return PMPI_Type_create_hindexed(count, bl, displs, old, newtype);
}

int PMPI_Type_struct(int count, int bl[], MPI_Aint displs[], MPI_Datatype olds[], MPI_Datatype *newtype)
{
	return PMPI_Type_create_struct(count, bl, displs, olds, newtype);
}

/* ---------------------------------------------------------------- packing */
/* The packed form is the type's data bytes in type-map order, with no
 * header: all ranks of a job share one representation, so MPI_PACKED
 * messages are these bytes as they are. */

/* Checks what MPI_Pack, MPI_Unpack and MPI_Pack_size share: an MPI that
 * runs, a valid communicator, a committed type, a count >= 0. */
static int pack_args(const char *fn, MPI_Comm comm, MPI_Datatype dt, int count, struct mpi_dtype **t)
{
	MPI_CHECK_INIT(fn);
	if (!mpi_comm_get(comm))
		return mpi_err_comm(fn, comm);
	if (count < 0)
		return mpi_err(comm, MPI_ERR_COUNT, fn, "count %d < 0", count);
	if (mpi_dtype_check(dt, count))
		return mpi_err(comm, MPI_ERR_TYPE, fn, "invalid or uncommitted datatype %d", dt);
	*t = mpi_dtype_get(dt);
	if (t[0]->size * (size_t)count > INT_MAX)
		return mpi_err(comm, MPI_ERR_COUNT, fn, "%d elements of %zu bytes exceed an int", count, t[0]->size);
	return MPI_SUCCESS;
}

int PMPI_Pack_size(int incount, MPI_Datatype dt, MPI_Comm comm, int *size)
{
	struct mpi_dtype *t;
	int rc = pack_args("MPI_Pack_size", comm, dt, incount, &t);
	if (rc)
		return rc;
	*size = (int)(t->size * (size_t)incount);
	return MPI_SUCCESS;
}

/* The bytes count elements take in the packed buffer of bufsize bytes at
 * *position: 0 with *len set, or the error (the position stays). */
static int pack_span(const char *fn, MPI_Comm comm, const struct mpi_dtype *t, int count, int bufsize,
		     const int *position, const char *past, size_t *len)
{
	*len = t->size * (size_t)count;
	if (*position < 0 || *position > bufsize || *len > (size_t)(bufsize - *position))
		return mpi_err(comm, MPI_ERR_TRUNCATE, fn, "%zu bytes at position %d %s the %d-byte buffer", *len,
			       *position, past, bufsize);
	return MPI_SUCCESS;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype dt, void *outbuf, int outsize, int *position,
	      MPI_Comm comm)
{
	struct mpi_dtype *t;
	size_t len;
	int rc = pack_args("MPI_Pack", comm, dt, incount, &t);
	if (!rc)
		rc = pack_span("MPI_Pack", comm, t, incount, outsize, position, "overrun", &len);
	if (rc)
		return rc;
	mpi_pack(t, inbuf, incount, (char *)outbuf + *position);
	*position += (int)len;
	return MPI_SUCCESS;
}

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype dt,
		MPI_Comm comm)
{
	struct mpi_dtype *t;
	size_t len;
	int rc = pack_args("MPI_Unpack", comm, dt, outcount, &t);
	if (!rc)
		rc = pack_span("MPI_Unpack", comm, t, outcount, insize, position, "read past", &len);
	if (rc)
		return rc;
	mpi_unpack(t, outbuf, outcount, (const char *)inbuf + *position, len);
	*position += (int)len;
	return MPI_SUCCESS;
}

/* Names (MPI-3.1 6.8): a predefined type's is its MPI_ name; a derived
 * type has none until MPI_Type_set_name gives it one (a duplicate too). */
int PMPI_Type_set_name(MPI_Datatype dt, const char *name)
{
	MPI_CHECK_INIT("MPI_Type_set_name");
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_set_name", "invalid datatype %d", dt);
	if (!name)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_set_name", "name is NULL");
	snprintf(t->label, sizeof t->label, "%s", name);	/* longer names are cut, as the standard allows */
	return MPI_SUCCESS;
}

int PMPI_Type_get_name(MPI_Datatype dt, char *name, int *resultlen)
{
	MPI_CHECK_INIT("MPI_Type_get_name");
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_get_name", "invalid datatype %d", dt);
	if (!name || !resultlen)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_get_name", "%s is NULL", name ? "resultlen" : "name");
	const char *n = t->label[0] || !t->predefined ? t->label : t->name;
	*resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", n);
	return MPI_SUCCESS;
}

/* The predefined type of a class and size (MPI-3.1 17.1.9), among the C
 * types: the first of the class with that size. */
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
	static const MPI_Datatype real[] = { MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE };
	static const MPI_Datatype integer[] = { MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG };
	static const MPI_Datatype cplx[] = { MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX };
	MPI_CHECK_INIT("MPI_Type_match_size");
	const MPI_Datatype *c = typeclass == MPI_TYPECLASS_REAL ? real : typeclass == MPI_TYPECLASS_INTEGER ? integer
					: typeclass == MPI_TYPECLASS_COMPLEX ? cplx : NULL;
	int n = typeclass == MPI_TYPECLASS_INTEGER ? 5 : 3;
	if (!c)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_match_size", "typeclass %d is not "
			       "MPI_TYPECLASS_REAL, _INTEGER or _COMPLEX", typeclass);
	for (int i = 0; i < n; i++)
		if (predef[c[i]].size == (size_t)size) {
			*datatype = c[i];
			return MPI_SUCCESS;
		}
	return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_match_size", "no type of class %d has %d bytes",
		       typeclass, size);
}

/* len bytes of a message as (count, type): MPI_BYTE up to INT_MAX; past
 * it one element of a contiguous type of len bytes made for the call
 * (nothing beside a copy of 2 GiB), which the caller frees once its
 * request holds it (mpi_bytes_free). For the collectives' schedules (as
 * MPI_BYTE a 2.4 GiB MPI_Bcast's one step on 2 ranks went out as a
 * negative count: the send was refused and the receiver waited out
 * PTL_COLL_TIMEOUT) and MPI_Sendrecv_replace's packed copy. */
int mpi_bytes(size_t len, int *count, MPI_Datatype *dt)
{
	*count = (int)len;
	*dt = MPI_BYTE;
	if (len <= INT_MAX)
		return MPI_SUCCESS;
	const size_t mib = (size_t)1 << 20;
	MPI_Datatype run, types[2] = { MPI_BYTE, MPI_BYTE };
	int lens[2] = { (int)(len / mib), (int)(len % mib) };
	MPI_Aint disps[2] = { 0, (MPI_Aint)(len - len % mib) };
	int rc = PMPI_Type_contiguous((int)mib, MPI_BYTE, &run);
	if (rc)
		return rc;
	types[0] = run;
	rc = PMPI_Type_create_struct(2, lens, disps, types, dt);
	PMPI_Type_free(&run);
	if (!rc && (rc = PMPI_Type_commit(dt)))
		PMPI_Type_free(dt);
	if (rc)
		*dt = MPI_BYTE; /* nothing for mpi_bytes_free */
	*count = 1;
	return rc;
}

void mpi_bytes_free(MPI_Datatype *dt)
{
	if (*dt != MPI_BYTE)
		PMPI_Type_free(dt);
}
