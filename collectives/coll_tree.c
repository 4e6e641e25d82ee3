/* coll_tree.c: tree-shaped schedules: double binary tree allreduce,
 * binomial and scatter+allgather bcast, and reduce by owner or by tree
 * (seed 003).
 *
 * Every reduction here adds parts in an order fixed by ranks, never by
 * arrival: an executor may receive in any order, the sums come out with the
 * same bits every time.
 */
#include "coll_int.h"

/* ---------------------------------------------------------------- dbtree
 * Two binary trees over the N ranks, each carrying half of the vector
 * (coll_block(bytes, elem, 2, t)) in direction/thread t. A tree is the
 * in-order tree of positions 0..N-1 (the root of a range is its midpoint).
 * Tree 0 puts rank r at position r; tree 1 at N-1-r for even N and r+1 for
 * odd N, which turns the leaves of one tree (about half the ranks) into inner
 * nodes of the other, so the two halves share the ranks' ports evenly.
 * A node adds its right child's part, then its left child's (fixed order),
 * sends the sum up at step height(node); the root's result comes back down
 * at steps H + depth. Steps: 2*floor(log2 N).
 */
enum { T_RIGHT = 0, T_LEFT = 1, T_UP = 2, T_DOWN_L = 2, T_DOWN_R = 3, T_RECV_DOWN = 0 };

struct tnode {
	int parent;      /* position, -1 at the root */
	int depth;
	bool is_left;    /* a left child of its parent */
	int left, right; /* positions, -1 if none */
	size_t size, lsize, rsize;
};

static void tnode_find(int n, int p, struct tnode *t)
{
	int lo = 0, hi = n;
	t->parent = -1;
	t->depth = 0;
	t->is_left = false;
	for (;;) {
		int mid = lo + (hi - lo) / 2;
		if (p == mid)
			break;
		t->parent = mid;
		t->depth++;
		t->is_left = p < mid;
		if (p < mid)
			hi = mid;
		else
			lo = mid + 1;
	}
	int mid = lo + (hi - lo) / 2;
	t->size = (size_t)(hi - lo);
	t->lsize = (size_t)(mid - lo);
	t->rsize = (size_t)(hi - mid - 1);
	t->left = t->lsize ? lo + (int)(t->lsize / 2) : -1;
	t->right = t->rsize ? mid + 1 + (int)(t->rsize / 2) : -1;
}

static int tpos(int n, int t, int rank)
{
	return t == 0 ? rank : (n % 2 == 0 ? n - 1 - rank : (rank + 1) % n);
}

static int trank(int n, int t, int pos)
{
	return t == 0 ? pos : (n % 2 == 0 ? n - 1 - pos : (pos - 1 + n) % n);
}

static uint32_t theight(size_t size)
{
	return (uint32_t)coll_floor_log2(size);
}

static size_t half_max(const struct coll_req *r)
{
	size_t off, a, b;
	coll_block(r->bytes, coll_unit(r), 2, 0, &off, &a);
	coll_block(r->bytes, coll_unit(r), 2, 1, &off, &b);
	return a > b ? a : b;
}

static int dbtree_shape(struct coll_gen *g)
{
	g->ndirs = 2;
	g->stride = 4;
	g->steps = 2 * theight((size_t)g->n);
	if (g->req->input && !g->steps)
		g->steps = 1; /* one rank: a step to copy INPUT into DATA */
	g->scratch = 4 * half_max(g->req);
	return 0;
}

