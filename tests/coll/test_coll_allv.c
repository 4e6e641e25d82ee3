/* Allgather with per-rank block sizes (allgatherv) and alltoall with a
 * matrix of pair sizes (alltoallv): every schedule checks, every byte lands
 * where the layout says and nowhere else, whatever the delivery order, with
 * zero-size blocks and N = 1..40; a rank's part from its row and column
 * alone is the matrix's; the choice rules; the cost model's rounds. */
#include "coll_test_util.h"

static uint8_t bpat(int from, int to, size_t b) { return (uint8_t)(from * 31 + to * 7 + b * 3 + 1); }

/* Block sizes: 0 uniform 5, 1 varying with zeros, 2 zero but one, 3 all
 * zero, 4 one large block among small ones. */
#define AG_SHAPES 5
static size_t ag_count(int shape, int n, int i)
{
	switch (shape) {
	case 0: return 5;
	case 1: return (size_t)((i * 5 + 3) % 7);
	case 2: return i == n / 2 ? 9 : 0;
	case 3: return 0;
	default: return i == n - 1 ? 300 : (size_t)(i % 3);
	}
}

struct rbufs {
	int n;
	size_t dsz, isz, ssz;
	unsigned char **data, **in, **scr;
	struct coll_bufs *b;
};

/* every buffer one guard byte longer than the schedule says */
static void rbufs_new(struct rbufs *rb, const struct coll_sched *s)
{
	rb->n = s->req.nranks;
	rb->dsz = s->info.data_bytes;
	rb->isz = s->info.input_bytes;
	rb->ssz = s->info.scratch_bytes;
	rb->data = calloc((size_t)rb->n, sizeof *rb->data);
	rb->in = calloc((size_t)rb->n, sizeof *rb->in);
	rb->scr = calloc((size_t)rb->n, sizeof *rb->scr);
	rb->b = calloc((size_t)rb->n, sizeof *rb->b);
	assert_non_null(rb->b);
	for (int r = 0; r < rb->n; r++) {
		rb->data[r] = malloc(rb->dsz + 1);
		rb->in[r] = malloc(rb->isz + 1);
		rb->scr[r] = malloc(rb->ssz + 1);
		assert_true(rb->data[r] && rb->in[r] && rb->scr[r]);
		memset(rb->data[r], 0xEE, rb->dsz + 1);
		memset(rb->in[r], 0xCC, rb->isz + 1);
		memset(rb->scr[r], 0xDD, rb->ssz + 1);
		rb->b[r] = (struct coll_bufs){ rb->data[r], rb->in[r], rb->scr[r] };
	}
}

static void rbufs_free(struct rbufs *rb)
{
	for (int r = 0; r < rb->n; r++) {
		assert_int_equal(rb->data[r][rb->dsz], 0xEE);
		assert_int_equal(rb->in[r][rb->isz], 0xCC);
		assert_int_equal(rb->scr[r][rb->ssz], 0xDD);
		free(rb->data[r]);
		free(rb->in[r]);
		free(rb->scr[r]);
	}
	free(rb->data);
	free(rb->in);
	free(rb->scr);
	free(rb->b);
}

static void exec_ok(const struct coll_sched *s, struct rbufs *rb, unsigned seed)
{
	char msg[256] = "";
	struct coll_exec_opts o = { COLL_INT32, COLL_SUM, seed };
	int rc = coll_exec_run(s, rb->b, &o, msg, sizeof msg);
	if (rc)
		fail_msg("%s %s N=%d seed=%u: exec %d %s", coll_op_name(s->req.op),
		         coll_algo_name(s->info.algo), s->req.nranks, seed, rc, msg);
}

/* ---------------------------------------------------------------- allgather */

