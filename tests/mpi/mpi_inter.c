/* mpi_inter.c: intercommunicators between the even and the odd world
 * ranks. Intercomm_create (leaders 0 and 1 over MPI_COMM_WORLD), what
 * size, rank, remote size and the two groups read; point-to-point both
 * ways with remote ranks in status.MPI_SOURCE, MPI_ANY_SOURCE too, and
 * no crossing with MPI_COMM_WORLD's messages of the same tag; merge in
 * both orders (high) and on a tie; dup; every blocking collective
 * on it (each group's results from the other group, roots
 * on either side, v and w forms); split and create of it; the refusals
 * (a bad root, MPI_IN_PLACE, the collectives not provided, merge of an
 * intracommunicator, bad leaders) with their messages. "nomerge" (PTL_COLL_TIMEOUT=2): the odd side never merges,
 * and the even leader's error names the remote leader it waited for. */
#include <stdbool.h>

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

/* World rank of remote rank j: the groups are the even and the odd ranks. */
static int remote_world(int j)
{
	return 2 * j + (1 - t_rank % 2);
}

/* Each group's results come from the other group. */
static void collectives(MPI_Comm inter, int ls, int rs)
{
	bool even = t_rank % 2 == 0;
	int lrank = t_rank / 2, v, got, sum = 0;
	for (int j = 0; j < rs; j++)
		sum += remote_world(j);
	OK(MPI_Barrier(inter));

	/* broadcast from the evens' rank 0, then from the odds' last rank */
	v = even && lrank == 0 ? 4242 : -1;
	OK(MPI_Bcast(&v, 1, MPI_INT, even ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter));
	CHECK(v == (even ? (lrank == 0 ? 4242 : -1) : 4242), "bcast from the evens: %d", v);
	v = !even && lrank == ls - 1 ? 77 : -1;
	OK(MPI_Bcast(&v, 1, MPI_INT, even ? rs - 1 : (lrank == ls - 1 ? MPI_ROOT : MPI_PROC_NULL), inter));
	CHECK(v == (even ? 77 : lrank == ls - 1 ? 77 : -1), "bcast from the odds: %d", v);

	v = t_rank;
	got = -1;
	OK(MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_SUM, inter));
	CHECK(got == sum, "allreduce: %d, want the remote ranks' sum %d", got, sum);
	got = -1; /* reduce to the odds' rank 0: the sum of the evens */
	OK(MPI_Reduce(&v, &got, 1, MPI_INT, MPI_SUM, even ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL), inter));
	CHECK(even || lrank != 0 || got == sum, "reduce at the odds' root: %d, want %d", got, sum);

	int all[8], counts[8], displs[8], out[8];
	for (int j = 0; j < 8; j++)
		all[j] = -1;
	OK(MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, inter));
	for (int j = 0; j < rs; j++)
		CHECK(all[j] == remote_world(j), "allgather block %d: %d", j, all[j]);
	for (int j = 0; j < rs; j++) /* allgatherv: remote rank j's block at 2 * (rs - 1 - j) */
		counts[j] = 1, displs[j] = 2 * (rs - 1 - j), all[2 * j] = -1;
	OK(MPI_Allgatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, inter));
	for (int j = 0; j < rs; j++)
		CHECK(all[2 * (rs - 1 - j)] == remote_world(j), "allgatherv block %d: %d", j, all[2 * (rs - 1 - j)]);

	for (int j = 0; j < 8; j++)
		all[j] = -1;
	OK(MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, even ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter));
	for (int j = 0; even && lrank == 0 && j < rs; j++)
		CHECK(all[j] == remote_world(j), "gather at the evens' root, block %d: %d", j, all[j]);
	for (int j = 0; j < 8; j++)
		out[j] = 100 + j;
	got = -1;
	OK(MPI_Scatter(out, 1, MPI_INT, &got, 1, MPI_INT, even ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL), inter));
	CHECK(!even || got == 100 + lrank, "scatter from the odds' root: %d, want %d", got, 100 + lrank);
	for (int j = 0; j < rs; j++)
		counts[j] = 1, displs[j] = rs - 1 - j;
	got = -1;
	OK(MPI_Scatterv(out, counts, displs, MPI_INT, &got, 1, MPI_INT,
			even ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter));
	CHECK(even || got == 100 + (ls - 1 - lrank), "scatterv from the evens' root: %d", got); /* its rs is our ls */
	for (int j = 0; j < 8; j++)
		all[j] = -1;
	OK(MPI_Gatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, even ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL),
		       inter));
	for (int j = 0; !even && lrank == 0 && j < rs; j++)
		CHECK(all[rs - 1 - j] == remote_world(j), "gatherv at the odds' root, block %d", j);

	/* to remote rank j: 1000 * world + j */
	for (int j = 0; j < rs; j++)
		out[j] = 1000 * t_rank + j, all[j] = -1;
	OK(MPI_Alltoall(out, 1, MPI_INT, all, 1, MPI_INT, inter));
	for (int j = 0; j < rs; j++)
		CHECK(all[j] == 1000 * remote_world(j) + lrank, "alltoall from %d: %d", j, all[j]);
	for (int j = 0; j < rs; j++)
		counts[j] = 1, displs[j] = j, all[j] = -1;
	OK(MPI_Alltoallv(out, counts, displs, MPI_INT, all, counts, displs, MPI_INT, inter));
	for (int j = 0; j < rs; j++)
		CHECK(all[j] == 1000 * remote_world(j) + lrank, "alltoallv from %d: %d", j, all[j]);
	/* reduce-scatter: vectors of 6 (each group's recvcounts add up to it),
	 * element i from world rank w is 10 * w + i; a block of the other
	 * group's sum at each rank */
	int vec[6], res[6], rc6 = 6 / ls, vcounts[3], at = 0;
	for (int i = 0; i < 6; i++)
		vec[i] = 10 * t_rank + i;
	for (int k = 0; k < 6; k++)
		res[k] = -1;
	OK(MPI_Reduce_scatter_block(vec, res, rc6, MPI_INT, MPI_SUM, inter));
	for (int k = 0; k < rc6; k++)
		CHECK(res[k] == 10 * sum + rs * (lrank * rc6 + k), "reduce_scatter_block element %d: %d", k, res[k]);
	for (int i = 0; i < ls; i++) /* 6 in blocks of 1, 2, 3 .. */
		vcounts[i] = (i + 1) * 6 / (ls * (ls + 1) / 2);
	for (int i = 0; i < lrank; i++)
		at += vcounts[i];
	OK(MPI_Reduce_scatter(vec, res, vcounts, MPI_INT, MPI_SUM, inter));
	for (int k = 0; k < vcounts[lrank]; k++)
		CHECK(res[k] == 10 * sum + rs * (at + k), "reduce_scatter element %d: %d", k, res[k]);

	MPI_Datatype types[8];
	int bytes[8];
	for (int j = 0; j < rs; j++)
		types[j] = MPI_INT, bytes[j] = (int)sizeof(int) * j, all[j] = -1;
	OK(MPI_Alltoallw(out, counts, bytes, types, all, counts, bytes, types, inter));
	for (int j = 0; j < rs; j++)
		CHECK(all[j] == 1000 * remote_world(j) + lrank, "alltoallw from %d: %d", j, all[j]);
}