static int dbtree_emit(struct coll_gen *g)
{
	int n = g->n;
	uint32_t H = theight((size_t)n);
	size_t hmax = half_max(g->req);
	/* With the input apart a node's first add takes its own part from
	 * INPUT (from_input), a leaf sends INPUT up, and every rank's DATA
	 * gets its result from the root's sends down or its own adds. */
	bool apart = g->req->input;
	if (n == 1)
		return coll_emit_input_copy(g, 0);
	for (int t = 0; t < 2; t++) {
		size_t off, len;
		coll_block(g->req->bytes, coll_unit(g->req), 2, (size_t)t, &off, &len);
		if (!len)
			continue;
		struct tnode nd;
		tnode_find(n, tpos(n, t, g->rank), &nd);
		struct coll_cmd *c;
		uint64_t last = 0, up = 0, down = 0;
		bool have_last = false;
		/* right child first, then left: a fixed order of adds */
		int kid_pos[2] = { nd.right, nd.left };
		size_t kid_size[2] = { nd.rsize, nd.lsize };
		for (int k = 0; k < 2; k++) {
			if (kid_pos[k] < 0)
				continue;
			int child = trank(n, t, kid_pos[k]);
			uint32_t st = theight(kid_size[k]);
			c = coll_emit_recv(g, COLL_REDUCE, st, t, 0, k == 0 ? T_RIGHT : T_LEFT, child,
			                   T_UP, off, len);
			if (!c)
				return g->err;
			c->src_off = (size_t)(2 * t + k) * hmax;
			if (apart && !have_last)
				coll_reduce_from_input(c);
			if (have_last)
				coll_dep(c, last);
			last = c->id;
			have_last = true;
		}
		bool have_down = have_last;
		down = last;
		if (nd.parent >= 0) {
			int par = trank(n, t, nd.parent);
			if (!(c = coll_emit(g, COLL_SEND, theight(nd.size), t, 0, T_UP, par)))
				return g->err;
			c->off = off;
			c->len = len;
			if (have_last)
				coll_dep(c, last);
			else if (apart)
				c->buf = COLL_BUF_INPUT;
			up = c->id;
			uint32_t st = H + (uint32_t)nd.depth - 1;
			if (!(c = coll_emit(g, COLL_RECV, st, t, 0, T_RECV_DOWN, par)))
				return g->err;
			c->off = off;
			c->len = len;
			c->match = coll_id(g, st, t, 0, par, nd.is_left ? T_DOWN_L : T_DOWN_R);
			/* The result lands where the send up read, unless a leaf
			 * sent INPUT: then its receive is posted at once (waiting
			 * for the send, it came up late on a 2-rank tree, whose
			 * ranks are each a leaf of one tree) */
			if (have_last || !apart)
				coll_dep(c, up);
			down = c->id;
			have_down = true;
		}
		int kids[2] = { nd.left, nd.right };
		for (int k = 0; k < 2; k++) {
			if (kids[k] < 0)
				continue;
			c = coll_emit(g, COLL_SEND, H + (uint32_t)nd.depth, t, 0,
			              k == 0 ? T_DOWN_L : T_DOWN_R, trank(n, t, kids[k]));
			if (!c)
				return g->err;
			c->off = off;
			c->len = len;
			if (have_down)
				coll_dep(c, down);
		}
	}
	return 0;
}

const struct coll_algo_impl coll_dbtree_impl = { dbtree_shape, dbtree_emit };

/* ---------------------------------------------------------------- binomial bcast
 * Relative rank v = rank - root. In round r every v < 2^r that holds the
 * data sends it to v + 2^r. */
static int vrank(const struct coll_gen *g, int rank)
{
	return coll_mod((long long)rank - g->req->root, g->n);
}

static int arank(const struct coll_gen *g, int v)
{
	return (v + g->req->root) % g->n;
}

static int binomial_shape(struct coll_gen *g)
{
	g->steps = (uint32_t)coll_ceil_log2((uint64_t)g->n);
	g->stride = 2;
	return 0;
}

static int binomial_emit(struct coll_gen *g)
{
	int n = g->n, v = vrank(g, g->rank), L = (int)g->steps, first = 0;
	uint64_t rid = 0;
	struct coll_cmd *c;
	size_t len = g->req->bytes;
	if (!len)
		return 0;
	if (v > 0) {
		int r0 = coll_floor_log2((uint64_t)v), from = arank(g, v - (1 << r0));
		if (!(c = coll_emit(g, COLL_RECV, (uint32_t)r0, 0, 0, 0, from)))
			return g->err;
		c->len = len;
		c->match = coll_id(g, (uint32_t)r0, 0, 0, from, 1);
		rid = c->id;
		first = r0 + 1;
	}
	for (int r = first; r < L; r++) {
		if (v + (1 << r) >= n)
			continue;
		if (!(c = coll_emit(g, COLL_SEND, (uint32_t)r, 0, 0, 1, arank(g, v + (1 << r)))))
			return g->err;
		c->len = len;
		if (v > 0)
			coll_dep(c, rid);
	}
	return 0;
}

const struct coll_algo_impl coll_binomial_impl = { binomial_shape, binomial_emit };

/* ---------------------------------------------------------------- scatter + allgather bcast
 * The root's vector is cut into N blocks (block v for relative rank v). A
 * binomial scatter hands each relative rank v its block (and, on the way,
 * the blocks of the subtree it forwards to), then a one-way ring allgather
 * over relative ranks completes every copy. Moves about 2M per rank instead
 * of M*log2(N) at the root. */