static void run_ag(enum coll_algo algo, int n, int shape, bool plain, unsigned seed)
{
	size_t *counts = calloc((size_t)n, sizeof *counts), *pre = calloc((size_t)n + 1, sizeof *pre);
	assert_true(counts && pre);
	struct coll_req r = mkreq(COLL_OP_ALLGATHER, algo, n, 0, 1, 1);
	if (plain) {
		/* the even layout: coll_block of bytes, 4-byte elements, a
		 * trailing partial element in the last block */
		r.bytes = (size_t)(4 * n * (shape + 1) + shape);
		r.elem_size = 4;
		for (int i = 0; i < n; i++)
			coll_block(r.bytes, 4, (size_t)n, (size_t)i, &pre[i], &counts[i]);
	} else {
		for (int i = 0; i < n; i++)
			counts[i] = ag_count(shape, n, i);
		r.counts = counts;
		for (int i = 0; i < n; i++)
			pre[i] = i ? pre[i - 1] + counts[i - 1] : 0;
	}
	pre[n] = (n ? pre[n - 1] + counts[n - 1] : 0);
	struct coll_sched *s = expand_ok(&r);
	if (algo != COLL_ALGO_AUTO && s->info.algo != algo
	    && !(algo == COLL_ALGO_RECURSIVE_DOUBLING && s->info.algo == COLL_ALGO_BRUCK))
		fail_msg("asked %s, got %s", coll_algo_name(algo), coll_algo_name(s->info.algo));
	assert_int_equal(s->info.data_bytes, pre[n]);
	/* every rank receives every other block once */
	assert_int_equal(s->info.total_bytes, (uint64_t)(n - 1) * pre[n]);
	struct rbufs rb;
	rbufs_new(&rb, s);
	for (int i = 0; i < n; i++)
		for (size_t b = 0; b < counts[i]; b++)
			rb.data[i][pre[i] + b] = bpat(i, 0, b);
	exec_ok(s, &rb, seed);
	for (int r2 = 0; r2 < n; r2++)
		for (int i = 0; i < n; i++)
			for (size_t b = 0; b < counts[i]; b++)
				if (rb.data[r2][pre[i] + b] != bpat(i, 0, b))
					fail_msg("allgather %s N=%d shape=%d plain=%d seed=%u: rank %d, block "
					         "of %d byte %zu wrong", coll_algo_name(s->info.algo), n, shape,
					         plain, seed, r2, i, b);
	rbufs_free(&rb);
	coll_free(s);
	free(counts);
	free(pre);
}

static void test_allgather_every_byte(void **state)
{
	(void)state;
	enum coll_algo algos[] = { COLL_ALGO_AUTO, COLL_ALGO_RING, COLL_ALGO_RECURSIVE_DOUBLING,
	                           COLL_ALGO_BRUCK };
	for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++)
		for (int n = 1; n <= 40; n++)
			for (int shape = 0; shape < AG_SHAPES; shape++) {
				/* in posting order and in two random orders */
				unsigned seeds[3] = { 0, (unsigned)(n * 101 + shape + 1), (unsigned)(a * 7 + 3) };
				for (int k = 0; k < 3; k++)
					run_ag(algos[a], n, shape, false, seeds[k]);
				/* the plain allgather's even blocks (the ring's own is in
				 * test_coll_exec) */
				if (algos[a] != COLL_ALGO_RING)
					run_ag(algos[a], n, shape, true, seeds[1]);
			}
}

/* Rounds: recursive doubling log2 N, bruck ceil(log2 N) with one message
 * a round, the ring N-1; zero-size blocks take no transfer. */
static void test_allgather_shapes(void **state)
{
	(void)state;
	for (int n = 1; n <= 40; n++) {
		size_t *counts = calloc((size_t)n, sizeof *counts);
		assert_non_null(counts);
		for (int i = 0; i < n; i++)
			counts[i] = 8;
		struct coll_req r = mkreq(COLL_OP_ALLGATHER, COLL_ALGO_BRUCK, n, 0, 1, 1);
		r.counts = counts;
		struct coll_sched *s = expand_ok(&r);
		int lg = 0;
		while ((1 << lg) < n)
			lg++;
		assert_int_equal(s->info.steps, (uint32_t)lg);
		for (int i = 0; i < n; i++)
			for (int st = 0; st < lg; st++)
				assert_int_equal(count_kind(s, i, COLL_SEND, st, -1), 1);
		coll_free(s);
		r.algo = COLL_ALGO_RING;
		s = expand_ok(&r);
		assert_int_equal(s->info.steps, (uint32_t)(n - 1));
		assert_int_equal(s->info.commands, (uint64_t)n * (uint64_t)(n - 1));
		coll_free(s);
		/* only rank 0 has a block: the ring forwards it N-1 times, bruck
		 * and recursive doubling reach everyone in ceil(log2 N) rounds */
		for (int i = 1; i < n; i++)
			counts[i] = 0;
		s = expand_ok(&r);
		assert_int_equal(s->info.commands, (uint64_t)(n - 1));
		coll_free(s);
		free(counts);
	}
}

