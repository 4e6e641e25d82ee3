/* mpi_comm: communicators and groups, and isolation: the same source and
 * tag on two communicators never match each other's messages. */
#include "mpi_test.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	MPI_Comm dup, half, sub;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	int res;
	OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
	CHECK(res == MPI_CONGRUENT, "compare dup %d", res);
	OK(MPI_Comm_compare(dup, dup, &res));
	CHECK(res == MPI_IDENT, "compare self %d", res);
	/* isolation: send on dup first, then on world, same tag; receive world first */
	if (t_size > 1) {
		int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
		int a = 1, b = 2, x = 0, y = 0;
		MPI_Request rq[2];
		OK(MPI_Isend(&a, 1, MPI_INT, right, 7, dup, &rq[0]));
		OK(MPI_Isend(&b, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &rq[1]));
		OK(MPI_Recv(&y, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, MPI_STATUS_IGNORE));
		OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
		CHECK(x == 1 && y == 2, "isolation: world got %d, dup got %d", y, x);
	}
	/* collectives on dup and world interleaved */
	int v = t_rank, s1, s2;
	OK(MPI_Allreduce(&v, &s1, 1, MPI_INT, MPI_SUM, dup));
	OK(MPI_Allreduce(&v, &s2, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(s1 == s2 && s1 == t_size * (t_size - 1) / 2, "sums %d %d", s1, s2);
	/* split by parity, reversed key */
	OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, -t_rank, &half));
	int hr, hs;
	MPI_Comm_rank(half, &hr);
	MPI_Comm_size(half, &hs);
	CHECK(hs == (t_size + 1 - t_rank % 2) / 2, "split size %d", hs);
	int sum;
	OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_MAX, half));
	CHECK(hr == (sum - t_rank) / 2, "split rank %d (max %d)", hr, sum);
	MPI_Comm none;
	OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank == 0 ? MPI_UNDEFINED : 1, 0, &none));
	CHECK((t_rank == 0) == (none == MPI_COMM_NULL), "UNDEFINED color");
	if (none != MPI_COMM_NULL)
		OK(MPI_Comm_free(&none));
	/* groups: the even ranks */
	MPI_Group world, evens, odds;
	OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
	int ne = (t_size + 1) / 2, *r = malloc(sizeof(int) * (size_t)ne);
	for (int i = 0; i < ne; i++)
		r[i] = 2 * i;
	OK(MPI_Group_incl(world, ne, r, &evens));
	OK(MPI_Group_excl(world, ne, r, &odds));
	int gs, gr;
	MPI_Group_size(evens, &gs);
	MPI_Group_rank(evens, &gr);
	CHECK(gs == ne && gr == (t_rank % 2 ? MPI_UNDEFINED : t_rank / 2), "group size %d rank %d", gs, gr);
	int from[2] = { 0, ne - 1 }, to[2];
	OK(MPI_Group_translate_ranks(evens, 2, from, world, to));
	CHECK(to[0] == 0 && to[1] == 2 * (ne - 1), "translate %d %d", to[0], to[1]);
	OK(MPI_Group_compare(world, evens, &res));
	CHECK(res == (t_size == 1 ? MPI_IDENT : MPI_UNEQUAL), "group compare %d", res);
	OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &sub));
	CHECK((t_rank % 2 == 0) == (sub != MPI_COMM_NULL), "comm_create membership");
	if (sub != MPI_COMM_NULL) {
		int ss;
		MPI_Comm_size(sub, &ss);
		CHECK(ss == ne, "sub size %d", ss);
		OK(MPI_Barrier(sub));
		int b = t_rank == 0 ? 99 : 0;
		OK(MPI_Bcast(&b, 1, MPI_INT, 0, sub));
		CHECK(b == 99, "bcast on sub %d", b);
		OK(MPI_Comm_free(&sub));
	}
	OK(MPI_Group_free(&evens));
	OK(MPI_Group_free(&odds));
	OK(MPI_Group_free(&world));
	/* COMM_SELF */
	int me = -1, one = 5, got = 0;
	MPI_Comm_rank(MPI_COMM_SELF, &me);
	CHECK(me == 0, "self rank %d", me);
	OK(MPI_Sendrecv(&one, 1, MPI_INT, 0, 0, &got, 1, MPI_INT, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE));
	CHECK(got == 5, "self sendrecv %d", got);
	OK(MPI_Allreduce(&one, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
	CHECK(got == 5, "self allreduce %d", got);
	OK(MPI_Comm_free(&dup));
	OK(MPI_Comm_free(&half));
	free(r);
	return t_finish("mpi_comm");
}
