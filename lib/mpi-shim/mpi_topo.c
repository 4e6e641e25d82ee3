/* mpi_topo.c: Cartesian topologies (MPI-3.1 7.5): MPI_Cart_create and the
 * calls that read one (Cart_coords, Cart_rank, Cart_shift, Cart_get,
 * Cartdim_get, Cart_sub, Topo_test).
 *
 * A Cartesian communicator is an ordinary one (ranks in row-major order,
 * the same as the old communicator's: "reorder" is allowed to change
 * nothing, and on one host nothing would gain by it) that carries its
 * dimensions and periodicity. MPI_Comm_dup copies them (mpi_topo_copy). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

struct mpi_cart {
	int ndims;
	int dims[];  /* then periods[ndims] */
};

static int *periods_of(struct mpi_cart *t)
{
	return t->dims + t->ndims;
}

static struct mpi_cart *cart_new(int ndims, const int dims[], const int periods[])
{
	struct mpi_cart *t = malloc(sizeof *t + sizeof(int) * 2 * (size_t)(ndims ? ndims : 1));
	if (!t)
		return NULL;
	t->ndims = ndims;
	for (int i = 0; i < ndims; i++) {
		t->dims[i] = dims[i];
		periods_of(t)[i] = periods[i] != 0;
	}
	return t;
}

void mpi_topo_free(struct mpi_comm *c)
{
	free(c->cart);
	c->cart = NULL;
	mpi_graph_free(c);
}

