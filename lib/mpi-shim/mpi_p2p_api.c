/* mpi_p2p_api.c: the point-to-point calls: argument checks, then the
 * engine of mpi_pt2pt.c. */
#include "config.h"

#include <stdlib.h>

#include "mpi_impl.h"

/* MPI_Sendrecv exchanges up to this size each way with a request-free
 * send and, below SENDRECV_SEND_FIRST received, a lazy receive first
 * (PMPI_Sendrecv). */
#define SENDRECV_LAZY_MAX 1024
#define SENDRECV_SEND_FIRST 512

/* What sends and receives both check: the communicator, the count and the
 * datatype (mpi_dtype_check's test), which goes to *tp: the engine need not
 * look it up again. */
static int check_buffer(const char *fn, const void *buf, int count, MPI_Datatype dt, MPI_Comm comm,
			struct mpi_comm **out, struct mpi_dtype **tp)
{
	MPI_COMM_ARG(fn, comm, c);
	*out = c;
	if (count < 0)
		return mpi_err(comm, MPI_ERR_COUNT, fn, "count %d < 0", count);
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t || !t->committed)
		return mpi_err(comm, MPI_ERR_TYPE, fn, "invalid or uncommitted datatype %d", dt);
	/* NULL is MPI_BOTTOM: right for a type of absolute addresses, but
	 * data from the null page is a missing buffer. Found here, not
	 * by Portals: a receive's PtlMDUpdate then aborted the job
	 * (MPI_ERR_INTERN past the handler), an eager send said
	 * MPI_ERR_PROC_FAILED, a rendezvous one MPI_ERR_NO_MEM. */
	if (!buf && count && t->size && t->true_lb < 4096)
		return mpi_err(comm, MPI_ERR_BUFFER, fn, "buffer is NULL with %d element(s) of datatype %d at offset %ld",
			       count, dt, (long)t->true_lb);
	*tp = t;
	return MPI_SUCCESS;
}

static int check_send(const char *fn, const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		      struct mpi_comm **out, struct mpi_dtype **tp)
{
	int rc = check_buffer(fn, buf, count, dt, comm, out, tp);
	if (rc)
		return rc;
	struct mpi_comm *c = *out;
	if (dest != MPI_PROC_NULL && (dest < 0 || dest >= c->size))
		return mpi_err(comm, MPI_ERR_RANK, fn, "destination rank %d is not in %s (size %d)", dest,
			       mpi_comm_name(comm), c->size);
	if (tag < 0 || tag > MPI_TAG_MAX)
		return mpi_err(comm, MPI_ERR_TAG, fn, "tag %d outside 0..MPI_TAG_UB (%d)", tag, MPI_TAG_MAX);
	return MPI_SUCCESS;
}

static int check_recv(const char *fn, const void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
		      struct mpi_comm **out, struct mpi_dtype **tp)
{
	int rc = check_buffer(fn, buf, count, dt, comm, out, tp);
	if (rc)
		return rc;
	struct mpi_comm *c = *out;
	if (src != MPI_PROC_NULL && src != MPI_ANY_SOURCE && (src < 0 || src >= c->size))
		return mpi_err(comm, MPI_ERR_RANK, fn, "source rank %d is not in %s (size %d)", src,
			       mpi_comm_name(comm), c->size);
	if (tag != MPI_ANY_TAG && (tag < 0 || tag > MPI_TAG_MAX))
		return mpi_err(comm, MPI_ERR_TAG, fn, "tag %d outside 0..MPI_TAG_UB (%d)", tag, MPI_TAG_MAX);
	return MPI_SUCCESS;
}

int mpi_p2p_check(const char *fn, const void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
		  bool recv)
{
	struct mpi_comm *c;
	struct mpi_dtype *t;
	return recv ? check_recv(fn, buf, count, dt, peer, tag, comm, &c, &t)
		    : check_send(fn, buf, count, dt, peer, tag, comm, &c, &t);
}

