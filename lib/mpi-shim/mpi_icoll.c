/* mpi_icoll.c: nonblocking collectives (MPI_Ibarrier, Ibcast, Ireduce,
 * Iallreduce, Igather(v), Iscatter(v), Iallgather(v), Ialltoall(v),
 * Ireduce_scatter(_block), Iscan, Iexscan, Ialltoallw).
 *
 * Each call runs the schedules the blocking call would (the same
 * algorithm, so a reduction gives the same bits), on an engine and buffers
 * of its own that live until its request completes: a struct mpi_icoll,
 * one or two phases long (a non-commutative reduction is the owner-ordered
 * reduce to rank 0, then a broadcast or a move to the root). Its messages
 * are told from every other collective's by the call's sequence number in
 * the tag (mpi_coll_int.h).
 *
 * Progress: every progress pass of the point-to-point layer (any MPI call
 * that waits, tests, sends or receives) ends in mpi_icoll_progress, which
 * takes the completions of each live collective to its engine, so the
 * next step goes out; a rank that only tests its request, or waits in
 * MPI_Recv, keeps its collectives moving. The deadline (PTL_COLL_TIMEOUT
 * from the start) and dead members are looked at on passes that brought
 * nothing, at most every MPI_DEAD_CHECK_S, and fail the request with the
 * message the blocking call would give. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "nal/nal_copy.h"
#include "mpi_coll_int.h"
#include "mpi_impl.h"

#define IC_PHASES 2

struct ic_phase {
	struct coll_req req;
	bool owner;        /* the owner-ordered reduce (forced, as the blocking call does) */
	bool move;         /* no schedule: rank 0 sends data (req.bytes) to req.root */
	bool xchg;         /* no schedule: the direct exchange of xs (Ialltoallw) */
	void *data;
	const void *input;
};

struct mpi_icoll {
	struct mpi_req *r;
	struct mpi_list link;   /* on the live list while under way */
	struct cx x;
	struct mpi_coll_pick pick; /* x.pick: the communicator's at the call */
	struct ic_phase ph[IC_PHASES];
	int nph, cur;
	struct coll_sched *s;   /* the phase's schedule (sc's, or its own), its scratch */
	struct mpi_kept *sc;    /* the kept schedule s is, pinned while the phase runs (NULL: s is q's) */
	void *scratch;
#define IC_OWN 3
	void *own[IC_OWN];      /* temporaries of the call (mpi_coll_req_tmp_get), given back at its end */
	/* at the end: unpack nblk blocks of len bytes from img, block u into
	 * (ubuf's block (u + rot) mod nblk, ucount, ut); skip0: not block 0;
	 * ucounts and udispls (the user's: MPI leaves them to the call until
	 * it completes), if set, give block j's count and displacement */
	struct mpi_dtype *ut;
	void *ubuf;
	int ucount, nblk, rot;
	const int *ucounts, *udispls;
	bool skip0;
	const void *img;
	size_t len;
	double t0;
	/* rounds (mpi_icoll_rounds): after the last phase, step says
	 * whether the phases run again */
	int (*step)(void *arg, int *v, int rc);
	void *step_arg;
	struct mpi_xside xs[2]; /* xchg: the send side, the receive side */
	struct mpi_idle idle;
	char dummy[8];          /* a barrier's DATA */
};

static struct mpi_list live = { &live, &live };
static bool polling;

/*
 * What a call takes is kept for the next: the schedules (a few, for the
 * whole process: a request may outlive its communicator, and a schedule
 * does not depend on which communicator runs it, only on its request and
 * on this process's rank in it: struct mpi_kept), pinned while a phase
 * runs one, with idle engines that phases hand back when they ended well;
 * and the calls' state (struct mpi_icoll, some
 * 2 KiB). Expanded, built and allocated at every call, they were about 14
 * allocations a call and most of its time (2 ranks, MPI_Ibcast of 64 B
 * and MPI_Wait in a loop: 1.07 us a call, Open MPI 0.17). A phase that
 * finds every kept schedule pinned by others expands its own.
 */
#define IC_KEEP 8
static struct mpi_kept kept[IC_KEEP];
static unsigned long kept_clock;
static struct mpi_icoll *q_free; /* released calls' state, chained through r */
static int q_nfree;

/* At MPI_Finalize: what is kept goes, but for a schedule a call still
 * under way runs (left to it, as the pool's busy buffers are). */
void mpi_icoll_fini(void)
{
	mpi_kept_free(kept, IC_KEEP);
	while (q_free) {
		struct mpi_icoll *q = q_free;
		q_free = (struct mpi_icoll *)(void *)q->r;
		free(q);
	}
	q_nfree = 0;
}

/* q's schedule for req (force: mpi_coll_req_prepare's), kept and pinned, or its
 * own when every kept one is pinned; x's error if none. */
static int ic_schedule(struct mpi_icoll *q, struct coll_req *req, enum coll_algo force)
{
	int rc;
	mpi_coll_req_prepare(&q->x, req, force);
	if ((q->sc = mpi_kept_get(&q->x, kept, IC_KEEP, &kept_clock, req, true, &rc)))
		q->s = q->sc->s;
	else if (!rc)
		rc = mpi_coll_req_expand(&q->x, req, &q->s);
	if (!rc)
		q->x.algo = coll_algo_name(q->s->info.algo);
	return rc;
}

