/* mpi_idup: MPI_Comm_idup (any number of ranks; the overlap case needs 3).
 *
 * - One duplicate: usable once its request completes, isolated from its
 *   parent (a message on one is not received on the other), with the
 *   parent's attributes copied and its error handler.
 * - Three under way on one communicator at once, completed by Waitall in
 *   reverse order: three communicators, none receiving another's messages.
 * - Overlap (ranks 0-2): rank 0 starts an idup on {0,1}, then makes a
 *   blocking duplicate of {0,2} while it is under way; ranks 1 and 2 made
 *   communicators of their own first, so their counters are ahead, and
 *   rank 1 joins the idup only once {0,2}'s duplicate is made: the first
 *   round's maximum of the idup is then the id {0,2}'s duplicate took at
 *   rank 0. If both duplicates kept that id, rank 0's MPI_ANY_SOURCE
 *   receive on the duplicate of {0,2} would take the message rank 1 sent
 *   first on the duplicate of {0,1}.
 * - Refusals: a NULL newcomm or request, an invalid communicator, an
 *   intercommunicator. */
#include "mpi_test.h"

static int copies;

static int count_copy(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
	(void)c, (void)key, (void)extra;
	copies++;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

/* A message of value v on a, then one of v + 1 on b, from every rank to
 * the next; received on b first: each must get its own. */
static void isolated(MPI_Comm a, MPI_Comm b, int v, const char *what)
{
	int n, me;
	MPI_Comm_size(a, &n);
	MPI_Comm_rank(a, &me);
	int to = (me + 1) % n, from = (me + n - 1) % n, sa = v, sb = v + 1, ra = -1, rb = -1;
	MPI_Request s[2];
	OK(MPI_Isend(&sa, 1, MPI_INT, to, 7, a, &s[0]));
	OK(MPI_Isend(&sb, 1, MPI_INT, to, 7, b, &s[1]));
	OK(MPI_Recv(&rb, 1, MPI_INT, from, 7, b, MPI_STATUS_IGNORE));
	OK(MPI_Recv(&ra, 1, MPI_INT, from, 7, a, MPI_STATUS_IGNORE));
	OK(MPI_Waitall(2, s, MPI_STATUSES_IGNORE));
	CHECK(ra == v && rb == v + 1, "%s: got %d and %d, want %d and %d", what, ra, rb, v, v + 1);
}

static void one(void)
{
	MPI_Comm parent, d = MPI_COMM_WORLD;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
	OK(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN));
	int key;
	OK(MPI_Comm_create_keyval(count_copy, MPI_COMM_NULL_DELETE_FN, &key, NULL));
	OK(MPI_Comm_set_attr(parent, key, &copies));
	MPI_Request r;
	OK(MPI_Comm_idup(parent, &d, &r));
	OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK(r == MPI_REQUEST_NULL && d != MPI_COMM_NULL, "request %d, comm %d", r, d);
	int n = -1, me = -1, res = 0, flag = 0;
	void *val = NULL;
	MPI_Errhandler eh;
	OK(MPI_Comm_size(d, &n));
	OK(MPI_Comm_rank(d, &me));
	CHECK(n == t_size && me == t_rank, "size %d rank %d", n, me);
	OK(MPI_Allreduce(&me, &res, 1, MPI_INT, MPI_SUM, d));
	CHECK(res == t_size * (t_size - 1) / 2, "sum of ranks %d", res);
	OK(MPI_Comm_get_attr(d, key, &val, &flag));
	CHECK(flag && val == &copies && copies == 1, "attribute: flag %d, copies %d", flag, copies);
	OK(MPI_Comm_get_errhandler(d, &eh));
	CHECK(eh == MPI_ERRORS_RETURN, "error handler %d not the parent's", eh);
	isolated(parent, d, 10, "parent and duplicate");
	OK(MPI_Comm_free(&d));
	OK(MPI_Comm_free_keyval(&key));
	OK(MPI_Comm_free(&parent));
}

