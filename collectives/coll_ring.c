/* coll_ring.c: ring, ring_sendrecv and ring_bidir for allreduce,
 * reduce_scatter and allgather (seed 002, R1).
 *
 * The vector is cut into N blocks (coll_block; a reduce_scatter with counts,
 * block i counts[i] bytes, as MPI_Reduce_scatter's recvcounts) and each
 * block into C chunks; a transfer moves one chunk of one block, M/(N*C)
 * bytes. Rank i owns block
 * i: after the reduce-scatter phase it holds block i fully reduced, and the
 * all-gather phase spreads every owner's block to the others.
 *
 * One-way ring: in reduce-scatter step s rank i sends block i+(N-1)-s to
 * i+1, which adds it into its own copy; after N-1 steps block i has passed
 * through every rank and ends at i. All-gather step s: rank i sends block
 * i-s to i+1.
 *
 * ring_bidir: the partial sum of block b travels to its owner from both
 * sides at once: clockwise from b-a through b-1 (a = floor(N/2) ranks) and
 * counter-clockwise from b+c through b+1 (c = N-1-a ranks). The two partial
 * sums meet at b, so reduce-scatter takes a steps, not N-1, while every
 * transfer still moves one chunk and the total bytes equal the one-way
 * ring's. All-gather is the mirror image: b sends its block a ranks
 * clockwise and c ranks counter-clockwise. Steps: N for even N (the seed's
 * count) and N-1 for odd N (the seed has N+1). A slot of a step that carries
 * nothing (the counter-clockwise link in the last step of a phase, for even
 * N) emits no command but is counted in link_slots.
 *
 * Ordering (seed 002): ids by (step, direction, chunk); each command of a
 * chain (rank, direction, chunk) depends on that chain's commands of the
 * previous step it took part in, so chains are independent and the first
 * all-gather command of a direction depends on its last reduce-scatter
 * command. The one join is where the two partial sums meet: the owner adds
 * them in a fixed order (the one with the smaller id first): the second
 * partial sum is received into scratch like any other, and a local reduce
 * that waits for the first one adds it; the first all-gather command of both
 * directions waits for that add. Without that join two directions would
 * write the same bytes at once, and the sum's bits would depend on timing.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

enum { SUB_RECV = 0, SUB_SEND = 1, SUB_LOCAL = 2 };

struct ring_geom {
	bool rs, ag, bidir, sendrecv;
	int a, c;        /* clockwise / counter-clockwise lengths of a phase */
	uint32_t rs_steps, ag_steps;
	size_t maxchunk;
};

static void geom(const struct coll_gen *g, struct ring_geom *r)
{
	int n = g->n;
	enum coll_op op = g->req->op;
	r->rs = op == COLL_OP_ALLREDUCE || op == COLL_OP_REDUCE_SCATTER;
	r->ag = op == COLL_OP_ALLREDUCE || op == COLL_OP_ALLGATHER;
	r->bidir = g->algo == COLL_ALGO_RING_BIDIR;
	r->sendrecv = g->algo == COLL_ALGO_RING_SENDRECV;
	r->a = r->bidir ? n / 2 : n - 1;
	r->c = r->bidir ? n - 1 - n / 2 : 0;
	r->rs_steps = r->rs ? (uint32_t)r->a : 0;
	r->ag_steps = r->ag ? (uint32_t)r->a : 0;

	/* the largest chunk: the first chunk of block 0, or the last chunk of the
	 * last block, which also carries a trailing partial element; with
	 * counts (reduce_scatter), the first chunk of the largest block */
	size_t bytes = g->req->bytes, unit = coll_unit(g->req), off, len, coff, clen;
	if (g->req->counts) {
		size_t most = 0;
		for (int b = 0; b < n; b++)
			if (g->req->counts[b] > most)
				most = g->req->counts[b];
		coll_block(most, unit, (size_t)g->chunks, 0, &coff, &r->maxchunk);
		return;
	}
	coll_block(bytes, unit, (size_t)n, 0, &off, &len);
	coll_block(len, unit, (size_t)g->chunks, 0, &coff, &clen);
	r->maxchunk = clen;
	coll_block(bytes, unit, (size_t)n, (size_t)n - 1, &off, &len);
	coll_block(len, unit, (size_t)g->chunks, (size_t)g->chunks - 1, &coff, &clen);
	if (clen > r->maxchunk)
		r->maxchunk = clen;
}

