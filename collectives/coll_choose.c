/* coll_choose.c: which algorithm runs (seed 002, R3/R4; table V3.1 wins over
 * the prose of R3.4 where they disagree). */
#include <stdio.h>
#include <string.h>

#include "coll_int.h"

/* Below both of these, a binomial bcast's log2(N) full-size hops beat the
 * scatter + ring allgather's extra latency. */
#define COLL_BCAST_LONG_BYTES (64u * 1024u)
#define COLL_BCAST_LONG_RANKS 8
/* ... and on one host of up to this many ranks at any size: there the
 * scatter + allgather's ring moves each byte between cores many times
 * over where the tree moves it once a level. 8 ranks on 2 vCPUs,
 * MPI_Bcast loops, 2 launches, us, binomial vs scatter_allgather: 16 KiB
 * 10.4-10.5 vs 39.6-50.0, 64 KiB 23.5-24.1 vs 65-79 (Open MPI 4.1: 33.1),
 * 256 KiB 57-65 vs 215-253, 1 MiB 181-199 vs 376-504 (358); 4 ranks, where
 * the tree was already the choice, 1 MiB 70-77 vs 135-181. Measured where
 * the ranks outnumber the cores (not with a core each). */
#define COLL_BCAST_HOST_TREE_RANKS 8

/* Up to this many bytes, a power-of-two allreduce goes by recursive
 * doubling: log2(N) exchanges of the whole vector beat the 2(N-1) or 2 log2(N)
 * latencies of the bandwidth-optimal algorithms while a message costs more in
 * latency than in bytes (alpha * beta is about 15 KB on shm). Measured on 2
 * ranks: 4 KiB 2.3 vs 2.7 us (ring), 8 KiB 3.5 vs 3.7; at 16 KiB a whole
 * vector plus its header no longer went inline on shm and the ring won
 * (5.9 vs 14.7 us). */
#define COLL_ALLREDUCE_SHORT_BYTES (8u * 1024u)
/* On one host, since shm carries 16 KiB inline (nal.h's NAL_HDR_ROOM),
 * up to this many. Far state (core_rtt ~440 ns), 4 interleaved rounds,
 * median of the rounds' medians, us, recursive doubling vs the algorithm
 * chosen before: 2 ranks pinned, 12 KiB 3.9 vs 4.2 (ring), 16 KiB 4.2
 * vs 4.9; 4 ranks on 2 cores, 12 KiB 32.2 vs 48.3 (ring_bidir), 16 KiB
 * 32.6 vs 47.8, but 24 KiB 84.0 vs 53.5 (its messages past the inline
 * limit); 8 ranks on 2 cores, 3 rounds, 16 KiB 145 - 186 vs 160 - 185
 * (halving-doubling). */
#define COLL_ALLREDUCE_SHORT_HOST_BYTES (16u * 1024u)

/* On 2 ranks of one host, past COLL_ALLREDUCE_SHORT_HOST_BYTES and up to
 * COLL_ALLREDUCE_PAIR_MAX, recursive doubling still (its one exchange of
 * the whole vector) instead of the ring's two of half of it. From 32 KiB
 * the ring's halves no longer go inline on shm (16 KiB with the header),
 * so both pay a message the receiver reads on arrival, the ring two of
 * them, while the whole vector stays eager (ptl's MPI sends a schedule's
 * messages eagerly up to 64 KiB, mpi_coll.c's COLL_EAGER_TIMES; above,
 * recursive doubling's one was a rendezvous the shm layer splits, and the
 * ring won again: 96 KiB 37.9 vs 77.1 us, 128 KiB 26.1 vs 29.8, until the
 * sends went eager further: below). 2 ranks pinned, interleaved (load 2),
 * median [best] us, ring against recursive doubling: 32 KiB 10.7 [10.3]
 * vs 7.20 [7.14] and 19.0 [10.4] vs 7.80 [7.15], 48 KiB 13.7 [13.1] vs
 * 9.47 [9.38], 64 KiB 17.2 [15.4] vs 11.7 [11.6] and 32.5 [15.4] vs 12.5
 * [11.6]. Below 32 KiB, where the ring's halves go inline and recursive
 * doubling's one message is read, it was the ring's (24 KiB 5.60 [5.41]
 * vs 6.16 [6.07], 12 KiB 2.98 vs 3.07) until shm carried 16 KiB inline
 * (nal.h's NAL_HDR_ROOM) and its polls looked ahead: then (far state, 3
 * interleaved rounds, medians, us, ring against recursive doubling) 20
 * KiB 5.48 - 5.73 vs 4.21 - 4.37, 24 KiB 5.76 - 6.02 vs 4.46 - 4.54, 28
 * KiB 5.97 - 6.30 vs 4.82 - 4.94, 32 KiB 6.29 - 6.52 vs 5.17 - 5.29. */
