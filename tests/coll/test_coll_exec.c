/* Every algorithm, executed on real data for N = 1..64 by the reference
 * executor, against a direct computation. */
#include <math.h>
#include <stdbool.h>

#include "coll_test_util.h"

struct algo_case {
	enum coll_op op;
	enum coll_algo algo;
	int ports;
};

static const struct algo_case cases[] = {
	{ COLL_OP_ALLREDUCE, COLL_ALGO_RING, 1 },
	{ COLL_OP_ALLREDUCE, COLL_ALGO_RING_SENDRECV, 1 },
	{ COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, 2 },
	{ COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 1 },
	{ COLL_OP_ALLREDUCE, COLL_ALGO_TREE, 2 },
	{ COLL_OP_ALLREDUCE, COLL_ALGO_RECURSIVE_DOUBLING, 1 },
	{ COLL_OP_REDUCE_SCATTER, COLL_ALGO_RING, 1 },
	{ COLL_OP_REDUCE_SCATTER, COLL_ALGO_RING_SENDRECV, 1 },
	{ COLL_OP_REDUCE_SCATTER, COLL_ALGO_RING_BIDIR, 2 },
	{ COLL_OP_ALLGATHER, COLL_ALGO_RING, 1 },
	{ COLL_OP_ALLGATHER, COLL_ALGO_RING_SENDRECV, 1 },
	{ COLL_OP_ALLGATHER, COLL_ALGO_RING_BIDIR, 2 },
	{ COLL_OP_ALLTOALL, COLL_ALGO_PAIRWISE, 1 },
	{ COLL_OP_ALLTOALL, COLL_ALGO_LINEAR, 1 },
	{ COLL_OP_BCAST, COLL_ALGO_BINOMIAL, 1 },
	{ COLL_OP_BCAST, COLL_ALGO_SCATTER_ALLGATHER, 1 },
	{ COLL_OP_REDUCE, COLL_ALGO_OWNER, 1 },
	{ COLL_OP_REDUCE, COLL_ALGO_TREE, 1 },
	{ COLL_OP_BARRIER, COLL_ALGO_DISSEMINATION, 1 },
};
#define NCASES (sizeof cases / sizeof cases[0])

/* Integer-valued inputs: every order of adding them is exact, so any
 * correct schedule must reproduce the direct sum bit for bit. */
static long long ival(int rank, size_t e)
{
	return (long long)((rank * 131 + (long long)e * 17) % 41) - 20;
}

static void put_val(void *buf, size_t e, enum coll_dtype dt, double v)
{
	unsigned char *p = (unsigned char *)buf + e * coll_dtype_size(dt);
	int32_t i32 = (int32_t)v;
	int64_t i64 = (int64_t)v;
	float f = (float)v;
	switch (dt) {
	case COLL_INT32: memcpy(p, &i32, 4); break;
	case COLL_INT64: memcpy(p, &i64, 8); break;
	case COLL_FLOAT: memcpy(p, &f, sizeof f); break;
	default: memcpy(p, &v, sizeof v); break;
	}
}

static uint8_t pat(int rank, size_t b, int salt)
{
	return (uint8_t)(rank * 37 + b * 11 + (size_t)salt * 101 + 1);
}

struct bufset {
	int n;
	struct coll_bufs *b;
	unsigned char **data, **in, **scr;
};

static void bufs_alloc(struct bufset *bs, const struct coll_sched *s)
{
	int n = s->req.nranks;
	bs->n = n;
	bs->b = calloc((size_t)n, sizeof *bs->b);
	bs->data = calloc((size_t)n, sizeof *bs->data);
	bs->in = calloc((size_t)n, sizeof *bs->in);
	bs->scr = calloc((size_t)n, sizeof *bs->scr);
	assert_non_null(bs->b);
	for (int r = 0; r < n; r++) {
		bs->data[r] = malloc(s->info.data_bytes + 1);
		bs->in[r] = malloc(s->info.input_bytes + 1);
		bs->scr[r] = malloc(s->info.scratch_bytes + 1);
		assert_non_null(bs->data[r]);
		memset(bs->data[r], 0xEE, s->info.data_bytes + 1);
		memset(bs->scr[r], 0xDD, s->info.scratch_bytes + 1);
		bs->b[r].data = bs->data[r];
		bs->b[r].input = bs->in[r];
		bs->b[r].scratch = bs->scr[r];
	}
}

static void bufs_free(struct bufset *bs)
{
	for (int r = 0; r < bs->n; r++) {
		free(bs->data[r]);
		free(bs->in[r]);
		free(bs->scr[r]);
	}
	free(bs->data);
	free(bs->in);
	free(bs->scr);
	free(bs->b);
}

static double fold(enum coll_redop op, double acc, double v)
{
	switch (op) {
	case COLL_MAX: return v > acc ? v : acc;
	case COLL_MIN: return v < acc ? v : acc;
	default: return acc + v;
	}
}

/* fill inputs, run, compare; returns nothing, fails the test on mismatch */
static void run_and_check(const struct coll_req *req, enum coll_dtype dt, enum coll_redop op,
                          unsigned seed)
{
	struct coll_sched *s = expand_ok(req);
	int n = req->nranks;
	size_t esz = coll_dtype_size(dt), bytes = req->bytes;
	struct bufset bs;
	bufs_alloc(&bs, s);

	enum coll_op cop = req->op;
	bool reduces = cop == COLL_OP_ALLREDUCE || cop == COLL_OP_REDUCE_SCATTER
	               || cop == COLL_OP_REDUCE;
	size_t cnt = reduces ? bytes / esz : 0;
	for (int r = 0; r < n; r++) {
		if (reduces) {
			for (size_t e = 0; e < cnt; e++)
				put_val(bs.data[r], e, dt, (double)ival(r, e));
		} else if (cop == COLL_OP_ALLGATHER) {
			size_t off, len;
			coll_block(bytes, req->elem_size, (size_t)n, (size_t)r, &off, &len);
			for (size_t b = off; b < off + len; b++)
				bs.data[r][b] = pat(r, b, 0);
		} else if (cop == COLL_OP_ALLTOALL) {
			for (size_t b = 0; b < (size_t)n * bytes; b++)
				bs.in[r][b] = pat(r, b, 1);
		} else if (cop == COLL_OP_BCAST && r == req->root) {
			for (size_t b = 0; b < bytes; b++)
				bs.data[r][b] = pat(r, b, 2);
		}
	}

	char msg[256] = "";
	struct coll_exec_opts o = { dt, op, seed };
	int rc = coll_exec_run(s, bs.b, &o, msg, sizeof msg);
	if (rc)
		fail_msg("%s %s N=%d bytes=%zu chunks=%d: exec %d %s", coll_op_name(cop),
		         coll_algo_name(s->info.algo), n, bytes, req->num_chunks, rc, msg);

	unsigned char *want = malloc(cnt * esz + 1);
	assert_non_null(want);
	for (size_t e = 0; e < cnt; e++) {
		double acc = (double)ival(0, e);
		for (int r = 1; r < n; r++)
			acc = fold(op, acc, (double)ival(r, e));
		put_val(want, e, dt, acc);
	}
	for (int r = 0; r < n; r++) {
		size_t lo = 0, hi = 0;
		bool check = true;
		switch (cop) {
		case COLL_OP_ALLREDUCE:
			hi = cnt * esz;
			break;
		case COLL_OP_REDUCE_SCATTER:
			coll_block(bytes, req->elem_size, (size_t)n, (size_t)r, &lo, &hi);
			hi += lo;
			break;
		case COLL_OP_REDUCE:
			check = r == req->root;
			hi = cnt * esz;
			break;
		default:
			check = false;
		}
		if (check && memcmp(bs.data[r] + lo, want + lo, hi - lo))
			fail_msg("%s %s %s/%s N=%d bytes=%zu chunks=%d seed=%u: rank %d wrong",
			         coll_op_name(cop), coll_algo_name(s->info.algo), coll_dtype_name(dt),
			         coll_redop_name(op), n, bytes, req->num_chunks, seed, r);
		if (cop == COLL_OP_ALLGATHER || cop == COLL_OP_BCAST) {
			for (size_t b = 0; b < bytes; b++) {
				int owner = req->root;
				if (cop == COLL_OP_ALLGATHER) {
					for (owner = 0; owner < n - 1; owner++) {
						size_t off, len;
						coll_block(bytes, req->elem_size, (size_t)n, (size_t)owner, &off, &len);
						if (b < off + len)
							break;
					}
				}
				if (bs.data[r][b] != pat(owner, b, cop == COLL_OP_ALLGATHER ? 0 : 2))
					fail_msg("%s %s N=%d bytes=%zu chunks=%d: rank %d byte %zu wrong",
					         coll_op_name(cop), coll_algo_name(s->info.algo), n, bytes,
					         req->num_chunks, r, b);
			}
		}
		if (cop == COLL_OP_ALLTOALL)
			for (int j = 0; j < n; j++)
				for (size_t b = 0; b < bytes; b++)
					if (bs.data[r][(size_t)j * bytes + b]
					    != pat(j, (size_t)r * bytes + b, 1))
						fail_msg("alltoall N=%d bytes=%zu: rank %d block %d wrong", n,
						         bytes, r, j);
		/* nothing may be written past the buffer */
		assert_int_equal(bs.data[r][s->info.data_bytes], 0xEE);
		assert_int_equal(bs.scr[r][s->info.scratch_bytes], 0xDD);
	}
	free(want);
	bufs_free(&bs);
	coll_free(s);
}

