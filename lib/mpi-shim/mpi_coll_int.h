/* mpi_coll_int.h: what the blocking collectives (mpi_coll.c) share with
 * the nonblocking ones (mpi_icoll.c). Private to lib/mpi-shim.
 *
 * A call is a struct cx: the transfers it has posted (struct pend), the
 * schedule engine driving them, and the error it ended with. The blocking
 * calls wait in mpi_coll.c's drive(); a nonblocking one keeps its cx until
 * its request completes and lets mpi_icoll_progress pass over it
 * (mpi_cx_pass) whenever the library makes progress.
 *
 * Tags on the collective context (ctx + 1). Every collective call on a
 * communicator, blocking or not, takes the next number of c->ncoll (all
 * ranks call collectives in the same order, so they agree on it), and its
 * messages carry the low COLL_SEQ_BITS of that number above the schedule's
 * match id:
 *
 *   tag (MPI_TAG_BITS = 28) = seq (8 bits) << 20 | match id (low 20 bits)
 *
 * so up to 2^8 collectives may be outstanding on one communicator at a
 * time without one matching another's messages. A match id (coll_id:
 * ((step * dirs + dir) * chunks + chunk) * ranks + rank, times a stride)
 * grows as about 6 N^2 (the ring allreduce's 2 (N - 1) steps); measured
 * over every operation at 8 B to 16 MiB with coll_choose's algorithms,
 * the largest is 14.6 bits at 64 ranks, 18.6 at 256 and 20.6 at 512. So
 * up to 256 ranks every id is its own; above, ids alias modulo 2^20 (they
 * aliased modulo 2^28 before, from about 4000 ranks), which only two
 * messages between the same pair of ranks in the same collective could
 * confuse, and those are posted in schedule order. */
#ifndef MPI_COLL_INT_H
#define MPI_COLL_INT_H

#include <stdlib.h>

#include "coll.h"
#include "mpi_impl.h"

#define COLL_MATCH_BITS 20
#define COLL_SEQ_BITS (MPI_TAG_BITS - COLL_MATCH_BITS)
_Static_assert(COLL_SEQ_BITS >= 8, "collective tags need room for 2^8 outstanding calls");

struct pend {
	size_t idx;
	struct mpi_req *r; /* NULL: a stalled send, never done */
	int peer;
	bool recv;
	bool reported;
};

/* The algorithm per operation and the ports a call's schedules take
 * (mpi_coll.c: its communicator's hints, else the environment's). */
struct mpi_coll_pick {
	enum coll_algo algo[COLL_OP_COUNT]; /* COLL_ALGO_AUTO: coll_choose's */
	int ports;
};
/* c's pick now: a nonblocking call keeps it for its later phases, which
 * MPI_Comm_set_info in the meantime must not change. */
struct mpi_coll_pick mpi_coll_pick_now(const struct mpi_comm *c);

struct cx {
	struct mpi_comm *c;
	const struct mpi_coll_pick *pick; /* NULL: c's now */
	const char *name;
	MPI_Op op;
	MPI_Datatype dt;     /* element type of reductions (contiguous image) */
	size_t esize;
	struct pend *p;        /* = few, or a heap array once more are needed */
	size_t np, cap;
	struct pend few[16];   /* enough for a small collective (a linear alltoall of 8 ranks: 14): no malloc */
	bool relisted;         /* add_pend dropped reported transfers from p */
	bool stall;
	const char *algo;
	struct coll_engine *e;
	int step;              /* without an engine: the step under way, or -1 */
	int err;
	unsigned long seq;     /* c->ncoll of this call: the tags' upper bits */
	bool nb;               /* nonblocking: receives post an ME (no lazy ones, which
				* only a waiting caller would look at) */
	bool pull;             /* a 2-rank allreduce on one host: both ranks copy at
				* once, sends go MPI_MODE_PULL (mpi_coll_pull) */
	char msg[MPI_MAX_ERROR_STRING];
};