/* Since a 2-rank allreduce's sends on one host stay eager up to 1 MiB
 * (mpi_coll.c's mpi_coll_pull: read by the receiver into its own buffer,
 * no rendezvous), recursive doubling's one message wins further: its one
 * exchange and one wait against the ring's two, for the reduction of the
 * whole vector instead of half. 2 ranks pinned, interleaved, 20 rounds
 * (load 4-5), median [best] us, recursive doubling vs ring (Open MPI):
 * 72 KiB 12.8 [12.7] vs 17.0 [16.7], 112 KiB 18.6 [18.4] vs 23.2 [22.8],
 * 128 KiB 26.7 [25.4] vs 26.0 [25.5] (even), 160 KiB 33.6 vs 35.7,
 * 256 KiB 48.2 [44.6] vs 56.9 [51.9] (58.9), 384 KiB 74.4 [64.6] vs 85.6
 * [67.9] (83.2), 448 KiB 79.3 [75.2] vs 93.9 [78.4] (92.9); from 512 KiB
 * (90.4 [84.7] vs 93.0 [83.1]; 640 KiB 114.7 vs 112.3) the ring's again,
 * 1 MiB 196 vs 154. Since shm moves long messages through its bounce
 * buffers (two memcpy, both CPUs, instead of one CMA copy at a fifth of the
 * speed), the copies no longer dominate, and the ring's reduction of half
 * the vector wins from 128 KiB: 2 ranks pinned, interleaved (load 3-9),
 * median [best] us, ring vs recursive doubling (Open MPI): 128 KiB 15.1
 * [13.4] vs 17.2 [16.8] (24.0), 256 KiB 16.8 [16.1] vs 35.7 [20.1] (40.9)
 * and 25.4 [24.2] vs 45.4 [30.1] (44.9); at 64 KiB even (16.8 [9.3] vs
 * 16.0 [10.9]), at 32 KiB recursive doubling's (11.3 [6.6] vs 6.4 [5.8]). */
#define COLL_ALLREDUCE_PAIR_MAX (64u * 1024u)

/* Up to this many bytes in all, allgather goes by recursive doubling or
 * bruck: ceil(log2 N) rounds move the same N-1 blocks per rank as the
 * ring's N-1 steps, so while latency dominates they win by N-1 against
 * log2 N; beyond it the ring's neighbour-only traffic and small steady
 * messages are kept (the bcast threshold, on the same reasoning). */
#define COLL_ALLGATHER_SHORT_BYTES (64u * 1024u)
/* ... and at any size on one host of a power of two up to this many
 * ranks, where there is no link for the ring to keep quiet and its N-1
 * steps are N-1 turns at the cores. 2 vCPUs, MPI_Allgather loops, 2
 * launches, per-rank block, us, ring vs recursive doubling: 8 ranks 1 KiB
 * 29.8-30.2 vs 15.0-17.8, 16 KiB 88-95 vs 70-72, 64 KiB 198-201 vs
 * 138-149 (Open MPI 4.1: 168), 256 KiB 474-475 vs 396-428; 4 ranks 64
 * KiB 38-45 vs 33, 256 KiB 97-100 vs 80-83, 1 MiB 343-365 vs 305-308.
 * Three ranks keep the ring (bruck, recursive doubling's stand-in there,
 * 1 MiB 356-363 against the ring's 206-208). */
