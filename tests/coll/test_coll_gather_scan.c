/* Gather, scatter (with one block size or one per rank), scan and exscan:
 * every schedule checks, every byte arrives where the layout says, prefix
 * sums count every rank exactly once, and the bits of a floating-point scan
 * do not depend on delivery order. */
#include "coll_test_util.h"

static const enum coll_algo scan_algos[] = { COLL_ALGO_CHAIN, COLL_ALGO_RECURSIVE_DOUBLING };

struct ranks_bufs {
	int n;
	struct coll_bufs *b;
	unsigned char **data, **scr;
	size_t dsz, ssz;
};

static void rb_alloc(struct ranks_bufs *rb, const struct coll_sched *s)
{
	rb->n = s->req.nranks;
	rb->dsz = s->info.data_bytes;
	rb->ssz = s->info.scratch_bytes;
	rb->b = calloc((size_t)rb->n, sizeof *rb->b);
	rb->data = calloc((size_t)rb->n, sizeof *rb->data);
	rb->scr = calloc((size_t)rb->n, sizeof *rb->scr);
	assert_non_null(rb->b);
	for (int r = 0; r < rb->n; r++) {
		rb->data[r] = malloc(rb->dsz + 1);
		rb->scr[r] = malloc(rb->ssz + 1);
		assert_non_null(rb->data[r]);
		assert_non_null(rb->scr[r]);
		memset(rb->data[r], 0xEE, rb->dsz + 1);
		memset(rb->scr[r], 0xDD, rb->ssz + 1);
		rb->b[r].data = rb->data[r];
		rb->b[r].scratch = rb->scr[r];
	}
}

static void rb_free(struct ranks_bufs *rb)
{
	for (int r = 0; r < rb->n; r++) {
		/* nothing written past either buffer */
		assert_int_equal(rb->data[r][rb->dsz], 0xEE);
		assert_int_equal(rb->scr[r][rb->ssz], 0xDD);
		free(rb->data[r]);
		free(rb->scr[r]);
	}
	free(rb->data);
	free(rb->scr);
	free(rb->b);
}

static void exec_ok(const struct coll_sched *s, struct ranks_bufs *rb, enum coll_dtype dt,
                    unsigned seed)
{
	char msg[256] = "";
	struct coll_exec_opts o = { dt, COLL_SUM, seed };
	int rc = coll_exec_run(s, rb->b, &o, msg, sizeof msg);
	if (rc)
		fail_msg("%s %s N=%d: exec %d %s", coll_op_name(s->req.op),
		         coll_algo_name(s->info.algo), s->req.nranks, rc, msg);
}

static uint8_t gpat(int rank, size_t b) { return (uint8_t)(rank * 29 + b * 7 + 3); }

/* Block sizes for N ranks: shape 0 uniform (counts NULL), 1 varying with
 * zeros, 2 all zero but one. */
static size_t *mkcounts(int n, int shape)
{
	if (shape == 0)
		return NULL;
	size_t *c = calloc((size_t)n, sizeof *c);
	assert_non_null(c);
	for (int i = 0; i < n; i++)
		c[i] = shape == 1 ? (size_t)((i * 5 + 3) % 7) : (i == n / 2 ? 9 : 0);
	return c;
}

static size_t blk(const struct coll_req *r, int rank)
{
	return r->counts ? r->counts[rank] : r->bytes;
}

/* relative offset of logical rank `rank`'s block in the root's DATA */
static size_t roff(const struct coll_req *r, int rank)
{
	size_t off = 0;
	for (int v = 0; v < r->nranks; v++) {
		int lr = (v + r->root) % r->nranks;
		if (lr == rank)
			return off;
		off += blk(r, lr);
	}
	return off;
}