/* ---------------------------------------------------------------- alltoall */

/* Pair sizes: 0 uniform 4, 1 varying with zeros (diagonal too), 2 only
 * rank 0 sends, 3 all zero, 4 only the diagonal. */
#define A2A_SHAPES 5
static size_t a2a_count(int shape, int n, int from, int to)
{
	switch (shape) {
	case 0: return 4;
	case 1: return (size_t)((from * 3 + to * 5 + 1) % 6);
	case 2: return from == 0 ? (size_t)(to + 1) : 0;
	case 3: return 0;
	default: return from == to ? (size_t)(n + 2) : 0;
	}
}

static void run_a2a(int n, int shape, unsigned seed, enum coll_algo algo)
{
	size_t nn = (size_t)n * (size_t)n;
	size_t *m = calloc(nn, sizeof *m);
	assert_non_null(m);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			m[(size_t)i * (size_t)n + (size_t)j] = a2a_count(shape, n, i, j);
	struct coll_req r = mkreq(COLL_OP_ALLTOALL, algo, n, 0, 1, 1);
	r.counts = m;
	struct coll_sched *s = expand_ok(&r);
	assert_int_equal(s->info.algo, algo == COLL_ALGO_AUTO ? COLL_ALGO_PAIRWISE : algo);
	struct rbufs rb;
	rbufs_new(&rb, s);
	uint64_t moved = 0;
	for (int i = 0; i < n; i++) {
		size_t off = 0;
		for (int j = 0; j < n; j++) {
			size_t len = m[(size_t)i * (size_t)n + (size_t)j];
			for (size_t b = 0; b < len; b++)
				rb.in[i][off + b] = bpat(i, j, b);
			off += len;
			moved += i != j ? len : 0;
		}
	}
	assert_int_equal(s->info.total_bytes, moved);
	exec_ok(s, &rb, seed);
	for (int j = 0; j < n; j++) {
		size_t off = 0;
		for (int i = 0; i < n; i++) {
			size_t len = m[(size_t)i * (size_t)n + (size_t)j];
			for (size_t b = 0; b < len; b++)
				if (rb.data[j][off + b] != bpat(i, j, b))
					fail_msg("alltoallv N=%d shape=%d seed=%u: rank %d, block from %d byte "
					         "%zu wrong", n, shape, seed, j, i, b);
			off += len;
		}
		/* nothing past the column's blocks is written */
		for (size_t b = off; b < rb.dsz; b++)
			assert_int_equal(rb.data[j][b], 0xEE);
	}
	rbufs_free(&rb);

	/* each rank's part from its row and column alone is the same */
	size_t *row = calloc(2 * (size_t)n, sizeof *row);
	assert_non_null(row);
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			row[j] = m[(size_t)i * (size_t)n + (size_t)j];
			row[n + j] = m[(size_t)j * (size_t)n + (size_t)i];
		}
		struct coll_req lr = r;
		lr.counts = row;
		lr.recv_counts = row + n;
		struct coll_sched *one;
		char msg[256];
		assert_int_equal(coll_expand_rank(&lr, i, &one, msg, sizeof msg), 0);
		size_t k1, k2;
		const struct coll_cmd *c1 = coll_rank_cmds(s, i, &k1), *c2 = coll_rank_cmds(one, i, &k2);
		assert_int_equal(k1, k2);
		if (k1)
			assert_memory_equal(c1, c2, k1 * sizeof *c1);
		coll_free(one);
	}
	free(row);
	coll_free(s);
	free(m);
}