#define COLL_ALLGATHER_HOST_RD_RANKS 8

static void warn(struct coll_choice *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warn(struct coll_choice *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->warning, sizeof c->warning, fmt, ap);
	va_end(ap);
}

/* "ring" family for allreduce/reduce_scatter/allgather. A power-of-two
 * allreduce past the short ones goes by halving-doubling where a rank
 * drives two transfers at once, and on one host: both move 2 (N - 1) / N of
 * the vector per rank, halving-doubling in 2 log2 N steps against the
 * ring's 2 (N - 1), and shm joins every pair alike (the ring's
 * neighbour-only traffic pays off across a network). On 2 ranks they are
 * the same exchange. */
static enum coll_algo ring_by_ports(const struct coll_req *r)
{
	return r->ports >= 2 ? COLL_ALGO_RING_BIDIR : COLL_ALGO_RING;
}

/* Up to this many ranks (a power of two, where halving-doubling would
 * go; others untried) on one host whose cores they outnumber, an
 * allreduce past the short ones takes the rule below (shared_cores_allreduce).
 * Where ranks take turns on a core, each switch costs more than the bytes
 * of a step, so the algorithm that keeps a rank's work ready when it gets
 * the core wins:
 * - the bidirectional ring (whatever the ports) while its messages (a
 *   quarter of the vector) still go inline, to COLL_SHARED_BIDIR_MAX: each
 *   rank drives both directions, so a rank that gets the core has twice
 *   the work ready;
 * - recursive doubling above it, to below COLL_SHARED_HD_MIN: two
 *   exchanges of the whole vector, so a rank waits for one partner twice
 *   where the rings and halving-doubling make all four ranks take turns at
 *   four steps; the extra reduction costs less than those switches;
 * - halving-doubling from COLL_SHARED_HD_MIN, as where the cores are not
 *   shared (its moves halve the vector; recursive doubling's whole-vector
 *   moves cost more there than the turns they save);
 * - the bidirectional ring again from COLL_SHARED_BIDIR_LONG_MIN, the
 *   faster there as measured below (halving-doubling's first and last
 *   steps exchange half the vector a pair; the ring's steps move a
 *   quarter each way round, every pair of neighbours across the cores).
 * 4 ranks on the 2 vCPUs of an AMD EPYC guest, bound, near state, shm
 * moving every bulk message through the segment (shm_bulk.c's bulk_mode),
 * bench/mpi_allreduce.c forced per algorithm, 5 interleaved launches,
 * medians us (2026-12-05), ring_bidir vs recursive doubling vs
 * halving-doubling: 64 KiB 29.6 vs 34.0 vs 37.4; 72 KiB (the ring's
 * messages past the 16 KiB inline limit) 51.0 vs 37.4 vs 51.2; 80 KiB 49.6
 * vs 40.3 vs 52.4; 128 KiB 60.3 vs 52.6 vs 65.1; 160 KiB 69.5 vs 59.5 vs
 * 68.7; 192 KiB 75.1 vs 71.7 vs 72.2; 224 KiB 79.9 vs 77.6 vs 79.7; 256
 * KiB 85.7 vs 89.5 vs 81.2; and in 3 launches 384 KiB 106 vs 126 vs 98,
 * 1 MiB 211 vs 356 vs 208 (Open MPI 4.1's own choice: 47, 71, 90, 103,
 * 140, 357 at 64, 128, 192, 256, 384 KiB, 1 MiB). At 192 and 224 KiB
 * recursive doubling and halving-doubling are within 3% (MPI_Allreduce's
 * own halving-doubling there, in those launches: 71.0 and 74.8), so the
 * line sits at 192 KiB, where halving-doubling's larger sizes begin to
 * lead. Earlier hosts and builds drew these lines elsewhere (this file's
 * history has their figures): the rule follows the measurements, not a
 * model. Later (2026-12-06, the same guest and binding, near state,
 * 5 interleaved launches of a loop of MPI_Allreduce each, medians, us;
 * to rerun: PTL_COLL_ALGO=halving_doubling, and PTL_COLL_PORTS=2
 * PTL_COLL_ALGO=ring_bidir, each before tools/ptlrun -n 4 --bind-to core
 * bench/mpi_allreduce_ptl 5 SIZE,...)
 * the bidirectional ring (its 2 ports hinted) against halving-doubling
 * (against recursive doubling): 256 KiB 123 vs 120 (124) and 122 vs 126,
 * 320 KiB 152 vs 148, 384 KiB 165 vs 177 (204) and 159 vs 156, 448 KiB
 * 177 vs 187, 512 KiB 194 vs 194 (269) and 201 vs 187, 576 KiB 244 vs
 * 222, 640 KiB 231 vs 239 and 238 vs 246, 704 KiB 252 vs 275, 768 KiB
 * 259 vs 315 (399) and 266 vs 329, 1 MiB 322 vs 419 (555), 2 MiB 864 vs
 * 990, 4 MiB 2238 vs 2309 (Open MPI 4.1's own choice at 1 MiB in that
 * week's bench/mpi_bench.sh runs: 420 - 443); ring_bidir's 1 MiB row was
 * the faster by 20 - 27% in each of nine such runs. Up to 576 KiB either
 * led by up to 10% from one set of launches to the next; from 640 KiB the
 * ring led in every set, so the line sits there. After shm's moves began
 * to walk their slots (shm_bulk.c, shm_slot_off: two parts a slot at 4
 * ranks; 2026-12-07, 3 interleaved launches of the same command, each
 * launch's median) neither leads past 384 KiB: halving-doubling vs the
 * bidirectional ring 384 KiB 148 - 173 vs 153 - 154, 640 KiB 217 - 252
 * vs 222 - 244, 1 MiB 314 - 346 vs 323 - 349 (with four parts a slot,
 * the walk's first form: 1 MiB 361 - 426 vs 360 - 412); the line stays
 * until a measurement moves it. */