static void run_gs(enum coll_op op, enum coll_algo algo, int n, int root, int shape,
                   unsigned seed)
{
	size_t *counts = mkcounts(n, shape);
	struct coll_req r = mkreq(op, algo, n, 5, 1, 1);
	r.root = root;
	r.counts = counts;
	struct coll_sched *s = expand_ok(&r);
	bool linear = algo == COLL_ALGO_LINEAR;
	assert_int_equal(s->info.algo, linear ? COLL_ALGO_LINEAR : COLL_ALGO_BINOMIAL);
	uint32_t steps = 0;
	while ((1 << steps) < n && !linear)
		steps++;
	assert_int_equal(s->info.steps, linear ? (uint32_t)(n > 1) : steps);
	struct ranks_bufs rb;
	rb_alloc(&rb, s);
	for (int i = 0; i < n; i++) {
		/* gather: every rank's own block sits at offset 0 of its DATA;
		 * scatter: the root holds every block in relative order */
		if (op == COLL_OP_GATHER)
			for (size_t b = 0; b < blk(&r, i); b++)
				rb.data[i][b] = gpat(i, b);
		else if (i == root)
			for (int j = 0; j < n; j++)
				for (size_t b = 0; b < blk(&r, j); b++)
					rb.data[i][roff(&r, j) + b] = gpat(j, b);
		/* a rank touches its subtree only: a leaf its own block */
		size_t span = coll_data_span(s, i);
		assert_true(span <= s->info.data_bytes);
		if ((i - root + n) % n % 2 == 1 || (linear && i != root))
			assert_true(span <= blk(&r, i));
	}
	exec_ok(s, &rb, COLL_INT32, seed);
	for (int i = 0; i < n; i++) {
		bool check = op == COLL_OP_SCATTER || i == root;
		for (int j = 0; check && j < n; j++) {
			if (op == COLL_OP_SCATTER && j != i)
				continue;
			size_t at = op == COLL_OP_GATHER ? roff(&r, j) : 0;
			for (size_t b = 0; b < blk(&r, j); b++)
				if (rb.data[i][at + b] != gpat(j, b))
					fail_msg("%s N=%d root=%d shape=%d seed=%u: rank %d, block of %d "
					         "byte %zu wrong", coll_op_name(op), n, root, shape, seed, i, j, b);
		}
	}
	rb_free(&rb);
	coll_free(s);
	free(counts);
}

static void test_gather_scatter_every_byte(void **state)
{
	(void)state;
	enum coll_algo algos[] = { COLL_ALGO_AUTO, COLL_ALGO_LINEAR };
	for (int op = 0; op < 2; op++)
		for (int a = 0; a < 2; a++)
			for (int n = 1; n <= 40; n++)
				for (int shape = 0; shape < 3; shape++) {
					int root = (n * 3 + shape) % n;
					run_gs(op ? COLL_OP_SCATTER : COLL_OP_GATHER, algos[a], n, root, shape,
					       n % 2 ? (unsigned)(n * 31 + shape) : 0);
				}
}

/* int64 element e of rank r is 1 if r == e: a prefix sum then counts how
 * often each rank went in, which must be once for ranks 0..v (scan) or
 * 0..v-1 (exscan) and never for the others. */
static void run_scan_membership(enum coll_op op, enum coll_algo algo, int n, unsigned seed)
{
	size_t cnt = (size_t)n;
	struct coll_req r = mkreq(op, algo, n, cnt * 8, 1, 1);
	r.elem_size = 8;
	struct coll_sched *s = expand_ok(&r);
	assert_int_equal(s->info.algo, algo);
	struct ranks_bufs rb;
	rb_alloc(&rb, s);
	for (int v = 0; v < n; v++)
		for (size_t e = 0; e < cnt; e++) {
			int64_t x = (size_t)v == e;
			memcpy(rb.data[v] + e * 8, &x, 8);
		}
	exec_ok(s, &rb, COLL_INT64, seed);
	size_t res = op == COLL_OP_EXSCAN ? cnt * 8 : 0;
	for (int v = op == COLL_OP_EXSCAN ? 1 : 0; v < n; v++)
		for (size_t e = 0; e < cnt; e++) {
			int64_t got;
			memcpy(&got, rb.data[v] + res + e * 8, 8);
			int64_t want = op == COLL_OP_EXSCAN ? (int64_t)(e < (size_t)v) : (int64_t)(e <= (size_t)v);
			if (got != want)
				fail_msg("%s %s N=%d seed=%u: rank %d holds rank %zu %lld times, want %lld",
				         coll_op_name(op), coll_algo_name(algo), n, seed, v, e,
				         (long long)got, (long long)want);
		}
	/* exscan leaves the input in place */
	if (op == COLL_OP_EXSCAN)
		for (int v = 0; v < n; v++)
			for (size_t e = 0; e < cnt; e++) {
				int64_t x;
				memcpy(&x, rb.data[v] + e * 8, 8);
				assert_int_equal(x, (size_t)v == e);
			}
	rb_free(&rb);
	coll_free(s);
}