/* A new call on c; NULL when out of memory. */
static struct mpi_icoll *ic_new(struct mpi_comm *c, const char *fn)
{
	struct mpi_icoll *q = q_free;
	if (q) {
		q_free = (struct mpi_icoll *)(void *)q->r;
		q_nfree--;
		memset(q, 0, sizeof *q);
	} else {
		q = calloc(1, sizeof *q);
	}
	struct mpi_req *r = q ? mpi_req_new(MPI_REQ_COLL) : NULL;
	if (!r) {
		free(q);
		return NULL;
	}
	q->r = r;
	r->icoll = q;
	r->comm = c;
	r->busy = true;
	r->st.MPI_SOURCE = MPI_ANY_SOURCE;
	r->st.MPI_TAG = MPI_ANY_TAG;
	mpi_list_init(&q->link);
	mpi_cx_init(&q->x, c, fn);
	q->x.nb = true;
	q->pick = mpi_coll_pick_now(c);
	q->x.pick = &q->pick;
	return q;
}

static void *ic_alloc(struct mpi_icoll *q, size_t len)
{
	int i = 0;
	while (q->own[i])
		i++; /* the calls below take at most IC_OWN */
	q->own[i] = mpi_coll_req_tmp_get(len);
	return q->own[i];
}

static void *ic_alloc_cb(void *q, size_t len)
{
	return ic_alloc(q, len);
}

/* The phase is over (ok: it ended well): its schedule and engine go back
 * (or are freed, q's own), its scratch to the pool. */
static void phase_free(struct mpi_icoll *q, bool ok)
{
	if (q->sc) {
		q->sc->pins--;
		mpi_kept_keep(q->sc, q->x.e, ok);
	} else {
		coll_engine_free(q->x.e);
		coll_free(q->s);
	}
	q->sc = NULL;
	q->x.e = NULL;
	q->s = NULL;
	mpi_coll_req_tmp_put(q->scratch);
	q->scratch = NULL;
	q->x.np = 0;
}

/* The call is over (rc: its error): unpack, free, complete the request. */
static void ic_end(struct mpi_icoll *q, int rc)
{
	if (q->step && rc)
		q->step(q->step_arg, NULL, rc); /* its clean-up */
	/* (what a phase that failed to start had posted; a failed phase's
	 * sends read from copies of their own since, so its scratch goes
	 * back to the pool) */
	if (rc)
		mpi_cx_drop_rest(&q->x);
	phase_free(q, rc == MPI_SUCCESS);
	size_t off = 0;
	for (int u = 0; !rc && q->ut && u < q->nblk; u++) {
		int j = (u + q->rot) % q->nblk, cnt = q->ucounts ? q->ucounts[j] : q->ucount;
		MPI_Aint at = (MPI_Aint)(q->udispls ? q->udispls[j] : j * q->ucount) * q->ut->extent;
		size_t len = q->ucounts ? q->ut->size * (size_t)cnt : q->len;
		if (u >= q->skip0)
			mpi_unpack(q->ut, (char *)q->ubuf + at, cnt, (const char *)q->img + off, len);
		off += len;
	}
	if (q->ut)
		mpi_dtype_release(q->ut);
	q->ut = NULL;
	for (int i = 0; i < IC_OWN; i++) {
		mpi_coll_req_tmp_put(q->own[i]);
		q->own[i] = NULL;
	}
	mpi_cx_done(&q->x);
	if (!mpi_list_empty(&q->link)) {
		mpi_list_del(&q->link);
		mpi_g.icoll_live--;
	}
	struct mpi_req *r = q->r;
	r->err = r->st.MPI_ERROR = rc;
	r->busy = false;
	mpi_req_complete(r); /* may release r, and q with it: last */
}

/* q could not start (rc, reported): it goes, with its request. */
static int ic_refuse(struct mpi_icoll *q, int rc)
{
	struct mpi_req *r = q->r;
	ic_end(q, rc);
	mpi_req_drop(r);
	return rc;
}