/* N = 1..64; M = 0, M < N, M not a multiple of N, and larger; chunks 1..4;
 * every dtype and op somewhere in the sweep. */
static void test_all_algorithms_small_groups(void **state)
{
	(void)state;
	for (size_t a = 0; a < NCASES; a++) {
		for (int n = 1; n <= 64; n++) {
			size_t counts[4] = { 0, (size_t)(n / 2) + 1, (size_t)(3 * n + 1), 7 };
			for (int k = 0; k < 4; k++) {
				enum coll_dtype dt = (enum coll_dtype)((n + k + (int)a) % COLL_DTYPE_COUNT);
				enum coll_redop op = (enum coll_redop)((n + 2 * k) % COLL_REDOP_COUNT);
				size_t esz = coll_dtype_size(dt);
				struct coll_req r = mkreq(cases[a].op, cases[a].algo, n, counts[k] * esz,
				                          1 + (n + k) % 4, cases[a].ports);
				r.elem_size = esz;
				r.root = (n * 7 + k) % n;
				/* random delivery order on part of the sweep */
				unsigned seed = (n % 3 == 0) ? (unsigned)(n * 977 + k) : 0;
				run_and_check(&r, dt, op, seed);
			}
		}
	}
}

/* chunks 1..4 on every ring algorithm at a few sizes, all four types */
static void test_ring_chunks(void **state)
{
	(void)state;
	int ns[] = { 2, 3, 4, 5, 7, 8, 16, 17 };
	for (size_t a = 0; a < NCASES; a++) {
		if (cases[a].algo != COLL_ALGO_RING && cases[a].algo != COLL_ALGO_RING_BIDIR
		    && cases[a].algo != COLL_ALGO_RING_SENDRECV)
			continue;
		for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
			for (int c = 1; c <= 4; c++)
				for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++) {
					size_t esz = coll_dtype_size((enum coll_dtype)dt);
					struct coll_req r = mkreq(cases[a].op, cases[a].algo, ns[i],
					                          (size_t)(ns[i] * c * 3 + 2) * esz, c,
					                          cases[a].ports);
					r.elem_size = esz;
					run_and_check(&r, (enum coll_dtype)dt, COLL_SUM, (unsigned)c);
				}
	}
}

/* data movement does not need whole elements: odd byte counts with a 4-byte
 * element size, the trailing partial element riding in the last block */
static void test_partial_elements_move(void **state)
{
	(void)state;
	for (size_t a = 0; a < NCASES; a++) {
		enum coll_op op = cases[a].op;
		if (op != COLL_OP_ALLGATHER && op != COLL_OP_BCAST && op != COLL_OP_ALLTOALL)
			continue;
		for (int n = 1; n <= 20; n++) {
			struct coll_req r = mkreq(op, cases[a].algo, n, (size_t)(4 * n + 3), 2,
			                          cases[a].ports);
			r.elem_size = 4;
			r.root = n / 2;
			run_and_check(&r, COLL_INT32, COLL_SUM, 0);
		}
	}
}

/* reductions refuse a byte count that is not whole elements */
static void test_partial_elements_reduce_rejected(void **state)
{
	(void)state;
	for (size_t a = 0; a < NCASES; a++) {
		enum coll_op op = cases[a].op;
		if (op != COLL_OP_ALLREDUCE && op != COLL_OP_REDUCE_SCATTER && op != COLL_OP_REDUCE)
			continue;
		struct coll_req r = mkreq(op, cases[a].algo, 4, 10, 1, cases[a].ports);
		r.elem_size = 4;
		struct coll_sched *s = (struct coll_sched *)1;
		char msg[200] = "";
		assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
		assert_null(s);
		assert_non_null(strstr(msg, "element"));
	}
}

/* Non-integer floats: the sum's bits depend on the order of additions, so
 * identical results across delivery orders show the order is the
 * schedule's, not the arrival's. */
static void run_random_float(const struct coll_req *req, unsigned seed, unsigned char **out)
{
	struct coll_sched *s = expand_ok(req);
	struct bufset bs;
	bufs_alloc(&bs, s);
	size_t cnt = req->bytes / sizeof(double);
	for (int r = 0; r < req->nranks; r++)
		for (size_t e = 0; e < cnt; e++)
			put_val(bs.data[r], e, COLL_DOUBLE,
			        1.0 / (double)(r + 3) + (double)e * 1e-3 + (double)(r % 7) * 1e7);
	char msg[256] = "";
	struct coll_exec_opts o = { COLL_DOUBLE, COLL_SUM, seed };
	int rc = coll_exec_run(s, bs.b, &o, msg, sizeof msg);
	if (rc)
		fail_msg("exec: %s", msg);
	int keep = req->op == COLL_OP_REDUCE ? req->root : 0;
	*out = malloc(req->bytes + 1);
	memcpy(*out, bs.data[keep], req->bytes);
	bufs_free(&bs);
	coll_free(s);
}

static void test_repeatable_bits(void **state)
{
	(void)state;
	for (size_t a = 0; a < NCASES; a++) {
		enum coll_op op = cases[a].op;
		if (op != COLL_OP_ALLREDUCE && op != COLL_OP_REDUCE)
			continue;
		int ns[] = { 5, 8, 13 };
		for (size_t i = 0; i < 3; i++) {
			struct coll_req r = mkreq(op, cases[a].algo, ns[i], 40 * sizeof(double), 3,
			                          cases[a].ports);
			r.elem_size = sizeof(double);
			r.root = 1;
			unsigned char *first, *again;
			run_random_float(&r, 0, &first);
			for (unsigned seed = 1; seed <= 4; seed++) {
				run_random_float(&r, seed * 7919, &again);
				assert_memory_equal(first, again, r.bytes);
				free(again);
			}
			free(first);
		}
	}
}

