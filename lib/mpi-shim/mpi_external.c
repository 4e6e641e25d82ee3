/* mpi_external.c: MPI_Pack_external and friends, the "external32"
 * representation (MPI-3.1 13.5.2): each basic element big-endian, packed
 * in type-map order with no padding.
 *
 * The native packed form (mpi_dtype.c) is already the elements in
 * type-map order with no padding, so external32 is that with each element's
 * bytes reversed on a little-endian host. Element sizes are the host's;
 * on x86-64 Linux they are external32's except long double (external32
 * has a 16-byte IEEE quad, ptl the x87 80-bit value in 16 bytes). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

static bool host_big_endian(void)
{
	const uint16_t one = 1;
	return *(const uint8_t *)&one == 0;
}

/* Reverses each basic element of count packed elements of t at p. */
static void swap_elements(const struct mpi_dtype *t, int count, char *p)
{
	if (host_big_endian())
		return;
	for (int i = 0; i < count; i++)
		for (size_t s = 0; s < t->nsegs; s++) {
			size_t es = t->segs[s].esize;
			for (size_t off = 0; off + es <= t->segs[s].len; off += es, p += es)
				for (size_t a = 0, b = es - 1; a < b; a++, b--) {
					char x = p[a];
					p[a] = p[b];
					p[b] = x;
				}
		}
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
		size_t len = (*t)->size * (size_t)count;
		if (*position < 0 || *position > bufsize || len > (size_t)(bufsize - *position))
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_TRUNCATE, fn,
				       "%zu bytes at position %ld do not fit the %ld-byte buffer", len, (long)*position,
				       (long)bufsize);
	}
	return MPI_SUCCESS;
}

int PMPI_Pack_external(const char *datarep, const void *inbuf, int incount, MPI_Datatype dt, void *outbuf,
		       MPI_Aint outsize, MPI_Aint *position)
{
	struct mpi_dtype *t;
	int rc = external_args("MPI_Pack_external", datarep, dt, incount, outsize, position, &t);
	if (rc)
		return rc;
	char *at = (char *)outbuf + *position;
	mpi_pack(t, inbuf, incount, at);
	swap_elements(t, incount, at);
	*position += (MPI_Aint)(t->size * (size_t)incount);
	return MPI_SUCCESS;
}

/* The input is the caller's (const): its elements are turned around in a
 * copy. */
int PMPI_Unpack_external(const char *datarep, const void *inbuf, MPI_Aint insize, MPI_Aint *position,
			 void *outbuf, int outcount, MPI_Datatype dt)
{
	struct mpi_dtype *t;
	int rc = external_args("MPI_Unpack_external", datarep, dt, outcount, insize, position, &t);
	if (rc)
		return rc;
	size_t len = t->size * (size_t)outcount;
	char *tmp = malloc(len ? len : 1);
	if (!tmp)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Unpack_external", "no memory for %zu bytes", len);
	memcpy(tmp, (const char *)inbuf + *position, len);
	swap_elements(t, outcount, tmp);
	mpi_unpack(t, outbuf, outcount, tmp, len);
	free(tmp);
	*position += (MPI_Aint)len;
	return MPI_SUCCESS;
}

int PMPI_Pack_external_size(const char *datarep, int incount, MPI_Datatype dt, MPI_Aint *size)
{
	struct mpi_dtype *t;
	int rc = external_args("MPI_Pack_external_size", datarep, dt, incount, 0, NULL, &t);
	if (!rc)
		*size = (MPI_Aint)(t->size * (size_t)incount);
	return rc;
}
