/* Algorithm choice: every row of seed 002's table V3.1, and the errors. */
#include "coll_test_util.h"

static enum coll_algo pick(enum coll_op op, const char *name, int ports, int n, char *warn)
{
	enum coll_algo a;
	assert_int_equal(coll_algo_parse(name, &a), 0);
	struct coll_req r = mkreq(op, a, n, 1 << 20, 1, ports);
	struct coll_choice c;
	char msg[160] = "";
	int rc = coll_choose(&r, &c, msg, sizeof msg);
	if (rc)
		fail_msg("choose %s ports=%d N=%d: %s", name, ports, n, msg);
	if (warn)
		strcpy(warn, c.warning);
	return c.algo;
}

static void test_v3_1_table(void **state)
{
	(void)state;
	struct {
		const char *algo;
		int ports, n;
		enum coll_algo want;
		bool warns;
	} rows[] = {
		{ "ring", 1, 4, COLL_ALGO_RING, false },
		{ "ring", 2, 4, COLL_ALGO_RING_BIDIR, false },
		{ "auto", 2, 4, COLL_ALGO_HALVING_DOUBLING, false },
		{ "auto", 2, 6, COLL_ALGO_RING_BIDIR, false },
		{ "auto", 1, 8, COLL_ALGO_RING, false },
		{ "tree", 2, 8, COLL_ALGO_TREE, false },
		{ "ring_bidir", 1, 4, COLL_ALGO_RING, true },
		{ "halving_doubling", 1, 4, COLL_ALGO_HALVING_DOUBLING, false },
		{ "ring_sendrecv", 2, 4, COLL_ALGO_RING_SENDRECV, false },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char warn[160];
		enum coll_algo got = pick(COLL_OP_ALLREDUCE, rows[i].algo, rows[i].ports, rows[i].n, warn);
		if (got != rows[i].want)
			fail_msg("row %zu: %s ports=%d N=%d chose %s, want %s", i, rows[i].algo,
			         rows[i].ports, rows[i].n, coll_algo_name(got), coll_algo_name(rows[i].want));
		assert_int_equal(warn[0] != 0, rows[i].warns);
	}
	/* the warning names the reason */
	char warn[160];
	pick(COLL_OP_ALLREDUCE, "ring_bidir", 1, 4, warn);
	assert_non_null(strstr(warn, "2 ports"));
	assert_non_null(strstr(warn, "ring"));
	/* ring_bidir with 2 ports stays, quietly */
	assert_int_equal(pick(COLL_OP_ALLREDUCE, "ring_bidir", 2, 5, warn), COLL_ALGO_RING_BIDIR);
	assert_string_equal(warn, "");
	/* more ports behave like two */
	assert_int_equal(pick(COLL_OP_ALLREDUCE, "auto", 4, 16, NULL), COLL_ALGO_HALVING_DOUBLING);
	assert_int_equal(pick(COLL_OP_ALLREDUCE, "auto", 4, 12, NULL), COLL_ALGO_RING_BIDIR);
}

/* On one host a power-of-two allreduce of more than 2 ranks past the short
 * ones takes halving-doubling with one port too, and a long allgather of 4
 * or 8 ranks recursive doubling; short ones stay recursive doubling, other
 * sizes of group the ring, reduce_scatter as it was. */
static void test_one_host(void **state)
{
	(void)state;
	struct {
		enum coll_op op;
		int n;
		size_t bytes;
		enum coll_algo want;
	} rows[] = {
		{ COLL_OP_ALLREDUCE, 4, 1 << 20, COLL_ALGO_HALVING_DOUBLING },
		{ COLL_OP_ALLREDUCE, 8, 16384 + 8, COLL_ALGO_HALVING_DOUBLING },
		{ COLL_OP_ALLREDUCE, 4, 8192, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLREDUCE, 2, 1 << 20, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, 6, 1 << 20, COLL_ALGO_RING },
		{ COLL_OP_REDUCE_SCATTER, 4, 1 << 20, COLL_ALGO_RING },
		{ COLL_OP_ALLGATHER, 4, 1 << 20, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLGATHER, 8, 1 << 20, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLGATHER, 6, 1 << 20, COLL_ALGO_RING },
		{ COLL_OP_ALLGATHER, 16, 1 << 20, COLL_ALGO_RING },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		for (int shared = 0; shared < 2; shared++) {
			struct coll_req r = mkreq(rows[i].op, COLL_ALGO_AUTO, rows[i].n, rows[i].bytes, 1, 1);
			r.one_host = shared;
			struct coll_choice c;
			char msg[160] = "";
			assert_int_equal(coll_choose(&r, &c, msg, sizeof msg), 0);
			/* across hosts the one-port ring, as before (a long
			 * allgather too) */
			bool host_rule = rows[i].want == COLL_ALGO_HALVING_DOUBLING ||
					 (rows[i].op == COLL_OP_ALLGATHER && rows[i].want == COLL_ALGO_RECURSIVE_DOUBLING);
			enum coll_algo want = !shared && host_rule ? COLL_ALGO_RING : rows[i].want;
			if (c.algo != want)
				fail_msg("row %zu (one host %d): chose %s, want %s", i, shared, coll_algo_name(c.algo),
					 coll_algo_name(want));
		}
	}
}

