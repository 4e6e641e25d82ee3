/* coll_hd.c: recursive halving-doubling allreduce (seed 002, R2).
 *
 * N = 2^L. Halving step k (mask 2^k): rank i and i^mask share a segment of
 * the vector; each keeps one half (the lower if bit k of i is 0), receives
 * the partner's copy of it and adds it in, and sends the other half. After L
 * steps rank i holds 1/N of the vector fully reduced. Doubling runs the same
 * pairs backwards (masks 2^(L-1) .. 1), each side sending what it holds and
 * receiving the partner's half, so segments double back to the whole vector.
 * A step moves M/2^(k+1) bytes each way; the total is 2M(N-1)/N per rank.
 *
 * Pairing is over logical ranks (participant indices); the physical rank is
 * participants[logical]. Every step is a Receive plus a Send; the Receive has
 * the smaller id, so an executor posting in id order has the receive ready
 * before its send goes out. Neither waits for the other: both wait for the
 * rank's previous step.
 */
#include "coll_int.h"

enum { SUB_RECV = 0, SUB_SEND = 1 };

static int hd_shape(struct coll_gen *g)
{
	if (!coll_is_pow2(g->n))
		return -EINVAL;
	int L = coll_floor_log2((uint64_t)g->n);
	size_t unit = coll_unit(g->req), units = g->req->bytes / unit;
	g->steps = (uint32_t)(2 * L);
	if (g->req->input && !g->steps)
		g->steps = 1; /* one rank: a step to copy INPUT into DATA */
	g->stride = 2;
	/* the larger half of the first split */
	g->scratch = L ? (units - units / 2) * unit : 0;
	return 0;
}

/* Segment [lo, hi) in elements that `rank` keeps after `k` halving steps. */
static void seg_after(int rank, int k, size_t units, size_t *lo, size_t *hi)
{
	*lo = 0;
	*hi = units;
	for (int j = 0; j < k; j++) {
		size_t mid = *lo + (*hi - *lo) / 2;
		if (rank & (1 << j))
			*lo = mid;
		else
			*hi = mid;
	}
}

static int hd_emit(struct coll_gen *g)
{
	int L = coll_floor_log2((uint64_t)g->n), i = g->rank;
	size_t unit = coll_unit(g->req), units = g->req->bytes / unit;
	struct coll_chain ch = { .nprev = 0 };
	/* With the input apart step 0 sends the half it gives away from
	 * INPUT and its add takes the kept half from there (from_input); the
	 * later steps work in DATA, whose every byte that add or a doubling
	 * receive writes. */
	bool apart = g->req->input;
	if (!L && coll_emit_input_copy(g, SUB_RECV))
		return g->err;

	for (uint32_t step = 0; step < (uint32_t)(2 * L); step++) {
		bool halving = step < (uint32_t)L;
		int k = halving ? (int)step : 2 * L - 1 - (int)step;
		int p = i ^ (1 << k);
		size_t klo, khi, slo, shi;  /* kept (received into) and sent ranges */
		if (halving) {
			seg_after(i, k + 1, units, &klo, &khi);
			seg_after(p, k + 1, units, &slo, &shi);
		} else {
			seg_after(p, k + 1, units, &klo, &khi);
			seg_after(i, k + 1, units, &slo, &shi);
		}
		struct coll_cmd *c;
		if (khi > klo) {
			c = coll_emit_recv(g, halving ? COLL_REDUCE : COLL_RECV, step, 0, 0, SUB_RECV,
			                   p, SUB_SEND, klo * unit, (khi - klo) * unit);
			if (!c)
				return g->err;
			if (apart && step == 0)
				coll_reduce_from_input(c);
			coll_chain_wait(&ch, c);
			coll_chain_add(&ch, c->id);
		}
		if (shi > slo) {
			c = coll_emit_send(g, step, 0, 0, SUB_SEND, p, slo * unit, (shi - slo) * unit);
			if (!c)
				return g->err;
			if (apart && step == 0)
				c->buf = COLL_BUF_INPUT;
			coll_chain_wait(&ch, c);
			coll_chain_add(&ch, c->id);
		}
		coll_chain_step(&ch);
	}
	return 0;
}

const struct coll_algo_impl coll_hd_impl = { hd_shape, hd_emit };