static void test_alltoallv_every_byte(void **state)
{
	(void)state;
	for (int n = 1; n <= 40; n++)
		for (int shape = 0; shape < A2A_SHAPES; shape++) {
			run_a2a(n, shape, 0, COLL_ALGO_AUTO);
			run_a2a(n, shape, (unsigned)(n * 13 + shape + 1), COLL_ALGO_AUTO);
			/* the linear one: every transfer in one step, the same bytes */
			run_a2a(n, shape, (unsigned)(n * 7 + shape + 3), COLL_ALGO_LINEAR);
		}
}

/* ---------------------------------------------------------------- choice, errors, cost */

static void test_choice(void **state)
{
	(void)state;
	char msg[256] = "";
	struct coll_choice ch;
	size_t c8[8] = { 1, 0, 3, 4, 5, 6, 7, 8 }, c6[6] = { 1, 2, 3, 4, 5, 6 };
	struct coll_req r = mkreq(COLL_OP_ALLGATHER, COLL_ALGO_AUTO, 8, 0, 1, 1);
	r.counts = c8;
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), 0);
	assert_int_equal(ch.algo, COLL_ALGO_RECURSIVE_DOUBLING);
	r.nranks = 6;
	r.counts = c6;
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), 0);
	assert_int_equal(ch.algo, COLL_ALGO_BRUCK);
	/* the short rule looks at the whole output, not a block */
	c6[5] = 64 * 1024;
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), 0);
	assert_int_equal(ch.algo, COLL_ALGO_RING);
	/* per-rank counts: the one-way ring, whatever the ports */
	r.ports = 2;
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), 0);
	assert_int_equal(ch.algo, COLL_ALGO_RING);
	r.algo = COLL_ALGO_RING_BIDIR;
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), 0);
	assert_int_equal(ch.algo, COLL_ALGO_RING);
	assert_non_null(strstr(ch.warning, "counts"));
	r.algo = COLL_ALGO_RECURSIVE_DOUBLING;
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), 0);
	assert_int_equal(ch.algo, COLL_ALGO_BRUCK);
	assert_non_null(strstr(ch.warning, "power-of-two"));
	r.algo = COLL_ALGO_TREE;
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), -ENOTSUP);
	/* the plain allgather: short goes by rounds, long by the ring rule */
	r = mkreq(COLL_OP_ALLGATHER, COLL_ALGO_AUTO, 16, 1024, 1, 2);
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), 0);
	assert_int_equal(ch.algo, COLL_ALGO_RECURSIVE_DOUBLING);
	r.bytes = 1 << 20;
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), 0);
	assert_int_equal(ch.algo, COLL_ALGO_RING_BIDIR);
	/* bruck is allgather's only */
	r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_BRUCK, 6, 64, 1, 1);
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), -ENOTSUP);

	/* a rank's row and column: that rank's part only */
	size_t rc4[8] = { 1, 2, 3, 4, 4, 3, 2, 1 };
	struct coll_sched *s = (struct coll_sched *)1;
	r = mkreq(COLL_OP_ALLTOALL, COLL_ALGO_AUTO, 4, 0, 1, 1);
	r.counts = rc4;
	r.recv_counts = rc4 + 4;
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
	assert_null(s);
	assert_non_null(strstr(msg, "coll_expand_rank"));
	struct coll_info info;
	assert_int_equal(coll_summarize(&r, &info, NULL, msg, sizeof msg), -EINVAL);
	assert_int_equal(coll_expand_rank(&r, 2, &s, msg, sizeof msg), 0);
	assert_int_equal(s->info.input_bytes, 10);
	assert_int_equal(s->info.data_bytes, 10);
	coll_free(s);
	/* a copy to itself the row and column disagree on runs past neither */
	size_t odd[8] = { 1, 2, 9, 4, 4, 3, 2, 1 };
	r.counts = odd;
	r.recv_counts = odd + 4;
	assert_int_equal(coll_expand_rank(&r, 2, &s, msg, sizeof msg), 0);
	assert_int_equal(count_kind(s, 2, COLL_COPY, -1, -1), 1);
	for (size_t k = 0; k < s->ranks[0].ncmds; k++)
		if (s->ranks[0].cmds[k].kind == COLL_COPY)
			assert_int_equal(s->ranks[0].cmds[k].len, 2);
	assert_true(coll_data_span(s, 2) <= s->info.data_bytes);
	coll_free(s);
	r.counts = rc4;
	r.recv_counts = rc4 + 4;
	/* recv_counts belongs to alltoall with counts */
	r.op = COLL_OP_ALLGATHER;
	assert_int_equal(coll_expand_rank(&r, 2, &s, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "recv_counts"));
	r.op = COLL_OP_ALLTOALL;
	r.counts = NULL;
	assert_int_equal(coll_expand_rank(&r, 2, &s, msg, sizeof msg), -EINVAL);
	/* sums that overflow a buffer size */
	size_t huge[4] = { SIZE_MAX / 4, SIZE_MAX / 4, SIZE_MAX / 4, 1 };
	r = mkreq(COLL_OP_ALLGATHER, COLL_ALGO_AUTO, 4, 0, 1, 1);
	r.counts = huge;
	assert_int_equal(coll_choose(&r, &ch, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "overflow"));
	size_t hm[4] = { SIZE_MAX / 2, 1, 0, 0 };
	r = mkreq(COLL_OP_ALLTOALL, COLL_ALGO_AUTO, 2, 0, 1, 1);
	r.counts = hm;
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
}

