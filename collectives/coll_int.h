/* coll_int.h: what the collectives/ files share and nobody else sees. */
#ifndef COLL_INT_H
#define COLL_INT_H

#include <errno.h>
#include <stdarg.h>
#include "coll.h"

/* One rank's expansion in progress. An algorithm first fills the shape
 * (steps, ndirs, chunks, id stride, scratch) for the whole schedule, then
 * emits one rank's commands. */
struct coll_gen {
	const struct coll_req *req;  /* normalized */
	enum coll_algo algo;
	int n;                       /* N */
	int rank;                    /* the rank being emitted */
	/* shape */
	uint32_t steps;
	int ndirs;
	int chunks;
	uint64_t stride;             /* ids per (step, dir, chunk, rank) slot */
	size_t scratch;
	/* output */
	struct coll_cmd *cmds;
	size_t ncmds, cap;
	int err;
};

struct coll_algo_impl {
	int (*shape)(struct coll_gen *g);
	int (*emit)(struct coll_gen *g);
};

/* The implementation of algo for the request's op (and form: allgather
 * with counts has a ring of its own), or NULL when it has none. */
const struct coll_algo_impl *coll_impl(const struct coll_req *r, enum coll_algo algo);

extern const struct coll_algo_impl coll_ring_impl;     /* ring, ring_sendrecv, ring_bidir */
extern const struct coll_algo_impl coll_hd_impl;
extern const struct coll_algo_impl coll_ard_impl;   /* allreduce, recursive doubling */
extern const struct coll_algo_impl coll_dbtree_impl;
extern const struct coll_algo_impl coll_binomial_impl;
extern const struct coll_algo_impl coll_scag_impl;
extern const struct coll_algo_impl coll_owner_impl;
extern const struct coll_algo_impl coll_rtree_impl;
extern const struct coll_algo_impl coll_pairwise_impl;
extern const struct coll_algo_impl coll_dissem_impl;
extern const struct coll_algo_impl coll_gather_impl;    /* binomial gather */
extern const struct coll_algo_impl coll_scatter_impl;   /* binomial scatter */
extern const struct coll_algo_impl coll_lgather_impl;   /* linear gather */
extern const struct coll_algo_impl coll_lscatter_impl;  /* linear scatter */
extern const struct coll_algo_impl coll_la2a_impl;      /* linear alltoall */
extern const struct coll_algo_impl coll_scan_chain_impl;
extern const struct coll_algo_impl coll_scan_rd_impl;
extern const struct coll_algo_impl coll_agv_ring_impl;  /* allgather with counts, ring */
extern const struct coll_algo_impl coll_ag_rd_impl;     /* allgather, recursive doubling */
extern const struct coll_algo_impl coll_ag_bruck_impl;  /* allgather, bruck */

/* Gather and scatter: the bytes of all blocks (the root's DATA). The request
 * must be normalized (the sum is known to fit). */
size_t coll_gs_total(const struct coll_req *r);

/* Alltoall: the bytes logical rank `rank` sends to `to` (its row) and
 * receives from `from` (its column), in either form of counts. */
static inline size_t coll_a2a_send(const struct coll_req *r, int rank, int to)
{
	if (!r->counts)
		return r->bytes;
	return r->recv_counts ? r->counts[to] : r->counts[(size_t)rank * (size_t)r->nranks + (size_t)to];
}
static inline size_t coll_a2a_recv(const struct coll_req *r, int rank, int from)
{
	if (!r->counts)
		return r->bytes;
	return r->recv_counts ? r->recv_counts[from]
	                      : r->counts[(size_t)from * (size_t)r->nranks + (size_t)rank];
}
/* Alltoall with counts: the largest row sum (INPUT) and column sum (DATA)
 * of any rank (out pointers may be NULL); -EINVAL if one overflows half a
 * size_t. O(N*N) for the matrix form, O(N) for a rank's row and column. */
int coll_a2a_sums(const struct coll_req *r, size_t *max_row, size_t *max_col);

static inline uint64_t coll_id(const struct coll_gen *g, uint32_t step, int dir,
                               int chunk, int rank, int sub)
{
	uint64_t slot = ((uint64_t)step * (uint64_t)g->ndirs + (uint64_t)dir)
	                * (uint64_t)g->chunks + (uint64_t)chunk;
	return (slot * (uint64_t)g->n + (uint64_t)rank) * g->stride + (uint64_t)sub;
}

/* Append a command of g->rank; NULL (and g->err = -ENOMEM) if out of memory. */
struct coll_cmd *coll_emit(struct coll_gen *g, enum coll_kind kind, uint32_t step,
                           int dir, int chunk, int sub, int peer);
static inline void coll_dep(struct coll_cmd *c, uint64_t id)
{
	for (unsigned i = 0; i < c->ndeps; i++)
		if (c->deps[i] == id)
			return;
	if (c->ndeps < COLL_MAX_DEPS)
		c->deps[c->ndeps++] = id;
}