/* Recursive doubling: every rank ends with the same bits (both partners
 * of a step combine lower OP upper), whatever the delivery order. */
static void test_recursive_doubling_same_bits(void **state)
{
	(void)state;
	int ns[] = { 2, 4, 8, 16 };
	for (size_t i = 0; i < 4; i++) {
		struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RECURSIVE_DOUBLING, ns[i],
		                          24 * sizeof(double), 1, 1);
		r.elem_size = sizeof(double);
		struct coll_sched *s = expand_ok(&r);
		assert_int_equal(s->info.algo, COLL_ALGO_RECURSIVE_DOUBLING);
		assert_int_equal(s->info.steps, (uint32_t)(i + 1)); /* log2 N exchanges */
		/* one add a step into DATA, the upper rank's with the lower's
		 * part first (src_first), and nothing copied back */
		for (int k = 0; k < ns[i]; k++) {
			size_t nc, adds = 0;
			const struct coll_cmd *c = coll_rank_cmds(s, k, &nc);
			for (size_t j = 0; j < nc; j++) {
				assert_int_not_equal(c[j].kind, COLL_COPY);
				if (c[j].kind != COLL_REDUCE)
					continue;
				adds++;
				assert_int_equal(c[j].buf, COLL_BUF_DATA);
				assert_int_equal(c[j].src_first, (k >> c[j].step) & 1);
			}
			assert_int_equal(adds, i + 1);
		}
		struct bufset bs;
		bufs_alloc(&bs, s);
		for (int k = 0; k < ns[i]; k++)
			for (size_t e = 0; e < 24; e++)
				put_val(bs.data[k], e, COLL_DOUBLE, 1.0 / (double)(k + 3) + (double)e * 1e-3);
		char msg[256] = "";
		struct coll_exec_opts o = { COLL_DOUBLE, COLL_SUM, 4211u + (unsigned)i };
		if (coll_exec_run(s, bs.b, &o, msg, sizeof msg))
			fail_msg("exec: %s", msg);
		for (int k = 1; k < ns[i]; k++)
			assert_memory_equal(bs.data[0], bs.data[k], r.bytes);
		bufs_free(&bs);
		coll_free(s);
	}
}

/* A value of rank k's element e whose sums round: the order of the adds
 * shows in the bits. */
static double frac_val(int k, size_t e)
{
	return 1.0 / (double)(k + 3) + (double)e * 1e-3 + (double)(k % 5) * 1e7;
}

/* Runs r (doubles) with the input in DATA and apart (r.input), the same
 * values, in every delivery order: rank only's DATA, or with only < 0
 * every rank's, has the in-place run's bits (rank 0's for every rank; a
 * reduce_scatter's, each rank's own block); every rank's INPUT is left as
 * it was. */
/* A rank's first add of its bytes with the input apart (from_input) takes
 * the other operand from its own destination, where the receive put it,
 * so the add is two-operand (dst OP= INPUT), as the cost model charges
 * it; ring_sendrecv's receives land in scratch by definition. Every
 * algorithm that reads INPUT in an add has such adds from 2 ranks. */
static void from_input_in_place(const struct coll_sched *s, int n, enum coll_algo algo)
{
	size_t seen = 0;
	for (int k = 0; k < n; k++) {
		size_t nc;
		const struct coll_cmd *c = coll_rank_cmds(s, k, &nc);
		for (size_t i = 0; i < nc; i++) {
			if (!c[i].from_input)
				continue;
			seen++;
			if (algo == COLL_ALGO_RING_SENDRECV)
				continue;
			if (c[i].src_buf != c[i].buf || c[i].src_off != c[i].off)
				fail_msg("%s N=%d rank %d command %llu: from_input add's operand at buffer %d offset %zu, "
				         "not its destination (buffer %d offset %zu)", coll_algo_name(algo), n, k,
				         (unsigned long long)c[i].id, c[i].src_buf, c[i].src_off, c[i].buf, c[i].off);
		}
	}
	if (n > 1 && algo != COLL_ALGO_RECURSIVE_DOUBLING && !seen)
		fail_msg("%s N=%d: no from_input add", coll_algo_name(algo), n);
}

static void same_bits_apart(struct coll_req r, int n, int only)
{
	size_t cnt = r.bytes / sizeof(double);
	r.elem_size = sizeof(double);
	struct coll_sched *s = expand_ok(&r);
	r.input = true;
	struct coll_sched *sa = expand_ok(&r);
	assert_int_equal(sa->info.algo, s->info.algo);
	assert_int_equal(sa->info.input_bytes, r.bytes);
	from_input_in_place(sa, n, sa->info.algo);
	struct bufset bs, ba;
	bufs_alloc(&bs, s);
	bufs_alloc(&ba, sa);
	for (int k = 0; k < n; k++)
		for (size_t e = 0; e < cnt; e++) {
			double v = frac_val(k, e);
			put_val(bs.data[k], e, COLL_DOUBLE, v);
			put_val(ba.in[k], e, COLL_DOUBLE, v);
		}
	char msg[256] = "";
	struct coll_exec_opts o = { COLL_DOUBLE, COLL_SUM, 0 };
	if (coll_exec_run(s, bs.b, &o, msg, sizeof msg))
		fail_msg("exec %s %s: %s", coll_op_name(r.op), coll_algo_name(r.algo), msg);
	for (unsigned seed = 0; seed < 4; seed++) {
		o.seed = seed * 7919u;
		for (int k = 0; k < n; k++)
			memset(ba.data[k], 0xEE, r.bytes);
		if (coll_exec_run(sa, ba.b, &o, msg, sizeof msg))
			fail_msg("exec %s %s (input apart) N=%d: %s", coll_op_name(r.op), coll_algo_name(r.algo), n,
			         msg);
		for (int k = 0; k < n; k++) {
			if (r.op == COLL_OP_REDUCE_SCATTER) {
				size_t off, len;
				coll_block(r.bytes, sizeof(double), (size_t)n, (size_t)k, &off, &len);
				assert_memory_equal(bs.data[k] + off, ba.data[k] + off, len);
			} else if (only < 0 || k == only) {
				assert_memory_equal(bs.data[only < 0 ? 0 : only], ba.data[k], r.bytes);
			}
			for (size_t e = 0; e < cnt; e += cnt - 1) {
				unsigned char want[sizeof(double)];
				put_val(want, 0, COLL_DOUBLE,
				        frac_val(k, e));
				assert_memory_equal(ba.in[k] + e * sizeof(double), want, sizeof want);
			}
		}
	}
	bufs_free(&bs);
	bufs_free(&ba);
	coll_free(s);
	coll_free(sa);
}

/* With the input apart (req.input: recursive doubling's step 0 reads
 * INPUT; the rings send their first block from INPUT and take the rank's
 * part of each reduction from it, from_input; halving-doubling's first
 * step and the tree's first add and leaves do the same) every rank gets the same
 * bits as with the input in DATA, in every delivery order, at 1-64 ranks,
 * with one chunk or several and vectors the ring cuts unevenly, and INPUT
 * is left as it was (ring_bidir too: its own block's second partial sum
 * adds into the first add's result); those adds receive into their
 * destination (from_input_in_place); scan refuses. */
static void input_apart_same_bits(enum coll_algo algo, int n, size_t cnt, int chunks)
{
	same_bits_apart(mkreq(COLL_OP_ALLREDUCE, algo, n, cnt * sizeof(double), chunks,
	                      algo == COLL_ALGO_RING_BIDIR ? 2 : 1), n, -1);
}

