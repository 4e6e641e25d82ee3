/* mpi_info.c: info objects keep their keys in the order first set, replace
 * a value set again, give back as much of a value as fits, duplicate and
 * delete; MPI_INFO_ENV is there without being created; the calls that take
 * an info accept one; bad keys, missing keys and freed objects are errors
 * of the info classes.
 *
 * ptl's communicator hints (ptl_coll_algo, ptl_coll_ports; hints()): what
 * MPI_Comm_get_info says after MPI_Comm_dup_with_info, MPI_Comm_dup,
 * MPI_Comm_idup (the hints at the call), MPI_Comm_idup_with_info,
 * MPI_Comm_set_info and MPI_Comm_split; the sums of allreduces under
 * them; a bad value refused with MPI_ERR_INFO_VALUE on the communicator
 * given and nothing made or changed; a nonblocking collective's later
 * phases keep the algorithms of its call while its communicator's hints
 * change on some ranks before they get there (changing_hints()).
 * "mpi_info stall KEY:VALUE...": MPI_Comm_set_info on MPI_COMM_WORLD of
 * each (algo: ptl_coll_algo, ports: ptl_coll_ports) in turn, then one
 * allreduce, which PTL_TEST_STALL_RANK makes time out; each rank prints
 * the message, in which mpi_info.sh looks for the algorithm the hints
 * (and PTL_COLL_ALGO under them) leave. */
#include "mpi_test.h"

/* An info with key=value for each pair of kv, NULL-ended. */
static MPI_Info info_of(const char *const *kv)
{
	MPI_Info i;
	OK(MPI_Info_create(&i));
	for (; kv[0]; kv += 2)
		OK(MPI_Info_set(i, kv[0], kv[1]));
	return i;
}

/* Whether c's hints in use are exactly algo and ports (NULL: not set),
 * and nothing else. */
static void hints_are(MPI_Comm c, const char *algo, const char *ports, const char *what)
{
	MPI_Info used;
	char val[MPI_MAX_INFO_VAL + 1];
	int n = -1, flag = 0;
	OK(MPI_Comm_get_info(c, &used));
	OK(MPI_Info_get_nkeys(used, &n));
	CHECK(n == !!algo + !!ports, "%s: %d hints in use, want %d", what, n, !!algo + !!ports);
	const char *key[2] = { "ptl_coll_algo", "ptl_coll_ports" }, *want[2] = { algo, ports };
	for (int k = 0; k < 2; k++) {
		OK(MPI_Info_get(used, key[k], MPI_MAX_INFO_VAL, val, &flag));
		CHECK(!flag == !want[k] && (!flag || !strcmp(val, want[k])), "%s: %s '%s' (set %d), want '%s'", what,
		      key[k], flag ? val : "", flag, want[k] ? want[k] : "(not set)");
	}
	OK(MPI_Info_free(&used));
}

/* Allreduce sums on c at sizes across the algorithms' paths. */
static void sums_on(MPI_Comm c, const char *what)
{
	static int in[16384], out[16384];
	for (int n = 1; n <= 16384; n *= 8) {
		for (int i = 0; i < n; i++)
			in[i] = (t_rank + 1) * (i % 97 + 1);
		OK(MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, c));
		int bad = 0;
		for (int i = 0; i < n; i++)
			bad += out[i] != t_size * (t_size + 1) / 2 * (i % 97 + 1);
		CHECK(!bad, "%s: %d of %d sums wrong", what, bad, n);
	}
}

/* An integer sum the library must take for non-commutative: a nonblocking
 * allreduce with it runs in phases (the owner-ordered reduce to rank 0,
 * then a broadcast), the broadcast's expanded when the reduce is done. */
static void nc_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

/* Rank 0 changes the broadcast's algorithm between its MPI_Iallreduce
 * and its wait, the others after their wait: every rank's broadcast
 * phase must still run the algorithm of the call (else rank 0's
 * scatter_allgather and the others' binomial tree wait for each other
 * until PTL_COLL_TIMEOUT). */