static double cost_of(struct coll_req *r, double alpha, double beta)
{
	struct coll_sched *s = expand_ok(r);
	struct coll_cost_params cp = { .alpha = alpha, .beta = beta };
	struct coll_cost c;
	assert_int_equal(coll_cost(s, &cp, &c), 0);
	coll_free(s);
	return c.time;
}

static void near(double got, double want, const char *what)
{
	if (got < want * 0.999 || got > want * 1.001)
		fail_msg("%s: %.4g, want %.4g", what, got, want);
}

/* alpha only: latency rounds; beta only: the busiest rank's bytes */
static void test_cost(void **state)
{
	(void)state;
	size_t c[8] = { 8, 8, 8, 8, 8, 8, 8, 8 };
	struct coll_req r = mkreq(COLL_OP_ALLGATHER, COLL_ALGO_AUTO, 8, 0, 1, 1);
	r.counts = c;
	near(cost_of(&r, 1, 0), 3, "recursive doubling N=8");
	r.algo = COLL_ALGO_RING;
	near(cost_of(&r, 1, 0), 7, "ring N=8");
	r.nranks = 6;
	r.algo = COLL_ALGO_AUTO;
	near(cost_of(&r, 1, 0), 3, "bruck N=6");
	r.algo = COLL_ALGO_RING;
	near(cost_of(&r, 1, 0), 5, "ring N=6");
	/* bandwidth: every algorithm moves N-1 blocks into each rank */
	r.algo = COLL_ALGO_BRUCK;
	near(cost_of(&r, 0, 1), 40, "bruck N=6 bytes");
	r.algo = COLL_ALGO_RING;
	near(cost_of(&r, 0, 1), 40, "ring N=6 bytes");
	/* one large block: the ring forwards it step after step */
	c[0] = 1000;
	near(cost_of(&r, 0, 1), 5000, "ring N=6, one 1000-byte block");

	/* alltoallv: N-1 pairwise steps; zero pairs cost nothing */
	size_t m[16] = { 0 };
	for (int i = 0; i < 16; i++)
		m[i] = (size_t)(i % 5 == 0 ? 0 : 10);
	r = mkreq(COLL_OP_ALLTOALL, COLL_ALGO_AUTO, 4, 0, 1, 1);
	r.counts = m;
	near(cost_of(&r, 1, 0), 3, "pairwise N=4");
	near(cost_of(&r, 0, 1), 30, "pairwise N=4 bytes");
	memset(m, 0, sizeof m);
	m[1] = 100; /* rank 0 to rank 1 only */
	near(cost_of(&r, 1, 1), 101, "pairwise N=4, one pair");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allgather_every_byte),
		cmocka_unit_test(test_allgather_shapes),
		cmocka_unit_test(test_alltoallv_every_byte),
		cmocka_unit_test(test_choice),
		cmocka_unit_test(test_cost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