static void blocks_range(const struct coll_gen *g, int b0, int b1, size_t *off, size_t *len)
{
	size_t o0, l0, o1, l1;
	coll_block(g->req->bytes, coll_unit(g->req), (size_t)g->n, (size_t)b0, &o0, &l0);
	coll_block(g->req->bytes, coll_unit(g->req), (size_t)g->n, (size_t)b1 - 1, &o1, &l1);
	*off = o0;
	*len = o1 + l1 - o0;
}

static int scag_shape(struct coll_gen *g)
{
	int L = coll_ceil_log2((uint64_t)g->n);
	g->steps = g->n > 1 ? (uint32_t)(L + g->n - 1) : 0;
	g->stride = 2;
	return 0;
}

static int scag_emit(struct coll_gen *g)
{
	int n = g->n, v = vrank(g, g->rank), L = coll_ceil_log2((uint64_t)n);
	struct coll_cmd *c;
	struct coll_chain ch = { .nprev = 0 };
	size_t off, len;
	if (n == 1 || !g->req->bytes)
		return 0;
	int low = v ? (v & -v) : (1 << L);
	if (v) {
		uint32_t st = (uint32_t)(L - 1 - coll_floor_log2((uint64_t)low));
		int from = arank(g, v - low), end = v + low < n ? v + low : n;
		blocks_range(g, v, end, &off, &len);
		if (len) {
			if (!(c = coll_emit_recv(g, COLL_RECV, st, 0, 0, 0, from, 1, off, len)))
				return g->err;
			coll_chain_add(&ch, c->id);
			coll_chain_step(&ch);
		}
	}
	/* the scatter's sends go out one after the other, largest subtree first */
	for (int m = low >> 1; m >= 1; m >>= 1) {
		int dst = v + m;
		if (dst >= n)
			continue;
		int end = dst + m < n ? dst + m : n;
		blocks_range(g, dst, end, &off, &len);
		if (!len)
			continue;
		uint32_t st = (uint32_t)(L - 1 - coll_floor_log2((uint64_t)m));
		if (!(c = coll_emit_send(g, st, 0, 0, 1, arank(g, dst), off, len)))
			return g->err;
		coll_chain_wait(&ch, c);
		coll_chain_add(&ch, c->id);
		coll_chain_step(&ch);
	}
	for (int s = 0; s < n - 1; s++) {
		uint32_t st = (uint32_t)(L + s);
		int from = arank(g, coll_mod(v - 1, n)), to = arank(g, (v + 1) % n);
		coll_block(g->req->bytes, coll_unit(g->req), (size_t)n,
		           (size_t)coll_mod(v - 1 - s, n), &off, &len);
		if (len) {
			if (!(c = coll_emit_recv(g, COLL_RECV, st, 0, 0, 0, from, 1, off, len)))
				return g->err;
			coll_chain_wait(&ch, c);
			coll_chain_add(&ch, c->id);
		}
		coll_block(g->req->bytes, coll_unit(g->req), (size_t)n,
		           (size_t)coll_mod(v - s, n), &off, &len);
		if (len) {
			if (!(c = coll_emit_send(g, st, 0, 0, 1, to, off, len)))
				return g->err;
			coll_chain_wait(&ch, c);
			coll_chain_add(&ch, c->id);
		}
		coll_chain_step(&ch);
	}
	return 0;
}

const struct coll_algo_impl coll_scag_impl = { scag_shape, scag_emit };

/* ---------------------------------------------------------------- reduce by owner
 * Seed 003, form "owner": every other rank sends its whole part to the root
 * at once; the root receives part k into a slot of its own (scratch, so
 * arrivals never collide: owner_slot) and then adds the slots in rank
 * order k = 1..N-1, each add waiting for the previous one. */
static int owner_shape(struct coll_gen *g)
{
	g->steps = g->n > 1 || g->req->input ? 1 : 0; /* one rank apart: the copy's step */
	g->stride = 2 * (uint64_t)g->n;
	/* with the input apart the first receive lands in DATA */
	int slots = g->n - (g->req->input ? 2 : 1);
	g->scratch = slots > 0 ? (size_t)slots * g->req->bytes : 0;
	return 0;
}

