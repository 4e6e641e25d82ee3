/* mpi_status.c: what a status says in elements, and what a program may
 * set in one (for requests it completes itself); a type's size and
 * extents, in int/MPI_Aint and MPI_Count (_x) forms.
 *
 * A status holds the bytes received (ptl_count); elements are counted from
 * the datatype's segments, each of which holds basic elements of one size. */
#include "config.h"

#include <limits.h>

#include "mpi_impl.h"

/* Basic elements in the first `bytes` of a packed stream of t. */
static MPI_Count elems_in(const struct mpi_dtype *t, size_t bytes, bool *partial)
{
	MPI_Count n = 0;
	for (size_t s = 0; s < t->nsegs && bytes; s++) {
		size_t take = t->segs[s].len < bytes ? t->segs[s].len : bytes;
		size_t es = t->segs[s].esize;
		n += (MPI_Count)(take / es);
		if (take % es)
			*partial = true;
		bytes -= take;
	}
	return n;
}

/* Bytes that hold the first n basic elements of a stream of t. */
static size_t bytes_of(const struct mpi_dtype *t, MPI_Count n)
{
	bool partial = false;
	MPI_Count per = elems_in(t, t->size, &partial);
	size_t bytes = per ? (size_t)(n / per) * t->size : 0;
	n = per ? n % per : 0;
	for (size_t s = 0; s < t->nsegs && n > 0; s++) {
		MPI_Count here = (MPI_Count)(t->segs[s].len / t->segs[s].esize);
		MPI_Count take = here < n ? here : n;
		bytes += (size_t)take * t->segs[s].esize;
		n -= take;
	}
	return bytes;
}

static int elements(const char *fn, const MPI_Status *st, MPI_Datatype dt, MPI_Count *count)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", dt);
	if (!st)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "status is NULL");
	if (t->size == 0) {
		*count = 0;
		return MPI_SUCCESS;
	}
	size_t bytes = (size_t)st->ptl_count;
	bool partial = false;
	MPI_Count n = (MPI_Count)(bytes / t->size) * elems_in(t, t->size, &partial) +
		      elems_in(t, bytes % t->size, &partial);
	*count = partial ? MPI_UNDEFINED : n;
	return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status *st, MPI_Datatype dt, int *count)
{
	MPI_Count n = 0;
	int rc = elements("MPI_Get_elements", st, dt, &n);
	if (!rc)
		*count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
	return rc;
}

int PMPI_Get_elements_x(const MPI_Status *st, MPI_Datatype dt, MPI_Count *count)
{
	return elements("MPI_Get_elements_x", st, dt, count);
}

static int set_elements(const char *fn, MPI_Status *st, MPI_Datatype dt, MPI_Count count)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", dt);
	if (!st)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "status is NULL");
	if (count < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_COUNT, fn, "count %lld < 0", (long long)count);
	st->ptl_count = (long long)bytes_of(t, count);
	return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *st, MPI_Datatype dt, int count)
{
	return set_elements("MPI_Status_set_elements", st, dt, count);
}

int PMPI_Status_set_elements_x(MPI_Status *st, MPI_Datatype dt, MPI_Count count)
{
	return set_elements("MPI_Status_set_elements_x", st, dt, count);
}

int PMPI_Status_set_cancelled(MPI_Status *st, int flag)
{
	if (!st)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_cancelled", "status is NULL");
	st->ptl_cancelled = flag != 0;
	return MPI_SUCCESS;
}

/* A type's size, or its extent (true: its true extent) as lb and extent. */
static int query(const char *fn, MPI_Datatype dt, MPI_Count *size, MPI_Count *lb, MPI_Count *extent, bool true_ext)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", dt);
	if (size)
		*size = (MPI_Count)t->size;
	if (lb) {
		*lb = true_ext ? t->true_lb : t->lb;
		*extent = true_ext ? t->true_ub - t->true_lb : t->extent;
	}
	return MPI_SUCCESS;
}

int PMPI_Type_size(MPI_Datatype dt, int *size)
{
	MPI_Count n = 0;
	int rc = query("MPI_Type_size", dt, &n, NULL, NULL, false);
	if (!rc)
		*size = n > INT_MAX ? MPI_UNDEFINED : (int)n;
	return rc;
}

int PMPI_Type_size_x(MPI_Datatype dt, MPI_Count *size)
{
	return query("MPI_Type_size_x", dt, size, NULL, NULL, false);
}

static int extent_of(const char *fn, MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent, bool true_ext)
{
	MPI_Count l = 0, e = 0;
	int rc = query(fn, dt, NULL, &l, &e, true_ext);
	if (!rc)
		*lb = (MPI_Aint)l, *extent = (MPI_Aint)e;
	return rc;
}

int PMPI_Type_get_extent(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent)
{
	return extent_of("MPI_Type_get_extent", dt, lb, extent, false);
}

int PMPI_Type_get_true_extent(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent)
{
	return extent_of("MPI_Type_get_true_extent", dt, lb, extent, true);
}

/* MPI-1's queries (mpi.h): the extent, and its bounds, of MPI_Type_get_extent */
int PMPI_Type_extent(MPI_Datatype dt, MPI_Aint *extent)
{
	MPI_Aint lb;
	return extent_of("MPI_Type_extent", dt, &lb, extent, false);
}

int PMPI_Type_lb(MPI_Datatype dt, MPI_Aint *displacement)
{
	MPI_Aint extent;
	return extent_of("MPI_Type_lb", dt, displacement, &extent, false);
}

int PMPI_Type_ub(MPI_Datatype dt, MPI_Aint *displacement)
{
	MPI_Aint lb, extent;
	int rc = extent_of("MPI_Type_ub", dt, &lb, &extent, false);
	if (!rc)
		*displacement = lb + extent;
	return rc;
}

int PMPI_Type_get_extent_x(MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent)
{
	return query("MPI_Type_get_extent_x", dt, NULL, lb, extent, false);
}

int PMPI_Type_get_true_extent_x(MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent)
{
	return query("MPI_Type_get_true_extent_x", dt, NULL, lb, extent, true);
}