/* On one host whose cores the ranks outnumber, a 4-rank allreduce past
 * the short ones and up to 64 KiB takes the bidirectional ring with one
 * port, above it recursive doubling to below 192 KiB, then
 * halving-doubling to below 640 KiB, and the bidirectional ring again
 * from there; short ones, 2 or 8 ranks, several hosts, a named
 * algorithm and other operations choose as without. */
static void test_shared_cores(void **state)
{
	(void)state;
	struct {
		enum coll_op op;
		enum coll_algo algo;
		int n;
		size_t bytes;
		bool one_host;
		enum coll_algo want;
	} rows[] = {
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 32768, true, COLL_ALGO_RING_BIDIR },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 64 << 10, true, COLL_ALGO_RING_BIDIR },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, (64 << 10) + 8, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, (192 << 10) - 8, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 192 << 10, true, COLL_ALGO_HALVING_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 256 << 10, true, COLL_ALGO_HALVING_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 64 << 10, false, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 256 << 10, false, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 8, 256 << 10, true, COLL_ALGO_HALVING_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, 4, 256 << 10, true, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 512 << 10, true, COLL_ALGO_HALVING_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, (640 << 10) - 8, true, COLL_ALGO_HALVING_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 640 << 10, true, COLL_ALGO_RING_BIDIR },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, (1 << 20) - 8, true, COLL_ALGO_RING_BIDIR },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 1 << 20, true, COLL_ALGO_RING_BIDIR },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 16 << 20, true, COLL_ALGO_RING_BIDIR },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 8192, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 16384, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 16384 + 8, true, COLL_ALGO_RING_BIDIR },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 16384, false, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 2, 1 << 20, true, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 8, 1 << 20, true, COLL_ALGO_HALVING_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 3, 1 << 20, true, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 1 << 20, false, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 4, 1 << 20, true, COLL_ALGO_HALVING_DOUBLING },
		{ COLL_OP_REDUCE_SCATTER, COLL_ALGO_AUTO, 4, 1 << 20, true, COLL_ALGO_RING },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct coll_req r = mkreq(rows[i].op, rows[i].algo, rows[i].n, rows[i].bytes, 1, 1);
		r.one_host = rows[i].one_host;
		r.shared_cores = true;
		struct coll_choice c;
		char msg[160] = "";
		assert_int_equal(coll_choose(&r, &c, msg, sizeof msg), 0);
		if (c.algo != rows[i].want)
			fail_msg("row %zu: chose %s, want %s", i, coll_algo_name(c.algo), coll_algo_name(rows[i].want));
	}
}

/* On 2 ranks of one host an allreduce of up to 64 KiB goes by recursive
 * doubling (one eager message of the whole vector instead of the ring's
 * two halves), also past the 16 KiB that shm carries inline; just
 * above, on several hosts, a named algorithm and reduce_scatter keep the
 * ring. */
static void test_pair_rd(void **state)
{
	(void)state;
	struct {
		enum coll_op op;
		enum coll_algo algo;
		size_t bytes;
		bool one_host;
		enum coll_algo want;
	} rows[] = {
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 32 << 10, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 48 << 10, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 64 << 10, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 8 << 10, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, (16 << 10) + 8, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 24 << 10, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, (16 << 10) + 8, false, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, (64 << 10) + 8, true, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 128 << 10, true, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 256 << 10, true, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 256 << 10, false, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 1 << 20, true, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 32 << 10, false, COLL_ALGO_RING },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_RING, 32 << 10, true, COLL_ALGO_RING },
		{ COLL_OP_REDUCE_SCATTER, COLL_ALGO_AUTO, 32 << 10, true, COLL_ALGO_RING },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct coll_req r = mkreq(rows[i].op, rows[i].algo, 2, rows[i].bytes, 1, 1);
		r.one_host = rows[i].one_host;
		struct coll_choice c;
		char msg[160] = "";
		assert_int_equal(coll_choose(&r, &c, msg, sizeof msg), 0);
		if (c.algo != rows[i].want)
			fail_msg("row %zu: chose %s, want %s", i, coll_algo_name(c.algo), coll_algo_name(rows[i].want));
	}
	/* 4 ranks of one host keep their rules at 32 KiB */
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_AUTO, 4, 32 << 10, 1, 1);
	r.one_host = true;
	struct coll_choice c;
	char msg[160] = "";
	assert_int_equal(coll_choose(&r, &c, msg, sizeof msg), 0);
	assert_int_equal(c.algo, COLL_ALGO_HALVING_DOUBLING);
}

