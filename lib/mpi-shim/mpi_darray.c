/* mpi_darray.c: MPI_Type_create_darray (MPI-3.1 4.1.4), the part of a
 * distributed array one process holds: along each dimension the indices
 * its coordinate in the process grid owns (block, cyclic, or all of
 * them), laid out by mpi_dtype_grid like a subarray. The process grid is
 * row-major whatever the array's order. */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

/* The indices of 0..g) a process at coordinate c of p owns, into out;
 * their number, or -1 (with *why) if the distribution cannot be. */
static int owned(int distrib, int darg, int g, int p, int c, int *out, const char **why)
{
	int n = 0;
	switch (distrib) {
	case MPI_DISTRIBUTE_NONE:
		if (p != 1)
			return *why = "MPI_DISTRIBUTE_NONE over more than one process", -1;
		for (int i = 0; i < g; i++)
			out[n++] = i;
		return n;
	case MPI_DISTRIBUTE_BLOCK: {
		long b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
		if (b <= 0 || b * p < g)
			return *why = "a block size that leaves elements to no process", -1;
		for (long i = (long)c * b; i < (long)(c + 1) * b && i < g; i++)
			out[n++] = (int)i;
		return n;
	}
	case MPI_DISTRIBUTE_CYCLIC: {
		long b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
		if (b <= 0)
			return *why = "a cyclic block size < 1", -1;
		for (long s = (long)c * b; s < g; s += (long)p * b)
			for (long i = s; i < s + b && i < g; i++)
				out[n++] = (int)i;
		return n;
	}
	default:
		return *why = "an unknown distribution", -1;
	}
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
			    const int dargs[], const int psizes[], int order, MPI_Datatype old, MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_create_darray";
	MPI_CHECK_INIT(fn);
	if (!mpi_dtype_get(old))
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", old);
	if (ndims <= 0 || size <= 0 || rank < 0 || rank >= size)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "ndims %d, rank %d of %d", ndims, rank, size);
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN",
			       order);
	long procs = 1, total = 1, all = 0;
	for (int d = 0; d < ndims; d++) {
		if (gsizes[d] <= 0 || psizes[d] <= 0)
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "dimension %d: gsize %d over %d processes", d,
				       gsizes[d], psizes[d]);
		procs *= psizes[d];
		total *= gsizes[d];
		all += gsizes[d];
		if (total > INT_MAX || procs > size)
			break;
	}
	if (procs != size || total > INT_MAX)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, total > INT_MAX ? "the array has more than %d elements"
						  : "the process grid does not have %d processes", total > INT_MAX ? INT_MAX : size);
	/* the envelope's ints (size, rank, ndims, gsizes[], distribs[], dargs[],
	 * psizes[], order), then each dimension's owned indices */
	size_t ni = 4 + 4 * (size_t)ndims;
	int *ints = malloc(sizeof(int) * (ni + (size_t)all));
	int **own = malloc(sizeof(int *) * (size_t)ndims), *n = malloc(sizeof(int) * (size_t)ndims);
	int rc = MPI_SUCCESS;
	if (!ints || !own || !n)
		rc = mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
	if (!rc) {
		ints[0] = size, ints[1] = rank, ints[2] = ndims;
		memcpy(ints + 3, gsizes, sizeof(int) * (size_t)ndims);
		memcpy(ints + 3 + ndims, distribs, sizeof(int) * (size_t)ndims);
		memcpy(ints + 3 + 2 * ndims, dargs, sizeof(int) * (size_t)ndims);
		memcpy(ints + 3 + 3 * ndims, psizes, sizeof(int) * (size_t)ndims);
		ints[3 + 4 * ndims] = order;
	}
	int *next = ints ? ints + ni : NULL, left = rank;
	for (int d = ndims - 1; !rc && d >= 0; d--) { /* row-major grid: the last coordinate varies fastest */
		int c = left % psizes[d];
		left /= psizes[d];
		const char *why = NULL;
		own[d] = next;
		n[d] = owned(distribs[d], dargs[d], gsizes[d], psizes[d], c, own[d], &why);
		if (n[d] < 0)
			rc = mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "dimension %d: %s (gsize %d, darg %d, %d processes)",
				     d, why, gsizes[d], dargs[d], psizes[d]);
		next += gsizes[d];
	}
	if (!rc)
		rc = mpi_dtype_grid(fn, ndims, gsizes, order, own, n, old, newtype, MPI_COMBINER_DARRAY, (int)ni, ints);
	free(ints);
	free(own);
	free(n);
	return rc;
}