static int ic_nomem(struct mpi_icoll *q, MPI_Comm comm, const char *fn)
{
	return ic_refuse(q, mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory"));
}

/* Posts phase q->cur. */
static int phase_start(struct mpi_icoll *q)
{
	struct cx *x = &q->x;
	struct ic_phase *ph = &q->ph[q->cur];
	struct mpi_comm *c = x->c;
	if (ph->xchg) {
		x->algo = NULL;
		return mpi_xchg_post(x, &q->xs[0], &q->xs[1]);
	}
	if (ph->move) {
		x->algo = NULL;
		if (c->rank == 0)
			return mpi_cx_send(x, ph->data, (int)ph->req.bytes, MPI_BYTE, ph->req.root, 1);
		if (c->rank == ph->req.root)
			return mpi_cx_recv(x, ph->data, (int)ph->req.bytes, MPI_BYTE, 0, 1);
		return MPI_SUCCESS;
	}
	struct coll_req *req = &ph->req;
	req->nranks = c->size;
	if (!req->elem_size)
		req->elem_size = 1;
	int rc;
	if (!q->s && (rc = ic_schedule(q, req, ph->owner ? COLL_ALGO_OWNER : COLL_ALGO_AUTO)))
		return rc;
	if (req->input && !q->s->req.input)
		nal_copy(ph->data, ph->input, req->bytes);
	size_t sb = q->s->info.scratch_bytes;
	if (sb && !(q->scratch = mpi_coll_req_tmp_get(sb)))
		return mpi_cx_fail(x, MPI_ERR_NO_MEM, "%s: no memory for %zu bytes of scratch", x->name, sb);
	struct coll_bufs bufs = { ph->data, ph->input, q->scratch };
	rc = mpi_kept_engine(x, q->sc, q->s, &bufs);
	mpi_coll_pull(x, req->op);
	if (!rc)
		rc = coll_engine_start(x->e);
	if (rc) { /* x's error if a combination failed (cb_reduce); what it posted goes */
		mpi_cx_drop_rest(x);
		return mpi_cx_engine_fail(x, rc, "cannot start the schedule");
	}
	return MPI_SUCCESS;
}

/* The phases are over: whether q runs them again (step's choice, v
 * refilled); if not, *rc is the call's result. */
static bool ic_again(struct mpi_icoll *q, int *rc)
{
	*rc = q->step ? q->step(q->step_arg, q->ph[0].data, MPI_SUCCESS) : MPI_SUCCESS;
	if (*rc == MPI_ICOLL_AGAIN) {
		q->cur = 0;
		return true;
	}
	q->step = NULL;
	return false;
}

/* Takes q as far as it goes without waiting; ends it when it is over.
 * Returns whether anything of it moved. */
static bool ic_advance(struct mpi_icoll *q, bool empty)
{
	struct cx *x = &q->x;
	bool any = false;
	for (;;) {
		bool fin, moved;
		int rc = mpi_cx_pass(x, &fin, &moved);
		if (!rc && fin) {
			phase_free(q, true);
			int end;
			if (++q->cur == q->nph && !ic_again(q, &end)) {
				ic_end(q, end);
				return true;
			}
			rc = phase_start(q);
			moved = true;
		}
		if (rc) {
			ic_end(q, x->err ? x->err : rc);
			return true;
		}
		if (!moved)
			break;
		any = true;
	}
	if (any || !mpi_idle_due(&q->idle, empty))
		return any;
	double now = mpi_now();
	int dead;
	if (mpi_g.coll_timeout > 0 && now - q->t0 >= mpi_g.coll_timeout)
		ic_end(q, mpi_cx_timed_out(x, now - q->t0));
	else if ((dead = mpi_cx_look_for_dead(x)) >= 0)
		ic_end(q, mpi_cx_peer_died(x, dead));
	else
		return false;
	return true;
}

void mpi_icoll_progress(bool empty)
{
	if (polling)
		return; /* a send or receive the engine posts makes progress too */
	polling = true;
	/* Again while one moved: what its posting took from the event queue
	 * may have completed another's transfers. */
	for (bool moved = true; moved;) {
		moved = false;
		for (struct mpi_list *l = live.next, *next; l != &live; l = next) {
			next = l->next;
			moved |= ic_advance(mpi_container(l, struct mpi_icoll, link), empty && !moved);
		}
	}
	polling = false;
}

/* Starts q's first phase and hands out its request; a call that fails to
 * start completes with its error, reported where it is waited for. */
static int ic_go(struct mpi_icoll *q, MPI_Request *request)
{
	*request = mpi_req_handle(q->r);
	q->t0 = mpi_now();
	/* no look for the dead before it has waited a while: a short call
	 * spun on with MPI_Test would otherwise ask libptl at its first
	 * empty pass */
	q->idle.next = q->t0 + MPI_DEAD_CHECK_S;
	int dead = mpi_g.ndead ? mpi_comm_dead(q->x.c, false) : -1;
	if (dead >= 0) {
		ic_end(q, mpi_cx_peer_died(&q->x, dead));
		return MPI_SUCCESS;
	}
	/* one member's schedule moves nothing (its data is in place); an
	 * exchange still copies its block to itself */
	if ((q->x.c->size == 1 && !q->ph[0].xchg) || q->nph == 0) {
		int end;
		while (ic_again(q, &end))
			; /* one member: each round's result is its own */
		ic_end(q, end);
		return MPI_SUCCESS;
	}
	mpi_list_add_tail(&q->link, &live);
	mpi_g.icoll_live++;
	/* The engine's first sends and receives make progress: no pass over
	 * q (or another, which may be inside its own posting) meanwhile. */
	bool outer = polling;
	polling = true;
	int rc = phase_start(q);
	if (rc)
		ic_end(q, q->x.err ? q->x.err : rc);
	else
		ic_advance(q, false);
	polling = outer;
	return MPI_SUCCESS;
}

void mpi_icoll_free(struct mpi_icoll *q)
{
	if (q_nfree >= IC_KEEP) {
		free(q);
		return;
	}
	q->r = (struct mpi_req *)(void *)q_free;
	q_free = q;
	q_nfree++;
}

const char *mpi_icoll_msg(const struct mpi_icoll *q)
{
	return q->x.msg[0] ? q->x.msg : "failed";
}

int mpi_icoll_rounds(struct mpi_comm *c, const char *fn, const int *v0, int n, int (*step)(void *arg, int *v, int rc),
		     void *arg, MPI_Request *request)
{
	struct mpi_icoll *q = ic_new(c, fn);
	/* the icoll's own (given back at its end: a failed call's sends
	 * read from copies of their own, mpi_send_abandon) */
	int *v = q ? ic_alloc(q, sizeof(int) * (size_t)n) : NULL;
	if (!v) {
		int rc = mpi_err(mpi_comm_handle(c), MPI_ERR_NO_MEM, fn, "out of memory");
		step(arg, NULL, rc);
		if (q)
			ic_refuse(q, rc);
		return rc;
	}
	memcpy(v, v0, sizeof(int) * (size_t)n);
	q->x.op = MPI_MAX;
	q->x.dt = MPI_INT;
	q->x.esize = sizeof(int);
	q->ph[0] = (struct ic_phase){ .req = { .op = COLL_OP_ALLREDUCE, .bytes = sizeof(int) * (size_t)n,
					       .elem_size = sizeof(int) },
				      .data = v };
	q->nph = 1;
	q->step = step;
	q->step_arg = arg;
	return ic_go(q, request);
}

/* On return, the result in img (len bytes) goes to (buf, count, dt) when
 * the call is over. */
static void unpack_at_end(struct mpi_icoll *q, void *buf, int count, MPI_Datatype dt, const void *img, size_t len)
{
	q->ut = mpi_dtype_hold(mpi_dtype_get(dt));
	q->ubuf = buf;
	q->ucount = count;
	q->img = img;
	q->len = len;
	q->nblk = 1;
}

#define IC_START(fn, comm, c, request)                                                                  \
	COLL_ENTER(fn, comm, c);                                                                         \
	if (!request)                                                                                   \
	return mpi_err(comm, MPI_ERR_ARG, fn, "NULL request pointer")

#define IC_NEW(q, c, fn, comm)                                                                          \
	struct mpi_icoll *q = ic_new(c, fn);                                                             \
	if (!q)                                                                                         \
	return mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory")

/* ---------------------------------------------------------------- barrier, bcast */

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	IC_START("MPI_Ibarrier", comm, c, request);
	IC_NEW(q, c, "MPI_Ibarrier", comm);
	q->ph[0] = (struct ic_phase){ .req = { .op = COLL_OP_BARRIER }, .data = q->dummy };
	q->nph = 1;
	return ic_go(q, request);
}