static void test_scan_counts_every_rank_once(void **state)
{
	(void)state;
	for (int op = 0; op < 2; op++)
		for (size_t a = 0; a < 2; a++)
			for (int n = 1; n <= 40; n++)
				run_scan_membership(op ? COLL_OP_EXSCAN : COLL_OP_SCAN, scan_algos[a], n,
				                    n % 3 ? (unsigned)(n * 7 + op) : 0);
}

/* Doubles whose sum depends on the order of adding: every delivery order
 * gives the same bits, and the chain's bits are the left-to-right sum. */
static void scan_doubles(enum coll_op op, enum coll_algo algo, int n, unsigned seed,
                         double *out /* n * cnt */, size_t cnt)
{
	struct coll_req r = mkreq(op, algo, n, cnt * sizeof(double), 1, 1);
	r.elem_size = sizeof(double);
	struct coll_sched *s = expand_ok(&r);
	struct ranks_bufs rb;
	rb_alloc(&rb, s);
	for (int v = 0; v < n; v++)
		for (size_t e = 0; e < cnt; e++) {
			double x = 1.0 / (double)(v + 3) + (double)e * 1e-3 + (double)(v % 5) * 1e9;
			memcpy(rb.data[v] + e * sizeof x, &x, sizeof x);
		}
	exec_ok(s, &rb, COLL_DOUBLE, seed);
	size_t res = op == COLL_OP_EXSCAN ? cnt * sizeof(double) : 0;
	for (int v = 0; v < n; v++)
		memcpy(out + (size_t)v * cnt, rb.data[v] + res, cnt * sizeof(double));
	rb_free(&rb);
	coll_free(s);
}

static void test_scan_bits_fixed(void **state)
{
	(void)state;
	const size_t cnt = 6;
	int ns[] = { 2, 5, 8, 13 };
	for (int op = 0; op < 2; op++)
		for (size_t a = 0; a < 2; a++)
			for (size_t i = 0; i < 4; i++) {
				int n = ns[i];
				enum coll_op cop = op ? COLL_OP_EXSCAN : COLL_OP_SCAN;
				double *first = calloc((size_t)n * cnt, sizeof *first);
				double *again = calloc((size_t)n * cnt, sizeof *again);
				assert_non_null(first);
				assert_non_null(again);
				scan_doubles(cop, scan_algos[a], n, 0, first, cnt);
				for (unsigned seed = 1; seed <= 4; seed++) {
					scan_doubles(cop, scan_algos[a], n, seed * 7919, again, cnt);
					/* rank 0's exscan result is undefined: skip it */
					size_t from = op ? cnt : 0;
					assert_memory_equal(first + from, again + from,
					                    ((size_t)n * cnt - from) * sizeof(double));
				}
				if (scan_algos[a] == COLL_ALGO_CHAIN)
					for (int v = op; v < n; v++)
						for (size_t e = 0; e < cnt; e++) {
							double acc = 0;
							for (int u = 0; u <= v - op; u++) {
								double x = 1.0 / (double)(u + 3) + (double)e * 1e-3
								           + (double)(u % 5) * 1e9;
								acc = u ? acc + x : x;
							}
							assert_memory_equal(&acc, &first[(size_t)v * cnt + e], sizeof acc);
						}
				free(first);
				free(again);
			}
}

