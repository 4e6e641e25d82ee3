/* coll_scan.c: inclusive and exclusive prefix reductions (scan, exscan).
 *
 * Rank v's result combines the inputs of ranks 0..v (scan) or 0..v-1
 * (exscan), always as (lower ranks) OP (higher ranks): a received part comes
 * from lower ranks, so it lands in scratch and the rank's own part is added
 * into it (COLL_REDUCE with dst = scratch), then copied back; the chain's
 * scan adds the received part into its own in DATA instead, the received
 * first (src_first), in one pass. The order of
 * combination is fixed by the schedule, never by arrival, and operations
 * need to be associative only, not commutative.
 *
 * DATA: scan, the input then the result; exscan, [input | result] (coll.h).
 */
#include "coll_int.h"

static int scan_chain_shape(struct coll_gen *g)
{
	g->steps = g->n > 1 ? (uint32_t)(g->n - 1) : 0;
	g->stride = 4;
	g->scratch = g->req->bytes;
	return 0;
}

/* A chain in rank order: rank v waits for the prefix of ranks < v from v-1
 * (step v-1), adds its own part and passes the new prefix to v+1 (step v). */
static int scan_chain_emit(struct coll_gen *g)
{
	int n = g->n, v = g->rank;
	size_t b = g->req->bytes;
	bool ex = g->req->op == COLL_OP_EXSCAN, last = v == n - 1;
	struct coll_cmd *c;
	uint64_t prev = 0;
	if (n == 1 || !b)
		return 0;
	if (v > 0) {
		uint32_t st = (uint32_t)(v - 1);
		/* exscan: the prefix of ranks < v is the result itself */
		c = coll_emit_recv(g, COLL_RECV, st, 0, 0, 0, v - 1, 3, ex ? b : 0, b);
		if (!c)
			return g->err;
		if (!ex)
			c->buf = COLL_BUF_SCRATCH;
		prev = c->id;
		if (ex && last)
			return 0;
		if (ex) {
			/* scratch = result, then scratch OP= input: the prefix to pass on */
			if (!(c = coll_emit(g, COLL_COPY, st, 0, 0, 1, COLL_PEER_NONE)))
				return g->err;
			c->buf = COLL_BUF_SCRATCH;
			c->src_buf = COLL_BUF_DATA;
			c->src_off = b;
			c->len = b;
			coll_dep(c, prev);
			prev = c->id;
		}
		if (!(c = coll_emit(g, COLL_REDUCE, st, 0, 0, 2, COLL_PEER_NONE)))
			return g->err;
		/* exscan: scratch OP= input; scan: DATA = received OP DATA
		 * (nothing reads DATA before: the send comes after) */
		c->buf = ex ? COLL_BUF_SCRATCH : COLL_BUF_DATA;
		c->src_buf = ex ? COLL_BUF_DATA : COLL_BUF_SCRATCH;
		c->src_first = !ex;
		c->len = b;
		coll_dep(c, prev);
		prev = c->id;
	}
	if (last)
		return 0;
	/* scan sends its result; exscan the scratch prefix (rank 0: its input) */
	if (!(c = coll_emit_send(g, (uint32_t)v, 0, 0, 3, v + 1, 0, b)))
		return g->err;
	if (ex && v > 0)
		c->buf = COLL_BUF_SCRATCH;
	if (v > 0)
		coll_dep(c, prev);
	return 0;
}

/* Recursive doubling. Before round k rank v holds the combination of ranks
 * [v - 2^k + 1, v] (clipped at 0). In round k it sends that to v + 2^k and
 * receives [v - 2^(k+1) + 1, v - 2^k] from v - 2^k, which goes in front.
 *
 * scan keeps the running range in DATA:
 *   sub 0 receive into scratch, 3 send DATA, 4 scratch OP= DATA,
 *   5 DATA = scratch (after the send has read DATA).
 * exscan keeps the input x in DATA[0, b) and the exclusive range e (ranks
 * [v - 2^k + 1, v - 1]) in DATA[b, 2b); what it sends is e OP x, built in
 * scratch slot 1 (rank 0, and every rank in round 0, sends x itself):
 *   sub 0 receive (round 0: straight into e; later into slot 0),
 *   1 slot1 = e, 2 slot1 OP= x, 3 send slot1 (or x),
 *   4 slot0 OP= e, 5 e = slot0.
 * Every command of a round waits for the rank's previous round, so a slot
 * is reused only once its last reader is done. */