#define COLL_SHARED_BIDIR_RANKS 4
#define COLL_SHARED_BIDIR_MAX (64u * 1024u)
#define COLL_SHARED_HD_MIN (192u * 1024u)
#define COLL_SHARED_BIDIR_LONG_MIN (640u * 1024u)

/* Which of the above a 4-rank allreduce past the short ones takes where its
 * ranks outnumber the host's cores; COLL_ALGO_AUTO where the rule says
 * nothing (other sizes of group, several hosts). */
static enum coll_algo shared_cores_allreduce(const struct coll_req *r)
{
	if (r->op != COLL_OP_ALLREDUCE || !r->one_host || !r->shared_cores || !coll_is_pow2(r->nranks) ||
	    r->nranks <= 2 || r->nranks > COLL_SHARED_BIDIR_RANKS)
		return COLL_ALGO_AUTO;
	if (r->bytes <= COLL_SHARED_BIDIR_MAX || r->bytes >= COLL_SHARED_BIDIR_LONG_MIN)
		return COLL_ALGO_RING_BIDIR;
	return r->bytes < COLL_SHARED_HD_MIN ? COLL_ALGO_RECURSIVE_DOUBLING : COLL_ALGO_HALVING_DOUBLING;
}

/* Gather, scatter and alltoall on one host of up to this many ranks are
 * linear. Gather and scatter: the root moves every block itself, once,
 * where the binomial tree's inner ranks move theirs and their subtree's
 * again, one more copy and one more turn at a core a level; the root's
 * n-1 messages against the tree's log2 n cost little that few. Alltoall:
 * every transfer posted at once, where the pairwise steps wait for each
 * other, so a rank that has its core does all it can then. 2 vCPUs (the
 * ranks outnumber them from 3), loops of the call, 2-4 launches each,
 * per-rank block, us, binomial vs linear: 4 ranks scatter 4 KiB 2.2-2.4
 * vs 2.0-2.2, 64 KiB 19.4-20.5 vs 11.9-12.5 (Open MPI 15.7-16.2), 256 KiB
 * 49.3 vs 30.8-31.0, 1 MiB 174-186 vs 108-111; gather 64 KiB 18.8-19.0
 * vs 15.4-15.9 (Open MPI 20.2), 1 MiB 174-183 vs 110-115; 8 ranks scatter
 * 64 B 4.7-5.0 vs 3.4-3.7, 4 KiB 12.9-16.5 vs 4.0-4.4, 1 MiB 798-810 vs
 * 268-293, gather alike; 3 ranks level to 4 KiB, scatter 64 KiB
 * 15.6-16.2 vs 10.6-10.9. Pairwise vs linear alltoall (its transfers in
 * the order coll_misc.c gives them), one launch each: 4 ranks 1 KiB 6.9
 * vs 4.7, 64 KiB 47.1 vs 35.1 (Open MPI 43.5-44.1), 256 KiB 113 vs 95, 1
 * MiB 496 vs 468; 3 ranks 1 KiB 4.6 vs 3.1, 64 KiB 27.6 vs 24.1, 256 KiB
 * 67.5 vs 61.2; 8 ranks 1 KiB 36.2 vs 16.7, 64 KiB 237 vs 159, 1 MiB
 * 3567 vs 3375; 2 ranks the same schedule. Larger groups and several hosts keep
 * the tree and the pairwise steps (not measured here; across hosts the
 * steps also keep a rank from being sent to by all at once). */