/* A broadcast of bytes from root over data, as phase q->nph. */
static void add_bcast(struct mpi_icoll *q, void *data, size_t bytes, int root)
{
	q->ph[q->nph++] = (struct ic_phase){ .req = { .op = COLL_OP_BCAST, .root = root, .bytes = bytes,
						      .elem_size = 1 },
					     .data = data };
}

int PMPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *request)
{
	static const char fn[] = "MPI_Ibcast";
	IC_START(fn, comm, c, request);
	int rc = mpi_coll_check_buf(comm, fn, count, dt);
	if (rc)
		return rc;
	if (root < 0 || root >= c->size)
		return mpi_err(comm, MPI_ERR_ROOT, fn, "root %d not in %s (size %d)", root, c->name, c->size);
	struct mpi_dtype *t = mpi_dtype_get(dt);
	size_t len = t->size * (size_t)count;
	IC_NEW(q, c, fn, comm);
	char *img = (char *)buf + t->true_lb;
	if (!t->contig && len) {
		if (!(img = ic_alloc(q, len)))
			return ic_nomem(q, comm, fn);
		if (c->rank == root)
			mpi_pack(t, buf, count, img);
		else
			unpack_at_end(q, buf, count, dt, img, len);
	}
	if (len)
		add_bcast(q, img, len, root);
	return ic_go(q, request);
}

/* ---------------------------------------------------------------- reductions */

static int check_red(MPI_Comm comm, const char *fn, int count, MPI_Datatype dt, MPI_Op op)
{
	int rc = mpi_coll_check_buf(comm, fn, count, dt);
	return rc ? rc : mpi_coll_check_op(comm, fn, op, dt);
}

/* The working copy of a reduction's input (count elements of dt, in room
 * >= count elements' space), or NULL (out of memory). */
static void *red_input(struct mpi_icoll *q, const void *sendbuf, const void *recvbuf, int count, MPI_Datatype dt,
		       MPI_Op op, int room)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	void *data = ic_alloc(q, t->size * (size_t)room);
	if (!data)
		return NULL;
	mpi_pack(t, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, data);
	q->x.op = op;
	q->x.dt = dt;
	q->x.esize = t->size;
	return data;
}

/* The phases of a reduction of data (len bytes) to root: the schedule's,
 * or for a non-commutative op the owner-ordered reduce to rank 0 and then
 * (root < 0: all) a broadcast, or a move to root. */
static void add_reduce(struct mpi_icoll *q, void *data, size_t len, int root)
{
	struct ic_phase *ph = &q->ph[q->nph++];
	size_t es = q->x.esize;
	if (mpi_op_commutative(q->x.op)) {
		enum coll_op op = root < 0 ? COLL_OP_ALLREDUCE : COLL_OP_REDUCE;
		*ph = (struct ic_phase){ .req = { .op = op, .root = root < 0 ? 0 : root, .bytes = len, .elem_size = es },
					 .data = data };
		return;
	}
	*ph = (struct ic_phase){ .req = { .op = COLL_OP_REDUCE, .bytes = len, .elem_size = es }, .owner = true,
				 .data = data };
	if (root < 0)
		add_bcast(q, data, len, 0);
	else if (root > 0)
		q->ph[q->nph++] = (struct ic_phase){ .req = { .root = root, .bytes = len }, .move = true, .data = data };
}

static int ireduce(const char *fn, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
		   int root, MPI_Comm comm, MPI_Request *request)
{
	IC_START(fn, comm, c, request);
	int rc = check_red(comm, fn, count, dt, op);
	if (rc)
		return rc;
	if (root >= c->size)
		return mpi_err(comm, MPI_ERR_ROOT, fn, "root %d not in %s (size %d)", root, c->name, c->size);
	IC_NEW(q, c, fn, comm);
	struct mpi_dtype *t = mpi_dtype_get(dt);
	size_t len = t->size * (size_t)count;
	if (len && mpi_op_commutative(op) && mpi_coll_input_apart(t, sendbuf, count, c)) {
		/* As MPI_Allreduce and MPI_Reduce: the schedule reads sendbuf
		 * where it is and leaves its result in recvbuf (a reduce's
		 * partial sums off the root in room of the request's), no copy
		 * either way (phase_start copies sendbuf in for an algorithm
		 * that cannot). */
		void *data = root < 0 || c->rank == root ? (char *)recvbuf + t->true_lb : ic_alloc(q, len);
		if (!data)
			return ic_nomem(q, comm, fn);
		q->x.op = op;
		q->x.dt = dt;
		q->x.esize = t->size;
		q->ph[q->nph++] = (struct ic_phase){
			.req = { .op = root < 0 ? COLL_OP_ALLREDUCE : COLL_OP_REDUCE, .root = root < 0 ? 0 : root,
				 .bytes = len, .elem_size = t->size, .input = true },
			.data = data, .input = (const char *)sendbuf + t->true_lb };
		return ic_go(q, request);
	}
	bool result = root < 0 || c->rank == root;
	void *data = red_input(q, sendbuf, result ? recvbuf : NULL, count, dt, op, count);
	if (!data)
		return ic_nomem(q, comm, fn);
	if (result)
		unpack_at_end(q, recvbuf, count, dt, data, len);
	if (len)
		add_reduce(q, data, len, root);
	return ic_go(q, request);
}