/* The tag of x's message with schedule match id (or direct round) m. */
static inline int mpi_coll_tag(const struct cx *x, uint64_t m)
{
	uint64_t seq = x->seq & ((1u << COLL_SEQ_BITS) - 1);
	return (int)(seq << COLL_MATCH_BITS | (m & ((1u << COLL_MATCH_BITS) - 1)));
}

/* Starts a call on c: takes its sequence number. Inline: every
 * collective, the smallest too, starts and ends one. */
static inline void mpi_cx_init(struct cx *x, struct mpi_comm *c, const char *name)
{
	/* Field by field: clearing the whole message buffer would cost more
	 * than a small collective's bookkeeping. */
	x->c = c;
	x->pick = NULL;
	x->name = name;
	x->op = MPI_OP_NULL;
	x->dt = MPI_BYTE;
	x->esize = 1;
	x->np = 0;
	x->relisted = false;
	x->algo = NULL;
	x->e = NULL;
	x->step = -1;
	x->err = 0;
	x->msg[0] = 0;
	x->stall = mpi_g.stall_rank == mpi_g.wrank;
	x->p = x->few;
	x->cap = sizeof x->few / sizeof x->few[0];
	x->seq = ++c->ncoll;
	x->nb = false;
	x->pull = false;
}

static inline void mpi_cx_done(struct cx *x)
{
	if (x->p != x->few)
		free(x->p);
	x->p = NULL;
}