/* Reduce with the input apart (owner and tree): the root gets the same
 * bits as with the input in DATA, in every delivery order, for any root;
 * INPUT is left as it was on every rank (a leaf sends it, the root's and
 * the inner ranks' first add reads it). */
static void reduce_apart_same_bits(enum coll_algo algo, int n, size_t cnt, int root)
{
	struct coll_req r = mkreq(COLL_OP_REDUCE, algo, n, cnt * sizeof(double), 1, 1);
	r.root = root;
	same_bits_apart(r, n, root);
}

static void test_input_apart(void **state)
{
	(void)state;
	int ns[] = { 1, 2, 3, 4, 7, 8, 16, 64 };
	for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
		if ((ns[i] & (ns[i] - 1)) == 0)
			input_apart_same_bits(COLL_ALGO_RECURSIVE_DOUBLING, ns[i], 21, 1);
		input_apart_same_bits(COLL_ALGO_RING, ns[i], 21, 1);
		input_apart_same_bits(COLL_ALGO_RING, ns[i], 9001, 1);
		input_apart_same_bits(COLL_ALGO_RING, ns[i], 5000, 3);
		input_apart_same_bits(COLL_ALGO_RING_SENDRECV, ns[i], 5000, 2);
		input_apart_same_bits(COLL_ALGO_RING_BIDIR, ns[i], 21, 1);
		input_apart_same_bits(COLL_ALGO_RING_BIDIR, ns[i], 9001, 1);
		input_apart_same_bits(COLL_ALGO_RING_BIDIR, ns[i], 5000, 3);
		input_apart_same_bits(COLL_ALGO_TREE, ns[i], 21, 1);
		input_apart_same_bits(COLL_ALGO_TREE, ns[i], 9001, 1);
		if ((ns[i] & (ns[i] - 1)) == 0) {
			input_apart_same_bits(COLL_ALGO_HALVING_DOUBLING, ns[i], 21, 1);
			input_apart_same_bits(COLL_ALGO_HALVING_DOUBLING, ns[i], 9001, 1);
		}
		same_bits_apart(mkreq(COLL_OP_REDUCE_SCATTER, COLL_ALGO_RING, ns[i], 9001 * sizeof(double), 1, 1),
		                ns[i], -1);
		same_bits_apart(mkreq(COLL_OP_REDUCE_SCATTER, COLL_ALGO_RING_BIDIR, ns[i], 5000 * sizeof(double), 3,
		                      2), ns[i], -1);
		for (int root = 0; root < ns[i]; root += ns[i] > 4 ? ns[i] / 3 : 1) {
			reduce_apart_same_bits(COLL_ALGO_TREE, ns[i], 21, root);
			reduce_apart_same_bits(COLL_ALGO_OWNER, ns[i], 21, root);
		}
		reduce_apart_same_bits(COLL_ALGO_TREE, ns[i], 9001, ns[i] - 1);
	}
	char msg[256] = "";
	struct coll_sched *s = NULL;
	assert_true(coll_input_apart(COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR));
	assert_true(coll_input_apart(COLL_OP_REDUCE, COLL_ALGO_OWNER));
	assert_true(coll_input_apart(COLL_OP_REDUCE_SCATTER, COLL_ALGO_RING_SENDRECV));
	struct coll_req r = mkreq(COLL_OP_SCAN, COLL_ALGO_AUTO, 4, 64, 1, 1);
	r.input = true;
	assert_false(coll_input_apart(COLL_OP_SCAN, COLL_ALGO_CHAIN));
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "only allreduce, reduce and reduce_scatter"));
	assert_null(s);
}

/* A reduce_scatter with counts (MPI_Reduce_scatter's recvcounts, in
 * bytes): rank k's DATA holds at the sum of counts[0..k) its block, the
 * exact sum of every rank's integer-valued input there, with the input in
 * DATA or apart (INPUT then untouched), in every delivery order, and
 * nothing past DATA or scratch written; non-integer values give the same
 * bits either way and in every order. Blocks of 0 elements, blocks longer
 * than the rest, several chunks; the ring family, and nothing else. */
static double ival_d(int k, size_t e) { return (double)ival(k, e); }

static void rs_counts_case(enum coll_algo algo, int n, const size_t *elems, int chunks)
{
	size_t counts[64], pre[65] = { 0 };
	for (int k = 0; k < n; k++) {
		counts[k] = elems[k] * sizeof(double);
		pre[k + 1] = pre[k] + counts[k];
	}
	size_t cnt = pre[n] / sizeof(double);
	for (int exact = 0; exact < 2; exact++) {
		double (*in_val)(int, size_t) = exact ? ival_d : frac_val;
		unsigned char *first[64] = { 0 };
		for (int apart = 0; apart < 2; apart++) {
			struct coll_req r = mkreq(COLL_OP_REDUCE_SCATTER, algo, n, 0, chunks,
			                          algo == COLL_ALGO_RING_BIDIR ? 2 : 1);
			r.elem_size = sizeof(double);
			r.counts = counts;
			r.input = apart;
			struct coll_sched *s = expand_ok(&r);
			assert_int_equal(s->info.algo, algo);
			assert_int_equal(s->info.data_bytes, pre[n]);
			for (unsigned seed = 0; seed < 4; seed++) {
				struct bufset bs;
				bufs_alloc(&bs, s);
				for (int k = 0; k < n; k++)
					for (size_t e = 0; e < cnt; e++) {
						put_val(apart ? bs.in[k] : bs.data[k], e, COLL_DOUBLE, in_val(k, e));
					}
				char msg[256] = "";
				struct coll_exec_opts o = { COLL_DOUBLE, COLL_SUM, seed * 7919u };
				if (coll_exec_run(s, bs.b, &o, msg, sizeof msg))
					fail_msg("exec reduce_scatter %s N=%d counts: %s", coll_algo_name(algo), n, msg);
				for (int k = 0; k < n; k++) {
					unsigned char *own = bs.data[k] + pre[k];
					if (exact) {
						for (size_t e = pre[k] / sizeof(double); e < pre[k + 1] / sizeof(double); e++) {
							double sum = 0;
							unsigned char want[sizeof(double)];
							for (int j = 0; j < n; j++)
								sum += (double)ival(j, e);
							put_val(want, 0, COLL_DOUBLE, sum);
							assert_memory_equal(bs.data[k] + e * sizeof(double), want, sizeof want);
						}
					} else if (!first[k]) {
						first[k] = malloc(counts[k] + 1);
						assert_non_null(first[k]);
						memcpy(first[k], own, counts[k]);
					} else {
						assert_memory_equal(first[k], own, counts[k]);
					}
					for (size_t e = 0; apart && e < cnt; e++) {
						unsigned char want[sizeof(double)];
						put_val(want, 0, COLL_DOUBLE, in_val(k, e));
						assert_memory_equal(bs.in[k] + e * sizeof(double), want, sizeof want);
					}
					assert_int_equal(bs.data[k][s->info.data_bytes], 0xEE);
					assert_int_equal(bs.scr[k][s->info.scratch_bytes], 0xDD);
				}
				bufs_free(&bs);
			}
			coll_free(s);
		}
		for (int k = 0; k < n; k++)
			free(first[k]);
	}
}

