/* coll_misc.c: pairwise alltoall and dissemination barrier. */
#include "coll_int.h"

/* Pairwise alltoall: in step s-1 (s = 1..N-1) rank i sends its input block
 * for i+s and receives the block of i-s, so every rank talks to exactly one
 * sender and one receiver per step. Its own block is a local copy in step 0.
 * Each block is req->bytes (the per-peer count). */
static int pairwise_shape(struct coll_gen *g)
{
	g->steps = g->n > 1 ? (uint32_t)(g->n - 1) : 1;
	g->stride = 3;
	return 0;
}

static int pairwise_emit(struct coll_gen *g)
{
	int n = g->n, i = g->rank;
	size_t m = g->req->bytes;
	struct coll_chain ch = { .nprev = 0 };
	struct coll_cmd *c;
	if (!m)
		return 0;
	if (!(c = coll_emit(g, COLL_COPY, 0, 0, 0, 2, COLL_PEER_NONE)))
		return g->err;
	c->off = (size_t)i * m;
	c->src_buf = COLL_BUF_INPUT;
	c->src_off = (size_t)i * m;
	c->len = m;
	for (int s = 1; s < n; s++) {
		uint32_t st = (uint32_t)(s - 1);
		int to = (i + s) % n, from = coll_mod(i - s, n);
		if (!(c = coll_emit_recv(g, COLL_RECV, st, 0, 0, 0, from, 1, (size_t)from * m, m)))
			return g->err;
		coll_chain_wait(&ch, c);
		coll_chain_add(&ch, c->id);
		if (!(c = coll_emit_send(g, st, 0, 0, 1, to, (size_t)to * m, m)))
			return g->err;
		c->buf = COLL_BUF_INPUT;
		coll_chain_wait(&ch, c);
		coll_chain_add(&ch, c->id);
		coll_chain_step(&ch);
	}
	return 0;
}

const struct coll_algo_impl coll_pairwise_impl = { pairwise_shape, pairwise_emit };

/* Dissemination barrier: in round r rank i signals i+2^r and waits for
 * i-2^r; after ceil(log2 N) rounds every rank has heard, directly or not,
 * from every other. Transfers carry zero bytes. */
static int dissem_shape(struct coll_gen *g)
{
	g->steps = (uint32_t)coll_ceil_log2((uint64_t)g->n);
	g->stride = 2;
	return 0;
}

static int dissem_emit(struct coll_gen *g)
{
	int n = g->n, i = g->rank;
	struct coll_chain ch = { .nprev = 0 };
	struct coll_cmd *c;
	for (uint32_t r = 0; r < g->steps; r++) {
		long long span = 1LL << r;
		int to = coll_mod(i + span, n), from = coll_mod(i - span, n);
		if (!(c = coll_emit_recv(g, COLL_RECV, r, 0, 0, 0, from, 1, 0, 0)))
			return g->err;
		coll_chain_wait(&ch, c);
		coll_chain_add(&ch, c->id);
		if (!(c = coll_emit_send(g, r, 0, 0, 1, to, 0, 0)))
			return g->err;
		coll_chain_wait(&ch, c);
		coll_chain_add(&ch, c->id);
		coll_chain_step(&ch);
	}
	return 0;
}

const struct coll_algo_impl coll_dissem_impl = { dissem_shape, dissem_emit };
