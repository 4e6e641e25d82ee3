/* mpi_inter.c: intercommunicators between the even and the odd world
 * ranks. Intercomm_create (leaders 0 and 1 over MPI_COMM_WORLD), what
 * size, rank, remote size and the two groups read; point-to-point both
 * ways with remote ranks in status.MPI_SOURCE, MPI_ANY_SOURCE too, and
 * no crossing with MPI_COMM_WORLD's messages of the same tag; merge in
 * both orders (high) and on a tie; dup; the refusals (collectives,
 * split, merge of an intracommunicator, bad leaders) with their
 * messages. "nomerge" (PTL_COLL_TIMEOUT=2): the odd side never merges,
 * and the even leader's error names the remote leader it waited for. */
#include "mpi_test.h"

static MPI_Comm make_inter(int *lsize, int *rsize)
{
	MPI_Comm half, inter;
	int odd = t_rank % 2;
	OK(MPI_Comm_split(MPI_COMM_WORLD, odd, t_rank, &half));
	/* remote leader: world rank 1 for the evens, 0 for the odds */
	OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, odd ? 0 : 1, 77, &inter));
	OK(MPI_Comm_free(&half));
	*lsize = odd ? t_size / 2 : (t_size + 1) / 2;
	*rsize = t_size - *lsize;
	return inter;
}

/* Local rank r (< the remote size) sends its world rank to remote rank r
 * (the evens first, then back); a remote rank's message names it. */
static void p2p(MPI_Comm inter, int lsize, int rsize, const char *what)
{
	int r = t_rank / 2, odd = t_rank % 2, got = -1;
	MPI_Status st;
	/* the same tag on MPI_COMM_WORLD first: it must not be taken */
	if (t_rank == 0 && t_size > 1)
		OK(MPI_Send(&t_rank, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
	for (int dir = 0; dir < 2; dir++) {
		int sending = odd == dir;
		if (r >= (lsize < rsize ? lsize : rsize))	/* pairs: local r with remote r */
			continue;
		if (sending) {
			OK(MPI_Send(&t_rank, 1, MPI_INT, r, 5, inter));
		} else {
			OK(MPI_Recv(&got, 1, MPI_INT, dir == 0 ? r : MPI_ANY_SOURCE, 5, inter, &st));
			int want = 2 * r + (dir == 0 ? 0 : 1);
			CHECK(got == want && st.MPI_SOURCE == r, "%s: got %d from source %d, want %d from %d", what, got,
			      st.MPI_SOURCE, want, r);
		}
	}
	if (t_rank == 1) {
		OK(MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &st));
		CHECK(got == 0, "%s: world message %d", what, got);
	}
}

static void merged(MPI_Comm inter, int high, int evens_first, const char *what)
{
	MPI_Comm m;
	OK(MPI_Intercomm_merge(inter, high, &m));
	int r, n, sum = 0, ne = (t_size + 1) / 2;
	MPI_Comm_rank(m, &r);
	MPI_Comm_size(m, &n);
	int want = t_rank % 2 == 0 ? (evens_first ? t_rank / 2 : t_size / 2 + t_rank / 2)
				   : (evens_first ? ne + t_rank / 2 : t_rank / 2);
	CHECK(n == t_size && r == want, "%s: rank %d of %d, want %d of %d", what, r, n, want, t_size);
	OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, m));
	CHECK(sum == t_size * (t_size - 1) / 2, "%s: allreduce on the merge %d", what, sum);
	OK(MPI_Comm_free(&m));
}