static void several(void)
{
	MPI_Comm d[3];
	MPI_Request r[3];
	for (int i = 0; i < 3; i++)
		OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &d[i], &r[i]));
	for (int i = 2; i >= 0; i--)
		OK(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			isolated(d[i], d[j], 100 * i + 10 * j, "two of three duplicates under way together");
	for (int i = 0; i < 3; i++)
		OK(MPI_Comm_free(&d[i]));
	/* MPI_COMM_SELF: one member, no message */
	MPI_Comm s;
	MPI_Request q;
	OK(MPI_Comm_idup(MPI_COMM_SELF, &s, &q));
	int flag = 0;
	OK(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
	CHECK(flag && s != MPI_COMM_NULL, "idup of MPI_COMM_SELF: flag %d", flag);
	if (flag)
		OK(MPI_Comm_free(&s));
}

static void overlap(void)
{
	MPI_Comm a, c; /* {0,1} and {0,2} */
	OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank < 2 ? 0 : MPI_UNDEFINED, t_rank, &a));
	OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank == 0 || t_rank == 2 ? 0 : MPI_UNDEFINED, t_rank, &c));
	MPI_Comm ad = MPI_COMM_NULL, cd = MPI_COMM_NULL, bump[3];
	MPI_Request r;
	int q = 111, s = 222, got = -1, go = 0;
	if (t_rank == 0) {
		OK(MPI_Comm_idup(a, &ad, &r));
		OK(MPI_Comm_dup(c, &cd));
		OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
		OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, cd, MPI_STATUS_IGNORE));
		CHECK(got == s, "rank 0 received %d on the duplicate of {0,2}, want %d%s", got, s,
		      got == q ? " (the message of the duplicate of {0,1}: one context id for both)" : "");
		OK(MPI_Recv(&got, 1, MPI_INT, 1, 5, ad, MPI_STATUS_IGNORE));
		CHECK(got == q, "rank 0 received %d on the duplicate of {0,1}, want %d", got, q);
	} else if (t_rank == 1) {
		for (int i = 0; i < 3; i++) /* this counter ahead of rank 0's */
			OK(MPI_Comm_dup(MPI_COMM_SELF, &bump[i]));
		OK(MPI_Recv(&go, 1, MPI_INT, 2, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Comm_idup(a, &ad, &r));
		OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
		OK(MPI_Send(&q, 1, MPI_INT, 0, 5, ad));
		OK(MPI_Send(&go, 1, MPI_INT, 2, 6, MPI_COMM_WORLD));
		for (int i = 0; i < 3; i++)
			OK(MPI_Comm_free(&bump[i]));
	} else if (t_rank == 2) {
		for (int i = 0; i < 3; i++)
			OK(MPI_Comm_dup(MPI_COMM_SELF, &bump[i]));
		OK(MPI_Comm_dup(c, &cd));
		OK(MPI_Send(&go, 1, MPI_INT, 1, 4, MPI_COMM_WORLD));
		/* after rank 1's message went, so it is there first */
		OK(MPI_Recv(&go, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		OK(MPI_Send(&s, 1, MPI_INT, 0, 5, cd));
		for (int i = 0; i < 3; i++)
			OK(MPI_Comm_free(&bump[i]));
	}
	MPI_Comm *all[] = { &a, &c, &ad, &cd };
	for (int i = 0; i < 4; i++)
		if (*all[i] != MPI_COMM_NULL)
			OK(MPI_Comm_free(all[i]));
}

static void refusals(void)
{
	MPI_Comm d, ic = MPI_COMM_NULL;
	MPI_Request r;
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	t_fails_with(MPI_Comm_idup(MPI_COMM_WORLD, NULL, &r), MPI_ERR_ARG, "MPI_Comm_idup: newcomm is NULL",
		     "NULL newcomm");
	t_fails_with(MPI_Comm_idup(MPI_COMM_WORLD, &d, NULL), MPI_ERR_ARG, "MPI_Comm_idup: request is NULL",
		     "NULL request");
	t_fails_with(MPI_Comm_idup(4321, &d, &r), MPI_ERR_COMM, "invalid communicator 4321", "a bad comm");
	if (t_size >= 2) {
		MPI_Comm half;
		OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &half));
		OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, t_rank % 2 ? 0 : 1, 9, &ic));
		OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
		t_fails_with(MPI_Comm_idup(ic, &d, &r), MPI_ERR_COMM, "is an intercommunicator: not provided here",
			     "an intercommunicator");
		OK(MPI_Comm_free(&ic));
		OK(MPI_Comm_free(&half));
	}
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	one();
	several();
	if (t_size >= 3)
		overlap();
	refusals();
	return t_finish("mpi_idup");
}
