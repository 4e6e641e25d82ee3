/* coll_misc.c: pairwise and linear alltoall, and dissemination barrier. */
#include <stdlib.h>

#include "coll_int.h"

/* Pairwise alltoall: in step s-1 (s = 1..N-1) rank i sends its input block
 * for i+s and receives the block of i-s, so every rank talks to exactly one
 * sender and one receiver per step. Its own block is a local copy in step 0.
 * Each block is req->bytes (the per-peer count), or with counts (alltoallv)
 * what the matrix says for the pair: INPUT holds the row's blocks back to
 * back, DATA the column's, so a rank needs its row and column only, and
 * both sides of a pair skip it when it carries nothing. */
static int pairwise_shape(struct coll_gen *g)
{
	g->steps = g->n > 1 ? (uint32_t)(g->n - 1) : 1;
	g->stride = 3;
	return 0;
}

int coll_a2a_sums(const struct coll_req *r, size_t *max_row, size_t *max_col)
{
	/* the row-and-column form holds one rank's sums, the matrix every rank's */
	int n = r->nranks, ranks = r->recv_counts ? 1 : n;
	size_t mr = 0, mc = 0;
	for (int k = 0; k < ranks; k++) {
		size_t row = 0, col = 0;
		for (int j = 0; j < n; j++) {
			size_t a = r->recv_counts ? r->counts[j] : r->counts[(size_t)k * (size_t)n + (size_t)j];
			size_t b = r->recv_counts ? r->recv_counts[j]
			                          : r->counts[(size_t)j * (size_t)n + (size_t)k];
			if (a > SIZE_MAX / 2 - row || b > SIZE_MAX / 2 - col)
				return -EINVAL;
			row += a;
			col += b;
		}
		mr = row > mr ? row : mr;
		mc = col > mc ? col : mc;
	}
	if (max_row)
		*max_row = mr;
	if (max_col)
		*max_col = mc;
	return 0;
}

/* offset of peer j's block: from the prefix sums, or j whole blocks */
static size_t pw_off(const size_t *pre, int j, size_t bytes)
{
	return pre ? pre[j] : (size_t)j * bytes;
}

/* Pairwise (linear false) or linear: the same transfers, the pairwise ones
 * one partner a step, each step after the last; the linear ones all in
 * step 0, independent, numbered by distance (a rank's commands run in id
 * order: coll_expand.c sorts them): every receive first, from the rank
 * before on, then the sends from the rank after on, so the ranks do not
 * all send to rank 0 first. */
static int a2a_emit(struct coll_gen *g, bool linear)
{
	const struct coll_req *r = g->req;
	int n = g->n, i = g->rank;
	struct coll_chain ch = { .nprev = 0 };
	struct coll_cmd *c;
	/* offsets of the row's blocks in INPUT and the column's in DATA */
	size_t *soff = NULL, *roff = NULL;
	if (r->counts) {
		soff = malloc(2 * ((size_t)n + 1) * sizeof *soff);
		if (!soff)
			return -ENOMEM;
		roff = soff + n + 1;
		soff[0] = roff[0] = 0;
		for (int j = 0; j < n; j++) {
			soff[j + 1] = soff[j] + coll_a2a_send(r, i, j);
			roff[j + 1] = roff[j] + coll_a2a_recv(r, i, j);
		}
	}
	/* the row's and the column's copy to itself must agree (coll.h); if a
	 * caller's do not, the smaller runs past neither buffer */
	size_t own = coll_a2a_send(r, i, i);
	if (coll_a2a_recv(r, i, i) < own)
		own = coll_a2a_recv(r, i, i);
	if (own) {
		if (!(c = coll_emit(g, COLL_COPY, 0, 0, 0, linear ? 0 : 2, COLL_PEER_NONE)))
			goto out;
		c->off = pw_off(roff, i, r->bytes);
		c->src_buf = COLL_BUF_INPUT;
		c->src_off = pw_off(soff, i, r->bytes);
		c->len = own;
	}
	/* linear: pass 0 the receives, pass 1 the sends; pairwise: both in
	 * one pass, a step each */
	for (int pass = 0; pass < (linear ? 2 : 1); pass++) {
		for (int s = 1; s < n; s++) {
			uint32_t st = linear ? 0 : (uint32_t)(s - 1);
			int to = (i + s) % n, from = coll_mod(i - s, n);
			size_t rlen = coll_a2a_recv(r, i, from), slen = coll_a2a_send(r, i, to);
			/* subs: pairwise 0 (receive) and 1 (send) a step; linear
			 * s (the receive from s ranks before) and n - 1 + s (the
			 * send to s ranks after, which the receiver there numbers
			 * its receive s) */
			if (rlen && (!linear || pass == 0)) {
				c = coll_emit_recv(g, COLL_RECV, st, 0, 0, linear ? s : 0, from, linear ? n - 1 + s : 1,
						   pw_off(roff, from, r->bytes), rlen);
				if (!c)
					goto out;
				if (!linear) {
					coll_chain_wait(&ch, c);
					coll_chain_add(&ch, c->id);
				}
			}
			if (slen && (!linear || pass == 1)) {
				c = coll_emit_send(g, st, 0, 0, linear ? n - 1 + s : 1, to, pw_off(soff, to, r->bytes),
						   slen);
				if (!c)
					goto out;
				c->buf = COLL_BUF_INPUT;
				if (!linear) {
					coll_chain_wait(&ch, c);
					coll_chain_add(&ch, c->id);
				}
			}
			if (!linear)
				coll_chain_step(&ch);
		}
	}
out:
	free(soff);
	return g->err;
}

static int pairwise_emit(struct coll_gen *g)
{
	return a2a_emit(g, false);
}

/* Linear alltoall: one step, every transfer independent of the others;
 * sub 0 the copy to itself, 1 to n - 1 the receives, n to 2n - 2 the
 * sends. */
static int linear_a2a_shape(struct coll_gen *g)
{
	g->steps = 1;
	g->stride = g->n > 1 ? 2 * (uint64_t)g->n - 1 : 1;
	return 0;
}

static int linear_a2a_emit(struct coll_gen *g)
{
	return a2a_emit(g, true);
}

const struct coll_algo_impl coll_pairwise_impl = { pairwise_shape, pairwise_emit };
const struct coll_algo_impl coll_la2a_impl = { linear_a2a_shape, linear_a2a_emit };

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
