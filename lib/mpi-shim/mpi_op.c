/* mpi_op.c: reduction operations: every predefined op on the types the
 * standard allows it on, MAXLOC/MINLOC on the pair types, and user ops.
 * inout[i] = in[i] OP inout[i], element by element, or out[i] = in[i] OP
 * io[i] into a third vector (mpi_op_apply3); loads and stores go through
 * memcpy because collective scratch offsets need not be aligned. */
#include "config.h"

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nal/nal_copy.h"
#include "mpi_impl.h"

#define OP_MAX 1024

struct opdef {
	bool in_use;
	bool commute;
	MPI_User_function *fn;
};
static struct opdef ops[OP_MAX];

void mpi_op_init(void)
{
	for (int i = MPI_MAX; i <= MPI_NO_OP; i++)
		ops[i] = (struct opdef){ true, true, NULL };
}

/* MPI-3.1 5.9.2's groups of predefined types, one bit each, and which
 * groups each predefined operation takes. MPI_WCHAR and MPI_PACKED are
 * in none. MPI_CHAR and MPI_CHARACTER are text in the standard, but
 * MPICH reduces them as integers and programs (MPICH's own op tests
 * among them) do: an extension kept, as C and Fortran integers. */
enum {
	G_CINT = 1 << 0,    /* C integer */
	G_FINT = 1 << 1,    /* Fortran integer */
	G_FLOAT = 1 << 2,   /* floating point */
	G_LOGICAL = 1 << 3, /* MPI_C_BOOL, MPI_CXX_BOOL, MPI_LOGICAL */
	G_COMPLEX = 1 << 4,
	G_BYTE = 1 << 5,
	G_MULTI = 1 << 6,   /* multi-language: MPI_AINT, MPI_OFFSET, MPI_COUNT */
	G_PAIR = 1 << 7,    /* MAXLOC/MINLOC's value-index pairs (5.9.4) */
};

/* The group of a predefined type, by its own handle: the other languages'
 * types share their C equivalent's layout and basic type (mpi_dtype.c's
 * aliases) but not its group - MPI_LOGICAL is an int, and logical. */
static unsigned group_of(int h)
{
	switch (h) {
	case MPI_CHAR: case MPI_SIGNED_CHAR: case MPI_UNSIGNED_CHAR: case MPI_SHORT: case MPI_UNSIGNED_SHORT: case MPI_INT:
	case MPI_UNSIGNED: case MPI_LONG: case MPI_UNSIGNED_LONG: case MPI_LONG_LONG_INT: case MPI_UNSIGNED_LONG_LONG:
	case MPI_INT8_T: case MPI_INT16_T: case MPI_INT32_T: case MPI_INT64_T: case MPI_UINT8_T: case MPI_UINT16_T:
	case MPI_UINT32_T: case MPI_UINT64_T:
		return G_CINT;
	case MPI_CHARACTER: case MPI_INTEGER: case MPI_INTEGER1: case MPI_INTEGER2: case MPI_INTEGER4: case MPI_INTEGER8:
		return G_FINT;
	case MPI_FLOAT: case MPI_DOUBLE: case MPI_LONG_DOUBLE: case MPI_REAL: case MPI_DOUBLE_PRECISION: case MPI_REAL4:
	case MPI_REAL8:
		return G_FLOAT;
	case MPI_C_BOOL: case MPI_CXX_BOOL: case MPI_LOGICAL:
		return G_LOGICAL;
	case MPI_C_COMPLEX: case MPI_C_FLOAT_COMPLEX: case MPI_C_DOUBLE_COMPLEX: case MPI_C_LONG_DOUBLE_COMPLEX:
	case MPI_COMPLEX: case MPI_DOUBLE_COMPLEX: case MPI_COMPLEX8: case MPI_COMPLEX16: case MPI_CXX_FLOAT_COMPLEX:
	case MPI_CXX_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX:
		return G_COMPLEX;
	case MPI_BYTE:
		return G_BYTE;
	case MPI_AINT: case MPI_OFFSET: case MPI_COUNT:
		return G_MULTI;
	case MPI_FLOAT_INT: case MPI_DOUBLE_INT: case MPI_LONG_INT: case MPI_2INT: case MPI_SHORT_INT:
	case MPI_LONG_DOUBLE_INT: case MPI_2INTEGER:
		return G_PAIR;
	default:
		return 0;
	}
}