#define COLL_LINEAR_RANKS 8

/* Scan and exscan where the ranks outnumber their host's cores go along
 * the chain: a hop takes one rank's turn at a core, where each round of
 * recursive doubling takes every rank's and moves the whole vector each
 * way: from _FEW_MIN bytes in groups of up to _FEW_RANKS, from _MANY_MIN
 * in groups of up to _MANY_RANKS (smaller vectors of 8 ranks went faster
 * by the rounds). 2 vCPUs, MPI_Scan after
 * a barrier, the slowest rank's time, median of 201, 2 interleaved
 * launches, us, recursive doubling vs chain: 3 ranks 16 KiB 10.1-12.0 vs
 * 5.5-5.7, 64 KiB 22-31 vs 14.4-14.9, 1 MiB 183-199 vs 130-131 (Open MPI
 * 4.1: 64 KiB 19.7, 1 MiB 194); 4 ranks 16 KiB 10.4-10.5 vs 9.0, 64 KiB
 * level (24-26), 256 KiB 68.0-68.5 vs 59-62, 1 MiB 267-269 vs 214-220
 * (288); 8 ranks 64 B 10.5-17.2 vs 19.7-21.6, 16 KiB 32-34 vs 36, 64 KiB
 * 83 vs 89-92, 256 KiB 204-216 vs 184-185, 1 MiB 793-820 vs 581-595
 * (702). Ranks with a core each keep the rounds (not measured here). */
#define COLL_CHAIN_FEW_RANKS 4
#define COLL_CHAIN_FEW_MIN (16u * 1024u)
#define COLL_CHAIN_MANY_RANKS 8
#define COLL_CHAIN_MANY_MIN (256u * 1024u)