static void changing_hints(void)
{
	enum { N = 16384 }; /* 64 KiB: the scatter_allgather broadcast is another schedule */
	static int in[N], out[N];
	static const char *const sa[] = { "ptl_coll_algo", "bcast=scatter_allgather", NULL };
	MPI_Info i = info_of(sa);
	MPI_Comm c;
	MPI_Op op;
	MPI_Request r;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	OK(MPI_Op_create(nc_sum, 0, &op));
	for (int k = 0; k < N; k++)
		in[k] = (t_rank + 1) * (k % 89 + 1);
	OK(MPI_Iallreduce(in, out, N, MPI_INT, op, c, &r));
	if (t_rank == 0)
		OK(MPI_Comm_set_info(c, i));
	OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	if (t_rank != 0)
		OK(MPI_Comm_set_info(c, i));
	int bad = 0;
	for (int k = 0; k < N; k++)
		bad += out[k] != t_size * (t_size + 1) / 2 * (k % 89 + 1);
	CHECK(!bad, "Iallreduce with hints changed before its wait: %d of %d sums wrong", bad, N);
	OK(MPI_Op_free(&op));
	OK(MPI_Comm_free(&c));
	OK(MPI_Info_free(&i));
}

static void hints(void)
{
	static const char *const ring2[] = { "ptl_coll_algo", "allreduce=ring_bidir,bcast=binomial",
					     "ptl_coll_ports", "2", "cb_nodes", "4", NULL };
	static const char *const tree[] = { "ptl_coll_algo", "tree", NULL };
	static const char *const ports1[] = { "ptl_coll_ports", "1", NULL };
	MPI_Info i = info_of(ring2), t = info_of(tree), p1 = info_of(ports1);
	MPI_Comm d = MPI_COMM_NULL, d2 = MPI_COMM_NULL, d3 = MPI_COMM_NULL, s = MPI_COMM_NULL;
	hints_are(MPI_COMM_WORLD, NULL, NULL, "MPI_COMM_WORLD");
	OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, i, &d));
	hints_are(d, "allreduce=ring_bidir,bcast=binomial", "2", "dup_with_info");
	sums_on(d, "ring_bidir, 2 ports");
	/* a duplicate keeps them (MPI-4.0 7.4.2), a split does not */
	OK(MPI_Comm_dup(d, &d2));
	hints_are(d2, "allreduce=ring_bidir,bcast=binomial", "2", "dup of a hinted communicator");
	OK(MPI_Comm_split(d, 0, t_rank, &s));
	hints_are(s, NULL, NULL, "split of a hinted communicator");
	/* with_info: the info's hints instead of the original's */
	MPI_Request r;
	OK(MPI_Comm_idup_with_info(d, p1, &d3, &r));
	OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	hints_are(d3, NULL, "1", "idup_with_info");
	/* set_info: the keys it has change, the others stay */
	OK(MPI_Comm_set_info(d2, t));
	hints_are(d2, "tree", "2", "set_info of the algorithm");
	sums_on(d2, "tree");
	/* idup: the hints of the call, whatever comes before its wait */
	MPI_Comm d4 = MPI_COMM_NULL;
	OK(MPI_Comm_idup(d2, &d4, &r));
	OK(MPI_Comm_set_info(d2, p1));
	OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	hints_are(d4, "tree", "2", "idup, set_info before its wait");
	hints_are(d2, "tree", "1", "set_info of the ports");
	OK(MPI_Comm_free(&d4));
	/* an empty value removes a hint */
	static const char *const none[] = { "ptl_coll_algo", "", NULL };
	MPI_Info e = info_of(none);
	OK(MPI_Comm_set_info(d2, e));
	hints_are(d2, NULL, "1", "set_info of an empty ptl_coll_algo");
	OK(MPI_Info_free(&e));
	OK(MPI_Comm_set_info(d2, t));
	/* bad values: refused, nothing made or changed */
	static const char *const bad[][3] = { { "ptl_coll_algo", "allreduce=bogus", "allreduce=bogus" },
					      { "ptl_coll_algo", "ring,nosuchop=tree", "nosuchop=tree" },
					      { "ptl_coll_ports", "0", "not a port count 1-64" },
					      { "ptl_coll_ports", "65", "not a port count 1-64" },
					      { "ptl_coll_ports", "2x", "not a port count 1-64" } };
	/* the refusals go to d2's handler (MPI_ERRORS_RETURN), not to a
	 * duplicate's or MPI_COMM_WORLD's (fatal, as set here) */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	OK(MPI_Comm_set_errhandler(d2, MPI_ERRORS_RETURN));
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		const char *kv[] = { bad[k][0], bad[k][1], NULL };
		MPI_Info b = info_of(kv);
		MPI_Comm nc = 77;
		t_fails_with(MPI_Comm_dup_with_info(d2, b, &nc), MPI_ERR_INFO_VALUE, bad[k][2],
			     "dup_with_info of a bad value");
		CHECK(nc == MPI_COMM_NULL, "a refused dup_with_info left communicator %d", nc);
		t_fails_with(MPI_Comm_set_info(d2, b), MPI_ERR_INFO_VALUE, bad[k][2], "set_info of a bad value");
		hints_are(d2, "tree", "1", "after a refused set_info");
		nc = 77;
		r = MPI_REQUEST_NULL;
		t_fails_with(MPI_Comm_idup_with_info(d2, b, &nc, &r), MPI_ERR_INFO_VALUE, bad[k][2],
			     "idup_with_info of a bad value");
		CHECK(r == MPI_REQUEST_NULL, "a refused idup_with_info made a request");
		CHECK(nc == MPI_COMM_NULL, "a refused idup_with_info left communicator %d", nc);
		OK(MPI_Info_free(&b));
	}
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	sums_on(d2, "tree after the refusals");
	changing_hints();
	OK(MPI_Comm_free(&s));
	OK(MPI_Comm_free(&d3));
	OK(MPI_Comm_free(&d2));
	OK(MPI_Comm_free(&d));
	OK(MPI_Info_free(&i));
	OK(MPI_Info_free(&t));
	OK(MPI_Info_free(&p1));
}