/* The groups a predefined operation takes, and how to say so. */
static const struct {
	unsigned groups;
	const char *name, *takes;
} predef_ops[] = {
	[MPI_MAX] = { G_CINT | G_FINT | G_FLOAT | G_MULTI, "MPI_MAX", "integer and floating point types" },
	[MPI_MIN] = { G_CINT | G_FINT | G_FLOAT | G_MULTI, "MPI_MIN", "integer and floating point types" },
	[MPI_SUM] = { G_CINT | G_FINT | G_FLOAT | G_COMPLEX | G_MULTI, "MPI_SUM",
		      "integer, floating point and complex types" },
	[MPI_PROD] = { G_CINT | G_FINT | G_FLOAT | G_COMPLEX | G_MULTI, "MPI_PROD",
		       "integer, floating point and complex types" },
	[MPI_LAND] = { G_CINT | G_LOGICAL, "MPI_LAND", "C integer and logical types" },
	[MPI_LOR] = { G_CINT | G_LOGICAL, "MPI_LOR", "C integer and logical types" },
	[MPI_LXOR] = { G_CINT | G_LOGICAL, "MPI_LXOR", "C integer and logical types" },
	[MPI_BAND] = { G_CINT | G_FINT | G_BYTE | G_MULTI, "MPI_BAND", "integer types and MPI_BYTE" },
	[MPI_BOR] = { G_CINT | G_FINT | G_BYTE | G_MULTI, "MPI_BOR", "integer types and MPI_BYTE" },
	[MPI_BXOR] = { G_CINT | G_FINT | G_BYTE | G_MULTI, "MPI_BXOR", "integer types and MPI_BYTE" },
	[MPI_MAXLOC] = { G_PAIR, "MPI_MAXLOC", "the value-index pair types" },
	[MPI_MINLOC] = { G_PAIR, "MPI_MINLOC", "the value-index pair types" },
};

/* A derived type goes by the one basic type of its elements (its C
 * equivalent's for the other languages' types: mpi_dtype.c). */
static unsigned type_groups(MPI_Datatype dt, const struct mpi_dtype *t)
{
	if (t->predefined)
		return group_of(dt);
	return t->basic < 0 ? 0 : group_of(t->basic);
}

int mpi_op_check(MPI_Op op, MPI_Datatype dt)
{
	if (op <= 0 || op >= OP_MAX || !ops[op].in_use)
		return MPI_ERR_OP;
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t)
		return MPI_ERR_TYPE;
	if (ops[op].fn || op == MPI_REPLACE || op == MPI_NO_OP)
		return MPI_SUCCESS;
	if (op >= (MPI_Op)(sizeof predef_ops / sizeof *predef_ops) || !predef_ops[op].name)
		return MPI_ERR_OP;
	return type_groups(dt, t) & predef_ops[op].groups ? MPI_SUCCESS : MPI_ERR_OP;
}

int mpi_op_refused(MPI_Comm comm, const char *fn, MPI_Op op, MPI_Datatype dt, int rc)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (rc == MPI_ERR_OP && (op <= 0 || op >= OP_MAX || !ops[op].in_use))
		return mpi_err(comm, rc, fn, "invalid operation %d (MPI_OP_NULL, freed or never created)", op);
	bool known = op < (MPI_Op)(sizeof predef_ops / sizeof *predef_ops) && predef_ops[op].name;
	if (rc != MPI_ERR_OP || !t || !known)
		return mpi_err(comm, rc, fn, "operation %d does not apply to datatype %d", op, dt);
	const char *tn = t->predefined ? t->name : NULL;
	char own[48];
	if (!tn) {
		struct mpi_dtype *bt = t->basic < 0 ? NULL : mpi_dtype_get(t->basic);
		if (bt)
			snprintf(own, sizeof own, "datatype %d (of %s)", dt, bt->name);
		else
			snprintf(own, sizeof own, "datatype %d (of mixed types)", dt);
		tn = own;
	}
	return mpi_err(comm, rc, fn, "operation %s does not apply to %s: MPI-3.1 5.9.2 gives it %s", predef_ops[op].name,
		       tn, predef_ops[op].takes);
}