/* Split by local rank parity, and create from the local group less its
 * rank 0: each side's members of a color with the other side's. */
static void split_create(MPI_Comm inter, int ls, int rs)
{
	int lrank = t_rank / 2, color = lrank % 2, mine = (ls + 1 - color) / 2, theirs = (rs + 1 - color) / 2;
	MPI_Comm sc = MPI_COMM_WORLD;
	OK(MPI_Comm_split(inter, color, -lrank, &sc)); /* key: reversed */
	if (theirs == 0) {
		CHECK(sc == MPI_COMM_NULL, "split: color %d has no remote members but got a communicator", color);
	} else {
		int size = -1, rsize = -1, rank = -1, v = t_rank, got = -1, want = 0;
		OK(MPI_Comm_size(sc, &size));
		OK(MPI_Comm_remote_size(sc, &rsize));
		OK(MPI_Comm_rank(sc, &rank));
		CHECK(size == mine && rsize == theirs && rank == mine - 1 - lrank / 2,
		      "split color %d: size %d (want %d), remote %d (want %d), rank %d", color, size, mine, rsize, theirs,
		      rank);
		for (int j = color; j < rs; j += 2)
			want += remote_world(j);
		OK(MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_SUM, sc));
		CHECK(got == want, "allreduce on the split: %d, want %d", got, want);
		OK(MPI_Comm_free(&sc));
	}
	MPI_Group lg, sub;
	int zero = 0;
	OK(MPI_Comm_group(inter, &lg));
	OK(MPI_Group_excl(lg, ls > 1 ? 1 : 0, &zero, &sub));
	MPI_Comm cc = MPI_COMM_WORLD;
	OK(MPI_Comm_create(inter, sub, &cc));
	bool member = ls == 1 || lrank > 0; /* a group of one keeps its member */
	if (!member) {
		CHECK(cc == MPI_COMM_NULL, "create: rank %d, not in the group, got a communicator", lrank);
	} else {
		int rsize = -1, want = rs > 1 ? rs - 1 : 1;
		OK(MPI_Comm_remote_size(cc, &rsize));
		CHECK(rsize == want, "create: remote size %d, want %d", rsize, want);
		OK(MPI_Barrier(cc));
		OK(MPI_Comm_free(&cc));
	}
	MPI_Group_free(&sub);
	MPI_Group_free(&lg);
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

	collectives(inter, ls, rs);
	split_create(inter, ls, rs);

	MPI_Comm none = MPI_COMM_NULL;
	int v = 0, w = 0;
	t_fails_with(MPI_Bcast(&v, 1, MPI_INT, rs, inter), MPI_ERR_ROOT, "on an intercommunicator MPI_ROOT, MPI_PROC_NULL",
		     "a root past the remote group");
	t_fails_with(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER,
		     "MPI_IN_PLACE on an intercommunicator", "allreduce in place");
	t_fails_with(MPI_Reduce_scatter_block(MPI_IN_PLACE, &w, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER,
		     "MPI_IN_PLACE on an intercommunicator", "reduce_scatter_block in place");
	MPI_Request req;
	t_fails_with(MPI_Ibarrier(inter, &req), MPI_ERR_COMM, "not provided on intercommunicators",
		     "a nonblocking collective on an intercommunicator");
	int negs[8] = { -1, -1, -1, -1, -1, -1, -1, -1 }, buf8[8];
	t_fails_with(MPI_Reduce_scatter(&v, &w, negs, MPI_INT, MPI_SUM, inter), MPI_ERR_COUNT, "recvcounts[0] = -1 < 0",
		     "reduce_scatter with a negative count");
	t_fails_with(MPI_Alltoall(buf8, 1, 4711, buf8, 1, MPI_INT, inter), MPI_ERR_TYPE,
		     "invalid or uncommitted datatype 4711", "alltoall with a bad send type");
	t_fails_with(MPI_Allgatherv(buf8, 1, MPI_INT, buf8, negs, negs, MPI_INT, inter), MPI_ERR_COUNT,
		     "recvcounts[0] = -1 < 0", "allgatherv with a negative count");
	MPI_Group rg2;
	MPI_Comm_remote_group(inter, &rg2); /* not of the local side */
	t_fails_with(MPI_Comm_create(inter, rg2, &none), MPI_ERR_GROUP, "is not a subset",
		     "create from the remote group");
	MPI_Group_free(&rg2);
	t_fails_with(MPI_Comm_split(inter, -5, 0, &none), MPI_ERR_ARG, "color -5 is negative",
		     "split with a negative color");
	t_fails_with(MPI_Scan(&v, &w, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM, "not provided on intercommunicators",
		     "scan on an intercommunicator");
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
