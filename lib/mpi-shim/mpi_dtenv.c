/* mpi_dtenv.c: how a derived datatype was made (MPI-3.1 4.1.13):
 * MPI_Type_get_envelope and MPI_Type_get_contents.
 *
 * Each constructor of mpi_dtype.c records its combiner and arguments as
 * the standard lists them (mpi_dtype_envelope; a constructor built on
 * another one records last, so the outer call is what is kept), holding
 * the types it was made of, so they outlive MPI_Type_free of their
 * handles. MPI_Type_get_contents gives such a type back under a new handle
 * of its own, which the caller frees; a predefined one as itself. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

struct mpi_dtype_env {
	int combiner;
	int ni, na, nd;
	int *ints;
	MPI_Aint *aints;
	struct mpi_dtype **types;
	/* then the arrays */
};

void mpi_dtype_env_free(struct mpi_dtype *t)
{
	struct mpi_dtype_env *e = t->env;
	if (!e)
		return;
	t->env = NULL;
	for (int i = 0; i < e->nd; i++)
		mpi_dtype_release(e->types[i]);
	free(e);
}

int mpi_dtype_envelope(MPI_Datatype h, int combiner, int ni, const int *ints, int na, const MPI_Aint *aints, int nd,
		       const MPI_Datatype *dts)
{
	struct mpi_dtype *t = mpi_dtype_get(h);
	size_t bytes = sizeof(struct mpi_dtype_env) + sizeof(MPI_Aint) * (size_t)na +
		       sizeof(struct mpi_dtype *) * (size_t)nd + sizeof(int) * (size_t)ni;
	struct mpi_dtype_env *e = malloc(bytes);
	if (!t || !e) {
		free(e);
		return MPI_ERR_NO_MEM;
	}
	/* aints first: the most aligned */
	e->aints = (MPI_Aint *)(e + 1);
	e->types = (struct mpi_dtype **)(e->aints + na);
	e->ints = (int *)(e->types + nd);
	e->combiner = combiner;
	e->ni = ni;
	e->na = na;
	e->nd = nd;
	if (ni)
		memcpy(e->ints, ints, sizeof(int) * (size_t)ni);
	if (na)
		memcpy(e->aints, aints, sizeof(MPI_Aint) * (size_t)na);
	for (int i = 0; i < nd; i++)
		e->types[i] = mpi_dtype_hold(mpi_dtype_get(dts[i]));
	mpi_dtype_env_free(t);	/* an inner constructor's record */
	t->env = e;
	return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype dt, int *num_integers, int *num_addresses, int *num_datatypes,
			   int *combiner)
{
	MPI_CHECK_INIT("MPI_Type_get_envelope");
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_get_envelope", "invalid datatype %d", dt);
	const struct mpi_dtype_env *e = t->env;
	*num_integers = e ? e->ni : 0;
	*num_addresses = e ? e->na : 0;
	*num_datatypes = e ? e->nd : 0;
	*combiner = e ? e->combiner : MPI_COMBINER_NAMED;
	return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype dt, int max_integers, int max_addresses, int max_datatypes,
			   int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
	static const char fn[] = "MPI_Type_get_contents";
	MPI_CHECK_INIT(fn);
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", dt);
	const struct mpi_dtype_env *e = t->env;
	if (!e)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "%s is predefined: it has no contents", t->name);
	if (max_integers < e->ni || max_addresses < e->na || max_datatypes < e->nd)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn,
			       "room for %d integers, %d addresses, %d datatypes; the type has %d, %d, %d", max_integers,
			       max_addresses, max_datatypes, e->ni, e->na, e->nd);
	for (int i = 0; i < e->nd; i++) {
		array_of_datatypes[i] = mpi_dtype_new_handle(e->types[i]);
		if (array_of_datatypes[i] == MPI_DATATYPE_NULL) {
			while (i-- > 0)
				if (!e->types[i]->predefined)
					PMPI_Type_free(&array_of_datatypes[i]);
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of datatype handles");
		}
	}
	if (e->ni)
		memcpy(array_of_integers, e->ints, sizeof(int) * (size_t)e->ni);
	if (e->na)
		memcpy(array_of_addresses, e->aints, sizeof(MPI_Aint) * (size_t)e->na);
	return MPI_SUCCESS;
}