int mpi_op_failed(MPI_Comm comm, const char *fn, MPI_Op op, MPI_Datatype dt, int count, int rc)
{
	if (rc == MPI_ERR_NO_MEM)
		return mpi_err(comm, rc, fn, "no memory to give user operation %d its %d elements of datatype %d in the "
			       "type's own layout", op, count, dt);
	return mpi_err(comm, rc, fn, "operation %d could not be applied to datatype %d", op, dt);
}

bool mpi_op_commutative(MPI_Op op)
{
	return op > 0 && op < OP_MAX && ops[op].in_use ? ops[op].commute : true;
}

bool mpi_op_user(MPI_Op op)
{
	return op > 0 && op < OP_MAX && ops[op].in_use && ops[op].fn;
}

/* One element-wise pass of out = EXPR (a from in, b from io) over n
 * elements of T. The operation is chosen outside the loop, so the loop
 * body is branch-free and the compiler vectorizes it (a switch per element
 * made a 1 MiB double sum several times slower than memory) - under the
 * dynamic cost model this file is built with (lib/mpi-shim/Makefile.inc),
 * which checks at run time that the vectors do not overlap: -O2's default
 * cost model leaves every loop here scalar (MPI_Reduce_local of 1 MiB of
 * doubles 50 -> 21 us). */
#define ELEM_LOOP(T, EXPR) ELEM_PICK_LOOP(T, EXPR, r)
/* out = PICK, of a, b and r = EXPR */
#define ELEM_PICK_LOOP(T, EXPR, PICK)                                                                \
	for (size_t i = 0; i < n; i++) {                                                             \
		T a, b;                                                                              \
		memcpy(&a, (const char *)in + i * sizeof(T), sizeof(T));                           \
		memcpy(&b, (const char *)io + i * sizeof(T), sizeof(T));                           \
		T r = (EXPR);                                                                        \
		b = (PICK);                                                                          \
		memcpy((char *)out + i * sizeof(T), &b, sizeof(T));                                \
	}

/* Integers: arithmetic on the unsigned twin, so overflow wraps. */
#define INT_LOOP(T, U)                                                                               \
	switch (op) {                                                                                \
	case MPI_MAX: ELEM_LOOP(T, a > b ? a : b) break;                                             \
	case MPI_MIN: ELEM_LOOP(T, a < b ? a : b) break;                                             \
	case MPI_SUM: ELEM_LOOP(T, (T)((U)a + (U)b)) break;                                          \
	case MPI_PROD: ELEM_LOOP(T, (T)((U)a * (U)b)) break;                                         \
	case MPI_LAND: ELEM_LOOP(T, (T)(a && b)) break;                                              \
	case MPI_LOR: ELEM_LOOP(T, (T)(a || b)) break;                                               \
	case MPI_LXOR: ELEM_LOOP(T, (T)(!a != !b)) break;                                            \
	case MPI_BAND: ELEM_LOOP(T, (T)(a & b)) break;                                               \
	case MPI_BOR: ELEM_LOOP(T, (T)(a | b)) break;                                                \
	case MPI_BXOR: ELEM_LOOP(T, (T)(a ^ b)) break;                                               \
	default: break;                                                                              \
	}

/* A floating sum or product under MPI_OP_NAN_FIRST, unrolled four times:
 * a 4 KiB sum of doubles in L1 (AVX2, Zen 3 guest, scratch loop) 88 ->
 * 55 ns, against 49.5 without the rule. Only these loops: all of them
 * unrolled made the library's text two-fifths larger. */
#define NAN_FIRST_LOOP(T, EXPR) _Pragma("GCC unroll 4") ELEM_PICK_LOOP(T, EXPR, MPI_OP_NAN_FIRST(a, r))