/* Choice, steps and the cost model's latency terms. */
static void test_choice_and_cost(void **state)
{
	(void)state;
	char msg[256] = "";
	struct coll_choice ch;
	struct coll_req r = mkreq(COLL_OP_GATHER, COLL_ALGO_AUTO, 8, 64, 1, 1);
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), 0);
	assert_int_equal(ch.algo, COLL_ALGO_BINOMIAL);
	r.algo = COLL_ALGO_RING;
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), -ENOTSUP);
	assert_non_null(strstr(msg, "gather"));
	r = mkreq(COLL_OP_SCAN, COLL_ALGO_AUTO, 8, 64, 1, 1);
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), 0);
	assert_int_equal(ch.algo, COLL_ALGO_RECURSIVE_DOUBLING);
	r.algo = COLL_ALGO_BINOMIAL;
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), -ENOTSUP);
	/* per-rank counts belong to the v-variants only */
	size_t counts[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	r = mkreq(COLL_OP_BCAST, COLL_ALGO_AUTO, 8, 64, 1, 1);
	r.counts = counts;
	struct coll_sched *s = (struct coll_sched *)1;
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
	assert_null(s);
	assert_non_null(strstr(msg, "counts"));
	/* a linear rank reads its own block size only: the other ranks' sizes
	 * may be anything (an MPI rank of Gatherv does not know them) */
	size_t mine[4] = { 0, 0, 7, 0 };
	r = mkreq(COLL_OP_GATHER, COLL_ALGO_LINEAR, 4, 0, 1, 1);
	r.counts = mine;
	assert_int_equal(coll_expand_rank(&r, 2, &s, msg, sizeof msg), 0);
	assert_int_equal(s->ranks[0].ncmds, 1);
	assert_int_equal(s->ranks[0].cmds[0].kind, COLL_SEND);
	assert_int_equal(s->ranks[0].cmds[0].len, 7);
	assert_int_equal(coll_data_span(s, 2), 7);
	coll_free(s);
	/* a root outside the group */
	r = mkreq(COLL_OP_SCATTER, COLL_ALGO_AUTO, 8, 64, 1, 1);
	r.root = 8;
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
	/* exscan's result sits after its input; its scan's chain takes N-1 steps */
	r = mkreq(COLL_OP_EXSCAN, COLL_ALGO_CHAIN, 8, 64, 1, 1);
	s = expand_ok(&r);
	assert_int_equal(s->info.data_bytes, 128);
	assert_int_equal(s->info.steps, 7);
	coll_free(s);

	/* alpha only: the binomial gather and scatter and recursive doubling take
	 * log2(8) = 3 transfer times, the chain 7 */
	struct coll_cost_params cp = { .alpha = 1e-6 };
	struct coll_cost cost;
	struct {
		enum coll_op op;
		enum coll_algo algo;
		double alphas;
	} want[] = {
		{ COLL_OP_GATHER, COLL_ALGO_AUTO, 3 },
		{ COLL_OP_SCATTER, COLL_ALGO_AUTO, 3 },
		{ COLL_OP_SCAN, COLL_ALGO_RECURSIVE_DOUBLING, 3 },
		{ COLL_OP_EXSCAN, COLL_ALGO_RECURSIVE_DOUBLING, 3 },
		{ COLL_OP_SCAN, COLL_ALGO_CHAIN, 7 },
		{ COLL_OP_EXSCAN, COLL_ALGO_CHAIN, 7 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		r = mkreq(want[i].op, want[i].algo, 8, 64, 1, 1);
		r.root = 3;
		s = expand_ok(&r);
		assert_int_equal(coll_cost(s, &cp, &cost), 0);
		if (cost.time < want[i].alphas * 1e-6 * 0.999 || cost.time > want[i].alphas * 1e-6 * 1.001)
			fail_msg("%s %s: %.3f us, want %.0f", coll_op_name(want[i].op),
			         coll_algo_name(s->info.algo), cost.time * 1e6, want[i].alphas);
		coll_free(s);
	}
	/* bytes: a binomial gather of 8 blocks moves each block once per level
	 * it climbs: 12 blocks in all (4 + 2*2 + 4) */
	r = mkreq(COLL_OP_GATHER, COLL_ALGO_AUTO, 8, 10, 1, 1);
	s = expand_ok(&r);
	assert_int_equal(s->info.total_bytes, 120);
	assert_int_equal(s->info.commands, 7);
	coll_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gather_scatter_every_byte),
		cmocka_unit_test(test_scan_counts_every_rank_once),
		cmocka_unit_test(test_scan_bits_fixed),
		cmocka_unit_test(test_choice_and_cost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
