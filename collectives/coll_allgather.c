/* coll_allgather.c: allgather by recursive doubling and by bruck (any
 * block sizes), and the one-way ring over per-rank block sizes
 * (allgatherv; the even-block ring lives in coll_ring.c with its chunks and
 * bidirectional form).
 *
 * Layout: DATA holds every block in rank order; block i is coll_block's
 * i-th of `bytes`, or counts[i] bytes at the sum of counts[0..i). On entry
 * a rank's own block is in place; on exit every block is.
 *
 * Every algorithm moves each rank's N-1 other blocks once into it; they
 * differ in how many rounds that takes. A zero-size range is no transfer
 * at all, and both sides skip it: both know every size.
 */
#include <stdlib.h>

#include "coll_int.h"

enum { SUB_RECV = 0, SUB_SEND = 1 };

/* Where blocks live: pre[i] is block i's offset (N+1 entries) with counts,
 * or NULL and coll_block cuts `bytes`. */
struct ag_layout {
	const struct coll_gen *g;
	size_t *pre;
};

static int layout_init(struct ag_layout *l, const struct coll_gen *g)
{
	l->g = g;
	l->pre = NULL;
	if (!g->req->counts)
		return 0;
	l->pre = malloc(((size_t)g->n + 1) * sizeof *l->pre);
	if (!l->pre)
		return -ENOMEM;
	l->pre[0] = 0;
	for (int i = 0; i < g->n; i++)
		l->pre[i + 1] = l->pre[i] + g->req->counts[i];
	return 0;
}

/* offset of block i, 0 <= i <= N (N: the end of the last block) */
static size_t block_off(const struct ag_layout *l, int i)
{
	if (l->pre)
		return l->pre[i];
	const struct coll_req *r = l->g->req;
	size_t off, len;
	if (i == l->g->n)
		return r->bytes;
	coll_block(r->bytes, coll_unit(r), (size_t)l->g->n, (size_t)i, &off, &len);
	return off;
}

/* blocks [a, b), 0 <= a <= b <= N: one contiguous range */
static void blocks(const struct ag_layout *l, int a, int b, size_t *off, size_t *len)
{
	*off = block_off(l, a);
	*len = block_off(l, b) - *off;
}

/* One exchange of a step: receive `rlen` bytes at (buf, roff) from `from`
 * and send `slen` at (buf, soff) to `to`, each after the rank's previous
 * step. Subs 1 (receive) and 2 (send) of the slot, so a rank that also
 * copies in the step can use 0 before and 3, 4 after. */
static int exchange(struct coll_gen *g, struct coll_chain *ch, uint32_t step, int buf,
                    int from, size_t roff, size_t rlen, int to, size_t soff, size_t slen,
                    int rsub, int ssub)
{
	struct coll_cmd *c;
	if (rlen) {
		if (!(c = coll_emit_recv(g, COLL_RECV, step, 0, 0, rsub, from, ssub, roff, rlen)))
			return g->err;
		c->buf = (uint8_t)buf;
		coll_chain_wait(ch, c);
		coll_chain_add(ch, c->id);
	}
	if (slen) {
		if (!(c = coll_emit_send(g, step, 0, 0, ssub, to, soff, slen)))
			return g->err;
		c->buf = (uint8_t)buf;
		coll_chain_wait(ch, c);
		coll_chain_add(ch, c->id);
	}
	coll_chain_step(ch);
	return 0;
}

/* ---------------------------------------------------------------- ring
 * Step s (0..N-2): rank i sends block i-s to i+1 and receives block i-1-s
 * from i-1, which it forwards in step s+1. */
static int vring_shape(struct coll_gen *g)
{
	g->steps = g->n > 1 ? (uint32_t)(g->n - 1) : 0;
	g->stride = 2;
	return 0;
}

static int vring_emit(struct coll_gen *g)
{
	struct ag_layout l;
	int n = g->n, i = g->rank, rc = layout_init(&l, g);
	struct coll_chain ch = { .nprev = 0 };
	for (int s = 0; !rc && s < n - 1; s++) {
		int sb = coll_mod(i - s, n), rb = coll_mod(i - 1 - s, n);
		size_t soff, slen, roff, rlen;
		blocks(&l, sb, sb + 1, &soff, &slen);
		blocks(&l, rb, rb + 1, &roff, &rlen);
		rc = exchange(g, &ch, (uint32_t)s, COLL_BUF_DATA, coll_mod(i - 1, n), roff, rlen,
		              (i + 1) % n, soff, slen, SUB_RECV, SUB_SEND);
	}
	free(l.pre);
	return rc;
}

const struct coll_algo_impl coll_agv_ring_impl = { vring_shape, vring_emit };

/* ---------------------------------------------------------------- recursive doubling
 * N = 2^L. Before step k rank i holds the 2^k blocks of its aligned group
 * (i with the low k bits cleared); it swaps the whole group with i ^ 2^k,
 * so the groups double. Every range is contiguous and in place. */
static int rd_shape(struct coll_gen *g)
{
	if (!coll_is_pow2(g->n))
		return -EINVAL;
	g->steps = (uint32_t)coll_floor_log2((uint64_t)g->n);
	g->stride = 2;
	return 0;
}