int mpi_topo_copy(struct mpi_comm *to, const struct mpi_comm *from)
{
	if (!from->cart)
		return mpi_graph_copy(to, from);
	to->cart = cart_new(from->cart->ndims, from->cart->dims, from->cart->dims + from->cart->ndims);
	return to->cart ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

int mpi_topo_base(const char *fn, MPI_Comm comm, struct mpi_comm **c)
{
	MPI_CHECK_INIT(fn);
	*c = mpi_comm_get(comm);
	if (!*c || (*c)->inter)
		return mpi_err(*c ? comm : MPI_COMM_WORLD, MPI_ERR_COMM, fn, "%s communicator %d",
			       *c ? "an intercommunicator: no topology on" : "invalid", comm);
	return MPI_SUCCESS;
}

/* The communicator and its Cartesian structure, or the error to return. */
static int cart_arg(const char *fn, MPI_Comm comm, struct mpi_comm **c)
{
	MPI_CHECK_INIT(fn);
	*c = mpi_comm_get(comm);
	if (!*c)
		return mpi_err_comm(fn, comm);
	if (!(*c)->cart)
		return mpi_err(comm, MPI_ERR_TOPOLOGY, fn, "%s has no Cartesian topology", (*c)->name);
	return MPI_SUCCESS;
}

/* Row-major: the last dimension varies fastest. */
static void coords_of(const struct mpi_cart *t, int rank, int coords[])
{
	for (int i = t->ndims - 1; i >= 0; i--) {
		coords[i] = rank % t->dims[i];
		rank /= t->dims[i];
	}
}

/* The cells of the grid dims[0..ndims) that old's ranks fill, or the error. */
static int grid_cells(const char *fn, MPI_Comm comm_old, const struct mpi_comm *old, int ndims, const int dims[],
		      long *cells)
{
	if (ndims < 0)
		return mpi_err(comm_old, MPI_ERR_DIMS, fn, "ndims %d < 0", ndims);
	*cells = 1;
	for (int i = 0; i < ndims; i++) {
		if (dims[i] <= 0)
			return mpi_err(comm_old, MPI_ERR_DIMS, fn, "dims[%d] = %d", i, dims[i]);
		*cells *= dims[i];
		if (*cells > old->size)
			return mpi_err(comm_old, MPI_ERR_DIMS, fn, "the grid has more cells than %s has ranks (%d)",
				       old->name, old->size);
	}
	return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
		     MPI_Comm *comm_cart)
{
	(void)reorder;
	struct mpi_comm *old;
	long cells;
	int rc = mpi_topo_base("MPI_Cart_create", comm_old, &old);
	if (!rc)
		rc = grid_cells("MPI_Cart_create", comm_old, old, ndims, dims, &cells);
	if (rc)
		return rc;
	/* Ranks past the grid get MPI_COMM_NULL, as the standard says. */
	rc = PMPI_Comm_split(comm_old, old->rank < cells ? 0 : MPI_UNDEFINED, old->rank, comm_cart);
	if (rc || *comm_cart == MPI_COMM_NULL)
		return rc;
	struct mpi_comm *c = mpi_comm_get(*comm_cart);
	c->cart = cart_new(ndims, dims, periods);
	if (!c->cart) {
		PMPI_Comm_free(comm_cart);
		return mpi_err(comm_old, MPI_ERR_NO_MEM, "MPI_Cart_create", "out of memory");
	}
	return MPI_SUCCESS;
}

/* The rank MPI_Cart_create would give (ranks keep their order here), or
 * MPI_UNDEFINED past the grid. */
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
	(void)periods;
	struct mpi_comm *old;
	long cells;
	int rc = mpi_topo_base("MPI_Cart_map", comm, &old);
	if (!rc)
		rc = grid_cells("MPI_Cart_map", comm, old, ndims, dims, &cells);
	if (!rc)
		*newrank = old->rank < cells ? old->rank : MPI_UNDEFINED;
	return rc;
}

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
	struct mpi_comm *c;
	int rc = cart_arg("MPI_Cartdim_get", comm, &c);
	if (!rc)
		*ndims = c->cart->ndims;
	return rc;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
	struct mpi_comm *c;
	int rc = cart_arg("MPI_Cart_get", comm, &c);
	if (rc)
		return rc;
	struct mpi_cart *t = c->cart;
	if (maxdims < t->ndims)
		return mpi_err(comm, MPI_ERR_ARG, "MPI_Cart_get", "maxdims %d < %d dimensions", maxdims, t->ndims);
	int *mine = malloc(sizeof(int) * (size_t)(t->ndims ? t->ndims : 1));
	if (!mine)
		return mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Cart_get", "out of memory");
	coords_of(t, c->rank, mine);
	for (int i = 0; i < t->ndims; i++) {
		dims[i] = t->dims[i];
		periods[i] = periods_of(t)[i];
		coords[i] = mine[i];
	}
	free(mine);
	return MPI_SUCCESS;
}

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
	struct mpi_comm *c;
	int rc = cart_arg("MPI_Cart_coords", comm, &c);
	if (rc)
		return rc;
	if (rank < 0 || rank >= c->size)
		return mpi_err(comm, MPI_ERR_RANK, "MPI_Cart_coords", "rank %d not in %s (size %d)", rank, c->name,
			       c->size);
	if (maxdims < c->cart->ndims)
		return mpi_err(comm, MPI_ERR_ARG, "MPI_Cart_coords", "maxdims %d < %d dimensions", maxdims,
			       c->cart->ndims);
	coords_of(c->cart, rank, coords);
	return MPI_SUCCESS;
}

/* The rank at coords, wrapped in periodic dimensions; -1 if a coordinate
 * leaves a non-periodic one. */