#define FLOAT_LOOP(T)                                                                                \
	switch (op) {                                                                                \
	case MPI_MAX: ELEM_LOOP(T, a > b ? a : b) break;                                             \
	case MPI_MIN: ELEM_LOOP(T, a < b ? a : b) break;                                             \
	case MPI_SUM: NAN_FIRST_LOOP(T, a + b) break;                                                \
	case MPI_PROD: NAN_FIRST_LOOP(T, a * b) break;                                               \
	default: break;                                                                              \
	}

/* A complex sum is the sum of the parts: FLOAT_LOOP over twice the reals
 * (R the real type of complex T). A product is the compiler's (C99 Annex
 * G's) one call. */
#define COMPLEX_LOOP(T, R)                                                                           \
	if (op == MPI_SUM) {                                                                         \
		n *= 2;                                                                              \
		FLOAT_LOOP(R)                                                                        \
	} else {                                                                                     \
		ELEM_LOOP(T, a * b)                                                                  \
	}

/* MAXLOC/MINLOC: the better value; on a tie the smaller index. Packed
 * pairs are the value then the int, without padding. */
#define PAIR_LOOP(V)                                                                                 \
	for (size_t i = 0; i < n; i++) {                                                             \
		V av, bv;                                                                            \
		int ak, bk;                                                                          \
		const char *pa = (const char *)in + i * ext, *pb = (const char *)io + i * ext;      \
		memcpy(&av, pa, sizeof(V));                                                          \
		memcpy(&ak, pa + sizeof(V), sizeof(int));                                            \
		memcpy(&bv, pb, sizeof(V));                                                          \
		memcpy(&bk, pb + sizeof(V), sizeof(int));                                            \
		bool better = op == MPI_MAXLOC ? av > bv : av < bv;                                  \
		if (better || (av == bv && ak < bk)) {                                               \
			bv = av;                                                                     \
			bk = ak;                                                                     \
		}                                                                                    \
		memcpy((char *)out + i * ext, &bv, sizeof(V));                                       \
		memcpy((char *)out + i * ext + sizeof(V), &bk, sizeof(int));                         \
	}

/* out = in OP io. Inlined into its two callers, so that in the in-place
 * one the compiler sees out and io as one vector (no overlap check between
 * them, which would always fail and run the scalar loop). */
static inline __attribute__((always_inline)) void apply_basic(MPI_Op op, int basic, const void *in, const void *io,
							     void *out, size_t n, size_t ext)
{
	switch (basic) {
	case MPI_CHAR: INT_LOOP(char, unsigned char) break;
	case MPI_SIGNED_CHAR: case MPI_INT8_T: INT_LOOP(int8_t, uint8_t) break;
	case MPI_UNSIGNED_CHAR: case MPI_UINT8_T: case MPI_BYTE: INT_LOOP(uint8_t, uint8_t) break;
	case MPI_C_BOOL: INT_LOOP(uint8_t, uint8_t) break; /* logical ops only */
	case MPI_SHORT: case MPI_INT16_T: INT_LOOP(int16_t, uint16_t) break;
	case MPI_UNSIGNED_SHORT: case MPI_UINT16_T: INT_LOOP(uint16_t, uint16_t) break;
	case MPI_INT: case MPI_INT32_T: INT_LOOP(int32_t, uint32_t) break;
	case MPI_UNSIGNED: case MPI_UINT32_T: INT_LOOP(uint32_t, uint32_t) break;
	case MPI_LONG: INT_LOOP(long, unsigned long) break;
	case MPI_UNSIGNED_LONG: INT_LOOP(unsigned long, unsigned long) break;
	case MPI_LONG_LONG_INT: case MPI_INT64_T: case MPI_OFFSET: case MPI_COUNT: INT_LOOP(int64_t, uint64_t) break;
	case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T: INT_LOOP(uint64_t, uint64_t) break;
	case MPI_AINT: INT_LOOP(intptr_t, uintptr_t) break;
	case MPI_FLOAT: FLOAT_LOOP(float) break;
	case MPI_DOUBLE: FLOAT_LOOP(double) break;
	case MPI_LONG_DOUBLE: FLOAT_LOOP(long double) break;
	case MPI_C_COMPLEX: case MPI_C_FLOAT_COMPLEX: COMPLEX_LOOP(float _Complex, float) break;
	case MPI_C_DOUBLE_COMPLEX: COMPLEX_LOOP(double _Complex, double) break;
	case MPI_C_LONG_DOUBLE_COMPLEX: COMPLEX_LOOP(long double _Complex, long double) break;
	case MPI_FLOAT_INT: PAIR_LOOP(float) break;
	case MPI_DOUBLE_INT: PAIR_LOOP(double) break;
	case MPI_LONG_INT: PAIR_LOOP(long) break;
	case MPI_2INT: PAIR_LOOP(int) break;
	case MPI_SHORT_INT: PAIR_LOOP(short) break;
	case MPI_LONG_DOUBLE_INT: PAIR_LOOP(long double) break;
	default: break;
	}
}