static int rd_emit(struct coll_gen *g)
{
	struct ag_layout l;
	int i = g->rank, rc = layout_init(&l, g);
	struct coll_chain ch = { .nprev = 0 };
	for (uint32_t k = 0; !rc && k < g->steps; k++) {
		int d = 1 << k, p = i ^ d, mine = i & ~(d - 1), theirs = p & ~(d - 1);
		size_t soff, slen, roff, rlen;
		blocks(&l, mine, mine + d, &soff, &slen);
		blocks(&l, theirs, theirs + d, &roff, &rlen);
		rc = exchange(g, &ch, k, COLL_BUF_DATA, p, roff, rlen, p, soff, slen,
		              SUB_RECV, SUB_SEND);
	}
	free(l.pre);
	return rc;
}

const struct coll_algo_impl coll_ag_rd_impl = { rd_shape, rd_emit };

/* ---------------------------------------------------------------- bruck
 * Any N, ceil(log2 N) steps. Rank i works in SCRATCH on its blocks rotated
 * so that its own comes first (rotated block u is block i+u mod N). Step k
 * (d = 2^k): it holds rotated blocks [0, d), sends the first min(d, N-d)
 * of them to i-d and receives as many from i+d, whose first blocks are
 * its own rotated [d, ...). Every transfer is one contiguous range, one
 * message; the price is a copy in (the own block) and two copies out (the
 * blocks after i, then those before it) when the last step is in. */
enum { BR_COPY_IN = 0, BR_RECV = 1, BR_SEND = 2, BR_COPY_HI = 3, BR_COPY_LO = 4 };

static int bruck_shape(struct coll_gen *g)
{
	const struct coll_req *r = g->req;
	g->steps = (uint32_t)coll_ceil_log2((uint64_t)g->n);
	g->stride = 5;
	g->scratch = g->n > 1 ? (r->counts ? coll_gs_total(r) : r->bytes) : 0;
	return 0;
}

/* offset in rank i's rotated SCRATCH of its rotated block u, 0 <= u <= N */
static size_t rot_off(const struct ag_layout *l, int i, int u)
{
	int n = l->g->n;
	size_t off, hi, lo;
	blocks(l, i, i + u < n ? i + u : n, &off, &hi);
	blocks(l, 0, i + u > n ? i + u - n : 0, &off, &lo);
	return hi + lo;
}

static struct coll_cmd *local_copy(struct coll_gen *g, uint32_t step, int sub, int dst_buf,
                                   size_t off, int src_buf, size_t src_off, size_t len)
{
	struct coll_cmd *c = coll_emit(g, COLL_COPY, step, 0, 0, sub, COLL_PEER_NONE);
	if (c) {
		c->buf = (uint8_t)dst_buf;
		c->off = off;
		c->src_buf = (uint8_t)src_buf;
		c->src_off = src_off;
		c->len = len;
	}
	return c;
}

static int bruck_emit(struct coll_gen *g)
{
	struct ag_layout l;
	int n = g->n, i = g->rank, rc;
	if (n == 1)
		return 0;
	if ((rc = layout_init(&l, g)))
		return rc;
	struct coll_chain ch = { .nprev = 0 };
	struct coll_cmd *c;
	size_t own_off, own;
	blocks(&l, i, i + 1, &own_off, &own);
	if (own) {
		if (!(c = local_copy(g, 0, BR_COPY_IN, COLL_BUF_SCRATCH, 0, COLL_BUF_DATA, own_off, own)))
			goto out;
		coll_chain_add(&ch, c->id);
		coll_chain_step(&ch);
	}
	for (uint32_t k = 0; k < g->steps; k++) {
		int d = 1 << k, cnt = d < n - d ? d : n - d;
		size_t roff = rot_off(&l, i, d), rend = rot_off(&l, i, d + cnt);
		rc = exchange(g, &ch, k, COLL_BUF_SCRATCH, (i + d) % n, roff, rend - roff,
		              coll_mod(i - d, n), 0, rot_off(&l, i, cnt), BR_RECV, BR_SEND);
		if (rc)
			goto out;
	}
	/* rotated blocks 1..N-1-i are blocks i+1..N-1, the rest 0..i-1 */
	size_t hi_off, hi, lo_off, lo;
	blocks(&l, i + 1, n, &hi_off, &hi);
	blocks(&l, 0, i, &lo_off, &lo);
	uint32_t last = g->steps - 1;
	if (hi) {
		if (!(c = local_copy(g, last, BR_COPY_HI, COLL_BUF_DATA, hi_off, COLL_BUF_SCRATCH, own, hi)))
			goto out;
		coll_chain_wait(&ch, c);
	}
	if (lo) {
		if (!(c = local_copy(g, last, BR_COPY_LO, COLL_BUF_DATA, lo_off, COLL_BUF_SCRATCH,
		                     own + hi, lo)))
			goto out;
		coll_chain_wait(&ch, c);
	}
out:
	free(l.pre);
	return rc ? rc : g->err;
}

const struct coll_algo_impl coll_ag_bruck_impl = { bruck_shape, bruck_emit };