static int scan_rd_shape(struct coll_gen *g)
{
	g->steps = (uint32_t)coll_ceil_log2((uint64_t)g->n);
	g->stride = 6;
	g->scratch = (g->req->op == COLL_OP_EXSCAN ? 2 : 1) * g->req->bytes;
	return 0;
}

static struct coll_cmd *local(struct coll_gen *g, enum coll_kind kind, uint32_t st, int sub,
                              const struct coll_chain *ch)
{
	struct coll_cmd *c = coll_emit(g, kind, st, 0, 0, sub, COLL_PEER_NONE);
	if (c) {
		c->len = g->req->bytes;
		coll_chain_wait(ch, c);
	}
	return c;
}

static int scan_rd_emit(struct coll_gen *g)
{
	int n = g->n, v = g->rank;
	size_t b = g->req->bytes;
	bool ex = g->req->op == COLL_OP_EXSCAN;
	struct coll_chain ch = { .nprev = 0 };
	struct coll_cmd *c;
	if (!b)
		return 0;
	for (uint32_t k = 0; k < g->steps; k++) {
		int span = 1 << k;
		bool from = v >= span, to = v + span < n;
		if (!from && !to)
			break;
		uint64_t rid = 0, sid = 0, eread = 0, built_id = 0;
		if (from) {
			c = coll_emit_recv(g, COLL_RECV, k, 0, 0, 0, v - span, 3,
			                   ex && k == 0 ? b : 0, b);
			if (!c)
				return g->err;
			if (!ex || k > 0)
				c->buf = COLL_BUF_SCRATCH;
			coll_chain_wait(&ch, c);
			rid = c->id;
		}
		if (to) {
			bool built = ex && v > 0 && k > 0;
			if (built) {
				if (!(c = local(g, COLL_COPY, k, 1, &ch)))
					return g->err;
				c->buf = COLL_BUF_SCRATCH;
				c->off = b;
				c->src_buf = COLL_BUF_DATA;
				c->src_off = b;
				eread = c->id;
				if (!(c = local(g, COLL_REDUCE, k, 2, &ch)))
					return g->err;
				c->buf = COLL_BUF_SCRATCH;
				c->off = b;
				c->src_buf = COLL_BUF_DATA;
				coll_dep(c, eread);
				built_id = c->id;
			}
			if (!(c = coll_emit_send(g, k, 0, 0, 3, v + span, built ? b : 0, b)))
				return g->err;
			if (built) {
				c->buf = COLL_BUF_SCRATCH;
				coll_dep(c, built_id);
			}
			coll_chain_wait(&ch, c);
			sid = c->id;
			coll_chain_add(&ch, sid);
		}
		if (!from)
			goto next;
		if (ex && k == 0) {
			coll_chain_add(&ch, rid);
			goto next;
		}
		/* slot 0 = received OP ours (scan: the range in DATA; exscan: e) */
		if (!(c = local(g, COLL_REDUCE, k, 4, &ch)))
			return g->err;
		c->buf = COLL_BUF_SCRATCH;
		c->src_buf = COLL_BUF_DATA;
		c->src_off = ex ? b : 0;
		coll_dep(c, rid);
		uint64_t red = c->id;
		if (!(c = local(g, COLL_COPY, k, 5, &ch)))
			return g->err;
		c->off = ex ? b : 0;
		c->src_buf = COLL_BUF_SCRATCH;
		coll_dep(c, red);
		if (eread)
			coll_dep(c, eread); /* slot 1 was built from the old e */
		if (!ex && to)
			coll_dep(c, sid); /* the send read DATA */
		coll_chain_add(&ch, c->id);
next:
		coll_chain_step(&ch);
	}
	return 0;
}

const struct coll_algo_impl coll_scan_chain_impl = { scan_chain_shape, scan_chain_emit };
const struct coll_algo_impl coll_scan_rd_impl = { scan_rd_shape, scan_rd_emit };
