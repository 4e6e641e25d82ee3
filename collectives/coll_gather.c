/* coll_gather.c: gather and scatter, binomial or linear, with a block size
 * per rank (the v-variants) or one for all.
 *
 * Layout (coll.h, coll_req.bytes): blocks in relative-rank order v = rank -
 * root mod N, and every rank's DATA starts at its own block. Relative rank v
 * with lowest set bit `low` (the root: 2^ceil(log2 N)) owns the subtree
 * [v, v + low), which is then one contiguous range at offset 0 of its DATA:
 * a transfer never needs more than one piece, and a leaf needs room for its
 * own block only.
 */
#include "coll_int.h"

static size_t block_of(const struct coll_req *r, int logical)
{
	return r->counts ? r->counts[logical] : r->bytes;
}

size_t coll_gs_total(const struct coll_req *r)
{
	if (!r->counts)
		return r->bytes * (size_t)r->nranks;
	size_t t = 0;
	for (int i = 0; i < r->nranks; i++)
		t += r->counts[i];
	return t;
}

/* Bytes of the blocks of relative ranks [a, b), b clipped to N. */
static size_t vspan(const struct coll_gen *g, int a, int b)
{
	if (b > g->n)
		b = g->n;
	if (a >= b)
		return 0;
	if (!g->req->counts)
		return (size_t)(b - a) * g->req->bytes;
	size_t t = 0;
	for (int v = a; v < b; v++)
		t += block_of(g->req, (v + g->req->root) % g->n);
	return t;
}

static int gs_rank(const struct coll_gen *g, int v) { return (v + g->req->root) % g->n; }

/* the relative rank's lowest set bit; the root's is past every other rank */
static int gs_low(const struct coll_gen *g, int v)
{
	return v ? (v & -v) : 1 << coll_ceil_log2((uint64_t)g->n);
}

static int gs_shape(struct coll_gen *g)
{
	g->steps = (uint32_t)coll_ceil_log2((uint64_t)g->n);
	g->stride = 2;
	return 0;
}

/* Gather: in step s every relative rank whose lowest bit is 2^s sends its
 * whole subtree to v - 2^s. A rank takes its children's subtrees in step
 * order, each receive after the one before (a child of step s has
 * nothing to send before step s), and sends up once the last is in. */
static int gather_emit(struct coll_gen *g)
{
	int n = g->n, v = coll_mod((long long)g->rank - g->req->root, n), low = gs_low(g, v);
	struct coll_cmd *c;
	uint64_t prev = 0;
	bool have = false;
	for (int m = 1; m < low && v + m < n; m <<= 1) {
		size_t len = vspan(g, v + m, v + 2 * m);
		if (!len)
			continue;
		uint32_t st = (uint32_t)coll_floor_log2((uint64_t)m);
		c = coll_emit_recv(g, COLL_RECV, st, 0, 0, 0, gs_rank(g, v + m), 1,
		                   vspan(g, v, v + m), len);
		if (!c)
			return g->err;
		if (have)
			coll_dep(c, prev);
		prev = c->id;
		have = true;
	}
	size_t len = vspan(g, v, v + low);
	if (!v || !len)
		return 0;
	uint32_t st = (uint32_t)coll_floor_log2((uint64_t)low);
	if (!(c = coll_emit_send(g, st, 0, 0, 1, gs_rank(g, v - low), 0, len)))
		return g->err;
	if (have)
		coll_dep(c, prev);
	return 0;
}

/* Scatter: the gather backwards. A rank receives its subtree from v - low,
 * then hands each child its part, largest subtree first (the child with
 * the most ranks below it has the longest way to go). */
static int scatter_emit(struct coll_gen *g)
{
	int n = g->n, v = coll_mod((long long)g->rank - g->req->root, n), low = gs_low(g, v);
	int L = (int)g->steps;
	struct coll_cmd *c;
	uint64_t prev = 0;
	bool have = false;
	if (v) {
		size_t len = vspan(g, v, v + low);
		if (len) {
			uint32_t st = (uint32_t)(L - 1 - coll_floor_log2((uint64_t)low));
			c = coll_emit_recv(g, COLL_RECV, st, 0, 0, 0, gs_rank(g, v - low), 1, 0, len);
			if (!c)
				return g->err;
			prev = c->id;
			have = true;
		}
	}
	for (int m = low >> 1; m >= 1; m >>= 1) {
		if (v + m >= n)
			continue;
		size_t len = vspan(g, v + m, v + 2 * m);
		if (!len)
			continue;
		uint32_t st = (uint32_t)(L - 1 - coll_floor_log2((uint64_t)m));
		c = coll_emit_send(g, st, 0, 0, 1, gs_rank(g, v + m), vspan(g, v, v + m), len);
		if (!c)
			return g->err;
		if (have)
			coll_dep(c, prev);
		prev = c->id;
		have = true;
	}
	return 0;
}

/* Linear: every rank sends its block straight to the root (gather) or gets
 * it straight from there (scatter), all in step 0; the root posts one
 * transfer per rank in relative-rank order. N-1 transfers at the root
 * against log2 N levels, but a rank needs no size but its own. */
static int linear_shape(struct coll_gen *g)
{
	g->steps = g->n > 1 ? 1 : 0;
	g->stride = (uint64_t)g->n;
	return 0;
}

static int linear_emit(struct coll_gen *g)
{
	int n = g->n, v = coll_mod((long long)g->rank - g->req->root, n);
	bool gather = g->req->op == COLL_OP_GATHER;
	struct coll_cmd *c;
	if (v) {
		size_t len = block_of(g->req, g->rank);
		if (!len)
			return 0;
		c = gather ? coll_emit_send(g, 0, 0, 0, 0, g->req->root, 0, len)
		           : coll_emit_recv(g, COLL_RECV, 0, 0, 0, 0, g->req->root, v, 0, len);
		return c ? 0 : g->err;
	}
	size_t off = block_of(g->req, g->rank);
	for (int u = 1; u < n; u++) {
		int peer = gs_rank(g, u);
		size_t len = block_of(g->req, peer);
		if (len) {
			c = gather ? coll_emit_recv(g, COLL_RECV, 0, 0, 0, u, peer, 0, off, len)
			           : coll_emit_send(g, 0, 0, 0, u, peer, off, len);
			if (!c)
				return g->err;
		}
		off += len;
	}
	return 0;
}

const struct coll_algo_impl coll_gather_impl = { gs_shape, gather_emit };
const struct coll_algo_impl coll_lgather_impl = { linear_shape, linear_emit };
const struct coll_algo_impl coll_lscatter_impl = { linear_shape, linear_emit };
const struct coll_algo_impl coll_scatter_impl = { gs_shape, scatter_emit };