int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm,
		 MPI_Request *request)
{
	if (root < 0)
		return mpi_err(comm, MPI_ERR_ROOT, "MPI_Ireduce", "root %d < 0", root);
	return ireduce("MPI_Ireduce", sendbuf, recvbuf, count, dt, op, root, comm, request);
}

int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
		    MPI_Request *request)
{
	return ireduce("MPI_Iallreduce", sendbuf, recvbuf, count, dt, op, -1, comm, request);
}

/* Reduce_scatter_block: the whole vector reduced, this rank's block kept
 * (where the reduce-scatter schedule leaves it: coll_block). */
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype dt, MPI_Op op,
			       MPI_Comm comm, MPI_Request *request)
{
	static const char fn[] = "MPI_Ireduce_scatter_block";
	IC_START(fn, comm, c, request);
	int rc = check_red(comm, fn, recvcount, dt, op);
	if (rc)
		return rc;
	int n = c->size;
	size_t blk = mpi_dtype_get(dt)->size * (size_t)recvcount, off = blk * (size_t)c->rank, len = blk;
	IC_NEW(q, c, fn, comm);
	char *data = red_input(q, sendbuf, recvbuf, recvcount * n, dt, op, recvcount * n);
	if (!data)
		return ic_nomem(q, comm, fn);
	if (n > 1 && blk && mpi_op_commutative(op)) {
		q->ph[q->nph++] = (struct ic_phase){ .req = { .op = COLL_OP_REDUCE_SCATTER, .bytes = blk * (size_t)n,
							      .elem_size = q->x.esize },
						     .data = data };
		coll_block(blk * (size_t)n, q->x.esize, (size_t)n, (size_t)c->rank, &off, &len);
	} else if (blk) {
		add_reduce(q, data, blk * (size_t)n, -1);
	}
	unpack_at_end(q, recvbuf, recvcount, dt, data + off, len);
	return ic_go(q, request);
}

/* Reduce_scatter, as the blocking form: a commutative op by the
 * reduce-scatter schedule with each rank's block of its own size (counts),
 * else the whole vector reduced, this rank's part kept. */
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype dt, MPI_Op op,
			 MPI_Comm comm, MPI_Request *request)
{
	static const char fn[] = "MPI_Ireduce_scatter";
	IC_START(fn, comm, c, request);
	int rc = check_red(comm, fn, 0, dt, op);
	if (rc)
		return rc;
	int n = c->size;
	size_t esz = mpi_dtype_get(dt)->size, total, mine = 0;
	IC_NEW(q, c, fn, comm);
	size_t *counts = ic_alloc(q, sizeof *counts * (size_t)n);
	if (!counts)
		return ic_nomem(q, comm, fn);
	if ((rc = mpi_coll_v_bytes(comm, fn, "recvcounts", recvcounts, n, esz, counts, &total)))
		return ic_refuse(q, rc);
	int elems = esz ? (int)(total / esz) : 0;
	char *data = red_input(q, sendbuf, recvbuf, elems, dt, op, elems);
	if (!data)
		return ic_nomem(q, comm, fn);
	for (int j = 0; j < c->rank; j++)
		mine += counts[j];
	unpack_at_end(q, recvbuf, recvcounts[c->rank], dt, data + mine, counts[c->rank]);
	if (n > 1 && total && mpi_op_commutative(op) && !mpi_rs_as_allreduce(c, total))
		q->ph[q->nph++] = (struct ic_phase){ .req = { .op = COLL_OP_REDUCE_SCATTER, .bytes = total,
							      .counts = counts, .elem_size = esz },
						     .data = data };
	else if (total)
		add_reduce(q, data, total, -1);
	return ic_go(q, request);
}

/* Scan/Exscan: the prefix schedule over a copy of the input; Exscan's
 * DATA is [input | result], and rank 0's recvbuf is left as it was. */
static int iscan(const char *fn, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
		 MPI_Comm comm, MPI_Request *request, bool ex)
{
	IC_START(fn, comm, c, request);
	int rc = check_red(comm, fn, count, dt, op);
	if (rc)
		return rc;
	size_t len = mpi_dtype_get(dt)->size * (size_t)count;
	IC_NEW(q, c, fn, comm);
	char *data = red_input(q, sendbuf, recvbuf, count, dt, op, ex ? 2 * count : count);
	if (!data)
		return ic_nomem(q, comm, fn);
	if (!(ex && c->rank == 0))
		unpack_at_end(q, recvbuf, count, dt, data + (ex ? len : 0), len);
	if (len)
		q->ph[q->nph++] = (struct ic_phase){ .req = { .op = ex ? COLL_OP_EXSCAN : COLL_OP_SCAN, .bytes = len,
							      .elem_size = q->x.esize ? q->x.esize : 1 },
						     .data = data };
	return ic_go(q, request);
}

int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
	       MPI_Request *request)
{
	return iscan("MPI_Iscan", sendbuf, recvbuf, count, dt, op, comm, request, false);
}

int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
		 MPI_Request *request)
{
	return iscan("MPI_Iexscan", sendbuf, recvbuf, count, dt, op, comm, request, true);
}

/* ---------------------------------------------------------------- gather, scatter
 * As the blocking forms: DATA holds the blocks in relative-rank order
 * (rank - root), this rank's first; the root's holds them all, another
 * rank's the span of its subtree (coll_data_span), so the schedule is
 * expanded here, before DATA is laid out. The root's DATA is always a
 * temporary here: the blocks go to their places at the end. */