int mpi_cx_fail(struct cx *x, int cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The engine's error rc (coll_engine_start, coll_engine_done) as x's,
 * unless x has one already (a combination's): -ENOMEM, a transfer that
 * could not be posted, MPI_ERR_NO_MEM saying why; else MPI_ERR_INTERN,
 * what failed */
int mpi_cx_engine_fail(struct cx *x, int rc, const char *what);
/* One look at x's transfers: each completion goes to the engine (which may
 * post more). *fin: everything is done; *moved: something completed.
 * Returns the call's error (pending transfers then dropped), else 0. */
int mpi_cx_pass(struct cx *x, bool *fin, bool *moved);
/* The deadline passed after waited seconds / member w died: the error,
 * naming whom x waited for; x's pending transfers are dropped. */
int mpi_cx_timed_out(struct cx *x, double waited);
int mpi_cx_peer_died(struct cx *x, int w);
/* The world rank of a dead member x depends on, or -1 (asks libptl). */
int mpi_cx_look_for_dead(struct cx *x);
void mpi_cx_drop_rest(struct cx *x);
/* Waits for x's transfers (and engine) to finish, with the deadline and
 * the dead-member checks; then ends x, reporting rc's message on comm. */
int mpi_cx_wait(struct cx *x);
int mpi_cx_end(struct cx *x, MPI_Comm comm, int rc);
/* Direct exchanges (mpi_xchg.c): block k of side s (its address, count
 * and type); the checks of blocks 0..n); block k to or from peer with tag
 * on x, not made to MPI_PROC_NULL or when it holds no bytes. */
void *mpi_xside_block(const struct mpi_xside *s, int k, int *count, MPI_Datatype *dt);
int mpi_xside_check(MPI_Comm comm, const char *fn, const char *what, const struct mpi_xside *s, int n);
int mpi_xside_xfer(struct cx *x, bool recv, const struct mpi_xside *s, int k, int peer, int tag);
/* MPI_IN_PLACE of an all-to-all w-form: the n blocks of rcv packed one
 * after another into an image alloc(arg, bytes) gives, cnt/at (n ints
 * each, the caller's) their byte counts and offsets; *snd becomes the send
 * side over them (its buf the image, the caller's to free). */
/* Posts an all-to-all w-form's transfers on x (MPI_Alltoallw, Ialltoallw). */
int mpi_xchg_post(struct cx *x, const struct mpi_xside *snd, const struct mpi_xside *rcv);
int mpi_xside_inplace(MPI_Comm comm, const char *fn, const struct mpi_xside *rcv, int n, int *cnt, int *at,
		      void *(*alloc)(void *arg, size_t bytes), void *arg, struct mpi_xside *snd);
/* A transfer outside any schedule, with tag mpi_coll_tag(x, tag). */
int mpi_cx_send(struct cx *x, const void *buf, int count, MPI_Datatype dt, int peer, int tag);
int mpi_cx_recv(struct cx *x, void *buf, int count, MPI_Datatype dt, int peer, int tag);
extern const struct coll_engine_ops mpi_coll_engine_ops;
/* The largest eager send of a schedule (mpi_coll_engine_ops' sends): the
 * engines' conf.send_first_min, so an eager send goes after the receives
 * ready with it (its peer's ME is then likelier posted when it lands) and
 * only a rendezvous' header ahead of them. */
size_t mpi_coll_eager_max(void);

/* A kept schedule: mpi_coll.c's per communicator, mpi_icoll.c's for the
 * whole process (a schedule depends on its request and on this process's
 * rank in the communicator, not on which communicator runs it). */
#define MPI_KEPT_ENGINES 2
struct mpi_kept {
	struct coll_req req;  /* the key; a v form's sizes point into counts */
	int rank;             /* ours where it was expanded: its commands are that rank's */
	size_t *counts;       /* the sizes, owned (the schedule points to them) */
	struct coll_sched *s;
	struct coll_engine *e[MPI_KEPT_ENGINES]; /* idle engines of s (two calls of a shape at once) */
	int pins;             /* calls running s (nonblocking ones): not to be replaced */
	unsigned long used;   /* *clock at its last use */
};
/* The entry of k[0..n) for prepared req (pinned if pin), expanded into the
 * room an empty or the least recently used unpinned entry gives; NULL with
 * *rc 0 when all are pinned (the caller expands its own), with *rc set
 * when the expansion failed (x's error). */
struct mpi_kept *mpi_kept_get(struct cx *x, struct mpi_kept *k, int n, unsigned long *clock,
			      struct coll_req *req, bool pin, int *rc);
/* x->e: an idle engine of e's (NULL: none) reset to bufs, else a new one
 * of s (coll_engine_new's error); eng back to e if its call ended well
 * (ok: a failed one's transfers may still be under way) and e has room,
 * else freed; the unpinned entries of k[0..n) freed. */
int mpi_kept_engine(struct cx *x, struct mpi_kept *e, const struct coll_sched *s, const struct coll_bufs *bufs);
void mpi_kept_keep(struct mpi_kept *e, struct coll_engine *eng, bool ok);
void mpi_kept_free(struct mpi_kept *k, int n);
/* req's algorithm and ports as x's call takes them (its pick, the host,
 * the cores), or force unless COLL_ALGO_AUTO (the owner form with one
 * port); then this rank's part of prepared req expanded, falling back to
 * the choice where the algorithm named is not this operation's (an
 * allreduce asked with the input apart under an algorithm that cannot
 * take it gets the in-place schedule: (*s)->req.input is then false and
 * the caller copies the input into DATA first); x's error if none. */
void mpi_coll_req_prepare(struct cx *x, struct coll_req *req, enum coll_algo force);
int mpi_coll_req_expand(struct cx *x, struct coll_req *req, struct coll_sched **s);
/* Sets x->pull for a schedule of op (before its engine starts). */
void mpi_coll_pull(struct cx *x, enum coll_op op);
/* Whether a reduction of count elements of t over c can read sendbuf
 * where it is (coll_req.input): contiguous, not MPI_IN_PLACE, something
 * to reduce between ranks. The callers add what their schedules need
 * besides (a commutative op for all but MPI_Reduce's owner form). */
static inline bool mpi_coll_input_apart(const struct mpi_dtype *t, const void *sendbuf, int count,
					const struct mpi_comm *c)
{
	return t->contig && sendbuf != MPI_IN_PLACE && count > 0 && c->size > 1;
}
/* Whether MPI_Reduce_scatter (and MPI_Ireduce_scatter, which must give the
 * same bits) reduces a commutative op's total bytes as an allreduce of the
 * whole vector instead of by the reduce-scatter schedule with counts. */
bool mpi_rs_as_allreduce(const struct mpi_comm *c, size_t total);
int mpi_coll_check_buf(MPI_Comm comm, const char *fn, int count, MPI_Datatype dt);
int mpi_coll_check_op(MPI_Comm comm, const char *fn, MPI_Op op, MPI_Datatype dt);
/* The send side of a collective whose blocks are all blk bytes (Allgather,
 * Alltoall and their nonblocking forms): a valid count and type, and blk
 * bytes a block (MPI_ERR_TRUNCATE otherwise). */
int mpi_coll_check_send_blk(MPI_Comm comm, const char *fn, int count, MPI_Datatype type, size_t blk);
/* MPI_ERR_BUFFER where sendbuf is recvbuf (not MPI_IN_PLACE) and data says
 * a block holds bytes: the one buffer would be read and written at once. */
int mpi_coll_aliased(MPI_Comm comm, const char *fn, const void *sendbuf, const void *recvbuf, bool data);
/* counts[0..n) * esz into out[0..n) (out NULL: none) and their sum into
 * *total; the error (reported on comm) of a negative one, named what[j]. */
int mpi_coll_v_bytes(MPI_Comm comm, const char *fn, const char *what, const int counts[], int n, size_t esz,
		     size_t *out, size_t *total);
/* Whether (counts, displs, dt) lay their blocks back to back in rank order
 * with a contiguous type: the buffer itself can then be a v-collective's
 * DATA or INPUT (blocking and nonblocking forms alike). */
bool mpi_coll_v_packed(MPI_Datatype dt, const int counts[], const int displs[], int n);
/* Allgatherv's own block, blocking and nonblocking: sent bytes as many as
 * recvcounts[me] says (own), and sendbuf not recvbuf where the blocks
 * hold data (total; MPI_IN_PLACE passes). */
int mpi_coll_agv_own(MPI_Comm comm, const char *fn, int me, size_t sent, size_t own, const void *sendbuf,
		     const void *recvbuf, size_t total);
/* Alltoallv's sizes, blocking and nonblocking (under MPI_IN_PLACE,
 * sendbuf MPI_IN_PLACE and sendcounts recvbuf's): row[0..n) the bytes to
 * each rank, row[n..2n) from each, their sums; refused: a negative count,
 * other than as many bytes to itself as from itself, sendbuf as recvbuf
 * where this rank both sends and receives data. */
int mpi_coll_a2av_sizes(MPI_Comm comm, const char *fn, int me, int n, const void *sendbuf, const int sendcounts[],
			size_t ssize, const void *recvbuf, const int recvcounts[], size_t rsize, size_t *row,
			size_t *stotal, size_t *rtotal);
/* A nonblocking collective's temporary (contents undefined; NULL: out of
 * memory), kept for the next call when given back with
 * mpi_coll_req_tmp_put (mpi_impl.h's mpi_coll_req_tmp_fini frees what is
 * kept, at MPI_Finalize). */
void *mpi_coll_req_tmp_get(size_t len);
void mpi_coll_req_tmp_put(void *p);

#define COLL_ENTER_ANY(fn, comm, c) MPI_COMM_ARG(fn, comm, c)
/* A collective intercommunicators do not have (mpi_intercoll.c has the
 * others: their entry points take COLL_ENTER_ANY and hand c->inter over). */
#define COLL_ENTER(fn, comm, c)                                                                     \
	COLL_ENTER_ANY(fn, comm, c);                                                                  \
	if (c->inter)                                                                               \
		return mpi_err(comm, MPI_ERR_COMM, fn, "not provided on intercommunicators (%s)", c->name)

#endif