static void test_reduce_scatter_counts(void **state)
{
	(void)state;
	static const size_t uneven[] = { 3, 0, 9001, 1, 17, 0, 250, 5, 2, 40, 7, 0, 1, 64, 3, 11 };
	static const size_t one[] = { 0, 0, 0, 5, 0, 0, 0, 0 };
	int ns[] = { 1, 2, 3, 4, 7, 8, 16 };
	for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
		rs_counts_case(COLL_ALGO_RING, ns[i], uneven, 1);
		rs_counts_case(COLL_ALGO_RING, ns[i], uneven, 3);
		rs_counts_case(COLL_ALGO_RING_SENDRECV, ns[i], uneven, 2);
		rs_counts_case(COLL_ALGO_RING_BIDIR, ns[i], uneven, 1);
		rs_counts_case(COLL_ALGO_RING_BIDIR, ns[i], uneven, 3);
		if (ns[i] <= 8)
			rs_counts_case(COLL_ALGO_RING_BIDIR, ns[i], one, 2);
	}
	/* what the ring family alone takes, and blocks of whole elements */
	size_t counts[4] = { 8, 16, 8, 24 };
	char msg[256] = "";
	struct coll_sched *s = NULL;
	struct coll_req r = mkreq(COLL_OP_REDUCE_SCATTER, COLL_ALGO_HALVING_DOUBLING, 4, 0, 1, 1);
	r.elem_size = 8;
	r.counts = counts;
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -ENOTSUP);
	assert_null(s);
	r.algo = COLL_ALGO_AUTO;
	counts[2] = 12;
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "block 2 of 12 bytes is not a whole number of 8-byte elements"));
	assert_null(s);
	r.op = COLL_OP_SCAN;
	counts[2] = 8;
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "scan takes no per-rank counts"));
	assert_null(s);
}

/* Seed 003: by owner and by tree give the same bits on exact-valued
 * (integer-valued) floats, for any group size and root. */
static void test_owner_tree_bit_equal(void **state)
{
	(void)state;
	for (int n = 1; n <= 40; n++) {
		unsigned char *res[2];
		for (int f = 0; f < 2; f++) {
			struct coll_req r = mkreq(COLL_OP_REDUCE, f ? COLL_ALGO_TREE : COLL_ALGO_OWNER,
			                          n, 33 * sizeof(float), 1, 1);
			r.elem_size = sizeof(float);
			r.root = n - 1;
			struct coll_sched *s = expand_ok(&r);
			struct bufset bs;
			bufs_alloc(&bs, s);
			for (int k = 0; k < n; k++)
				for (size_t e = 0; e < 33; e++)
					put_val(bs.data[k], e, COLL_FLOAT, (double)(ival(k, e) * 1024));
			char msg[200];
			struct coll_exec_opts o = { COLL_FLOAT, COLL_SUM, (unsigned)(n + f) };
			assert_int_equal(coll_exec_run(s, bs.b, &o, msg, sizeof msg), 0);
			res[f] = malloc(r.bytes);
			memcpy(res[f], bs.data[r.root], r.bytes);
			bufs_free(&bs);
			coll_free(s);
		}
		assert_memory_equal(res[0], res[1], 33 * sizeof(float));
		free(res[0]);
		free(res[1]);
	}
}

/* The owner form adds parts in rank order: with values whose float sum
 * depends on the order, the root's result equals the sequential sum
 * p0 + p1 + ... + p(N-1), exactly. */
static void test_owner_rank_order(void **state)
{
	(void)state;
	int n = 9;
	struct coll_req r = mkreq(COLL_OP_REDUCE, COLL_ALGO_OWNER, n, sizeof(float), 1, 1);
	r.elem_size = sizeof(float);
	struct coll_sched *s = expand_ok(&r);
	struct bufset bs;
	bufs_alloc(&bs, s);
	float v[9] = { 1e8f, 1.0f, -1e8f, 3.5f, 1e-3f, 7.25f, -2.0f, 1e7f, 0.1f };
	for (int k = 0; k < n; k++)
		memcpy(bs.data[k], &v[k], sizeof(float));
	char msg[200];
	struct coll_exec_opts o = { COLL_FLOAT, COLL_SUM, 12345 };
	assert_int_equal(coll_exec_run(s, bs.b, &o, msg, sizeof msg), 0);
	float want = v[0];
	for (int k = 1; k < n; k++)
		want += v[k];
	float got;
	memcpy(&got, bs.data[0], sizeof got);
	assert_memory_equal(&got, &want, sizeof got);
	bufs_free(&bs);
	coll_free(s);
}

/* The executor names a deadlock instead of hanging: a schedule whose
 * receive never gets its send. */
static void test_exec_reports_deadlock(void **state)
{
	(void)state;
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 3, 12, 1, 1);
	struct coll_sched *s = expand_ok(&r);
	/* turn rank 1's first send into a receive: two receives pair up and
	 * no send serves them */
	size_t n = s->ranks[1].ncmds;
	assert_true(n > 2);
	struct coll_cmd *send = NULL;
	for (size_t i = 0; i < n; i++)
		if (s->ranks[1].cmds[i].kind == COLL_SEND) {
			send = &s->ranks[1].cmds[i];
			break;
		}
	assert_non_null(send);
	send->kind = COLL_RECV; /* now two receives meet and no send: unpaired */
	char msg[256] = "";
	assert_int_equal(coll_check(s, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "rank"));
	coll_free(s);

	/* a genuine wait cycle: rank 0's receive waits on a command that waits on it */
	s = expand_ok(&r);
	struct bufset bs;
	bufs_alloc(&bs, s);
	/* rank 0's step-0 send now depends on its step-0 receive: 0 waits for 2,
	 * 2 waits for 1, 1 waits for 0 in every step */
	for (int k = 0; k < 3; k++) {
		struct coll_cmd *recv = &s->ranks[k].cmds[0], *snd = &s->ranks[k].cmds[1];
		assert_int_equal(recv->kind, COLL_REDUCE);
		assert_int_equal(snd->kind, COLL_SEND);
		snd->deps[snd->ndeps++] = recv->id;
	}
	struct coll_exec_opts o = { COLL_INT32, COLL_SUM, 0 };
	assert_int_equal(coll_exec_run(s, bs.b, &o, msg, sizeof msg), -EDEADLK);
	assert_non_null(strstr(msg, "deadlock: rank"));
	/* the cost model sees the same cycle instead of inventing a time */
	struct coll_cost_params cp = { .alpha = 1e-6, .beta = 1e9 };
	struct coll_cost cost;
	assert_int_equal(coll_cost(s, &cp, &cost), -EDEADLK);
	bufs_free(&bs);
	coll_free(s);
}


/* The engine alone, driven by a hand-made transport: it posts the send of
 * a halving-doubling step before its receive (a late rank's header must not
 * reach the peer behind its get: see coll_engine.c), names what a timed-out
 * wait is waiting for, and finishes once the transport reports completions. */
struct rec {
	int nposts;
	size_t idx[8];
	int kind[8];
};

static int rec_send(void *ctx, int rank, size_t idx, const struct coll_cmd *cmd,
                    const void *buf, size_t len)
{
	struct rec *r = ctx;
	(void)rank; (void)buf; (void)len;
	r->idx[r->nposts] = idx;
	r->kind[r->nposts++] = cmd->kind;
	return 0;
}

static int rec_recv(void *ctx, int rank, size_t idx, const struct coll_cmd *cmd,
                    void *buf, size_t len)
{
	struct rec *r = ctx;
	(void)rank; (void)len;
	memset(buf, 0, len); /* the peer's contribution: zeros */
	r->idx[r->nposts] = idx;
	r->kind[r->nposts++] = cmd->kind;
	return 0;
}

/* Rank 0's engine for a 2-rank halving-doubling allreduce of 16 B (int32
 * sums) over ops, which record its posts in rc: each step one send and
 * one receive. */