struct igs {
	bool gather;
	const void *sbuf;
	int scount;
	MPI_Datatype stype;
	void *rbuf;
	int rcount;
	MPI_Datatype rtype;
	int root;
	const int *counts, *displs; /* the v-variants' root side, or NULL */
};

/* the root's side: count of rank j's block */
static int igs_count(const struct igs *g, int j)
{
	return g->counts ? g->counts[j] : g->gather ? g->rcount : g->scount;
}

/* DATA for the expanded schedule q->s: own bytes of this rank's block
 * first; the root's holds every block (esz bytes an element). */
static int igs_layout(struct mpi_icoll *q, const struct igs *g, size_t esz, size_t own)
{
	struct mpi_comm *c = q->x.c;
	int n = c->size;
	bool at_root = c->rank == g->root;
	bool in_place = at_root && (g->gather ? g->sbuf == MPI_IN_PLACE : g->rbuf == MPI_IN_PLACE);
	size_t room = at_root ? q->s->info.data_bytes : coll_data_span(q->s, c->rank);
	char *data = ic_alloc(q, room > own ? room : own);
	if (!data)
		return MPI_ERR_NO_MEM;
	if (g->gather && !in_place)
		mpi_pack(mpi_dtype_get(g->stype), g->sbuf, g->scount, data);
	if (g->gather && at_root) {
		unpack_at_end(q, g->rbuf, g->rcount, g->rtype, data, own);
		q->nblk = n;
		q->rot = g->root;
		q->skip0 = in_place;
		q->ucounts = g->counts;
		q->udispls = g->displs;
	}
	if (!g->gather && !in_place)
		unpack_at_end(q, g->rbuf, g->rcount, g->rtype, data, own);
	struct mpi_dtype *st = mpi_dtype_get(g->stype);
	size_t off = 0;
	for (int u = 0; !g->gather && at_root && u < n; u++) {
		int j = (u + g->root) % n, cnt = igs_count(g, j);
		MPI_Aint at = (MPI_Aint)(g->displs ? g->displs[j] : j * g->scount) * st->extent;
		mpi_pack(st, (const char *)g->sbuf + at, cnt, data + off);
		off += esz * (size_t)cnt;
	}
	q->ph[q->nph++] = (struct ic_phase){ .req = q->s->req, .data = data };
	return MPI_SUCCESS;
}

static int igather_scatter(const char *fn, const struct igs *g, MPI_Comm comm, MPI_Request *request)
{
	IC_START(fn, comm, c, request);
	int n = c->size;
	if (g->root < 0 || g->root >= n)
		return mpi_err(comm, MPI_ERR_ROOT, fn, "root %d not in %s (size %d)", g->root, c->name, n);
	bool at_root = c->rank == g->root, v = g->counts != NULL;
	MPI_Datatype own_t = g->gather ? g->stype : g->rtype, root_t = g->gather ? g->rtype : g->stype;
	int own_n = g->gather ? g->scount : g->rcount;
	int rc = MPI_SUCCESS;
	if (!(at_root && (g->gather ? g->sbuf : g->rbuf) == MPI_IN_PLACE))
		rc = mpi_coll_check_buf(comm, fn, own_n, own_t);
	for (int j = 0; !rc && at_root && j < n; j++)
		rc = mpi_coll_check_buf(comm, fn, igs_count(g, j), root_t);
	if (rc)
		return rc;
	size_t esz = mpi_dtype_get(at_root ? root_t : own_t)->size;
	size_t own = esz * (size_t)(at_root ? igs_count(g, g->root) : own_n);
	IC_NEW(q, c, fn, comm);
	struct coll_req req = { .op = g->gather ? COLL_OP_GATHER : COLL_OP_SCATTER, .root = g->root, .nranks = n,
				.elem_size = 1, .bytes = own };
	if (v) {
		/* the root knows every size; another rank its own, which is all
		 * a linear rank reads */
		size_t *counts = ic_alloc(q, sizeof *counts * (size_t)n);
		if (!counts)
			return ic_nomem(q, comm, fn);
		for (int j = 0; j < n; j++)
			counts[j] = at_root ? esz * (size_t)igs_count(g, j) : j == c->rank ? own : 0;
		req.counts = counts;
		req.bytes = 0;
	}
	/* the schedule now: the layout follows it */
	rc = ic_schedule(q, &req, v ? COLL_ALGO_LINEAR : COLL_ALGO_AUTO);
	if (rc) {
		/* the request has the error */
		*request = mpi_req_handle(q->r);
		ic_end(q, rc);
		return MPI_SUCCESS;
	}
	if (igs_layout(q, g, esz, own))
		return ic_nomem(q, comm, fn);
	return ic_go(q, request);
}

int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	struct igs g = { true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, NULL, NULL };
	return igather_scatter("MPI_Igather", &g, comm, request);
}

int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		  const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	struct igs g = { true, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, root, recvcounts, displs };
	return igather_scatter("MPI_Igatherv", &g, comm, request);
}

int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	struct igs g = { false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, NULL, NULL };
	return igather_scatter("MPI_Iscatter", &g, comm, request);
}

int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
		   void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	struct igs g = { false, sendbuf, 0, sendtype, recvbuf, recvcount, recvtype, root, sendcounts, displs };
	return igather_scatter("MPI_Iscatterv", &g, comm, request);
}

/* ---------------------------------------------------------------- allgather, alltoall */

/* DATA of n blocks of recvtype's image (blk bytes each): recvbuf itself
 * when contiguous, else a temporary unpacked at the end. NULL: out of
 * memory. */