/* check_send and check_recv behind args_ok. */
static int send_args(const char *fn, const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		     struct mpi_comm **cp, struct mpi_dtype **tp)
{
	return mpi_args_ok(buf, count, dt, dest, tag, comm, false, cp, tp)
		       ? MPI_SUCCESS
		       : check_send(fn, buf, count, dt, dest, tag, comm, cp, tp);
}

static int recv_args(const char *fn, const void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
		     struct mpi_comm **cp, struct mpi_dtype **tp)
{
	return mpi_args_ok(buf, count, dt, src, tag, comm, true, cp, tp)
		       ? MPI_SUCCESS
		       : check_recv(fn, buf, count, dt, src, tag, comm, cp, tp);
}

/* A probe checks a receive's envelope, with no buffer. */
static int check_probe(const char *fn, int src, int tag, MPI_Comm comm, struct mpi_comm **out)
{
	struct mpi_dtype *t;
	return check_recv(fn, NULL, 0, MPI_BYTE, src, tag, comm, out, &t);
}

/* Why a send cannot start (mpi_isend_t's MPI_ERR_NO_MEM): no memory for
 * its request or copy, or, above the eager limit, the match entries the
 * library keeps for its own all in use (mpi_entry_ok) */
#define NO_START "cannot start the send (no memory, or the library's own match entries all in use: sends above the eager limit in flight)"

/* The send started (arguments checked): what every send call does. */
static int start_checked_send(const char *fn, const void *buf, int count, MPI_Datatype dt, struct mpi_dtype *t,
			      int dest, int tag, MPI_Comm comm, struct mpi_comm *c, int mode, struct mpi_req **r)
{
	int rc = mpi_isend_t(buf, count, dt, t, dest, tag, c, c->ctx, mode, r);
	if (rc)
		return mpi_err(comm, rc, fn, rc == MPI_ERR_BUFFER   ? "the attached buffer is too small (MPI_Buffer_attach)"
					     : rc == MPI_ERR_NO_MEM ? NO_START
								    : "cannot start the send");
	return MPI_SUCCESS;
}

static int start_send(const char *fn, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
		      MPI_Comm comm, int mode, struct mpi_req **r)
{
	struct mpi_comm *c;
	struct mpi_dtype *t;
	int rc = send_args(fn, buf, count, dt, dest, tag, comm, &c, &t);
	return rc ? rc : start_checked_send(fn, buf, count, dt, t, dest, tag, comm, c, mode, r);
}

/* Why a receive cannot be posted (mpi_irecv_t's MPI_ERR_NO_MEM): no
 * memory for its request or bounce buffer, or PTL_MPI_MAX_MES receives
 * hold their match entries (mpi_keep.c) */
#define NO_POST "cannot post the receive (no memory, or PTL_MPI_MAX_MES receives posted already)"

/* ... and every receive call. */
static int start_recv(const char *fn, void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
		      struct mpi_req **r)
{
	struct mpi_comm *c;
	struct mpi_dtype *t;
	int rc = recv_args(fn, buf, count, dt, src, tag, comm, &c, &t);
	if (rc)
		return rc;
	rc = mpi_irecv_t(buf, count, dt, t, src, tag, c, c->ctx, r);
	return rc ? mpi_err(comm, rc, fn, NO_POST) : MPI_SUCCESS;
}

/* Inline in MPI_Issend, MPI_Irsend, MPI_Ibsend and MPI_Isend's long way
 * (PMPI_Isend, in mpi_pt2pt.c, tries the fast path in its own frame
 * first): the nine arguments are not passed on once more. */