static int rank_at(const struct mpi_cart *t, const int coords[])
{
	int rank = 0;
	for (int i = 0; i < t->ndims; i++) {
		int x = coords[i], d = t->dims[i];
		if (x < 0 || x >= d) {
			if (!periods_of((struct mpi_cart *)t)[i])
				return -1;
			x = (x % d + d) % d;
		}
		rank = rank * d + x;
	}
	return rank;
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
	struct mpi_comm *c;
	int rc = cart_arg("MPI_Cart_rank", comm, &c);
	if (rc)
		return rc;
	*rank = rank_at(c->cart, coords);
	if (*rank < 0)
		return mpi_err(comm, MPI_ERR_RANK, "MPI_Cart_rank", "coordinates outside a non-periodic dimension");
	return MPI_SUCCESS;
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
	struct mpi_comm *c;
	int rc = cart_arg("MPI_Cart_shift", comm, &c);
	if (rc)
		return rc;
	struct mpi_cart *t = c->cart;
	if (direction < 0 || direction >= t->ndims)
		return mpi_err(comm, MPI_ERR_ARG, "MPI_Cart_shift", "direction %d outside 0..%d", direction,
			       t->ndims - 1);
	int *x = malloc(sizeof(int) * (size_t)t->ndims);
	if (!x)
		return mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Cart_shift", "out of memory");
	coords_of(t, c->rank, x);
	int at = x[direction];
	x[direction] = at + disp;
	*rank_dest = rank_at(t, x);
	x[direction] = at - disp;
	*rank_source = rank_at(t, x);
	free(x);
	if (*rank_dest < 0)
		*rank_dest = MPI_PROC_NULL;
	if (*rank_source < 0)
		*rank_source = MPI_PROC_NULL;
	return MPI_SUCCESS;
}

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	struct mpi_comm *c;
	int rc = cart_arg("MPI_Cart_sub", comm, &c);
	if (rc)
		return rc;
	struct mpi_cart *t = c->cart;
	int n = t->ndims, kept = 0, color = 0;
	int *x = malloc(sizeof(int) * 3 * (size_t)(n ? n : 1));
	if (!x)
		return mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Cart_sub", "out of memory");
	int *dims = x + n, *periods = x + 2 * n;
	coords_of(t, c->rank, x);
	/* One communicator per position in the dropped dimensions; ranks in
	 * it keep their row-major order, which is the kept dimensions'. */
	for (int i = 0; i < n; i++) {
		if (remain_dims[i]) {
			dims[kept] = t->dims[i];
			periods[kept++] = periods_of(t)[i];
		} else {
			color = color * t->dims[i] + x[i];
		}
	}
	rc = PMPI_Comm_split(comm, color, c->rank, newcomm);
	if (!rc) {
		struct mpi_comm *s = mpi_comm_get(*newcomm);
		s->cart = cart_new(kept, dims, periods);
		if (!s->cart) {
			PMPI_Comm_free(newcomm);
			rc = mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Cart_sub", "out of memory");
		}
	}
	free(x);
	return rc;
}

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
	MPI_COMM_ARG("MPI_Topo_test", comm, c);
	*status = c->cart ? MPI_CART : mpi_graph_kind(c);
	return MPI_SUCCESS;
}

/* A Cartesian communicator's neighbours (MPI-3.1 7.6): per dimension the
 * rank below, then the rank above (MPI_PROC_NULL off a non-periodic
 * edge), as sources and as destinations. A block sent downwards arrives
 * at that rank from above: the tags say which way each went. */
int mpi_topo_nbrs(struct mpi_comm *c, struct mpi_nbrs *n)
{
	if (!c->cart)
		return c->graph ? mpi_graph_nbrs(c, n) : MPI_ERR_TOPOLOGY;
	const struct mpi_cart *t = c->cart;
	int k = 2 * t->ndims;
	int *a = malloc(sizeof(int) * (4 * (size_t)k + (size_t)t->ndims + 1)), *x = a + 4 * k;
	if (!a)
		return MPI_ERR_NO_MEM;
	*n = (struct mpi_nbrs){ k, k, a, a + k, a + 2 * k, a + 3 * k };
	coords_of(t, c->rank, x);
	for (int d = 0; d < t->ndims; d++) {
		int at = x[d];
		for (int up = 0; up < 2; up++) {
			x[d] = at + (up ? 1 : -1);
			int r = rank_at(t, x);
			n->in[2 * d + up] = n->out[2 * d + up] = r < 0 ? MPI_PROC_NULL : r;
			n->outtag[2 * d + up] = 2 * d + up;	/* the way it goes */
			n->intag[2 * d + up] = 2 * d + !up;	/* from below it went up */
		}
		x[d] = at;
	}
	return MPI_SUCCESS;
}
