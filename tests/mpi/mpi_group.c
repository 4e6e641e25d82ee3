/* mpi_group.c: group constructors by rank ranges and set operations, with
 * their order rules (MPI-3.1 6.3.2): range_incl lists ranks in triplet
 * order, union is group 1 then group 2's new members, intersection and
 * difference keep group 1's order; translate_ranks maps through them; bad
 * ranges are errors naming the range. MPI_Comm_split_type groups the ranks
 * of a host. */
#include "mpi_test.h"

/* The world ranks of g's members, in g's order, into w (n of them). */
static int members(MPI_Group g, int *w)
{
	MPI_Group world;
	int n, r[64];

	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_size(g, &n);
	for (int i = 0; i < n; i++)
		r[i] = i;
	MPI_Group_translate_ranks(g, n, r, world, w);
	MPI_Group_free(&world);
	return n;
}

static void expect(MPI_Group g, int n, const int *want, const char *what)
{
	int w[64], got = members(g, w);
	int same = got == n;
	for (int i = 0; same && i < n; i++)
		same = w[i] == want[i];
	CHECK(same, "%s: %d members (%d %d %d ...), want %d (%d %d %d ...)", what, got, w[0], w[1], w[2], n,
	      n > 0 ? want[0] : -1, n > 1 ? want[1] : -1, n > 2 ? want[2] : -1);
}

/* The group g's communicator by MPI_Comm_create_group, called by g's
 * members only; checks its size, rank order and that it carries its own
 * messages: the same tag on MPI_COMM_WORLD does not match. */