static char *blocks_out(struct mpi_icoll *q, void *recvbuf, int recvcount, MPI_Datatype recvtype, size_t blk)
{
	struct mpi_dtype *rt = mpi_dtype_get(recvtype);
	int n = q->x.c->size;
	if (rt->contig)
		return (char *)recvbuf + rt->true_lb;
	char *data = ic_alloc(q, blk * (size_t)n);
	if (!data)
		return NULL;
	unpack_at_end(q, recvbuf, recvcount * n, recvtype, data, blk * (size_t)n);
	return data;
}

/* The send side (unless MPI_IN_PLACE) and the receive side's blocks. */
static int check_blocks(MPI_Comm comm, const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			int recvcount, MPI_Datatype recvtype)
{
	int rc = mpi_coll_check_buf(comm, fn, recvcount, recvtype);
	if (!rc && sendbuf != MPI_IN_PLACE)
		rc = mpi_coll_check_buf(comm, fn, sendcount, sendtype);
	return rc;
}

/* Allgather (a2a false) and Alltoall over n blocks of blk bytes. */
static int iblocks(const char *fn, bool a2a, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	IC_START(fn, comm, c, request);
	int rc = mpi_coll_check_buf(comm, fn, recvcount, recvtype);
	if (rc)
		return rc;
	struct mpi_dtype *rt = mpi_dtype_get(recvtype);
	int n = c->size;
	size_t blk = rt->size * (size_t)recvcount, mine = blk * (size_t)c->rank;
	/* the send side (count, type, blk bytes a block) unless in place */
	if (sendbuf != MPI_IN_PLACE && (rc = mpi_coll_check_send_blk(comm, fn, sendcount, sendtype, blk)))
		return rc;
	struct mpi_dtype *st = sendbuf == MPI_IN_PLACE ? NULL : mpi_dtype_get(sendtype);
	if ((rc = mpi_coll_aliased(comm, fn, sendbuf, recvbuf, blk > 0)))
		return rc;
	IC_NEW(q, c, fn, comm);
	if (!blk) /* nothing moves: the buffers may be NULL */
		return ic_go(q, request);
	/* Alltoall's input: a contiguous sendbuf where it is (the schedule
	 * only reads it, and MPI leaves it untouched until the request
	 * completes), else a packed copy; with MPI_IN_PLACE always a copy, so
	 * that what arrives does not overwrite a block not yet sent */
	char *in = NULL;
	if (a2a && st && st->contig)
		in = (char *)(uintptr_t)sendbuf + st->true_lb;
	else if (a2a && !(in = ic_alloc(q, blk * (size_t)n)))
		return ic_nomem(q, comm, fn);
	char *data = blocks_out(q, recvbuf, recvcount, recvtype, blk);
	if (!data)
		return ic_nomem(q, comm, fn);
	if (a2a) {
		if (!st)
			mpi_pack(rt, recvbuf, recvcount * n, in);
		else if (!st->contig)
			mpi_pack(st, sendbuf, sendcount * n, in);
		nal_copy(data + mine, in + mine, blk);
	} else if (st) {
		mpi_pack(st, sendbuf, sendcount, data + mine);
	} else if (!rt->contig) {
		mpi_pack(rt, (char *)recvbuf + rt->extent * recvcount * c->rank, recvcount, data + mine);
	}
	struct coll_req all = { .op = COLL_OP_ALLGATHER, .bytes = blk * (size_t)n, .elem_size = blk };
	struct coll_req each = { .op = COLL_OP_ALLTOALL, .bytes = blk, .elem_size = 1 };
	q->ph[q->nph++] = (struct ic_phase){ .req = a2a ? each : all, .data = data, .input = in };
	return ic_go(q, request);
}

/* ---------------------------------------------------------------- v-variants
 * DATA (and Alltoallv's INPUT) hold the blocks back to back in rank order:
 * the caller's buffer itself where it is laid out so with a contiguous
 * type (mpi_coll_v_packed), else a temporary; the schedule is expanded
 * from the block sizes in bytes, which the call keeps. */

/* The blocks of counts/displs go from data (total bytes) to recvbuf at the end. */
static void v_unpack_at_end(struct mpi_icoll *q, void *recvbuf, const int counts[], const int displs[],
			    MPI_Datatype dt, const void *data)
{
	unpack_at_end(q, recvbuf, 0, dt, data, 0);
	q->nblk = q->x.c->size;
	q->ucounts = counts;
	q->udispls = displs;
}

int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		     const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
		     MPI_Request *request)
{
	static const char fn[] = "MPI_Iallgatherv";
	IC_START(fn, comm, c, request);
	int n = c->size, me = c->rank;
	bool in_place = sendbuf == MPI_IN_PLACE;
	int rc = check_blocks(comm, fn, sendbuf, sendcount, sendtype, recvcounts[me], recvtype);
	if (rc)
		return rc;
	struct mpi_dtype *rt = mpi_dtype_get(recvtype);
	IC_NEW(q, c, fn, comm);
	size_t *counts = ic_alloc(q, sizeof *counts * (size_t)n), total = 0, at = 0;
	if (!counts)
		return ic_nomem(q, comm, fn);
	if ((rc = mpi_coll_v_bytes(comm, fn, "recvcounts", recvcounts, n, rt->size, counts, &total)))
		return ic_refuse(q, rc);
	size_t sent = in_place ? counts[me] : mpi_dtype_get(sendtype)->size * (size_t)sendcount;
	if ((rc = mpi_coll_agv_own(comm, fn, me, sent, counts[me], sendbuf, recvbuf, total)))
		return ic_refuse(q, rc);
	/* DATA: recvbuf itself where its blocks lie back to back, as the
	 * blocking call's */
	bool direct = mpi_coll_v_packed(recvtype, recvcounts, displs, n);
	char *data = direct ? (char *)recvbuf + rt->true_lb : ic_alloc(q, total);
	if (!direct && !data)
		return ic_nomem(q, comm, fn);
	for (int j = 0; j < me; j++)
		at += counts[j];
	if (!in_place)
		mpi_pack(mpi_dtype_get(sendtype), sendbuf, sendcount, data + at);
	else if (!direct)
		mpi_pack(rt, (char *)recvbuf + (MPI_Aint)displs[me] * rt->extent, recvcounts[me], data + at);
	if (!direct)
		v_unpack_at_end(q, recvbuf, recvcounts, displs, recvtype, data);
	if (total)
		q->ph[q->nph++] = (struct ic_phase){ .req = { .op = COLL_OP_ALLGATHER, .nranks = n, .counts = counts,
							      .elem_size = 1 },
						     .data = data };
	return ic_go(q, request);
}