static int choose_ring_op(const struct coll_req *r, struct coll_choice *c)
{
	switch (r->algo) {
	case COLL_ALGO_AUTO:
		if (r->op == COLL_OP_ALLREDUCE && coll_is_pow2(r->nranks) &&
		    r->bytes <= (r->one_host ? COLL_ALLREDUCE_SHORT_HOST_BYTES : COLL_ALLREDUCE_SHORT_BYTES))
			c->algo = COLL_ALGO_RECURSIVE_DOUBLING;
		else if (r->op == COLL_OP_ALLREDUCE && r->nranks == 2 && r->one_host &&
			 r->bytes <= COLL_ALLREDUCE_PAIR_MAX)
			c->algo = COLL_ALGO_RECURSIVE_DOUBLING;
		else if (shared_cores_allreduce(r) != COLL_ALGO_AUTO)
			c->algo = shared_cores_allreduce(r);
		else if (r->op == COLL_OP_ALLREDUCE && (r->ports >= 2 || (r->one_host && r->nranks > 2)) &&
			 coll_is_pow2(r->nranks))
			c->algo = COLL_ALGO_HALVING_DOUBLING;
		else
			c->algo = ring_by_ports(r);
		return 0;
	case COLL_ALGO_RING:
		c->algo = ring_by_ports(r);
		return 0;
	case COLL_ALGO_RING_SENDRECV:
		c->algo = COLL_ALGO_RING_SENDRECV;
		return 0;
	case COLL_ALGO_RING_BIDIR:
		if (r->ports < 2) {
			c->algo = COLL_ALGO_RING;
			warn(c, "ring_bidir needs 2 ports per rank and this request has %d: "
			        "using the one-way ring", r->ports);
		} else {
			c->algo = COLL_ALGO_RING_BIDIR;
		}
		return 0;
	case COLL_ALGO_HALVING_DOUBLING:
		if (r->op != COLL_OP_ALLREDUCE)
			return -ENOTSUP;
		if (!coll_is_pow2(r->nranks)) {
			c->algo = ring_by_ports(r);
			warn(c, "halving_doubling needs a power-of-two group and %d ranks is not: "
			        "using %s", r->nranks, coll_algo_name(c->algo));
		} else {
			c->algo = COLL_ALGO_HALVING_DOUBLING;
		}
		return 0;
	case COLL_ALGO_TREE:
		if (r->op != COLL_OP_ALLREDUCE)
			return -ENOTSUP;
		c->algo = COLL_ALGO_TREE;
		return 0;
	case COLL_ALGO_RECURSIVE_DOUBLING:
		if (r->op != COLL_OP_ALLREDUCE)
			return -ENOTSUP;
		if (!coll_is_pow2(r->nranks)) {
			c->algo = ring_by_ports(r);
			warn(c, "recursive_doubling needs a power-of-two group and %d ranks is not: "
			        "using %s", r->nranks, coll_algo_name(c->algo));
		} else {
			c->algo = COLL_ALGO_RECURSIVE_DOUBLING;
		}
		return 0;
	default:
		return -ENOTSUP;
	}
}

/* allgather: the short rule, on one host the long one of 4 or 8 ranks,
 * then the ring family; per-rank counts have a one-way ring only. */
static int choose_allgather(const struct coll_req *r, struct coll_choice *c)
{
	bool pow2 = coll_is_pow2(r->nranks);
	size_t total = r->counts ? coll_gs_total(r) : r->bytes;
	switch (r->algo) {
	case COLL_ALGO_AUTO:
		if (total <= COLL_ALLGATHER_SHORT_BYTES)
			c->algo = pow2 ? COLL_ALGO_RECURSIVE_DOUBLING : COLL_ALGO_BRUCK;
		else if (r->one_host && pow2 && r->nranks <= COLL_ALLGATHER_HOST_RD_RANKS)
			c->algo = COLL_ALGO_RECURSIVE_DOUBLING;
		else
			c->algo = r->counts ? COLL_ALGO_RING : ring_by_ports(r);
		return 0;
	case COLL_ALGO_RECURSIVE_DOUBLING:
		c->algo = pow2 ? COLL_ALGO_RECURSIVE_DOUBLING : COLL_ALGO_BRUCK;
		if (!pow2)
			warn(c, "recursive_doubling needs a power-of-two group and %d ranks is not: "
			        "using bruck", r->nranks);
		return 0;
	case COLL_ALGO_BRUCK:
		c->algo = COLL_ALGO_BRUCK;
		return 0;
	case COLL_ALGO_RING:
	case COLL_ALGO_RING_BIDIR:
	case COLL_ALGO_RING_SENDRECV:
		if (!r->counts)
			return choose_ring_op(r, c);
		c->algo = COLL_ALGO_RING;
		if (r->algo != COLL_ALGO_RING)
			warn(c, "%s does not take per-rank counts: using the one-way ring",
			     coll_algo_name(r->algo));
		return 0;
	default:
		return choose_ring_op(r, c);
	}
}