__attribute__((always_inline)) static inline int isend_mode(const char *fn, const void *buf, int count,
							    MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
							    int mode, MPI_Request *request)
{
	struct mpi_req *r;
	struct mpi_comm *c;
	struct mpi_dtype *t;
	/* MPI_Irsend as most go (send_now's case, with a request): straight
	 * to the put, past start_send's frames. */
	if (!((mode & MPI_MODE_NB) && mpi_args_ok(buf, count, dt, dest, tag, comm, false, &c, &t) &&
	      mpi_isend_now(buf, count, t, dest, tag, c, c->ctx, &r))) {
		int rc = start_send(fn, buf, count, dt, dest, tag, comm, mode, &r);
		if (rc)
			return rc;
	}
	*request = mpi_req_handle(r);
	return MPI_SUCCESS;
}

static int send_mode(const char *fn, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
		     MPI_Comm comm, int mode)
{
	struct mpi_req *r;
	struct mpi_comm *c;
	struct mpi_dtype *t;
	int rc = send_args(fn, buf, count, dt, dest, tag, comm, &c, &t);
	if (rc)
		return rc;
	if ((mode == MPI_MODE_STD || mode == MPI_MODE_READY) && t->contig && dest != MPI_PROC_NULL &&
	    mpi_send_bytes((const char *)buf + t->true_lb, t->size * (size_t)count, dest, tag, c, c->ctx))
		return MPI_SUCCESS;
	rc = start_checked_send(fn, buf, count, dt, t, dest, tag, comm, c,
				mode == MPI_MODE_STD || mode == MPI_MODE_READY ? mode | MPI_MODE_BLOCKING : mode, &r);
	if (rc)
		return rc;
	mpi_wait_plain(r);
	rc = r->err;
	mpi_req_drop(r);
	if (rc && r->dead >= 0)
		return mpi_err_dead(fn, r);
	return rc ? mpi_err(comm, rc, fn, "sending to rank %d failed", dest) : MPI_SUCCESS;
}

/* A standard or ready blocking send as most go: arguments as mpi_args_ok
 * likes them, contiguous, out at once with no request (mpi_send_bytes).
 * Tried before send_mode's calls and its frame: this is a ping-pong's
 * path from the receive that completed to the reply's put. False:
 * nothing happened, send_mode checks again and does the rest. */
static inline bool send_now(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	struct mpi_comm *c;
	struct mpi_dtype *t;
	return mpi_args_ok(buf, count, dt, dest, tag, comm, false, &c, &t) && t->contig &&
	       mpi_send_bytes((const char *)buf + t->true_lb, t->size * (size_t)count, dest, tag, c, c->ctx);
}

int mpi_send_slow(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	return send_mode("MPI_Send", buf, count, dt, dest, tag, comm, MPI_MODE_STD);
}

/* mpi_send_std's tail call, no frame of its own (mpi_pt2pt.c). */
int PMPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	return mpi_send_std(buf, count, dt, dest, tag, comm);
}
int PMPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	return send_mode("MPI_Ssend", buf, count, dt, dest, tag, comm, MPI_MODE_SYNC);
}
int PMPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	if (send_now(buf, count, dt, dest, tag, comm))
		return MPI_SUCCESS;
	return send_mode("MPI_Rsend", buf, count, dt, dest, tag, comm, MPI_MODE_READY);
}
int PMPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	return send_mode("MPI_Bsend", buf, count, dt, dest, tag, comm, MPI_MODE_BUFFERED);
}
/* PMPI_Isend is in mpi_pt2pt.c (its put in one frame); what it does not
 * take comes here, the same way as MPI_Irsend's (its fast path, looked at
 * again, declines again). */
int mpi_isend_slow(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	return isend_mode("MPI_Isend", buf, count, dt, dest, tag, comm, MPI_MODE_STD | MPI_MODE_NB, request);
}
int PMPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	return isend_mode("MPI_Issend", buf, count, dt, dest, tag, comm, MPI_MODE_SYNC, req);
}
int PMPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	return isend_mode("MPI_Irsend", buf, count, dt, dest, tag, comm, MPI_MODE_READY | MPI_MODE_NB, req);
}
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
	return isend_mode("MPI_Ibsend", buf, count, dt, dest, tag, comm, MPI_MODE_BUFFERED, req);
}