struct hd2 {
	struct coll_sched *s;
	int32_t data[4];
	unsigned char scratch[64];
	struct rec rc;
	struct coll_engine *e;
};

static void hd2_new(struct hd2 *h, const struct coll_engine_ops *ops, uint64_t deadline_ns)
{
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 2, 16, 1, 1);
	r.elem_size = 4;
	h->s = expand_ok(&r);
	for (int i = 0; i < 4; i++)
		h->data[i] = i + 1;
	struct coll_bufs b = { h->data, NULL, h->scratch };
	struct coll_engine_conf conf = { COLL_INT32, COLL_SUM, deadline_ns, 0 };
	memset(&h->rc, 0, sizeof h->rc);
	assert_int_equal(coll_engine_new(h->s, 0, &b, &conf, ops, &h->rc, &h->e), 0);
}

static void hd2_free(struct hd2 *h)
{
	coll_engine_free(h->e);
	coll_free(h->s);
}

static void test_engine_with_transport(void **state)
{
	(void)state;
	struct coll_engine_ops ops = { rec_send, rec_recv, NULL, NULL };
	struct hd2 h;
	hd2_new(&h, &ops, 123456789);
	struct coll_engine *e = h.e;
	struct rec *rc = &h.rc;
	assert_int_equal(coll_engine_deadline(e), 123456789);
	assert_int_equal(coll_engine_start(e), 0);
	assert_int_equal(rc->nposts, 2);
	assert_int_equal(rc->kind[0], COLL_SEND); /* send first */
	assert_int_equal(rc->kind[1], COLL_REDUCE);
	const struct coll_cmd *w = coll_engine_waiting(e);
	assert_non_null(w);
	assert_int_equal(w->peer, 1);
	assert_int_equal(w->step, 0);
	assert_false(coll_engine_finished(e));
	/* a completion for something never posted is refused */
	assert_int_equal(coll_engine_done(e, 3), -EINVAL);
	/* complete step 0; step 1 (doubling) is posted */
	assert_int_equal(coll_engine_done(e, rc->idx[0]), 0);
	assert_int_equal(coll_engine_done(e, rc->idx[1]), 0);
	assert_int_equal(rc->nposts, 4);
	assert_int_equal(coll_engine_done(e, rc->idx[2]), 0);
	assert_int_equal(coll_engine_done(e, rc->idx[3]), 0);
	assert_true(coll_engine_finished(e));
	assert_null(coll_engine_waiting(e));
	hd2_free(&h);
}

/* A send the transport finished at once (send returns 1) is done for the
 * engine there: what depends on it goes on without a report, and a report
 * for it is refused. 2-rank halving-doubling: each step's receive alone
 * waits. */
static int rec_send_done(void *ctx, int rank, size_t idx, const struct coll_cmd *cmd,
                         const void *buf, size_t len)
{
	rec_send(ctx, rank, idx, cmd, buf, len);
	return 1;
}

static void test_engine_send_done_at_once(void **state)
{
	(void)state;
	struct coll_engine_ops ops = { rec_send_done, rec_recv, NULL, NULL };
	struct hd2 h;
	hd2_new(&h, &ops, 0);
	struct coll_engine *e = h.e;
	struct rec *rc = &h.rc;
	assert_int_equal(coll_engine_start(e), 0);
	assert_int_equal(rc->nposts, 2);
	assert_int_equal(rc->kind[0], COLL_SEND);
	assert_int_equal(rc->kind[1], COLL_REDUCE);
	/* the send is over: only the receive is waited for, and a report
	 * for the send is refused */
	const struct coll_cmd *w = coll_engine_waiting(e);
	assert_non_null(w);
	assert_int_equal(w->kind, COLL_REDUCE);
	assert_int_equal(coll_engine_done(e, rc->idx[0]), -EINVAL);
	assert_int_equal(coll_engine_done(e, rc->idx[1]), 0);
	/* step 1: its send over at once too, its receive posted */
	assert_int_equal(rc->nposts, 4);
	assert_int_equal(rc->kind[2], COLL_SEND);
	assert_false(coll_engine_finished(e));
	assert_int_equal(coll_engine_done(e, rc->idx[3]), 0);
	assert_true(coll_engine_finished(e));
	assert_null(coll_engine_waiting(e));
	hd2_free(&h);
}

/* A schedule's local copy goes through ops->copy when given (once, the
 * command's bytes), else memmove: a 1-rank allreduce with its input apart
 * is one copy of INPUT into DATA. */
struct copies {
	struct rec rec; /* first: rec_send and rec_recv take the context as theirs */
	int n;
	size_t bytes;
};

static void rec_copy(void *ctx, void *dst, const void *src, size_t len)
{
	struct copies *c = ctx;
	c->n++;
	c->bytes += len;
	memmove(dst, src, len);
}

static void test_engine_copy_op(void **state)
{
	(void)state;
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RECURSIVE_DOUBLING, 1, 16, 1, 1);
	r.elem_size = 4;
	r.input = true;
	struct coll_sched *s = expand_ok(&r);
	for (int with = 0; with < 2; with++) {
		int32_t in[4] = { 5, 6, 7, 8 }, data[4] = { 0 };
		unsigned char scratch[64];
		struct coll_bufs b = { data, in, scratch };
		struct coll_engine_conf conf = { COLL_INT32, COLL_SUM, 0, 0 };
		struct coll_engine_ops ops = { rec_send, rec_recv, NULL, with ? rec_copy : NULL };
		struct copies cp;
		memset(&cp, 0, sizeof cp);
		struct coll_engine *e;
		assert_int_equal(coll_engine_new(s, 0, &b, &conf, &ops, &cp, &e), 0);
		assert_int_equal(coll_engine_start(e), 0);
		assert_true(coll_engine_finished(e));
		assert_memory_equal(data, in, sizeof in);
		assert_int_equal(cp.n, with);
		assert_int_equal(cp.bytes, with ? sizeof in : 0);
		coll_engine_free(e);
	}
	coll_free(s);
}

/* Rank's engine over b with send_first_min sfm posts n commands when
 * started, the last of them its one send. */