/* R3.3: reduce_scatter and allgather pick by ports; alltoall is pairwise. */
static void test_other_ops(void **state)
{
	(void)state;
	enum coll_op ops[] = { COLL_OP_REDUCE_SCATTER, COLL_OP_ALLGATHER };
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pick(ops[i], "ring", 1, 8, NULL), COLL_ALGO_RING);
		assert_int_equal(pick(ops[i], "ring", 2, 8, NULL), COLL_ALGO_RING_BIDIR);
		assert_int_equal(pick(ops[i], "auto", 2, 8, NULL), COLL_ALGO_RING_BIDIR);
		assert_int_equal(pick(ops[i], "auto", 1, 7, NULL), COLL_ALGO_RING);
		char warn[160];
		assert_int_equal(pick(ops[i], "ring_bidir", 1, 8, warn), COLL_ALGO_RING);
		assert_true(warn[0]);
	}
	assert_int_equal(pick(COLL_OP_ALLTOALL, "auto", 2, 8, NULL), COLL_ALGO_PAIRWISE);
	assert_int_equal(pick(COLL_OP_BARRIER, "auto", 2, 8, NULL), COLL_ALGO_DISSEMINATION);
	assert_int_equal(pick(COLL_OP_REDUCE, "auto", 1, 8, NULL), COLL_ALGO_TREE);
	assert_int_equal(pick(COLL_OP_REDUCE, "owner", 1, 8, NULL), COLL_ALGO_OWNER);

	/* bcast: the tree below 64 KiB or 8 ranks, and on one host up to 8
	 * ranks at any size; the scatter and allgather otherwise */
	struct {
		int n;
		size_t bytes;
		bool one_host;
		enum coll_algo want;
	} rows[] = {
		{ 16, 1 << 20, false, COLL_ALGO_SCATTER_ALLGATHER }, { 16, 1024, false, COLL_ALGO_BINOMIAL },
		{ 4, 1 << 20, false, COLL_ALGO_BINOMIAL },	     { 8, 1 << 20, true, COLL_ALGO_BINOMIAL },
		{ 9, 1 << 20, true, COLL_ALGO_SCATTER_ALLGATHER },   { 8, 1 << 20, false, COLL_ALGO_SCATTER_ALLGATHER },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct coll_req r = mkreq(COLL_OP_BCAST, COLL_ALGO_AUTO, rows[i].n, rows[i].bytes, 1, 1);
		r.one_host = rows[i].one_host;
		struct coll_choice c;
		assert_int_equal(coll_choose(&r, &c, NULL, 0), 0);
		assert_int_equal(c.algo, rows[i].want);
	}
}

/* Gather, scatter and alltoall: linear on one host of up to 8 ranks, the
 * binomial tree (gather, scatter) or the pairwise steps (alltoall) for
 * larger groups and across hosts; a name asked for is kept. */
static void test_linear_one_host(void **state)
{
	(void)state;
	struct {
		enum coll_op op;
		enum coll_algo other;
	} ops[] = { { COLL_OP_GATHER, COLL_ALGO_BINOMIAL },
		    { COLL_OP_SCATTER, COLL_ALGO_BINOMIAL },
		    { COLL_OP_ALLTOALL, COLL_ALGO_PAIRWISE } };
	struct {
		int n;
		bool one_host, linear;
	} rows[] = {
		{ 2, true, true },   { 4, true, true },	  { 8, true, true },   { 9, true, false },
		{ 64, true, false }, { 4, false, false }, { 8, false, false },
	};
	for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
		for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
			for (int named = 0; named < 2; named++) {
				struct coll_req r = mkreq(ops[o].op, named ? ops[o].other : COLL_ALGO_AUTO, rows[i].n,
							  64 << 10, 1, 1);
				r.one_host = rows[i].one_host;
				struct coll_choice c;
				assert_int_equal(coll_choose(&r, &c, NULL, 0), 0);
				assert_int_equal(c.algo, !named && rows[i].linear ? COLL_ALGO_LINEAR : ops[o].other);
			}
}