int PMPI_Buffer_attach(void *buffer, int size)
{
	MPI_CHECK_INIT("MPI_Buffer_attach");
	if (mpi_g.bsend_buf)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Buffer_attach", "a buffer is already attached");
	if (size < 0 || !buffer)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Buffer_attach", "invalid buffer or size %d", size);
	/* The library copies into memory of its own; the attached size is
	 * what it allows itself, as the standard's accounting says. */
	mpi_g.bsend_buf = buffer;
	mpi_g.bsend_size = (size_t)size;
	mpi_g.bsend_used = 0;
	return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
	MPI_CHECK_INIT("MPI_Buffer_detach");
	while (mpi_g.bsend_used > 0)
		mpi_progress(10);
	*(void **)buffer_addr = mpi_g.bsend_buf;
	*size = (int)mpi_g.bsend_size;
	mpi_g.bsend_buf = NULL;
	mpi_g.bsend_size = 0;
	return MPI_SUCCESS;
}

/* PMPI_Irecv is in mpi_pt2pt.c (its post in one frame); what it does not
 * take comes here. */
int mpi_irecv_slow(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *request)
{
	struct mpi_req *r;
	int rc = start_recv("MPI_Irecv", buf, count, dt, src, tag, comm, &r);
	if (rc)
		return rc;
	*request = mpi_req_handle(r);
	return MPI_SUCCESS;
}

/* A blocking receive started: waits for it and reports its outcome.
 * Inline, as the wait: a ping-pong's path from the arrival to the reply
 * returns through here. */
__attribute__((always_inline)) static inline int recv_wait(const char *fn, struct mpi_req *r, MPI_Comm comm,
							   MPI_Status *status)
{
	mpi_wait_plain(r);
	if (status != MPI_STATUS_IGNORE)
		mpi_status_copy(status, &r->st);
	int rc = r->err;
	mpi_req_drop(r);
	if (rc == MPI_ERR_TRUNCATE)
		return mpi_err(comm, rc, fn, "message from rank %d tag %d truncated: %zu bytes into %zu",
			       r->st.MPI_SOURCE, r->st.MPI_TAG, r->msglen, r->len);
	if (rc && r->dead >= 0)
		return mpi_err_dead(fn, r);
	return rc ? mpi_err(comm, rc, fn, "receiving failed") : MPI_SUCCESS;
}

int PMPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *status)
{
	struct mpi_req *r;
	struct mpi_comm *c;
	struct mpi_dtype *t;
	/* The common case past start_recv's frame; an error there (no
	 * memory) is found again and reported by start_recv. */
	int rc = MPI_ERR_OTHER;
	if (mpi_args_ok(buf, count, dt, src, tag, comm, true, &c, &t))
		rc = mpi_irecv_t(buf, count, dt, t, src, tag, c, c->ctx, &r);
	if (rc)
		rc = start_recv("MPI_Recv", buf, count, dt, src, tag, comm, &r);
	return rc ? rc : recv_wait("MPI_Recv", r, comm, status);
}

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
	struct mpi_comm *c;
	struct mpi_dtype *rt, *st;
	int rc = recv_args("MPI_Sendrecv", recvbuf, recvcount, recvtype, source, recvtag, comm, &c, &rt);
	if (!rc)
		rc = send_args("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, comm, &c, &st);
	if (rc)
		return rc;
	struct mpi_req *rr, *sr = NULL;
	size_t rlen = rt->size * (size_t)recvcount, slen = st->size * (size_t)sendcount;
	/* A short contiguous exchange with named ranks goes as the direct
	 * recursive doubling's rounds do (mpi_coll.c): first a receive that
	 * posts no ME (the call waits for it at once, and it takes the
	 * first message that matches from its own call on, as an ME would),
	 * then the send, with no request when it goes inline. 2 ranks, near
	 * host state, 8 interleaved launches against the ME and the send's
	 * request (bench/mpi_pingpong.c's exchange rows, x0 ... x1024): 0 B
	 * 0.228 -> 0.176 us, 8 B 0.226 -> 0.192, 64 B 0.238 -> 0.204, 256 B
	 * 0.260 -> 0.239, 1 KiB 0.352 -> 0.342.
	 * Not past SENDRECV_LAZY_MAX: a lazy receive's bytes are copied
	 * twice (into a reserve buffer as they come, then out), and at 4
	 * KiB that outweighed the ME (0.578 -> 0.657 us).
	 * From SENDRECV_SEND_FIRST received the send goes first and the
	 * receive posts an ME behind it, into which the peer's message
	 * lands with one copy where it has not come yet (else it is found
	 * unexpected, as a lazy receive would find it): the ME's post then
	 * overlaps the messages' flight. 2 ranks, near host state,
	 * interleaved launches (bench/mpi_pingpong.c's exchange rows),
	 * medians of 10 each: 512 B 0.247 -> 0.240 us, 768 B 0.260 ->
	 * 0.243, 1 KiB 0.276 -> 0.258 (of 8 more: 512 B 0.245 -> 0.234, 1
	 * KiB 0.272 -> 0.252); the send first with a lazy receive after it
	 * was level, an ME posted before the send slower (512 B 0.268),
	 * and below 512 B the send first lost (256 B 0.204 -> 0.212).
	 * A send that cannot go at once (no credits, ACKs asked for) goes
	 * with a request after the receive, as a longer exchange's. Where
	 * the send went first and the receive then cannot be posted (no
	 * memory), the error says the message went. */
	bool shortx = rt->contig && st->contig && rlen <= SENDRECV_LAZY_MAX && slen <= SENDRECV_LAZY_MAX &&
		      source >= 0 && dest >= 0;
	const char *sp = (const char *)sendbuf + st->true_lb;
	bool first = shortx && rlen >= SENDRECV_SEND_FIRST;
	bool sent = first && mpi_send_bytes(sp, slen, dest, sendtag, c, c->ctx);
	if (shortx && !first)
		rc = mpi_irecv_lazy((char *)recvbuf + rt->true_lb, rlen, source, recvtag, c, c->ctx, &rr);
	else
		rc = mpi_irecv_t(recvbuf, recvcount, recvtype, rt, source, recvtag, c, c->ctx, &rr);
	if (rc)
		return mpi_err(comm, rc, "MPI_Sendrecv", NO_POST "%s", sent ? "; the message sent went out" : "");
	if (!sent && rr->lazy)
		sent = mpi_send_bytes(sp, slen, dest, sendtag, c, c->ctx);
	if (!sent)
		rc = mpi_isend_t(sendbuf, sendcount, sendtype, st, dest, sendtag, c, c->ctx, MPI_MODE_STD, &sr);
	if (rc) {
		/* nothing of the call may stay behind to take a later message */
		mpi_cancel_recv(rr);
		mpi_wait_plain(rr);
		mpi_req_drop(rr);
		return mpi_err(comm, rc, "MPI_Sendrecv", rc == MPI_ERR_NO_MEM ? NO_START : "cannot start the send");
	}
	if (sr && rr->lazy) {
		/* A short exchange whose send could not go inline. The two run
		 * as if at once: a lazy receive posts no ME and matches only
		 * when looked for, and the send may wait on a peer that waits
		 * for that match */
		struct mpi_idle idle = { 0, 0 };
		while (!sr->done) {
			mpi_recv_try(rr);
			bool empty = mpi_progress_until(100, sr) == 0;
			if (!sr->done && mpi_idle_due(&idle, empty))
				mpi_req_check(sr);
		}
	} else if (sr) {
		mpi_wait_plain(sr);
	}
	mpi_wait_plain(rr);
	if (status != MPI_STATUS_IGNORE)
		mpi_status_copy(status, &rr->st);
	rc = rr->err ? rr->err : sr ? sr->err : 0;
	const struct mpi_req *dead = rr->dead >= 0 ? rr : sr && sr->dead >= 0 ? sr : NULL;
	mpi_req_drop(rr);
	if (sr)
		mpi_req_drop(sr);
	if (rc && dead)
		return mpi_err_dead("MPI_Sendrecv", dead);
	return rc ? mpi_err(comm, rc, "MPI_Sendrecv", "the exchange failed") : MPI_SUCCESS;
}

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag, int source, int recvtag,
			  MPI_Comm comm, MPI_Status *status)
{
	struct mpi_comm *c;
	struct mpi_dtype *t;
	int rc = check_recv("MPI_Sendrecv_replace", buf, count, dt, source, recvtag, comm, &c, &t);
	if (!rc)
		rc = check_send("MPI_Sendrecv_replace", buf, count, dt, dest, sendtag, comm, &c, &t);
	if (rc)
		return rc;
	if (dest == MPI_PROC_NULL) /* nothing goes out: no copy of it */
		return PMPI_Sendrecv(NULL, 0, MPI_BYTE, dest, sendtag, buf, count, dt, source, recvtag, comm, status);
	size_t len = t->size * (size_t)count;
	void *tmp = malloc(len ? len : 1);
	if (!tmp)
		return mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace", "no memory for %zu bytes", len);
	mpi_pack(t, buf, count, tmp);
	/* the packed copy's length in bytes may be past an int */
	MPI_Datatype bytes;
	int n;
	rc = mpi_bytes(len, &n, &bytes);
	if (!rc)
		rc = PMPI_Sendrecv(tmp, n, bytes, dest, sendtag, buf, count, dt, source, recvtag, comm, status);
	mpi_bytes_free(&bytes);
	free(tmp);
	return rc;
}