/* MPI_Comm_set_info on MPI_COMM_WORLD of each "algo:VALUE" (ptl_coll_algo)
 * or "ports:VALUE" (ptl_coll_ports) of set[0..n) in turn, then one
 * allreduce of 64 KiB (past the small ones' own path), under
 * PTL_TEST_STALL_RANK (which leaves no collective to make a duplicate by). */
static int stall(char **set, int n)
{
	MPI_Comm d = MPI_COMM_WORLD;
	for (int k = 0; k < n; k++) {
		const char *v = strchr(set[k], ':');
		const char *kv[] = { !strncmp(set[k], "ports:", 6) ? "ptl_coll_ports" : "ptl_coll_algo", v ? v + 1 : "",
				     NULL };
		MPI_Info i = info_of(kv);
		OK(MPI_Comm_set_info(d, i));
		OK(MPI_Info_free(&i));
	}
	OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
	static int in[16384], out[16384];
	int rc = MPI_Allreduce(in, out, 16384, MPI_INT, MPI_SUM, d), len = 0;
	char s[MPI_MAX_ERROR_STRING] = "no error";
	if (rc)
		MPI_Error_string(rc, s, &len);
	printf("rank %d: %s\n", t_rank, s);
	fflush(stdout);
	/* no collectives after a timeout */
	MPI_Finalize();
	return 0;
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	if (argc > 1 && !strcmp(argv[1], "stall"))
		return stall(argv + 2, argc - 2);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Info info, copy, gone;
	char key[MPI_MAX_INFO_KEY + 1], val[64], longkey[MPI_MAX_INFO_KEY + 2];
	int n = -1, flag = -1, len = -1;

	OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
	OK(MPI_Info_create(&info));
	OK(MPI_Info_set(info, "cb_nodes", "4"));
	OK(MPI_Info_set(info, "striping_unit", "1048576"));
	OK(MPI_Info_set(info, "cb_nodes", "8")); /* replaced, keeps its place */
	OK(MPI_Info_get_nkeys(info, &n));
	CHECK(n == 2, "%d keys", n);
	OK(MPI_Info_get_nthkey(info, 0, key));
	CHECK(!strcmp(key, "cb_nodes"), "key 0 is '%s'", key);
	OK(MPI_Info_get(info, "cb_nodes", sizeof val - 1, val, &flag));
	CHECK(flag && !strcmp(val, "8"), "cb_nodes: flag %d '%s'", flag, val);
	OK(MPI_Info_get_valuelen(info, "striping_unit", &len, &flag));
	CHECK(flag && len == 7, "valuelen %d", len);
	OK(MPI_Info_get(info, "striping_unit", 3, val, &flag)); /* 3 characters and a terminator */
	CHECK(flag && !strcmp(val, "104"), "truncated value '%s'", val);
	OK(MPI_Info_get(info, "no_such_key", sizeof val - 1, val, &flag));
	CHECK(!flag, "a missing key was found");
	/* A duplicate is independent. */
	OK(MPI_Info_dup(info, &copy));
	OK(MPI_Info_delete(info, "cb_nodes"));
	OK(MPI_Info_get_nkeys(info, &n));
	CHECK(n == 1, "%d keys after a delete", n);
	OK(MPI_Info_get(copy, "cb_nodes", sizeof val - 1, val, &flag));
	CHECK(flag && !strcmp(val, "8"), "the duplicate lost cb_nodes (flag %d)", flag);
	/* Calls that take an info accept one. */
	MPI_Comm dup;
	OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, copy, &dup));
	int same;
	OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &same));
	CHECK(same == MPI_CONGRUENT, "Comm_dup_with_info: compare gives %d", same);
	/* No hint of theirs is taken: the hints in use are none. */
	MPI_Info used;
	OK(MPI_Comm_set_info(dup, copy));
	OK(MPI_Comm_get_info(dup, &used));
	OK(MPI_Info_get_nkeys(used, &n));
	CHECK(n == 0, "MPI_Comm_get_info gave %d hints in use", n);
	OK(MPI_Info_free(&used));
	hints();
	t_fails_with(MPI_Comm_set_info(dup, 4242), MPI_ERR_INFO, "invalid info object", "set_info of a bad info");
	t_fails_with(MPI_Comm_get_info(4242, &used), MPI_ERR_COMM, "invalid communicator", "get_info of a bad comm");
	OK(MPI_Comm_free(&dup));
	/* Errors. */
	memset(longkey, 'k', sizeof longkey - 1);
	longkey[sizeof longkey - 1] = '\0';
	t_fails_with(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY, "is empty or longer than 255", "a key of 256 characters");
	t_fails_with(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY, "is empty or longer than 255", "an empty key");
	t_fails_with(MPI_Info_delete(info, "cb_nodes"), MPI_ERR_INFO_NOKEY, "no key 'cb_nodes'", "deleting a missing key");
	t_fails_with(MPI_Info_get_nthkey(info, 5, key), MPI_ERR_ARG, "key 5 of 1", "key 5 of 1");
	gone = copy;
	OK(MPI_Info_free(&copy));
	CHECK(copy == MPI_INFO_NULL, "a freed info is not MPI_INFO_NULL");
	t_fails_with(MPI_Info_get_nkeys(gone, &n), MPI_ERR_INFO, "invalid info object", "a freed info");
	t_fails_with(MPI_Info_free(&gone), MPI_ERR_INFO, "invalid info object", "freeing twice");
	OK(MPI_Info_free(&info));
	return t_finish("mpi_info");
}