/* Each of the three built twice where the compiler can (GCC on x86-64
 * with glibc's ifunc): for AVX2 and for the baseline (SSE2), the copy run
 * picked once by the CPU. The loops are element-wise (no sum is
 * reassociated) and a NaN's choice is fixed (MPI_OP_NAN_FIRST), so both
 * give the same bits. A 4 KiB MPI_Reduce_local of doubles, L1 to
 * L1, Zen 3 guest: 0.044 ns/B with SSE2's 16-byte vectors, 0.026 with AVX2's
 * 32-byte ones (a 1 MiB one, from L3: 0.08 -> 0.05). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 6 && defined(__GLIBC__)
#define OP_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define OP_CLONES
#endif

OP_CLONES static void apply_inplace(MPI_Op op, int basic, const void *in, void *io, size_t n, size_t ext)
{
	apply_basic(op, basic, in, io, io, n, ext);
}

OP_CLONES static void apply_apart(MPI_Op op, int basic, const void *in, const void *io, void *out, size_t n, size_t ext)
{
	apply_basic(op, basic, in, io, out, n, ext);
}

/* out = out OP io: the first operand is the result's vector (a collective
 * received it there), as one pointer for the same reason as in place. */
OP_CLONES static void apply_onto_in(MPI_Op op, int basic, const void *io, void *out, size_t n, size_t ext)
{
	apply_basic(op, basic, out, io, out, n, ext);
}

/* in/inout are packed (contiguous) images of count elements of dt. */
int mpi_op_apply(MPI_Op op, MPI_Datatype dt, const void *in, void *inout, int count)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t || count <= 0 || op == MPI_NO_OP)
		return MPI_SUCCESS;
	if (op == MPI_REPLACE) {
		memmove(inout, in, t->size * (size_t)count);
		return MPI_SUCCESS;
	}
	if (ops[op].fn) {
		/* A user function reads and writes elements of dt: give it the
		 * type's own layout. Packed images equal it for contiguous
		 * types; others are unpacked into temporaries. */
		if (t->contig && t->lb == 0) {
			int c = count;
			MPI_Datatype d = dt;
			ops[op].fn((void *)in, inout, &c, &d);
			return MPI_SUCCESS;
		}
		/* Element i's bytes lie at i * extent + [true_lb, true_ub): the
		 * temporaries span from the lowest (below the buffer's address
		 * when true_lb < 0) to the highest. */
		MPI_Aint step = t->extent * (MPI_Aint)(count - 1);
		MPI_Aint lo = t->true_lb + (step < 0 ? step : 0), hi = t->true_ub + (step > 0 ? step : 0);
		if (lo > 0)
			lo = 0;
		size_t span = (size_t)(hi - lo);
		char *ma = calloc(1, span + 1), *mb = calloc(1, span + 1);
		if (!ma || !mb) {
			/* inout as it was would pass for the result */
			free(ma);
			free(mb);
			return MPI_ERR_NO_MEM;
		}
		char *a = ma - lo, *b = mb - lo;
		mpi_unpack(t, a, count, in, t->size * (size_t)count);
		mpi_unpack(t, b, count, inout, t->size * (size_t)count);
		int c = count;
		MPI_Datatype d = dt;
		ops[op].fn(a, b, &c, &d);
		mpi_pack(t, b, count, inout);
		free(ma);
		free(mb);
		return MPI_SUCCESS;
	}
	/* mpi_op_check let the pair through: dt has one basic type */
	struct mpi_dtype *bt = mpi_dtype_get(t->basic);
	if (!bt)
		return MPI_ERR_INTERN;
	size_t per = bt->size;
	size_t n = t->size * (size_t)count / per;
	/* pairs: the packed image has no padding */
	apply_inplace(op, t->basic, in, inout, n, per);
	return MPI_SUCCESS;
}