int coll_choose(const struct coll_req *req, struct coll_choice *out, char *msg, size_t msglen)
{
	struct coll_req r;
	int rc = coll_req_normalize(req, &r, msg, msglen);
	if (rc)
		return rc;
	memset(out, 0, sizeof *out);
	out->algo = r.algo;

	switch (r.op) {
	case COLL_OP_ALLREDUCE:
	case COLL_OP_REDUCE_SCATTER:
		rc = choose_ring_op(&r, out);
		break;
	case COLL_OP_ALLGATHER:
		rc = choose_allgather(&r, out);
		break;
	case COLL_OP_ALLTOALL:
		if (r.algo == COLL_ALGO_AUTO)
			out->algo = r.one_host && r.nranks <= COLL_LINEAR_RANKS ? COLL_ALGO_LINEAR : COLL_ALGO_PAIRWISE;
		else if (r.algo != COLL_ALGO_PAIRWISE && r.algo != COLL_ALGO_LINEAR)
			rc = -ENOTSUP;
		break;
	case COLL_OP_BCAST:
		if (r.algo == COLL_ALGO_AUTO)
			out->algo = (r.bytes < COLL_BCAST_LONG_BYTES || r.nranks < COLL_BCAST_LONG_RANKS ||
			             (r.one_host && r.nranks <= COLL_BCAST_HOST_TREE_RANKS))
			            ? COLL_ALGO_BINOMIAL : COLL_ALGO_SCATTER_ALLGATHER;
		else if (r.algo != COLL_ALGO_BINOMIAL && r.algo != COLL_ALGO_SCATTER_ALLGATHER)
			rc = -ENOTSUP;
		break;
	case COLL_OP_REDUCE:
		if (r.algo == COLL_ALGO_AUTO)
			out->algo = COLL_ALGO_TREE;
		else if (r.algo != COLL_ALGO_TREE && r.algo != COLL_ALGO_OWNER)
			rc = -ENOTSUP;
		break;
	case COLL_OP_BARRIER:
		if (r.algo == COLL_ALGO_AUTO)
			out->algo = COLL_ALGO_DISSEMINATION;
		else if (r.algo != COLL_ALGO_DISSEMINATION)
			rc = -ENOTSUP;
		break;
	case COLL_OP_GATHER:
	case COLL_OP_SCATTER:
		if (r.algo == COLL_ALGO_AUTO)
			out->algo = r.one_host && r.nranks <= COLL_LINEAR_RANKS ? COLL_ALGO_LINEAR : COLL_ALGO_BINOMIAL;
		else if (r.algo != COLL_ALGO_BINOMIAL && r.algo != COLL_ALGO_LINEAR)
			rc = -ENOTSUP;
		break;
	case COLL_OP_SCAN:
	case COLL_OP_EXSCAN:
		/* ceil(log2 N) rounds against the chain's N-1 hops; the chain
		 * for long vectors where the ranks outnumber their host's cores
		 * (COLL_CHAIN_*). Both fix the order of combination by ranks,
		 * and the choice depends on nothing but the request, so a job
		 * gets the same bits every run. */
		if (r.algo == COLL_ALGO_AUTO)
			out->algo = r.one_host && r.shared_cores &&
						    ((r.nranks <= COLL_CHAIN_FEW_RANKS && r.bytes >= COLL_CHAIN_FEW_MIN) ||
						     (r.nranks <= COLL_CHAIN_MANY_RANKS && r.bytes >= COLL_CHAIN_MANY_MIN))
					    ? COLL_ALGO_CHAIN
					    : COLL_ALGO_RECURSIVE_DOUBLING;
		else if (r.algo != COLL_ALGO_CHAIN && r.algo != COLL_ALGO_RECURSIVE_DOUBLING)
			rc = -ENOTSUP;
		break;
	default:
		rc = -EINVAL;
	}
	if (rc == -ENOTSUP)
		coll_msg(msg, msglen, "algorithm %s does not implement %s",
		         coll_algo_name(r.algo), coll_op_name(r.op));
	return rc;
}

