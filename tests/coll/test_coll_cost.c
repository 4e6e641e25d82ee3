/* The cost model against seed 002's V4.1 and V4.2. */
#include "coll_test_util.h"

static double cost_of(enum coll_op op, enum coll_algo algo, int n, size_t bytes, int ports,
                      double alpha, double beta, double gamma)
{
	struct coll_req r = mkreq(op, algo, n, bytes, 1, ports);
	r.elem_size = 4;
	struct coll_sched *s = expand_ok(&r);
	struct coll_cost_params p = { alpha, beta, gamma, 0 };
	struct coll_cost c;
	assert_int_equal(coll_cost(s, &p, &c), 0);
	coll_free(s);
	return c.time;
}

static void near_at(double got, double want, int line)
{
	double d = got - want, m = want < 0 ? -want : want;
	if ((d < 0 ? -d : d) > 1e-9 * m + 1e-15)
		fail_msg("line %d: model gives %.12g, want %.12g", line, got, want);
}
#define NEAR(x, y) near_at((x), (double)(y), __LINE__)

/* V4.1: 4 ranks, 1 MB: 1 port 2(N-1)(alpha + M/(N beta)), 2 ports
 * N(alpha + M/(N beta)): 4/6 of the time. */
static void test_v4_1(void **state)
{
	(void)state;
	double a = 1.5e-6, b = 10e9, M = 1 << 20, unit = a + M / (4 * b);
	double one = cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 4, 1 << 20, 1, a, b, 0);
	double two = cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 4, 1 << 20, 2, a, b, 0);
	NEAR(one, 6 * unit);
	NEAR(two, 4 * unit);
	NEAR(two / one, 4.0 / 6.0);
	/* with a reduction cost the ratio stays about 2/3 */
	one = cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 4, 1 << 20, 1, a, b, 0.1e-9);
	two = cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 4, 1 << 20, 2, a, b, 0.1e-9);
	assert_true(two / one > 0.6 && two / one < 0.72);
	/* reductions cost: 3 on the one-way critical path */
	NEAR(one, 6 * unit + 3 * (M / 4) * 0.1e-9);
}

/* With one port the two directions take turns: no gain. */
static void test_one_port_serializes(void **state)
{
	(void)state;
	double a = 1e-6, b = 1e9, M = 1 << 20, unit = a + M / (4 * b);
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, 4, 1 << 20, 1, 2);
	struct coll_sched *s = expand_ok(&r);
	struct coll_cost_params p = { a, b, 0, 1 };
	struct coll_cost c;
	assert_int_equal(coll_cost(s, &p, &c), 0);
	NEAR(c.time, 6 * unit);
	p.ports = 2;
	assert_int_equal(coll_cost(s, &p, &c), 0);
	NEAR(c.time, 4 * unit);
	coll_free(s);
}

/* V4.2: 8 and 16 ranks against the formulas; halving-doubling's latency
 * term at N=8 is 6 alpha against the ring's 14. */
static void test_v4_2(void **state)
{
	(void)state;
	/* latency only: alpha 1, infinite bandwidth */
	NEAR(cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 8, 4096, 1, 1, 0, 0), 6);
	NEAR(cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 8, 4096, 1, 1, 0, 0), 14);
	NEAR(cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, 8, 4096, 2, 1, 0, 0), 8);
	NEAR(cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 16, 4096, 1, 1, 0, 0), 8);
	NEAR(cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 16, 4096, 1, 1, 0, 0), 30);
	NEAR(cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, 16, 4096, 2, 1, 0, 0), 16);
	/* odd N: N-1 steps */
	NEAR(cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, 9, 4096, 2, 1, 0, 0), 8);

	double a = 2e-6, b = 5e9, M = 1 << 22;
	for (int n = 8; n <= 16; n *= 2) {
		double ring2 = cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, n, 1 << 22, 2, a, b, 0);
		NEAR(ring2, n * (a + M / (n * b)));
		double ring1 = cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING, n, 1 << 22, 1, a, b, 0);
		NEAR(ring1, 2 * (n - 1) * (a + M / (n * b)));
		double hd = cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, n, 1 << 22, 1, a, b, 0);
		int lg = n == 8 ? 3 : 4;
		NEAR(hd, 2 * lg * a + 2 * M * (n - 1) / n / b);
		/* for small messages halving-doubling clearly wins */
		double hd_small = cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, n, 1024, 1, a, b, 0);
		double ring_small = cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING, n, 1024, 1, a, b, 0);
		assert_true(hd_small < 0.5 * ring_small);
	}
}

/* Other algorithms: dissemination barrier ceil(log2 N) alphas; binomial
 * bcast ceil(log2 N) hops of M; the double binary tree gains from 2 ports. */
static void test_other_models(void **state)
{
	(void)state;
	NEAR(cost_of(COLL_OP_BARRIER, COLL_ALGO_AUTO, 13, 0, 1, 1, 0, 0), 4);
	NEAR(cost_of(COLL_OP_BCAST, COLL_ALGO_BINOMIAL, 16, 1000, 1, 1e-6, 1e9, 0),
	     4 * (1e-6 + 1000 / 1e9));
	double t1 = cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_TREE, 15, 1 << 20, 1, 1e-6, 1e9, 0);
	double t2 = cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_TREE, 15, 1 << 20, 2, 1e-6, 1e9, 0);
	assert_true(t2 < t1);
	NEAR(cost_of(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 1, 1 << 20, 1, 1, 1, 1), 0);
	/* owner reduce: N-1 parts in, one port at the root is not contended
	 * (ports are the sender's), adds are serialized: alpha + M/beta + (N-1) M gamma */
	NEAR(cost_of(COLL_OP_REDUCE, COLL_ALGO_OWNER, 5, 4000, 1, 1e-6, 1e9, 1e-9),
	     1e-6 + 4000 / 1e9 + 4 * 4000 * 1e-9);
}

static void test_cost_needs_whole_schedule(void **state)
{
	(void)state;
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 4, 64, 1, 1);
	struct coll_sched *s;
	char msg[100];
	assert_int_equal(coll_expand_rank(&r, 1, &s, msg, sizeof msg), 0);
	struct coll_cost_params p = { 1, 1, 0, 0 };
	struct coll_cost c;
	assert_int_equal(coll_cost(s, &p, &c), -EINVAL);
	coll_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4_1),
		cmocka_unit_test(test_one_port_serializes),
		cmocka_unit_test(test_v4_2),
		cmocka_unit_test(test_other_models),
		cmocka_unit_test(test_cost_needs_whole_schedule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
