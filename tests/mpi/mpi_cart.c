/* mpi_cart.c: Cartesian topologies as stencil codes use them: a grid from
 * MPI_Dims_create (balanced factors), row-major coordinates, shifts that wrap in periodic
 * dimensions and give MPI_PROC_NULL at the edges of the others, a halo
 * exchange over the shifts, sub-grids (rows), a duplicate that keeps the
 * topology, a grid smaller than the job, and the errors. */
#include "mpi_test.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int dims[2] = { 0, 0 }, periods[2] = { 1, 0 }, coords[2], r, status;
	MPI_Comm grid, dup, row;

	/* Dims_create: factors as close as they go, larger first; fixed
	 * entries kept. */
	struct { int n, nd, fixed1, want[3]; } dc[] = {
		{ 72, 2, 0, { 9, 8 } }, { 5040, 3, 0, { 21, 16, 15 } }, { 13, 2, 0, { 13, 1 } },
		{ 36, 3, 3, { 4, 3, 3 } }, { 1, 3, 0, { 1, 1, 1 } }, { 1 << 30, 3, 0, { 1024, 1024, 1024 } },
	};
	for (size_t k = 0; k < sizeof dc / sizeof dc[0]; k++) {
		int d[3] = { 0, dc[k].fixed1, 0 };
		OK(MPI_Dims_create(dc[k].n, dc[k].nd, d));
		CHECK(d[0] == dc[k].want[0] && (dc[k].nd < 2 || d[1] == dc[k].want[1]) &&
		      (dc[k].nd < 3 || d[2] == dc[k].want[2]), "Dims_create(%d, %d): %d %d %d", dc[k].n, dc[k].nd, d[0],
		      d[1], d[2]);
	}
	int bad[2] = { 5, 0 };
	t_fails_with(MPI_Dims_create(12, 2, bad), MPI_ERR_DIMS, "12 nodes do not divide by dims[0] = 5",
		     "Dims_create(12) with dims[0] = 5");
	OK(MPI_Dims_create(t_size, 2, dims));
	OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &grid));
	MPI_Comm_set_errhandler(grid, MPI_ERRORS_RETURN);
	OK(MPI_Comm_rank(grid, &r));
	CHECK(r == t_rank, "grid rank %d, world rank %d", r, t_rank);
	OK(MPI_Topo_test(grid, &status));
	CHECK(status == MPI_CART, "Topo_test of the grid: %d", status);
	OK(MPI_Topo_test(MPI_COMM_WORLD, &status));
	CHECK(status == MPI_UNDEFINED, "Topo_test of MPI_COMM_WORLD: %d", status);
	/* Row-major coordinates, and back. */
	for (int k = 0; k < t_size; k++) {
		int back = -1;
		OK(MPI_Cart_coords(grid, k, 2, coords));
		CHECK(coords[0] == k / dims[1] && coords[1] == k % dims[1], "rank %d at (%d, %d)", k, coords[0],
		      coords[1]);
		OK(MPI_Cart_rank(grid, coords, &back));
		CHECK(back == k, "coordinates of rank %d give rank %d", k, back);
	}
	int nd = 0, gd[2], gp[2], gc[2];
	OK(MPI_Cartdim_get(grid, &nd));
	OK(MPI_Cart_get(grid, 2, gd, gp, gc));
	CHECK(nd == 2 && gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0 &&
	      gc[0] == t_rank / dims[1] && gc[1] == t_rank % dims[1], "Cart_get: %d dims %dx%d periods %d %d at (%d, %d)",
	      nd, gd[0], gd[1], gp[0], gp[1], gc[0], gc[1]);
	/* Periodic dimension 0 wraps; dimension 1 ends in MPI_PROC_NULL. */
	int x = t_rank / dims[1], y = t_rank % dims[1], src, dst;
	OK(MPI_Cart_shift(grid, 0, 1, &src, &dst));
	CHECK(src == ((x + dims[0] - 1) % dims[0]) * dims[1] + y && dst == ((x + 1) % dims[0]) * dims[1] + y,
	      "shift 0 by 1: %d -> me -> %d", src, dst);
	OK(MPI_Cart_shift(grid, 1, 1, &src, &dst));
	CHECK(src == (y > 0 ? t_rank - 1 : MPI_PROC_NULL) && dst == (y < dims[1] - 1 ? t_rank + 1 : MPI_PROC_NULL),
	      "shift 1 by 1: %d -> me -> %d", src, dst);
	/* A halo exchange along dimension 1 delivers the left neighbour's rank. */
	int got = -7;
	OK(MPI_Sendrecv(&t_rank, 1, MPI_INT, dst, 3, &got, 1, MPI_INT, src, 3, grid, MPI_STATUS_IGNORE));
	CHECK(got == (src == MPI_PROC_NULL ? -7 : src), "halo from %d: %d", src, got);
	/* A coordinate outside a non-periodic dimension is an error; outside
	 * the periodic one it wraps. */
	int out[2] = { x, dims[1] }, wrap[2] = { -1, y };
	t_fails_with(MPI_Cart_rank(grid, out, &r), MPI_ERR_RANK, "coordinates outside a non-periodic dimension",
		     "Cart_rank past the last column");
	OK(MPI_Cart_rank(grid, wrap, &r));
	CHECK(r == (dims[0] - 1) * dims[1] + y, "row -1 wraps to rank %d", r);
	t_fails_with(MPI_Cart_shift(grid, 2, 1, &src, &dst), MPI_ERR_ARG, "direction 2 outside 0..1", "Cart_shift in dimension 2");
	/* A duplicate keeps the topology. */
	OK(MPI_Comm_dup(grid, &dup));
	OK(MPI_Topo_test(dup, &status));
	CHECK(status == MPI_CART, "Topo_test of a dup: %d", status);
	OK(MPI_Comm_free(&dup));
	/* Rows: dimension 1 kept; each row sums its members' ranks. */
	int keep[2] = { 0, 1 }, rsize, rrank, sum = 0, want = 0;
	OK(MPI_Cart_sub(grid, keep, &row));
	OK(MPI_Comm_size(row, &rsize));
	OK(MPI_Comm_rank(row, &rrank));
	CHECK(rsize == dims[1] && rrank == y, "row of size %d, rank %d", rsize, rrank);
	OK(MPI_Cartdim_get(row, &nd));
	CHECK(nd == 1, "a row has %d dimensions", nd);
	OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, row));
	for (int k = 0; k < dims[1]; k++)
		want += x * dims[1] + k;
	CHECK(sum == want, "row sum %d, want %d", sum, want);
	OK(MPI_Comm_free(&row));
	OK(MPI_Comm_free(&grid));
	/* A grid smaller than the job: the ranks past it get MPI_COMM_NULL. */
	int small = t_size > 1 ? t_size - 1 : 1, per = 0;
	MPI_Comm line;
	OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &small, &per, 0, &line));
	if (t_rank < small) {
		CHECK(line != MPI_COMM_NULL, "rank %d has no place in a line of %d", t_rank, small);
		if (line != MPI_COMM_NULL)
			OK(MPI_Comm_free(&line));
	} else {
		CHECK(line == MPI_COMM_NULL, "rank %d is past a line of %d but got a communicator", t_rank, small);
	}
	/* MPI_Cart_map: the rank MPI_Cart_create gives, MPI_UNDEFINED past the grid */
	int mapped = -5;
	OK(MPI_Cart_map(MPI_COMM_WORLD, 1, &small, &per, &mapped));
	CHECK(mapped == (t_rank < small ? t_rank : MPI_UNDEFINED), "Cart_map on a line of %d gave %d", small, mapped);
	/* Errors: more cells than ranks; a communicator without a topology. */
	int big = t_size + 1;
	t_fails_with(MPI_Cart_map(MPI_COMM_WORLD, 1, &big, &per, &mapped), MPI_ERR_DIMS, "the grid has more cells than",
		     "Cart_map with more cells than ranks");
	t_fails_with(MPI_Cart_create(MPI_COMM_WORLD, 1, &big, &per, 0, &line), MPI_ERR_DIMS,
		     "the grid has more cells than", "Cart_create with more cells than ranks");
	t_fails_with(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, coords), MPI_ERR_TOPOLOGY, "has no Cartesian topology",
		     "Cart_coords on MPI_COMM_WORLD");
	return t_finish("mpi_cart");
}