const struct coll_algo_impl *coll_impl(const struct coll_req *r, enum coll_algo algo)
{
	enum coll_op op = r->op;
	switch (algo) {
	case COLL_ALGO_RING:
	case COLL_ALGO_RING_SENDRECV:
	case COLL_ALGO_RING_BIDIR:
		if (op == COLL_OP_ALLGATHER && r->counts)
			return algo == COLL_ALGO_RING ? &coll_agv_ring_impl : NULL;
		return (op == COLL_OP_ALLREDUCE || op == COLL_OP_REDUCE_SCATTER
		        || op == COLL_OP_ALLGATHER) ? &coll_ring_impl : NULL;
	case COLL_ALGO_HALVING_DOUBLING:
		return op == COLL_OP_ALLREDUCE ? &coll_hd_impl : NULL;
	case COLL_ALGO_TREE:
		return op == COLL_OP_ALLREDUCE ? &coll_dbtree_impl
		       : op == COLL_OP_REDUCE ? &coll_rtree_impl : NULL;
	case COLL_ALGO_PAIRWISE:
		return op == COLL_OP_ALLTOALL ? &coll_pairwise_impl : NULL;
	case COLL_ALGO_BINOMIAL:
		return op == COLL_OP_BCAST ? &coll_binomial_impl
		       : op == COLL_OP_GATHER ? &coll_gather_impl
		       : op == COLL_OP_SCATTER ? &coll_scatter_impl : NULL;
	case COLL_ALGO_CHAIN:
		return op == COLL_OP_SCAN || op == COLL_OP_EXSCAN ? &coll_scan_chain_impl : NULL;
	case COLL_ALGO_LINEAR:
		return op == COLL_OP_GATHER ? &coll_lgather_impl
		       : op == COLL_OP_SCATTER ? &coll_lscatter_impl
		       : op == COLL_OP_ALLTOALL ? &coll_la2a_impl : NULL;
	case COLL_ALGO_RECURSIVE_DOUBLING:
		return op == COLL_OP_SCAN || op == COLL_OP_EXSCAN ? &coll_scan_rd_impl
		       : op == COLL_OP_ALLREDUCE ? &coll_ard_impl
		       : op == COLL_OP_ALLGATHER ? &coll_ag_rd_impl : NULL;
	case COLL_ALGO_BRUCK:
		return op == COLL_OP_ALLGATHER ? &coll_ag_bruck_impl : NULL;
	case COLL_ALGO_SCATTER_ALLGATHER:
		return op == COLL_OP_BCAST ? &coll_scag_impl : NULL;
	case COLL_ALGO_DISSEMINATION:
		return op == COLL_OP_BARRIER ? &coll_dissem_impl : NULL;
	case COLL_ALGO_OWNER:
		return op == COLL_OP_REDUCE ? &coll_owner_impl : NULL;
	default:
		return NULL;
	}
}