static void create_group_of(MPI_Group g, int tag, const char *what)
{
	int grank, gsize;
	MPI_Group_rank(g, &grank);
	MPI_Group_size(g, &gsize);
	if (grank == MPI_UNDEFINED)
		return;
	MPI_Comm c;
	OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, tag, &c));
	if (c == MPI_COMM_NULL) {
		CHECK(0, "%s: a member got MPI_COMM_NULL", what);
		return;
	}
	int r, sz, sum = 0, want = 0;
	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &sz);
	CHECK(r == grank && sz == gsize, "%s: rank %d of %d, want %d of %d", what, r, sz, grank, gsize);
	OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, c));
	int w[64];
	members(g, w);
	for (int i = 0; i < gsize; i++)
		want += w[i];
	CHECK(sum == want, "%s: sum of world ranks %d, want %d", what, sum, want);
	if (gsize > 1 && r < 2) {
		/* rank 0 -> 1 on WORLD, then on c, same tag: 1 takes c's first */
		int peer = r == 0 ? w[1] : w[0], a = 0, b = 0;
		if (r == 0) {
			int x = 111, y = 222;
			OK(MPI_Send(&x, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
			OK(MPI_Send(&y, 1, MPI_INT, 1, 5, c));
		} else {
			OK(MPI_Recv(&b, 1, MPI_INT, 0, 5, c, MPI_STATUS_IGNORE));
			OK(MPI_Recv(&a, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(a == 111 && b == 222, "%s: messages crossed contexts (%d %d)", what, a, b);
		}
	}
	MPI_Comm_free(&c);
}

/* Ranks 0 .. n-2 create the group of every rank; rank n-1 never calls. */
static int nocall(void)
{
	MPI_Group world;
	MPI_Comm c = MPI_COMM_NULL;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	if (t_rank < t_size - 1) {
		/* on a ring (PTL_COLL_ALGO=ring) rank 0 waits for the last rank
		 * itself; the others wait for a rank that waits for it */
		char want[64];
		snprintf(want, sizeof want, "waiting for rank(s) %d:", t_rank ? t_rank - 1 : t_size - 1);
		int rc = MPI_Comm_create_group(MPI_COMM_WORLD, world, 9, &c);
		t_fails_with(rc, MPI_ERR_TIMEOUT, "MPI_Comm_create_group on MPI_COMM_WORLD, tag 9", "a member never calls");
		t_fails_with(rc, MPI_ERR_TIMEOUT, want, "the error names the rank waited for");
		CHECK(c == MPI_COMM_NULL, "a communicator came out of a failed MPI_Comm_create_group");
	}
	MPI_Group_free(&world);
	return t_finish("mpi_group nocall");
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	if (argc > 1 && !strcmp(argv[1], "nocall")) {
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		return nocall();
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int n = t_size;
	MPI_Group world, evens, odds, top, g;

	MPI_Comm_group(MPI_COMM_WORLD, &world);
	/* Evens ascending, odds descending, the top half. */
	int ev[1][3] = { { 0, n - 1, 2 } };
	int last_odd = (n - 1) % 2 ? n - 1 : n - 2;
	int od[1][3] = { { last_odd, 1, -2 } };
	int hi[1][3] = { { n / 2, n - 1, 1 } };
	int want[64] = { 0 }, k = 0;
	OK(MPI_Group_range_incl(world, 1, ev, &evens));
	for (int r = 0; r < n; r += 2)
		want[k++] = r;
	expect(evens, k, want, "range_incl(0, n-1, 2)");
	if (n > 1) {
		OK(MPI_Group_range_incl(world, 1, od, &odds));
		k = 0;
		for (int r = last_odd; r >= 1; r -= 2)
			want[k++] = r;
		expect(odds, k, want, "range_incl(last odd, 1, -2)");
	} else {
		odds = MPI_GROUP_EMPTY;
	}
	OK(MPI_Group_range_incl(world, 1, hi, &top));
	/* range_excl of the top half leaves the bottom half in order. */
	OK(MPI_Group_range_excl(world, 1, hi, &g));
	k = 0;
	for (int r = 0; r < n / 2; r++)
		want[k++] = r;
	expect(g, k, want, "range_excl(top half)");
	MPI_Group_free(&g);
	/* union: group 1's order, then group 2's new members in its order. */
	OK(MPI_Group_union(odds, evens, &g));
	k = 0;
	for (int r = last_odd; n > 1 && r >= 1; r -= 2)
		want[k++] = r;
	for (int r = 0; r < n; r += 2)
		want[k++] = r;
	expect(g, k, want, "union(odds, evens)");
	MPI_Group_free(&g);
	/* intersection and difference keep group 1's order. */
	OK(MPI_Group_intersection(top, evens, &g));
	k = 0;
	for (int r = n / 2; r < n; r++)
		if (r % 2 == 0)
			want[k++] = r;
	expect(g, k, want, "intersection(top, evens)");
	MPI_Group_free(&g);
	OK(MPI_Group_difference(top, evens, &g));
	k = 0;
	for (int r = n / 2; r < n; r++)
		if (r % 2)
			want[k++] = r;
	expect(g, k, want, "difference(top, evens)");
	MPI_Group_free(&g);
	/* Disjoint: empty intersection is MPI_GROUP_EMPTY; difference with itself too. */
	OK(MPI_Group_intersection(evens, odds, &g));
	CHECK(g == MPI_GROUP_EMPTY, "intersection of evens and odds is not MPI_GROUP_EMPTY");
	OK(MPI_Group_difference(world, world, &g));
	CHECK(g == MPI_GROUP_EMPTY, "difference of world with itself is not MPI_GROUP_EMPTY");
	/* translate_ranks: a member's rank, MPI_UNDEFINED for others, PROC_NULL kept. */
	int in[3] = { 0, MPI_PROC_NULL, n - 1 }, out[3];
	OK(MPI_Group_translate_ranks(world, 3, in, evens, out));
	CHECK(out[0] == 0 && out[1] == MPI_PROC_NULL &&
	      out[2] == ((n - 1) % 2 == 0 ? (n - 1) / 2 : MPI_UNDEFINED),
	      "translated to %d %d %d", out[0], out[1], out[2]);
	/* Errors: stride 0, a rank outside, a rank twice. */
	int zero[1][3] = { { 0, 0, 0 } }, outside[1][3] = { { 0, n, 1 } }, twice[2][3] = { { 0, 0, 1 }, { 0, 0, 1 } };
	t_fails_with(MPI_Group_range_incl(world, 1, zero, &g), MPI_ERR_ARG, "range 0 has stride 0", "stride 0");
	t_fails_with(MPI_Group_range_excl(world, 1, outside, &g), MPI_ERR_RANK, "leaves the group", "a rank outside");
	t_fails_with(MPI_Group_range_incl(world, 2, twice, &g), MPI_ERR_RANK, "twice",
		     "rank 0 twice");
	/* A communicator from a range group works. */
	MPI_Comm c;
	OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &c));
	if (t_rank % 2 == 0) {
		int sum = 0, r;
		MPI_Comm_rank(c, &r);
		CHECK(r == t_rank / 2, "rank %d in the evens' communicator", r);
		OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, c));
		int s = 0;
		for (int x = 0; x < n; x += 2)
			s += x;
		CHECK(sum == s, "sum over evens %d, want %d", sum, s);
		MPI_Comm_free(&c);
	} else {
		CHECK(c == MPI_COMM_NULL, "an odd rank got a communicator");
	}
	/* Comm_create_group: evens and odds (disjoint, the same tag, at once),
	 * then all ranks in reverse order; outside ranks return at once. */
	create_group_of(evens, 3, "create_group(evens)");
	if (odds != MPI_GROUP_EMPTY)
		create_group_of(odds, 3, "create_group(odds)");
	int *rev = malloc(sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++)
		rev[i] = n - 1 - i;
	MPI_Group backwards;
	OK(MPI_Group_incl(world, n, rev, &backwards));
	free(rev);
	create_group_of(backwards, 4, "create_group(reversed)");
	MPI_Comm none = MPI_COMM_WORLD;
	if (t_rank % 2) {
		OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 3, &none));
		CHECK(none == MPI_COMM_NULL, "a rank outside the group got a communicator");
	}
	t_fails_with(MPI_Comm_create_group(MPI_COMM_WORLD, 4242, 0, &none), MPI_ERR_GROUP, "invalid group 4242",
		     "create_group of a bad group");
	t_fails_with(MPI_Comm_create_group(MPI_COMM_WORLD, backwards, -1, &none), MPI_ERR_TAG, "invalid tag -1",
		     "create_group with tag -1");
	t_fails_with(MPI_Comm_create_group(MPI_COMM_WORLD, backwards, 0, NULL), MPI_ERR_ARG, "newcomm is NULL",
		     "create_group without newcomm");
	t_fails_with(MPI_Comm_create_group(MPI_COMM_NULL, backwards, 0, &none), MPI_ERR_COMM, "invalid communicator",
		     "create_group on MPI_COMM_NULL");
	if (n > 1) {
		/* the world's group is no subset of the evens' communicator */
		MPI_Comm ec;
		OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, 0, &ec));
		MPI_Comm_set_errhandler(ec, MPI_ERRORS_RETURN);
		t_fails_with(MPI_Comm_create_group(ec, world, 0, &none), MPI_ERR_GROUP, "not a subset",
			     "create_group of a larger group");
		MPI_Comm_free(&ec);
	}
	MPI_Group_free(&backwards);
	/* Comm_split_type(SHARED): every rank of a ptlrun job is on this host,
	 * so one communicator of all, ordered by key. */
	MPI_Comm node;
	int nsize, nrank;
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, n - t_rank, MPI_INFO_NULL, &node));
	OK(MPI_Comm_size(node, &nsize));
	OK(MPI_Comm_rank(node, &nrank));
	CHECK(nsize == n && nrank == n - 1 - t_rank, "node communicator: size %d, rank %d", nsize, nrank);
	OK(MPI_Comm_free(&node));
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &node));
	CHECK(node == MPI_COMM_NULL, "split type MPI_UNDEFINED gave a communicator");
	t_fails_with(MPI_Comm_split_type(MPI_COMM_WORLD, 77, 0, MPI_INFO_NULL, &node), MPI_ERR_ARG, "split type 77",
		     "split type 77");
	MPI_Group_free(&evens);
	if (odds != MPI_GROUP_EMPTY)
		MPI_Group_free(&odds);
	MPI_Group_free(&top);
	MPI_Group_free(&world);
	return t_finish("mpi_group");
}