/* MPI_IN_PLACE as MPI_Alltoallv's: the blocks go out from recvbuf (INPUT
 * is a packed copy) and come back into it. Otherwise, as the blocking
 * call, INPUT is sendbuf itself and DATA recvbuf itself where their
 * blocks lie back to back (MPI leaves both to the call until it
 * completes). */
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
		    void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
		    MPI_Request *request)
{
	static const char fn[] = "MPI_Ialltoallv";
	IC_START(fn, comm, c, request);
	int n = c->size, me = c->rank;
	bool in_place = sendbuf == MPI_IN_PLACE;
	if (in_place) {
		sendbuf = recvbuf;
		sendcounts = recvcounts;
		sdispls = rdispls;
		sendtype = recvtype;
	}
	int rc = check_blocks(comm, fn, sendbuf, 0, sendtype, 0, recvtype);
	if (rc)
		return rc;
	struct mpi_dtype *st = mpi_dtype_get(sendtype), *rt = mpi_dtype_get(recvtype);
	IC_NEW(q, c, fn, comm);
	/* this rank's row of the pair matrix, then its column */
	size_t *row = ic_alloc(q, sizeof *row * 2 * (size_t)n), stotal = 0, rtotal = 0;
	if (!row)
		return ic_nomem(q, comm, fn);
	rc = mpi_coll_a2av_sizes(comm, fn, me, n, in_place ? MPI_IN_PLACE : sendbuf, sendcounts, st->size, recvbuf,
				 recvcounts, rt->size, row, &stotal, &rtotal);
	if (rc)
		return ic_refuse(q, rc);
	bool in_direct = !in_place && mpi_coll_v_packed(sendtype, sendcounts, sdispls, n);
	bool out_direct = mpi_coll_v_packed(recvtype, recvcounts, rdispls, n);
	char *in = in_direct ? (char *)(uintptr_t)sendbuf + st->true_lb : ic_alloc(q, stotal);
	char *data = out_direct ? (char *)recvbuf + rt->true_lb : ic_alloc(q, rtotal);
	if ((!in_direct && !in) || (!out_direct && !data))
		return ic_nomem(q, comm, fn);
	size_t off = 0, soff = 0, roff = 0;
	for (int j = 0; j < n; j++) {
		if (!in_direct)
			mpi_pack(st, (const char *)sendbuf + (MPI_Aint)sdispls[j] * st->extent, sendcounts[j], in + off);
		soff = j == me ? off : soff;
		off += row[j];
	}
	for (int j = 0; j < me; j++)
		roff += row[n + j];
	if (row[me]) /* our own block: no transfer */
		nal_copy(data + roff, in + soff, row[me]);
	if (!out_direct)
		v_unpack_at_end(q, recvbuf, recvcounts, rdispls, recvtype, data);
	q->ph[q->nph++] = (struct ic_phase){ .req = { .op = COLL_OP_ALLTOALL, .nranks = n, .counts = row,
						      .recv_counts = row + n, .elem_size = 1 },
					     .data = data, .input = in };
	return ic_go(q, request);
}

int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	return iblocks("MPI_Iallgather", false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
		       request);
}

int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	return iblocks("MPI_Ialltoall", true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
		       request);
}

/* ---------------------------------------------------------------- Ialltoallw
 * As MPI_Alltoallw (mpi_xchg.c), one direct exchange: every block goes
 * straight from and into the caller's buffers with its own datatype (MPI
 * leaves buffers, counts, displacements and types to the call until it
 * completes); with MPI_IN_PLACE the blocks go out from a packed copy. */
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
		    void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
		    MPI_Comm comm, MPI_Request *request)
{
	static const char fn[] = "MPI_Ialltoallw";
	IC_START(fn, comm, c, request);
	int n = c->size;
	bool inplace = sendbuf == MPI_IN_PLACE;
	struct mpi_xside snd = { .buf = sendbuf, .counts = sendcounts, .wdispls = sdispls, .types = sendtypes };
	struct mpi_xside rcv = { .buf = recvbuf, .counts = recvcounts, .wdispls = rdispls, .types = recvtypes };
	int rc = mpi_xside_check(comm, fn, "recv", &rcv, n);
	if (!rc && !inplace)
		rc = mpi_xside_check(comm, fn, "send", &snd, n);
	if (rc)
		return rc;
	IC_NEW(q, c, fn, comm);
	if (inplace) {
		/* the image in the call's own memory, as its other buffers */
		int *cnt = ic_alloc(q, sizeof(int) * 2 * (size_t)n);
		if (!cnt)
			return ic_nomem(q, comm, fn);
		if ((rc = mpi_xside_inplace(comm, fn, &rcv, n, cnt, cnt + n, ic_alloc_cb, q, &snd)))
			return ic_refuse(q, rc);
	}
	q->xs[0] = snd;
	q->xs[1] = rcv;
	q->ph[q->nph++] = (struct ic_phase){ .xchg = true };
	return ic_go(q, request);
}