static void start_posts(const struct coll_sched *s, int rank, const struct coll_bufs *b, size_t sfm, int n)
{
	struct coll_engine_conf conf = { COLL_INT32, COLL_SUM, 0, sfm };
	struct coll_engine_ops ops = { rec_send, rec_recv, NULL, NULL };
	struct rec rc;
	memset(&rc, 0, sizeof rc);
	struct coll_engine *e;
	assert_int_equal(coll_engine_new(s, rank, b, &conf, &ops, &rc, &e), 0);
	assert_int_equal(coll_engine_start(e), 0);
	assert_int_equal(rc.nposts, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(rc.kind[i] == COLL_SEND, i == n - 1);
	coll_engine_free(e);
}

/* Whatever one engine call posts, its sends come before its receives: a
 * ring allreduce's rank at N = 4, step by step; unless the sends are no
 * larger than conf.send_first_min: then after them. */
static void test_engine_sends_first(void **state)
{
	(void)state;
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 4, 16, 1, 1);
	r.elem_size = 4;
	struct coll_sched *s = expand_ok(&r);
	int32_t data[4] = { 1, 2, 3, 4 };
	unsigned char scratch[64];
	struct coll_bufs b = { data, NULL, scratch };
	struct coll_engine_conf conf = { COLL_INT32, COLL_SUM, 0, 0 };
	struct coll_engine_ops ops = { rec_send, rec_recv, NULL, NULL };
	struct rec rc;
	memset(&rc, 0, sizeof rc);
	struct coll_engine *e;
	assert_int_equal(coll_engine_new(s, 1, &b, &conf, &ops, &rc, &e), 0);
	assert_int_equal(coll_engine_start(e), 0);
	int done = 0, batches = 0;
	while (!coll_engine_finished(e)) {
		int from = done, to = rc.nposts;
		assert_true(to > from);
		assert_int_equal(rc.kind[from], COLL_SEND);
		for (int i = from + 1; i < to; i++)
			assert_false(rc.kind[i] == COLL_SEND && rc.kind[i - 1] != COLL_SEND);
		batches++;
		/* complete this batch, receive first, so the next one is posted
		 * by the calls below */
		for (int i = to - 1; i >= from; i--)
			assert_int_equal(coll_engine_done(e, rc.idx[i]), 0);
		done = to;
		if (rc.nposts > 8 - 2)
			break;
	}
	assert_true(batches >= 2);
	coll_engine_free(e);
	/* sends of at most send_first_min bytes go after the receives ready
	 * with them */
	start_posts(s, 1, &b, 4, 2);
	coll_free(s);
	/* also where id order has the send first: a 2-rank tree's rank 0
	 * sends its half up tree 0 (direction 0) and receives the other's
	 * up tree 1; with the input apart its receive of the result (a
	 * leaf's, the send having read INPUT) is ready at once too */
	r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_TREE, 2, 16, 1, 2);
	r.elem_size = 4;
	r.input = true;
	s = expand_ok(&r);
	size_t nc;
	const struct coll_cmd *c = coll_rank_cmds(s, 0, &nc);
	assert_int_equal(c[0].kind, COLL_SEND);
	int32_t in[4] = { 1, 2, 3, 4 };
	struct coll_bufs bi = { data, in, scratch };
	start_posts(s, 0, &bi, 8 /* the halves' size */, 3);
	coll_free(s);
}

/* An engine reset after a run runs the same schedule again over new
 * buffers, posting the same commands in the same order; a reset while a
 * command is posted is refused (it could still land in the old buffers). */
static void test_engine_reset_reruns(void **state)
{
	(void)state;
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 2, 16, 1, 1);
	r.elem_size = 4;
	struct coll_sched *s = expand_ok(&r);
	int32_t data[4] = { 1, 2, 3, 4 }, data2[4] = { 5, 6, 7, 8 };
	unsigned char scratch[64];
	struct coll_bufs b = { data, NULL, scratch }, b2 = { data2, NULL, scratch };
	struct coll_engine_conf conf = { COLL_INT32, COLL_SUM, 0, 0 };
	struct coll_engine_ops ops = { rec_send, rec_recv, NULL, NULL };
	struct rec rc, rc2;
	memset(&rc, 0, sizeof rc);
	memset(&rc2, 0, sizeof rc2);
	struct coll_engine *e;
	assert_int_equal(coll_engine_new(s, 0, &b, &conf, &ops, &rc, &e), 0);
	assert_int_equal(coll_engine_start(e), 0);
	assert_int_equal(coll_engine_reset(e, &b2, &rc2), -EBUSY);
	for (int i = 0; i < 4; i++)
		assert_int_equal(coll_engine_done(e, rc.idx[i]), 0);
	assert_true(coll_engine_finished(e));
	/* the peer's parts were zeros: our half of the sum is our own data,
	 * the half the peer reduced arrives as its zeros */
	assert_int_equal(data[0], 1);
	assert_int_equal(data[1], 2);
	assert_int_equal(data[3], 0);
	assert_int_equal(coll_engine_reset(e, &b2, &rc2), 0);
	assert_false(coll_engine_finished(e));
	assert_int_equal(coll_engine_start(e), 0);
	assert_int_equal(rc2.nposts, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rc2.idx[i], rc.idx[i]);
		assert_int_equal(rc2.kind[i], rc.kind[i]);
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(coll_engine_done(e, rc2.idx[i]), 0);
	assert_int_equal(rc2.nposts, 4);
	assert_true(coll_engine_finished(e));
	assert_int_equal(data2[0], 5);
	assert_int_equal(data2[1], 6);
	assert_int_equal(data2[3], 0);
	coll_engine_free(e);
	coll_free(s);
}

/* Every type with every operation, on each reducing algorithm, at a power of
 * two and at an odd group size, with random delivery. */
static void test_every_dtype_and_op(void **state)
{
	(void)state;
	int ns[] = { 7, 8 };
	for (size_t a = 0; a < NCASES; a++) {
		enum coll_op cop = cases[a].op;
		if (cop != COLL_OP_ALLREDUCE && cop != COLL_OP_REDUCE_SCATTER && cop != COLL_OP_REDUCE)
			continue;
		for (size_t i = 0; i < 2; i++)
			for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++)
				for (int op = 0; op < COLL_REDOP_COUNT; op++) {
					size_t esz = coll_dtype_size((enum coll_dtype)dt);
					struct coll_req r = mkreq(cop, cases[a].algo, ns[i],
					                          (size_t)(5 * ns[i] + 3) * esz, 2,
					                          cases[a].ports);
					r.elem_size = esz;
					r.root = ns[i] - 2;
					run_and_check(&r, (enum coll_dtype)dt, (enum coll_redop)op,
					              (unsigned)(dt * 3 + op + 1));
				}
	}
}

/* A quiet NaN of its type with payload p and sign neg. */
static void nan_put(void *dst, enum coll_dtype dt, uint32_t p, bool neg)
{
	if (dt == COLL_FLOAT) {
		uint32_t u = 0x7fc00000u | (p & 0x3fffffu) | (neg ? 0x80000000u : 0);
		memcpy(dst, &u, 4);
	} else {
		uint64_t u = 0x7ff8000000000000ull | p | (neg ? 0x8000000000000000ull : 0);
		memcpy(dst, &u, 8);
	}
}

/* A floating sum of two NaNs gives the first operand's, into a third
 * vector or in place on either operand, at every count a loop might cut
 * differently; a NaN only in the second operand still gives a NaN. The
 * reference executor's ranks (coll_exec_run) then agree to the bit. */