/* With counts (a reduce_scatter's blocks of their own sizes), where each
 * block starts: pre[b], N + 1 offsets; NULL without (coll_block's even
 * cut). 0, or -ENOMEM. */
static int block_starts(const struct coll_gen *g, size_t **pre)
{
	*pre = NULL;
	if (!g->req->counts)
		return 0;
	*pre = malloc(((size_t)g->n + 1) * sizeof **pre);
	if (!*pre)
		return -ENOMEM;
	(*pre)[0] = 0;
	for (int b = 0; b < g->n; b++)
		(*pre)[b + 1] = (*pre)[b] + g->req->counts[b];
	return 0;
}

static int ring_shape(struct coll_gen *g)
{
	struct ring_geom r;
	g->chunks = g->req->num_chunks;
	geom(g, &r);
	g->ndirs = r.bidir ? 2 : 1;
	g->stride = 3;
	g->steps = r.rs_steps + r.ag_steps;
	if (g->req->input && !g->steps)
		g->steps = 1; /* one rank: a step to copy INPUT into DATA */
	g->scratch = (size_t)g->ndirs * (size_t)g->chunks * r.maxchunk;
	return 0;
}

/* a chain of seed 002 (rank, direction, chunk), and whether its all-gather
 * has begun: its first all-gather commands also wait for the meeting */
struct chain {
	struct coll_chain c;
	bool ag_started;
};

static void chain_next_step(struct chain *chains, int n)
{
	for (int i = 0; i < n; i++)
		coll_chain_step(&chains[i].c);
}

static void chunk_range(const struct coll_gen *g, const size_t *pre, int block, int k, size_t *off, size_t *len)
{
	size_t unit = coll_unit(g->req), boff, blen, coff;
	int b = coll_mod(block, g->n);
	if (pre) {
		boff = pre[b];
		blen = pre[b + 1] - pre[b];
	} else {
		coll_block(g->req->bytes, unit, (size_t)g->n, (size_t)b, &boff, &blen);
	}
	coll_block(blen, unit, (size_t)g->chunks, (size_t)k, &coff, len);
	*off = boff + coff;
}

