/* coll_ard.c: recursive-doubling allreduce for short vectors.
 *
 * N = 2^L. Step k pairs rank i with i ^ 2^k; both send their whole partial
 * vector and receive the partner's into scratch, so after L steps every rank
 * holds the full reduction: L latencies and L messages of M bytes per rank,
 * where the ring and halving-doubling take 2(N-1) and 2L latencies. That wins
 * while latency dominates (coll_choose picks it for short vectors).
 *
 * Both partners must compute the same bits, so the combination is always
 * (lower half's partial) OP (upper half's partial), the schedule's fixed
 * order: the lower rank adds the upper's part into DATA; the upper rank
 * takes the lower's part from scratch as the first operand (src_first) and
 * adds into its own DATA, in one pass (it added into scratch and copied the
 * sum back: a pass over the vector more on half the ranks at every step
 * whose own part was in DATA). The local reduce waits for the step's send
 * too, so DATA never changes under a transfer that still reads it.
 *
 * With the input apart (req->input: ptl's MPI_Allreduce) step 0 sends
 * INPUT, which nothing writes, and both ranks receive the partner's part
 * straight into DATA: the upper rank adds INPUT into it (DATA = lower's
 * OP INPUT), the lower rank reads its own part from INPUT in the same pass
 * (from_input: DATA = INPUT OP upper's). Same operands in the same order,
 * so the same bits where the reduce gives them whichever operand its
 * result aliases (NaNs included: ptl's MPI by mpi_impl.h's
 * MPI_OP_NAN_FIRST, coll_reduce_local by the same rule), with no copy of
 * the input at all (the lower rank copied INPUT into DATA first and
 * received into scratch: on the 2-rank 1 MiB allreduce a pass of its own
 * over 1 MiB, which the cost model put at 29 us of 153) and no reduce of
 * step 0 waiting for the send (an acknowledged one still ends the
 * schedule only when its ACK is back).
 */
#include "coll_int.h"

enum { SUB_RECV = 0, SUB_SEND = 1, SUB_REDUCE = 2, SUB_COPY = 3 };

static int ard_shape(struct coll_gen *g)
{
	if (!coll_is_pow2(g->n))
		return -EINVAL;
	g->steps = (uint32_t)coll_floor_log2((uint64_t)g->n);
	if (g->req->input && !g->steps)
		g->steps = 1; /* one rank: a step to copy INPUT into DATA */
	g->stride = 4;
	/* step 0 with the input apart receives into DATA: scratch only for
	 * the steps after it */
	g->scratch = g->req->input && g->steps <= 1 ? 0 : g->req->bytes;
	return 0;
}

static int ard_emit(struct coll_gen *g)
{
	int L = coll_floor_log2((uint64_t)g->n), i = g->rank;
	size_t b = g->req->bytes;
	uint64_t prev = 0;
	bool have_prev = false;
	if (!b)
		return 0;
	if (!L)
		return coll_emit_input_copy(g, SUB_COPY);
	for (int k = 0; k < L; k++) {
		uint32_t st = (uint32_t)k;
		int p = i ^ (1 << k);
		bool upper = (i & (1 << k)) != 0;
		bool apart = k == 0 && g->req->input; /* step 0 reads INPUT */
		struct coll_cmd *rv = coll_emit_recv(g, COLL_RECV, st, 0, 0, SUB_RECV, p, SUB_SEND, 0, b);
		if (!rv)
			return g->err;
		rv->buf = apart ? COLL_BUF_DATA : COLL_BUF_SCRATCH;
		if (have_prev)
			coll_dep(rv, prev);
		uint64_t rid = rv->id; /* the next emit may move the array */
		struct coll_cmd *sd = coll_emit_send(g, st, 0, 0, SUB_SEND, p, 0, b);
		if (!sd)
			return g->err;
		if (apart)
			sd->buf = COLL_BUF_INPUT;
		if (have_prev)
			coll_dep(sd, prev);
		uint64_t sid = sd->id;
		struct coll_cmd *rd = coll_emit(g, COLL_REDUCE, st, 0, 0, SUB_REDUCE, COLL_PEER_NONE);
		if (!rd)
			return g->err;
		rd->len = b;
		if (apart) {
			/* DATA holds the partner's part; ours is INPUT, first
			 * (from_input) where we are the lower rank. The send
			 * reads INPUT: no need to wait for it. */
			if (upper)
				rd->src_buf = COLL_BUF_INPUT;
			else
				coll_reduce_from_input(rd);
			coll_dep(rd, rid);
			prev = rd->id;
			have_prev = true;
			continue;
		}
		/* The partner's part came into scratch; the upper rank's
		 * comes second (src_first), its sum into DATA in one pass.
		 * Both wait for the send of DATA they overwrite. */
		rd->src_first = upper;
		coll_dep(rd, rid);
		coll_dep(rd, sid);
		prev = rd->id;
		have_prev = true;
	}
	return 0;
}

const struct coll_algo_impl coll_ard_impl = { ard_shape, ard_emit };
