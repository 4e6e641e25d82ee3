/* mpi_external.c: MPI_Pack_external and friends, the "external32"
 * representation (MPI-3.1 13.5.2): each basic element big-endian at the
 * size the standard's table gives it, packed in type-map order with no
 * padding.
 *
 * The native packed form (mpi_dtype.c) is already the elements in
 * type-map order with no padding; external32 converts it element by
 * element: bytes turned around on a little-endian host (a complex's two
 * parts each on their own), long and unsigned long cut to 4 bytes and
 * wchar_t to 2 (and widened back, signed or not, on unpacking). long
 * double keeps the host's 80-bit value in its 16 bytes (external32 has an
 * IEEE quad there). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

/* How one basic element of a segment crosses: its native size, its
 * external32 size, the size of the parts turned around separately, and
 * whether it widens back with its sign. */
struct x32 {
	size_t native, ext, part;
	bool is_signed;
};

static struct x32 x32_of(const struct mpi_seg *sg)
{
	struct x32 x = { sg->esize, sg->esize, sg->esize, false };
	switch (sg->basic) {
	case MPI_LONG: case MPI_LONG_INT: /* a pair: its long part (the int part is 4 already) */
		x.is_signed = true;
		/* fall through */
	case MPI_UNSIGNED_LONG:
		if (sg->esize == sizeof(long))
			x.ext = x.part = 4;
		break;
	case MPI_WCHAR:
		x.ext = x.part = 2;
		break;
	case MPI_C_COMPLEX: case MPI_C_FLOAT_COMPLEX: case MPI_C_DOUBLE_COMPLEX: case MPI_C_LONG_DOUBLE_COMPLEX:
		x.part = sg->esize / 2;
		break;
	default:
		break;
	}
	return x;
}

static bool host_big_endian(void)
{
	const uint16_t one = 1;
	return *(const uint8_t *)&one == 0;
}

/* One element from native n to external e (to_ext) or back. Native
 * integers are little- or big-endian as the host; the narrowing keeps the
 * low bytes, the widening fills with the sign (or zeros). */
static void convert(const struct x32 *x, char *n, char *e, bool to_ext)
{
	bool big = host_big_endian();
	if (x->ext == x->native) { /* the same size: each part turned around */
		for (size_t o = 0; o < x->native; o += x->part)
			for (size_t i = 0; i < x->part; i++) {
				size_t j = big ? i : x->part - 1 - i;
				if (to_ext)
					e[o + i] = n[o + j];
				else
					n[o + j] = e[o + i];
			}
		return;
	}
	/* integer of native bytes <-> ext bytes, e big-endian: byte i of e is
	 * the (ext - 1 - i)-th least significant */
	for (size_t k = 0; k < x->ext; k++) { /* k: significance, 0 = least */
		size_t ni = big ? x->native - 1 - k : k;
		if (to_ext)
			e[x->ext - 1 - k] = n[ni];
		else
			n[ni] = e[x->ext - 1 - k];
	}
	if (!to_ext) {
		char fill = x->is_signed && (e[0] & 0x80) ? (char)0xff : 0;
		for (size_t k = x->ext; k < x->native; k++)
			n[big ? x->native - 1 - k : k] = fill;
	}
}

/* Walks count elements of t: native packed bytes at n, external32 at e;
 * returns the external32 bytes. With n or e NULL, only counts. */
static size_t walk(const struct mpi_dtype *t, int count, char *n, char *e, bool to_ext)
{
	size_t ebytes = 0;
	for (int i = 0; i < count; i++)
		for (size_t s = 0; s < t->nsegs; s++) {
			struct x32 x = x32_of(&t->segs[s]);
			for (size_t off = 0; off + x.native <= t->segs[s].len; off += x.native) {
				if (n && e)
					convert(&x, n, e + ebytes, to_ext);
				n = n ? n + x.native : NULL;
				ebytes += x.ext;
			}
		}
	return ebytes;
}

static int external_args(const char *fn, const char *datarep, MPI_Datatype dt, int count, MPI_Aint bufsize,
			 const MPI_Aint *position, struct mpi_dtype **t)
{
	MPI_CHECK_INIT(fn);
	if (!datarep || strcmp(datarep, "external32"))
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "data representation \"%s\" (only \"external32\")",
			       datarep ? datarep : "(null)");
	*t = mpi_dtype_get(dt);
	if (!*t || !(*t)->committed)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid or uncommitted datatype %d", dt);
	if (count < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_COUNT, fn, "count %d < 0", count);
	if (position) {
		size_t len = walk(*t, count, NULL, NULL, true);
		if (*position < 0 || *position > bufsize || len > (size_t)(bufsize - *position))
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_TRUNCATE, fn,
				       "%zu bytes at position %ld do not fit the %ld-byte buffer", len, (long)*position,
				       (long)bufsize);
	}
	return MPI_SUCCESS;
}

/* Both directions: the user's data (buf, count elements of the type)
 * through a native packed copy to or from external32 at ext + *position. */
static int external(const char *fn, const char *datarep, bool pack, void *buf, int count, MPI_Datatype dt,
		    char *ext, MPI_Aint size, MPI_Aint *position)
{
	struct mpi_dtype *t;
	int rc = external_args(fn, datarep, dt, count, size, position, &t);
	if (rc)
		return rc;
	size_t len = t->size * (size_t)count;
	char *native = malloc(len ? len : 1);
	if (!native)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "no memory for %zu bytes", len);
	if (pack)
		mpi_pack(t, buf, count, native);
	*position += (MPI_Aint)walk(t, count, native, ext + *position, pack);
	if (!pack)
		mpi_unpack(t, buf, count, native, len);
	free(native);
	return MPI_SUCCESS;
}

int PMPI_Pack_external(const char *datarep, const void *inbuf, int incount, MPI_Datatype dt, void *outbuf,
		       MPI_Aint outsize, MPI_Aint *position)
{
	return external("MPI_Pack_external", datarep, true, (void *)(uintptr_t)inbuf, incount, dt, outbuf, outsize,
			position);
}

/* The input stays as it is (const): only the native copy is written. */
int PMPI_Unpack_external(const char *datarep, const void *inbuf, MPI_Aint insize, MPI_Aint *position,
			 void *outbuf, int outcount, MPI_Datatype dt)
{
	return external("MPI_Unpack_external", datarep, false, outbuf, outcount, dt, (char *)(uintptr_t)inbuf, insize,
			position);
}

int PMPI_Pack_external_size(const char *datarep, int incount, MPI_Datatype dt, MPI_Aint *size)
{
	struct mpi_dtype *t;
	int rc = external_args("MPI_Pack_external_size", datarep, dt, incount, 0, NULL, &t);
	if (!rc)
		*size = (MPI_Aint)walk(t, incount, NULL, NULL, true);
	return rc;
}