static void test_reduce_nan_first(void **state)
{
	(void)state;
	enum coll_dtype dts[] = { COLL_FLOAT, COLL_DOUBLE };
	for (size_t t = 0; t < 2; t++) {
		enum coll_dtype dt = dts[t];
		size_t sz = coll_dtype_size(dt);
		for (size_t n = 1; n <= 19; n++) {
			unsigned char a[19 * 8], b[19 * 8], z[19 * 8], w[19 * 8];
			for (size_t i = 0; i < n; i++) {
				nan_put(a + i * sz, dt, 0x111u + (uint32_t)i, i % 2);
				nan_put(b + i * sz, dt, 0x2220u + (uint32_t)i, i % 3 == 0);
			}
			size_t len = n * sz;
			memset(z, 0x5a, sizeof z);
			assert_int_equal(coll_reduce_local(z, a, b, len, dt, COLL_SUM), 0);
			assert_memory_equal(z, a, len);
			assert_int_equal(coll_reduce_local(z, b, a, len, dt, COLL_SUM), 0);
			assert_memory_equal(z, b, len);
			memcpy(w, a, len); /* in place on the first operand */
			assert_int_equal(coll_reduce_local(w, w, b, len, dt, COLL_SUM), 0);
			assert_memory_equal(w, a, len);
			memcpy(w, b, len); /* in place on the second */
			assert_int_equal(coll_reduce_local(w, a, w, len, dt, COLL_SUM), 0);
			assert_memory_equal(w, a, len);
			for (size_t i = 0; i < n; i++) {
				double one = 1.5;
				float onef = 1.5f;
				memcpy(w + i * sz, dt == COLL_FLOAT ? (void *)&onef : (void *)&one, sz);
			}
			assert_int_equal(coll_reduce_local(z, w, b, len, dt, COLL_SUM), 0);
			for (size_t i = 0; i < n; i++) {
				double d;
				float f;
				if (dt == COLL_FLOAT) {
					memcpy(&f, z + i * sz, 4);
					d = f;
				} else {
					memcpy(&d, z + i * sz, 8);
				}
				assert_true(isnan(d));
			}
		}
	}
	/* every rank a NaN of its own in each element: one result everywhere */
	struct { enum coll_algo algo; int n; } cs[] = {
		{ COLL_ALGO_RECURSIVE_DOUBLING, 2 }, { COLL_ALGO_RECURSIVE_DOUBLING, 8 },
		{ COLL_ALGO_RING, 3 }, { COLL_ALGO_HALVING_DOUBLING, 4 }, { COLL_ALGO_TREE, 5 },
	};
	for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
		struct coll_req r = mkreq(COLL_OP_ALLREDUCE, cs[c].algo, cs[c].n, 37 * sizeof(double), 1, 1);
		r.elem_size = sizeof(double);
		struct coll_sched *s = expand_ok(&r);
		struct bufset bs;
		bufs_alloc(&bs, s);
		for (int k = 0; k < cs[c].n; k++)
			for (size_t e = 0; e < 37; e++)
				nan_put(bs.data[k] + e * 8, COLL_DOUBLE, 0x30000u * (uint32_t)(k + 1) + (uint32_t)e, k % 2);
		char msg[256] = "";
		struct coll_exec_opts o = { COLL_DOUBLE, COLL_SUM, 977u + (unsigned)c };
		if (coll_exec_run(s, bs.b, &o, msg, sizeof msg))
			fail_msg("exec: %s", msg);
		for (int k = 1; k < cs[c].n; k++)
			assert_memory_equal(bs.data[0], bs.data[k], r.bytes);
		bufs_free(&bs);
		coll_free(s);
	}
}

static bool is_send(const struct coll_cmd *c)
{
	return c->kind == COLL_SEND;
}

static bool reads_input(const struct coll_cmd *c)
{
	return c->from_input;
}

/* coll_check refuses r's schedule with src_first set on rank 0's first
 * command that pick takes. */
static void src_first_refused(const struct coll_req *r, bool (*pick)(const struct coll_cmd *))
{
	char msg[256] = "";
	struct coll_sched *s = expand_ok(r);
	struct coll_cmd *c = NULL;
	for (size_t i = 0; i < s->ranks[0].ncmds && !c; i++)
		if (pick(&s->ranks[0].cmds[i]))
			c = &s->ranks[0].cmds[i];
	assert_non_null(c);
	c->src_first = 1;
	assert_int_equal(coll_check(s, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "src_first"));
	coll_free(s);
}

/* What callers can get wrong is refused with an error, never a crash. */
static void test_error_paths(void **state)
{
	(void)state;
	char msg[256] = "";
	int32_t a[2] = { 1, 2 }, b[2] = { 3, 4 };
	assert_int_equal(coll_reduce_local(a, a, b, 6, COLL_INT32, COLL_SUM), -EINVAL);
	assert_int_equal(coll_reduce_local(a, a, b, 8, COLL_DTYPE_COUNT, COLL_SUM), -EINVAL);
	assert_int_equal(coll_reduce_local(a, a, b, 8, COLL_INT32, COLL_REDOP_COUNT), -EINVAL);
	assert_int_equal(coll_reduce_local(a, a, b, 8, COLL_INT32, COLL_MAX), 0);
	assert_int_equal(a[0], 3);
	assert_int_equal(a[1], 4);
	int32_t big = INT32_MAX, inc = 1;
	assert_int_equal(coll_reduce_local(&big, &big, &inc, 4, COLL_INT32, COLL_SUM), 0);
	assert_int_equal(big, INT32_MIN);  /* wraps, not undefined */
	/* into a third vector: both operands read, neither written */
	int32_t x[2] = { 5, -7 }, y[2] = { 2, 9 }, z[2] = { 0, 0 };
	assert_int_equal(coll_reduce_local(z, x, y, 8, COLL_INT32, COLL_MIN), 0);
	assert_int_equal(z[0], 2);
	assert_int_equal(z[1], -7);
	assert_int_equal(x[0], 5);
	assert_int_equal(y[1], 9);

	/* the reference executor needs every rank */
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 4, 64, 1, 1);
	struct coll_sched *one;
	assert_int_equal(coll_expand_rank(&r, 2, &one, msg, sizeof msg), 0);
	struct coll_bufs bufs[4];
	memset(bufs, 0, sizeof bufs);
	struct coll_exec_opts o = { COLL_INT32, COLL_SUM, 0 };
	assert_int_equal(coll_exec_run(one, bufs, &o, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "every rank"));

	/* an engine needs send and receive callbacks and a rank the schedule holds */
	unsigned char data[64], scratch[64];
	struct coll_bufs bb = { data, NULL, scratch };
	struct coll_engine_conf conf = { COLL_INT32, COLL_SUM, 0, 0 };
	struct coll_engine_ops none = { NULL, NULL, NULL, NULL };
	struct coll_engine *e = (struct coll_engine *)1;
	assert_int_equal(coll_engine_new(one, 2, &bb, &conf, &none, NULL, &e), -EINVAL);
	assert_null(e);
	struct coll_engine_ops ops = { rec_send, rec_recv, NULL, NULL };
	assert_int_equal(coll_engine_new(one, 7, &bb, &conf, &ops, NULL, &e), -EINVAL);
	assert_null(e);
	coll_free(one);

	/* coll_check names a byte range outside its buffer and a dependency on
	 * a later command */
	struct coll_sched *s = expand_ok(&r);
	s->ranks[0].cmds[0].off = s->info.data_bytes;
	assert_int_equal(coll_check(s, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "out of bounds"));
	coll_free(s);
	s = expand_ok(&r);
	struct coll_cmd *first = &s->ranks[0].cmds[0];
	first->deps[first->ndeps++] = s->ranks[0].cmds[s->ranks[0].ncmds - 1].id;
	assert_int_equal(coll_check(s, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "not an earlier command"));
	coll_free(s);
	/* src_first only on a reduce, and never with from_input */
	src_first_refused(&r, is_send);
	r.input = true;
	src_first_refused(&r, reads_input);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_algorithms_small_groups),
		cmocka_unit_test(test_ring_chunks),
		cmocka_unit_test(test_partial_elements_move),
		cmocka_unit_test(test_partial_elements_reduce_rejected),
		cmocka_unit_test(test_repeatable_bits),
		cmocka_unit_test(test_owner_tree_bit_equal),
		cmocka_unit_test(test_owner_rank_order),
		cmocka_unit_test(test_exec_reports_deadlock),
		cmocka_unit_test(test_engine_with_transport),
		cmocka_unit_test(test_engine_send_done_at_once),
		cmocka_unit_test(test_engine_copy_op),
		cmocka_unit_test(test_engine_reset_reruns),
		cmocka_unit_test(test_engine_sends_first),
		cmocka_unit_test(test_recursive_doubling_same_bits),
		cmocka_unit_test(test_input_apart),
		cmocka_unit_test(test_reduce_scatter_counts),
		cmocka_unit_test(test_every_dtype_and_op),
		cmocka_unit_test(test_reduce_nan_first),
		cmocka_unit_test(test_error_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