/* The status of a probe or receive from MPI_PROC_NULL. */
static void proc_null_status(MPI_Status *st)
{
	if (st == MPI_STATUS_IGNORE)
		return;
	/* nothing received, not cancelled; MPI_ERROR stays (mpi_status_copy) */
	mpi_status_copy(st, &(MPI_Status){ .MPI_SOURCE = MPI_PROC_NULL, .MPI_TAG = MPI_ANY_TAG });
}

/* One look for a message of (source, tag) on c, the arguments checked;
 * with msg, a matched probe's: the message found is taken out of matching
 * and *msg names it. */
static int probe_once(const char *fn, int source, int tag, MPI_Comm comm, struct mpi_comm *c, int *flag,
		      MPI_Status *st, MPI_Message *msg)
{
	if (source == MPI_PROC_NULL) {
		*flag = 1;
		proc_null_status(st);
		if (msg)
			*msg = MPI_MESSAGE_NO_PROC;
		return MPI_SUCCESS;
	}
	if (!msg)
		return mpi_iprobe(source, tag, c, flag, st);
	int rc = mpi_improbe(source, tag, c, flag, st, msg);
	return rc ? mpi_err(comm, rc, fn, "no memory for another MPI_Message handle") : MPI_SUCCESS;
}

/* Blocking probes (MPI_Probe, MPI_Mprobe): looks until a message comes or
 * the rank it waits for (any member, for MPI_ANY_SOURCE) is found dead. */