int mpi_op_apply3(MPI_Op op, MPI_Datatype dt, const void *in, const void *io, void *out, int count)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (out == io || !t || count <= 0 || op == MPI_REPLACE || op == MPI_NO_OP || ops[op].fn) {
		/* The result's starting value where the two-operand form wants it. */
		if (out != io && t && count > 0)
			nal_copy(out, io, t->size * (size_t)count);
		return mpi_op_apply(op, dt, in, out, count);
	}
	struct mpi_dtype *bt = mpi_dtype_get(t->basic);
	if (!bt)
		return MPI_ERR_INTERN;
	size_t n = t->size * (size_t)count / bt->size;
	if (out == in)
		apply_onto_in(op, t->basic, io, out, n, bt->size);
	else
		apply_apart(op, t->basic, in, io, out, n, bt->size);
	return MPI_SUCCESS;
}

int PMPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
	MPI_CHECK_INIT("MPI_Op_create");
	if (!fn)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_create", "NULL function");
	for (int i = MPI_NO_OP + 1; i < OP_MAX; i++)
		if (!ops[i].in_use) {
			ops[i] = (struct opdef){ true, commute != 0, fn };
			*op = i;
			return MPI_SUCCESS;
		}
	return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Op_create", "more than %d operations", OP_MAX);
}

int PMPI_Op_free(MPI_Op *op)
{
	MPI_CHECK_INIT("MPI_Op_free");
	if (!op || *op <= MPI_NO_OP || *op >= OP_MAX || !ops[*op].in_use)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_free", "not a user-defined operation");
	ops[*op].in_use = false;
	*op = MPI_OP_NULL;
	return MPI_SUCCESS;
}

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
	if (op <= 0 || op >= OP_MAX || !ops[op].in_use)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_commutative", "invalid operation %d", op);
	*commute = ops[op].commute;
	return MPI_SUCCESS;
}

/* inoutbuf = inbuf op inoutbuf, element by element, on this process alone
 * (MPI-3.1 5.9.7). A type that is not one run at offset 0 goes through
 * packed images, as the reductions' combine does. */
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype dt, MPI_Op op)
{
	const char *fn = "MPI_Reduce_local";
	MPI_CHECK_INIT(fn);
	if (count < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_COUNT, fn, "count %d < 0", count);
	if (mpi_dtype_check(dt, count))
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid or uncommitted datatype %d", dt);
	int rc = mpi_op_check(op, dt);
	if (rc)
		return mpi_op_refused(MPI_COMM_WORLD, fn, op, dt, rc);
	if (count == 0)
		return MPI_SUCCESS;
	const void *bad = !inbuf || inbuf == MPI_IN_PLACE ? inbuf : inoutbuf;
	if (!bad || bad == MPI_IN_PLACE)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_BUFFER, fn, "%s is %s", bad == inbuf ? "inbuf" : "inoutbuf",
			       bad ? "MPI_IN_PLACE" : "NULL");
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (t->contig && t->lb == 0) {
		rc = mpi_op_apply(op, dt, inbuf, inoutbuf, count);
		return rc ? mpi_op_failed(MPI_COMM_WORLD, fn, op, dt, count, rc) : MPI_SUCCESS;
	}
	size_t len = t->size * (size_t)count;
	char *a = malloc(len ? len : 1), *b = malloc(len ? len : 1);
	if (!a || !b) {
		free(a);
		free(b);
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory for %zu bytes", 2 * len);
	}
	mpi_pack(t, inbuf, count, a);
	mpi_pack(t, inoutbuf, count, b);
	rc = mpi_op_apply(op, dt, a, b, count);
	if (!rc)
		mpi_unpack(t, inoutbuf, count, b, len);
	free(a);
	free(b);
	return rc ? mpi_op_failed(MPI_COMM_WORLD, fn, op, dt, count, rc) : MPI_SUCCESS;
}