/* A transfer of len bytes at (DATA, off). coll_emit_recv pairs it with the
 * peer's send of the same (step, dir, chunk) numbered peer_sub; kind is
 * COLL_RECV or COLL_REDUCE (the caller then sets src_off). Both return NULL
 * when out of memory, like coll_emit. */
struct coll_cmd *coll_emit_recv(struct coll_gen *g, enum coll_kind kind, uint32_t step,
                                int dir, int chunk, int sub, int peer, int peer_sub,
                                size_t off, size_t len);
struct coll_cmd *coll_emit_send(struct coll_gen *g, uint32_t step, int dir, int chunk,
                                int sub, int peer, size_t off, size_t len);
/* One rank with the input apart (req.input): its result is its input,
 * copied into DATA by a step-0 command numbered sub (the schedule's shape
 * gives it that step). Nothing without req.input or bytes. 0, or g->err
 * when out of memory. */
int coll_emit_input_copy(struct coll_gen *g, int sub);
/* Make c, a COLL_REDUCE with a peer that is the first add of its bytes
 * with the input apart, read its own part from INPUT (from_input) and
 * receive the peer's straight into its destination: the add then updates
 * the lines the receive wrote, dst OP= INPUT, where an operand received
 * into scratch had it write a third vector (dst = INPUT OP scratch),
 * whose lines it reads for ownership: a 512 KiB sum of doubles cost
 * 1.35-1.6x as much per byte that way (0.023-0.026 against 0.014-0.019
 * ns/B), and the cost model's gamma is the two-operand pass. */
static inline void coll_reduce_from_input(struct coll_cmd *c)
{
	c->from_input = 1;
	c->src_buf = c->buf;
	c->src_off = c->off;
}

/* One dependency chain (a rank's commands of one direction and chunk): what
 * it ran in the last step it took part in, which its next step waits for.
 * A step with no command of the chain leaves the chain as it was, so a chain
 * can skip steps. */
struct coll_chain {
	uint64_t prev[3], cur[3];
	int nprev, ncur;
};
static inline void coll_chain_wait(const struct coll_chain *ch, struct coll_cmd *c)
{
	for (int i = 0; i < ch->nprev; i++)
		coll_dep(c, ch->prev[i]);
}
static inline void coll_chain_add(struct coll_chain *ch, uint64_t id)
{
	if (ch->ncur < 3)
		ch->cur[ch->ncur++] = id;
}
static inline void coll_chain_step(struct coll_chain *ch)
{
	if (!ch->ncur)
		return;
	for (int i = 0; i < ch->ncur; i++)
		ch->prev[i] = ch->cur[i];
	ch->nprev = ch->ncur;
	ch->ncur = 0;
}

static inline int coll_mod(long long a, int n)
{
	long long r = a % n;
	return (int)(r < 0 ? r + n : r);
}
static inline bool coll_is_pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }
static inline int coll_floor_log2(uint64_t v)
{
	int l = -1;
	while (v) {
		v >>= 1;
		l++;
	}
	return l;
}
static inline int coll_ceil_log2(uint64_t v)
{
	return v <= 1 ? 0 : coll_floor_log2(v - 1) + 1;
}
static inline size_t coll_unit(const struct coll_req *r) { return r->elem_size; }
static inline bool coll_op_reduces(enum coll_op op)
{
	return op == COLL_OP_ALLREDUCE || op == COLL_OP_REDUCE_SCATTER || op == COLL_OP_REDUCE
	       || op == COLL_OP_SCAN || op == COLL_OP_EXSCAN;
}
static inline bool coll_op_rooted(enum coll_op op)
{
	return op == COLL_OP_BCAST || op == COLL_OP_REDUCE || op == COLL_OP_GATHER
	       || op == COLL_OP_SCATTER;
}

void coll_msg(char *msg, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Normalize defaults and validate; -EINVAL with a message. */
int coll_req_normalize(const struct coll_req *in, struct coll_req *out,
                       char *msg, size_t msglen);

/* Send/receive pairing over a whole schedule, shared by coll_check, the cost
 * model and the reference executor: for rank r's command i, partner_rank and
 * partner_idx name the other side of its transfer (-1 for local commands). */
struct coll_pairs {
	int32_t **rank;
	size_t **idx;
};
int coll_pairs_build(const struct coll_sched *s, struct coll_pairs *p,
                     char *msg, size_t msglen);
void coll_pairs_free(const struct coll_sched *s, struct coll_pairs *p);

/* Dependents of one rank's commands as CSR: the dependents of command i are
 * dep_idx[dep_off[i] .. dep_off[i+1]), in increasing order; nwait[i] counts
 * command i's dependencies. */
struct coll_dag {
	size_t *dep_off;
	size_t *dep_idx;
	uint32_t *nwait;
};
int coll_dag_build(const struct coll_cmd *cmds, size_t n, struct coll_dag *d);
void coll_dag_free(struct coll_dag *d);

#endif