/* The scratch slot of the root's receive from its k-th other rank; with
 * the input apart the first one lands in DATA (coll_reduce_from_input's
 * reason), the k-th, k >= 2, in slot k - 2. */
static void owner_slot(const struct coll_gen *g, int k, uint8_t *buf, size_t *off)
{
	int slot = g->req->input ? k - 2 : k - 1;
	*buf = slot < 0 ? COLL_BUF_DATA : COLL_BUF_SCRATCH;
	*off = slot < 0 ? 0 : (size_t)slot * g->req->bytes;
}

/* With the input apart (req.input) the root's first add takes its own
 * part from INPUT (from_input) and the others send INPUT. */
static int owner_emit(struct coll_gen *g)
{
	int n = g->n, v = vrank(g, g->rank);
	size_t len = g->req->bytes;
	struct coll_cmd *c;
	if (n == 1)
		return coll_emit_input_copy(g, 0);
	if (!len)
		return 0;
	if (v) {
		if (!(c = coll_emit(g, COLL_SEND, 0, 0, 0, 0, g->req->root)))
			return g->err;
		c->len = len;
		if (g->req->input)
			c->buf = COLL_BUF_INPUT;
		return 0;
	}
	for (int k = 1; k < n; k++) {
		if (!(c = coll_emit(g, COLL_RECV, 0, 0, 0, k - 1, arank(g, k))))
			return g->err;
		c->len = len;
		owner_slot(g, k, &c->buf, &c->off);
		c->match = coll_id(g, 0, 0, 0, arank(g, k), 0);
	}
	for (int k = 1; k < n; k++) {
		if (!(c = coll_emit(g, COLL_REDUCE, 0, 0, 0, n - 1 + k - 1, COLL_PEER_NONE)))
			return g->err;
		c->len = len;
		owner_slot(g, k, &c->src_buf, &c->src_off);
		c->from_input = g->req->input && k == 1;
		coll_dep(c, coll_id(g, 0, 0, 0, g->rank, k - 1));
		if (k > 1)
			coll_dep(c, coll_id(g, 0, 0, 0, g->rank, n - 1 + k - 2));
	}
	return 0;
}

const struct coll_algo_impl coll_owner_impl = { owner_shape, owner_emit };

/* ---------------------------------------------------------------- reduce by tree
 * Seed 003, form "tree": in round r a relative rank that is a multiple of
 * 2^(r+1) adds the part of its partner v + 2^r (if there is one); the other
 * ranks still in play send their part to v - 2^r and stop. 8 ranks:
 * round 0: 1->0 3->2 5->4 7->6; round 1: 2->0 6->4; round 2: 4->0.
 * With the input apart a rank's first command reads INPUT: its first add
 * (from_input) or, a leaf, its send. */
static int rtree_shape(struct coll_gen *g)
{
	g->steps = (uint32_t)coll_ceil_log2((uint64_t)g->n);
	if (g->req->input && !g->steps)
		g->steps = 1; /* one rank: a step to copy INPUT into DATA */
	g->stride = 2;
	g->scratch = g->req->bytes;
	return 0;
}

static int rtree_emit(struct coll_gen *g)
{
	int n = g->n, v = vrank(g, g->rank), L = (int)g->steps;
	size_t len = g->req->bytes;
	uint64_t prev = 0;
	bool have = false, apart = g->req->input;
	struct coll_cmd *c;
	if (n == 1)
		return coll_emit_input_copy(g, 0);
	if (!len)
		return 0;
	for (int r = 0; r < L; r++) {
		int span = 1 << r;
		if (v % (2 * span) == 0) {
			if (v + span >= n)
				continue;
			int from = arank(g, v + span);
			if (!(c = coll_emit(g, COLL_REDUCE, (uint32_t)r, 0, 0, 0, from)))
				return g->err;
			c->len = len;
			c->match = coll_id(g, (uint32_t)r, 0, 0, from, 1);
			if (apart && !have)
				coll_reduce_from_input(c);
		} else {
			if (!(c = coll_emit(g, COLL_SEND, (uint32_t)r, 0, 0, 1, arank(g, v - span))))
				return g->err;
			c->len = len;
			if (apart && !have)
				c->buf = COLL_BUF_INPUT;
		}
		if (have)
			coll_dep(c, prev);
		prev = c->id;
		have = true;
		if (c->kind == COLL_SEND)
			break;
	}
	return 0;
}

const struct coll_algo_impl coll_rtree_impl = { rtree_shape, rtree_emit };