static int ring_emit(struct coll_gen *g)
{
	struct ring_geom r;
	geom(g, &r);
	int n = g->n, i = g->rank, C = g->chunks, nd = g->ndirs;
	struct chain *chains = calloc((size_t)(nd * C), sizeof *chains);
	uint64_t *meet = calloc((size_t)C, sizeof *meet);
	bool *met = calloc((size_t)C, sizeof *met);
	size_t *pre = NULL;
	if (!chains || !meet || !met || block_starts(g, &pre)) {
		free(chains);
		free(meet);
		free(met);
		return -ENOMEM;
	}
	uint32_t step = 0;
	/* With the input apart a rank reduces each block at most once in the
	 * reduce-scatter (ring_bidir: its own block twice, where the two
	 * partial sums meet), so every reduction there but that meeting is the
	 * block's first and takes the rank's part from INPUT, and step 0 sends
	 * its block(s) from INPUT (ring_bidir's two are the blocks it never
	 * reduces); the other blocks of DATA are received whole. */
	bool apart = g->req->input;
	if (n == 1)
		coll_emit_input_copy(g, SUB_LOCAL); /* g->err says if it failed */

	for (int s = 0; s < (int)r.rs_steps; s++, step++) {
		for (int d = 0; d < nd; d++) {
			int len_d = d == 0 ? r.a : r.c;
			if (s >= len_d)
				continue;
			int sblk = d == 0 ? i + r.a - s : i - r.c + s;
			int rblk = d == 0 ? i - 1 + r.a - s : i + 1 - r.c + s;
			int to = coll_mod(d == 0 ? i + 1 : i - 1, n);
			int from = coll_mod(d == 0 ? i - 1 : i + 1, n);
			for (int k = 0; k < C; k++) {
				struct chain *ch = &chains[d * C + k];
				size_t off, len, soff = (size_t)(d * C + k) * r.maxchunk;
				struct coll_cmd *c;
				chunk_range(g, pre, rblk, k, &off, &len);
				if (len) {
					uint64_t last;
					bool meeting = r.bidir && coll_mod(rblk, n) == i && met[k];
					if (r.sendrecv || meeting) {
						c = coll_emit_recv(g, COLL_RECV, step, d, k, SUB_RECV, from,
						                   SUB_SEND, soff, len);
						if (!c)
							break;
						c->buf = COLL_BUF_SCRATCH;
						coll_chain_wait(&ch->c, c);
						uint64_t rid = c->id;
						coll_chain_add(&ch->c, rid);
						c = coll_emit(g, COLL_REDUCE, step, d, k, SUB_LOCAL, COLL_PEER_NONE);
						if (!c)
							break;
						c->off = off;
						c->len = len;
						c->src_off = soff;
						/* the second partial sum of our block adds
						 * into the first add's result, which holds
						 * our part already */
						c->from_input = apart && !meeting;
						coll_dep(c, rid);
						if (meeting)
							coll_dep(c, meet[k]);
					} else {
						c = coll_emit_recv(g, COLL_REDUCE, step, d, k, SUB_RECV, from,
						                   SUB_SEND, off, len);
						if (!c)
							break;
						c->src_off = soff;
						if (apart)
							coll_reduce_from_input(c);
						coll_chain_wait(&ch->c, c);
					}
					last = c->id;
					if (r.bidir && coll_mod(rblk, n) == i) {
						/* the two partial sums of block i meet here: the
						 * second arrives into scratch like any other and
						 * only its add waits for the first add */
						meet[k] = last;
						met[k] = true;
					}
					coll_chain_add(&ch->c, last);
				}
				chunk_range(g, pre, sblk, k, &off, &len);
				if (len) {
					c = coll_emit_send(g, step, d, k, SUB_SEND, to, off, len);
					if (!c)
						break;
					if (apart && s == 0)
						c->buf = COLL_BUF_INPUT;
					coll_chain_wait(&ch->c, c);
					coll_chain_add(&ch->c, c->id);
				}
			}
		}
		chain_next_step(chains, nd * C);
	}

	for (int s = 0; s < (int)r.ag_steps; s++, step++) {
		for (int d = 0; d < nd; d++) {
			int len_d = d == 0 ? r.a : r.c;
			if (s >= len_d)
				continue;
			int sblk = d == 0 ? i - s : i + s;
			int rblk = d == 0 ? i - 1 - s : i + 1 + s;
			int to = coll_mod(d == 0 ? i + 1 : i - 1, n);
			int from = coll_mod(d == 0 ? i - 1 : i + 1, n);
			for (int k = 0; k < C; k++) {
				struct chain *ch = &chains[d * C + k];
				bool first = !ch->ag_started;
				size_t off, len, soff = (size_t)(d * C + k) * r.maxchunk;
				struct coll_cmd *c;
				chunk_range(g, pre, rblk, k, &off, &len);
				if (len) {
					c = coll_emit_recv(g, COLL_RECV, step, d, k, SUB_RECV, from, SUB_SEND,
					                   r.sendrecv ? soff : off, len);
					if (!c)
						break;
					c->buf = r.sendrecv ? COLL_BUF_SCRATCH : COLL_BUF_DATA;
					coll_chain_wait(&ch->c, c);
					if (first && met[k])
						coll_dep(c, meet[k]);
					uint64_t rid = c->id;
					coll_chain_add(&ch->c, rid);
					if (r.sendrecv) {
						c = coll_emit(g, COLL_COPY, step, d, k, SUB_LOCAL, COLL_PEER_NONE);
						if (!c)
							break;
						c->off = off;
						c->len = len;
						c->src_off = soff;
						coll_dep(c, rid);
						coll_chain_add(&ch->c, c->id);
					}
					ch->ag_started = true;
				}
				chunk_range(g, pre, sblk, k, &off, &len);
				if (len) {
					c = coll_emit_send(g, step, d, k, SUB_SEND, to, off, len);
					if (!c)
						break;
					coll_chain_wait(&ch->c, c);
					if (first && met[k])
						coll_dep(c, meet[k]);
					coll_chain_add(&ch->c, c->id);
					ch->ag_started = true;
				}
			}
		}
		chain_next_step(chains, nd * C);
	}
	free(chains);
	free(meet);
	free(met);
	free(pre);
	return g->err;
}

const struct coll_algo_impl coll_ring_impl = { ring_shape, ring_emit };