static int nomerge(void)
{
	int ls, rs;
	MPI_Comm inter = make_inter(&ls, &rs), m = MPI_COMM_NULL;
	MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
	if (t_rank % 2 == 0) {
		int rc = MPI_Intercomm_merge(inter, 0, &m);
		if (t_rank == 0)
			t_fails_with(rc, MPI_ERR_TIMEOUT, "the remote leader (world rank 1) did not answer",
				     "merge with a side that never calls");
		else
			t_fails_with(rc, MPI_ERR_OTHER, "could not reach the remote group", "merge, not the leader");
		CHECK(m == MPI_COMM_NULL, "a failed merge gave a communicator");
	}
	MPI_Comm_free(&inter);
	return t_finish("mpi_inter nomerge");
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (argc > 1 && !strcmp(argv[1], "nomerge"))
		return nomerge();
	int ls, rs, flag = 0, size, rank, rsize, cmp;
	MPI_Comm inter = make_inter(&ls, &rs);
	MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
	OK(MPI_Comm_test_inter(inter, &flag));
	OK(MPI_Comm_size(inter, &size));
	OK(MPI_Comm_rank(inter, &rank));
	OK(MPI_Comm_remote_size(inter, &rsize));
	CHECK(flag && size == ls && rank == t_rank / 2 && rsize == rs, "inter %d: size %d rank %d remote %d", flag,
	      size, rank, rsize);
	MPI_Group lg, rg, wg;
	OK(MPI_Comm_group(inter, &lg));
	OK(MPI_Comm_remote_group(inter, &rg));
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	int zero = 0, lw = -1, rw = -1;
	MPI_Group_translate_ranks(lg, 1, &zero, wg, &lw);
	MPI_Group_translate_ranks(rg, 1, &zero, wg, &rw);
	CHECK(lw == t_rank % 2 && rw == 1 - t_rank % 2, "group leaders: local %d remote %d", lw, rw);
	MPI_Group_free(&lg);
	MPI_Group_free(&rg);
	MPI_Group_free(&wg);

	p2p(inter, ls, rs, "intercommunicator");
	merged(inter, t_rank % 2, 1, "merge, odds high");
	merged(inter, t_rank % 2 == 0, 0, "merge, evens high");
	merged(inter, 0, 1, "merge, a tie: the lower leader first");

	MPI_Comm dup;
	OK(MPI_Comm_dup(inter, &dup));
	OK(MPI_Comm_test_inter(dup, &flag));
	OK(MPI_Comm_compare(inter, dup, &cmp));
	CHECK(flag && cmp == MPI_CONGRUENT, "dup: inter %d, compare %d", flag, cmp);
	p2p(dup, ls, rs, "dup of the intercommunicator");
	OK(MPI_Comm_compare(inter, MPI_COMM_WORLD, &cmp));
	CHECK(cmp == MPI_UNEQUAL, "an intercommunicator compares %d with MPI_COMM_WORLD", cmp);
	OK(MPI_Comm_free(&dup));

	MPI_Comm none = MPI_COMM_NULL;
	int v = 0;
	t_fails_with(MPI_Barrier(inter), MPI_ERR_COMM, "collectives on intercommunicators are not provided",
		     "barrier on an intercommunicator");
	t_fails_with(MPI_Allreduce(&v, &flag, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM,
		     "collectives on intercommunicators", "allreduce on an intercommunicator");
	t_fails_with(MPI_Comm_split(inter, 0, 0, &none), MPI_ERR_COMM, "is an intercommunicator",
		     "split of an intercommunicator");
	t_fails_with(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &none), MPI_ERR_COMM, "not an intercommunicator",
		     "merge of MPI_COMM_WORLD");
	t_fails_with(MPI_Comm_remote_size(MPI_COMM_WORLD, &v), MPI_ERR_COMM, "not an intercommunicator",
		     "remote size of MPI_COMM_WORLD");
	t_fails_with(MPI_Intercomm_create(MPI_COMM_WORLD, t_size, MPI_COMM_WORLD, 0, 1, &none), MPI_ERR_RANK,
		     "local_leader", "a leader outside local_comm");
	t_fails_with(MPI_Intercomm_create(inter, 0, MPI_COMM_WORLD, 0, 1, &none), MPI_ERR_COMM,
		     "is an intercommunicator", "an intercommunicator as local_comm");
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);	/* the local_comm's handler reports */
	if (t_rank == 0)	/* the leader checks remote_leader: itself is no remote leader */
		t_fails_with(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, 0, 1, &none), MPI_ERR_RANK,
			     "remote_leader 0 is not another rank", "remote leader = the leader");
	CHECK(none == MPI_COMM_NULL, "a refused call made a communicator");
	OK(MPI_Comm_free(&inter));
	return t_finish("mpi_inter");
}