/* Scan and exscan: recursive doubling; along the chain where the ranks
 * outnumber their host's cores, from 16 KiB in groups of up to 4 and from
 * 256 KiB in groups of up to 8; a name asked for is kept. */
static void test_scan_shared(void **state)
{
	(void)state;
	enum coll_op ops[] = { COLL_OP_SCAN, COLL_OP_EXSCAN };
	struct {
		int n;
		size_t bytes;
		bool one_host, shared;
		enum coll_algo want;
	} rows[] = {
		{ 4, 16384, true, true, COLL_ALGO_CHAIN },
		{ 3, 1 << 20, true, true, COLL_ALGO_CHAIN },
		{ 4, 16376, true, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ 8, 262144, true, true, COLL_ALGO_CHAIN },
		{ 8, 262136, true, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ 5, 65536, true, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ 9, 1 << 20, true, true, COLL_ALGO_RECURSIVE_DOUBLING },
		{ 4, 1 << 20, true, false, COLL_ALGO_RECURSIVE_DOUBLING },
		{ 4, 1 << 20, false, false, COLL_ALGO_RECURSIVE_DOUBLING },
	};
	for (int o = 0; o < 2; o++)
		for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
			struct coll_req r = mkreq(ops[o], COLL_ALGO_AUTO, rows[i].n, rows[i].bytes, 1, 1);
			r.elem_size = 8;
			r.one_host = rows[i].one_host;
			r.shared_cores = rows[i].shared;
			struct coll_choice c;
			assert_int_equal(coll_choose(&r, &c, NULL, 0), 0);
			assert_int_equal(c.algo, rows[i].want);
			r.algo = COLL_ALGO_RECURSIVE_DOUBLING;
			assert_int_equal(coll_choose(&r, &c, NULL, 0), 0);
			assert_int_equal(c.algo, COLL_ALGO_RECURSIVE_DOUBLING);
		}
}

/* Unknown names are an error, never a silent default; an algorithm that
 * does not implement the op is refused with a message. */
static void test_errors(void **state)
{
	(void)state;
	enum coll_algo a = COLL_ALGO_RING;
	assert_int_equal(coll_algo_parse("rign", &a), -EINVAL);
	assert_int_equal(a, COLL_ALGO_RING);
	assert_int_equal(coll_algo_parse("", &a), -EINVAL);
	assert_int_equal(coll_algo_parse(NULL, &a), -EINVAL);
	assert_int_equal(coll_algo_parse("RING", &a), -EINVAL);
	enum coll_op op;
	assert_int_equal(coll_op_parse("allreduce", &op), 0);
	assert_int_equal(op, COLL_OP_ALLREDUCE);
	assert_int_equal(coll_op_parse("all_reduce", &op), -EINVAL);
	for (int i = 0; i < COLL_ALGO_COUNT; i++) {
		assert_int_equal(coll_algo_parse(coll_algo_name((enum coll_algo)i), &a), 0);
		assert_int_equal(a, i);
	}
	for (int i = 0; i < COLL_OP_COUNT; i++) {
		assert_int_equal(coll_op_parse(coll_op_name((enum coll_op)i), &op), 0);
		assert_int_equal(op, i);
	}

	char msg[160];
	struct coll_choice c;
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, (enum coll_algo)COLL_ALGO_COUNT, 4, 8, 1, 1);
	assert_int_equal(coll_choose(&r, &c, msg, sizeof msg), -EINVAL);
	r = mkreq(COLL_OP_ALLTOALL, COLL_ALGO_RING, 4, 8, 1, 1);
	assert_int_equal(coll_choose(&r, &c, msg, sizeof msg), -ENOTSUP);
	assert_non_null(strstr(msg, "alltoall"));
	r = mkreq(COLL_OP_ALLGATHER, COLL_ALGO_HALVING_DOUBLING, 4, 8, 1, 1);
	assert_int_equal(coll_choose(&r, &c, msg, sizeof msg), -ENOTSUP);
	r = mkreq(COLL_OP_BARRIER, COLL_ALGO_OWNER, 4, 8, 1, 1);
	assert_int_equal(coll_choose(&r, &c, msg, sizeof msg), -ENOTSUP);
	r = mkreq(COLL_OP_BCAST, COLL_ALGO_RING, 4, 8, 1, 1);
	assert_int_equal(coll_choose(&r, &c, msg, sizeof msg), -ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v3_1_table),
		cmocka_unit_test(test_one_host),
		cmocka_unit_test(test_shared_cores),
		cmocka_unit_test(test_pair_rd),
		cmocka_unit_test(test_other_ops),
		cmocka_unit_test(test_linear_one_host),
		cmocka_unit_test(test_scan_shared),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