static int probe_wait(const char *fn, int source, int tag, MPI_Comm comm, struct mpi_comm *c, MPI_Status *st,
		      MPI_Message *msg)
{
	int flag = 0;
	struct mpi_idle idle = { 0, 0 };
	for (;;) {
		int rc = probe_once(fn, source, tag, comm, c, &flag, st, msg);
		if (rc || flag)
			return rc;
		if (!mpi_idle_due(&idle, mpi_progress(100) == 0))
			continue;
		/* Nothing for a while: is the rank it waits for still there?
		 * Look for its message once more first: what it sent before it
		 * died is still there to probe. */
		int w = source >= 0 ? (mpi_rank_dead(c->world[source], true) ? c->world[source] : -1)
				    : mpi_comm_dead(c, true);
		if (w < 0)
			continue;
		rc = probe_once(fn, source, tag, comm, c, &flag, st, msg);
		if (rc || flag)
			return rc;
		char m[200];
		mpi_dead_msg(m, sizeof m, c, w);
		return mpi_err(comm, MPI_ERR_PROC_FAILED, fn, "%s%s", m,
			       source < 0 ? " (the MPI_ANY_SOURCE probe may have waited for it)" : "");
	}
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	struct mpi_comm *c;
	int rc = check_probe("MPI_Iprobe", source, tag, comm, &c);
	return rc ? rc : probe_once("MPI_Iprobe", source, tag, comm, c, flag, status, NULL);
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	struct mpi_comm *c;
	int rc = check_probe("MPI_Probe", source, tag, comm, &c);
	return rc ? rc : probe_wait("MPI_Probe", source, tag, comm, c, status, NULL);
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
	struct mpi_comm *c;
	int rc = check_probe("MPI_Improbe", source, tag, comm, &c);
	if (!rc && !message)
		rc = mpi_err(comm, MPI_ERR_ARG, "MPI_Improbe", "NULL message pointer");
	return rc ? rc : probe_once("MPI_Improbe", source, tag, comm, c, flag, status, message);
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
	struct mpi_comm *c;
	int rc = check_probe("MPI_Mprobe", source, tag, comm, &c);
	if (!rc && !message)
		rc = mpi_err(comm, MPI_ERR_ARG, "MPI_Mprobe", "NULL message pointer");
	return rc ? rc : probe_wait("MPI_Mprobe", source, tag, comm, c, status, message);
}

/* Starts the receive of matched message *message (MPI_Mrecv, MPI_Imrecv),
 * which becomes MPI_MESSAGE_NULL; MPI_MESSAGE_NO_PROC's completes at once
 * with MPI_PROC_NULL's status. On an error the message stays matched. */
static int start_mrecv(const char *fn, void *buf, int count, MPI_Datatype dt, MPI_Message *message,
		       struct mpi_req **r)
{
	MPI_CHECK_INIT(fn);
	if (!message)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL message pointer");
	struct mpi_comm *c;
	int rc;
	if (*message == MPI_MESSAGE_NO_PROC) {
		struct mpi_dtype *t;
		rc = check_buffer(fn, buf, count, dt, MPI_COMM_WORLD, &c, &t);
		if (rc)
			return rc;
		rc = mpi_irecv(buf, count, dt, MPI_PROC_NULL, MPI_ANY_TAG, c, c->ctx, r);
		if (rc)
			return mpi_err(MPI_COMM_WORLD, rc, fn, "cannot start the receive");
		*message = MPI_MESSAGE_NULL;
		return MPI_SUCCESS;
	}
	struct mpi_ux *u = mpi_message_get(*message, &c);
	if (!u)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_REQUEST, fn,
			       "message %d is not a matched message (from MPI_Mprobe or MPI_Improbe, not yet received)",
			       *message);
	MPI_Comm comm = mpi_comm_handle(c);
	struct mpi_dtype *t;
	rc = check_buffer(fn, buf, count, dt, comm, &c, &t);
	if (rc)
		return rc;
	rc = mpi_mrecv_start(buf, count, dt, u, c, r);
	if (rc)
		return mpi_err(comm, rc, fn, "cannot start the receive");
	mpi_message_free(message);
	return MPI_SUCCESS;
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status)
{
	struct mpi_req *r;
	int rc = start_mrecv("MPI_Mrecv", buf, count, dt, message, &r);
	return rc ? rc : recv_wait("MPI_Mrecv", r, mpi_comm_handle(r->comm), status);
}

int PMPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Request *request)
{
	struct mpi_req *r;
	int rc = start_mrecv("MPI_Imrecv", buf, count, dt, message, &r);
	if (rc)
		return rc;
	*request = mpi_req_handle(r);
	return MPI_SUCCESS;
}
