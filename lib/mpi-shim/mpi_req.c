/* mpi_req.c: the request table and the Wait/Test families.
 *
 * A request is a slot of one growing table; its handle is index + 1, and
 * its operation id on the wire (mpi_req_id) adds 8 bits of generation, so
 * a late control message for a reused slot is recognized and ignored. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define REQ_MAX (1u << 20)

static struct mpi_req **table;
static uint32_t cap, used;
uint32_t *mpi_req_freelist;
uint32_t mpi_req_nfree;

/* Requests for new slots come REQ_CHUNK at a time: a sender that outruns
 * its receiver holds a request per buffered send, and each new one was a
 * calloc of its own for as long as the backlog grew. Kept for the run,
 * as the table is. */
#define REQ_CHUNK 256
static struct mpi_req *spare;
static uint32_t nspare;

/* A slot never used before, the table grown as needed: UINT32_MAX when
 * there is no memory or the table is full. Apart from mpi_req_new so that
 * its fast path, a slot off the free list, needs no stack frame. */
static __attribute__((noinline)) uint32_t req_grow(void)
{
	if (used == cap) {
		uint32_t nc = cap ? cap * 2 : 256;
		if (nc > REQ_MAX)
			return UINT32_MAX;
		/* Each array that grew is kept (realloc may have freed the
		 * old one); the capacity grows only once both have. */
		struct mpi_req **t = realloc(table, sizeof *t * nc);
		if (t)
			table = t;
		uint32_t *f = t ? realloc(mpi_req_freelist, sizeof *f * nc) : NULL;
		if (f)
			mpi_req_freelist = f;
		if (!t || !f)
			return UINT32_MAX;
		cap = nc;
	}
	if (!nspare) {
		spare = calloc(REQ_CHUNK, sizeof *spare);
		if (!spare)
			return UINT32_MAX;
		nspare = REQ_CHUNK;
	}
	table[used] = spare++;
	nspare--;
	table[used]->idx = used;
	return used++;
}

/* A request zeroed in pieces of 64 bytes, four in a row. Zeroed whole
 * (256 bytes), as a compound literal assigned to it was, gcc makes it a
 * rep stosq: 32 instructions to callgrind and a string instruction's
 * start-up on the core, on every send and receive; a piece is four
 * vector stores, and a loop of single pieces was a loop again (a
 * streamed 4 KiB message's mpi_req_new: 64-68 instructions -> 42-46). */
static inline void req_zero(struct mpi_req *r)
{
	char *p = (char *)r;
	size_t o = 0;
	for (; o + 256 <= sizeof *r; o += 256) {
		memset(p + o, 0, 64);
		memset(p + o + 64, 0, 64);
		memset(p + o + 128, 0, 64);
		memset(p + o + 192, 0, 64);
	}
	for (; o + 64 <= sizeof *r; o += 64)
		memset(p + o, 0, 64);
	memset(p + o, 0, sizeof *r - o);
}

struct mpi_req *mpi_req_new(int kind)
{
	uint32_t i = mpi_req_nfree ? mpi_req_freelist[--mpi_req_nfree] : req_grow();
	if (i == UINT32_MAX)
		return NULL;
	struct mpi_req *r = table[i];
	uint32_t gen = r->gen + 1;
	req_zero(r);
	r->obj = MPI_OBJ_REQ;
	r->idx = i;
	r->gen = gen;
	r->kind = kind;
	r->in_use = true;
	r->held = true;
	r->me = PTL_INVALID_HANDLE;
	r->md = PTL_INVALID_HANDLE;
	r->dead = -1;
	r->st.MPI_ERROR = MPI_SUCCESS;
	mpi_list_init(&r->link);
	return r;
}

/* The table's lookup, inline for the Wait and Test calls of this file: an
 * exported function is a call (through the PLT) even from here, and a
 * Waitall of a window makes two lookups per request (and a drop, inline
 * in mpi_impl.h). */
static inline struct mpi_req *req_get(MPI_Request h)
{
	if (mpi_persist_handle(h))
		return mpi_persist_req(h);
	if (h <= 0 || (uint32_t)h > used)
		return NULL;
	struct mpi_req *r = table[h - 1];
	return r->in_use && r->held ? r : NULL;
}

struct mpi_req *mpi_req_get(MPI_Request h)
{
	return req_get(h);
}

struct mpi_req *mpi_req_by_id(uint32_t id)
{
	uint32_t i = id & 0xfffff;
	if (i >= used)
		return NULL;
	struct mpi_req *r = table[i];
	return r->in_use && (r->gen & 0xff) == (id >> 20) ? r : NULL;
}

void mpi_req_each(void (*fn)(struct mpi_req *r, void *arg), void *arg)
{
	for (uint32_t i = 0; i < used; i++)
		if (table[i]->in_use)
			fn(table[i], arg);
}

/* ---------------------------------------------------------------- Wait/Test */

static void status_out(const struct mpi_req *r, MPI_Status *st)
{
	if (st == MPI_STATUS_IGNORE)
		return;
	mpi_status_copy(st, &r->st);
	if (r->kind == MPI_REQ_SEND) {
		/* A send's status says nothing but whether it was cancelled. */
		st->ptl_count = 0;
	}
}

static void empty_status(MPI_Status *st)
{
	if (st == MPI_STATUS_IGNORE)
		return;
	st->MPI_SOURCE = MPI_ANY_SOURCE;
	st->MPI_TAG = MPI_ANY_TAG;
	st->MPI_ERROR = MPI_SUCCESS;
	st->ptl_cancelled = 0;
	st->ptl_count = 0;
}

/* The message of the last nonblocking collective that failed, kept past
 * its request (finish drops it before the error is reported). */
static char icoll_why[MPI_MAX_ERROR_STRING];

static inline void keep_icoll_why(const struct mpi_req *r)
{
	if (r->err && r->icoll)
		snprintf(icoll_why, sizeof icoll_why, "%s", mpi_icoll_msg(r->icoll));
}

/* r completed: fill the status, free the request, null the handle.
 * *failed (its .err 0 before the first request) becomes a copy of the
 * first request that failed, or of the first a death failed: what the
 * error report reads (its handler, the dead rank), kept apart because r
 * may be reused once dropped. */
static inline int finish(MPI_Request *h, struct mpi_req *r, MPI_Status *st, struct mpi_req *failed)
{
	int err = r->err;
	status_out(r, st);
	if (err && (!failed->err || (r->dead >= 0 && failed->dead < 0)))
		*failed = *r;
	keep_icoll_why(r);
	mpi_req_drop(r);
	if (!mpi_persist_handle(*h)) /* a persistent one stays, inactive */
		*h = MPI_REQUEST_NULL;
	return err;
}

/* The error of a completed request on its communicator (MPI says the
 * request's communicator's handler applies). */
static int req_err(const struct mpi_req *r, int err, const char *fn)
{
	if (r->dead >= 0)
		return mpi_err_dead(fn, r);
	MPI_Comm h = r->comm && r->comm->in_use ? mpi_comm_handle(r->comm) : MPI_COMM_WORLD;
	if (r->kind == MPI_REQ_COLL)
		return mpi_err(h, err, fn, "%s", icoll_why);
	return mpi_err(h, err, fn, "the request failed");
}

/* A single request's completion (Wait, Test, Waitany, Testany): finish,
 * then report its error from the copy finish kept. */
static inline int finish_one(MPI_Request *h, struct mpi_req *r, MPI_Status *st, const char *fn)
{
	struct mpi_req failed; /* only .err is read unless finish fills it */
	failed.err = 0;
	int err = finish(h, r, st, &failed);
	return err ? req_err(&failed, err, fn) : MPI_SUCCESS;
}

/* Several requests failed: name the death among them, if one was; on the
 * communicator of the first that failed (MPI-3.1 8.3: the request's
 * communicator's handler). failed: finish's copy. */
static int many_err(const struct mpi_req *failed, int errs, const char *fn)
{
	MPI_Comm h = failed->comm && failed->comm->in_use ? mpi_comm_handle(failed->comm) : MPI_COMM_WORLD;
	if (failed->dead < 0)
		return mpi_err(h, MPI_ERR_IN_STATUS, fn, "%d of the requests failed", errs);
	char m[200];
	mpi_dead_msg(m, sizeof m, failed->comm, failed->dead);
	return mpi_err(h, MPI_ERR_IN_STATUS, fn, "%d of the requests failed: %s", errs, m);
}

/* Waits of the Waitany/Waitsome kind: after a wait that brought nothing,
 * look at the peers of the active requests. */
static void check_active(int count, MPI_Request reqs[])
{
	for (int i = 0; i < count; i++) {
		struct mpi_req *r = mpi_req_null(reqs[i]) ? NULL : req_get(reqs[i]);
		if (r && !r->done)
			mpi_req_check(r);
	}
}

/* The Test family (Testall, Testany, Testsome) when nothing is done: a
 * program that only polls must see a death too. Rate-limited as MPI_Test
 * is; true when it looked (a request may have failed since). */
static bool test_check_active(int count, MPI_Request reqs[])
{
	static struct mpi_idle idle;
	if (!mpi_idle_due(&idle, false))
		return false;
	check_active(count, reqs);
	return true;
}

static int lookup(MPI_Request *h, struct mpi_req **out, const char *fn)
{
	*out = NULL;
	if (!h)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL request pointer");
	if (mpi_req_null(*h))
		return MPI_SUCCESS;
	*out = req_get(*h);
	if (!*out)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "request %d is not an active request", *h);
	return MPI_SUCCESS;
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
	MPI_CHECK_INIT("MPI_Wait");
	struct mpi_req *r;
	int rc = lookup(request, &r, "MPI_Wait");
	if (rc || !r) {
		empty_status(status);
		return rc;
	}
	if (!r->done)
		mpi_wait_req(r, 0);
	return finish_one(request, r, status, "MPI_Wait");
}

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	MPI_CHECK_INIT("MPI_Test");
	struct mpi_req *r;
	int rc = lookup(request, &r, "MPI_Test");
	if (rc || !r) {
		*flag = 1;
		empty_status(status);
		return rc;
	}
	if (!r->done && mpi_progress(0) == 0 && !r->done) {
		/* A program that only tests must see a death too; the clock is
		 * read every 64th empty test, the peers asked every 100 ms. */
		static struct mpi_idle idle;
		if (mpi_idle_due(&idle, false))
			mpi_req_check(r);
	}
	*flag = r->done;
	if (!r->done)
		return MPI_SUCCESS;
	return finish_one(request, r, status, "MPI_Test");
}

/* MPI_Waitall's requests waited for at once (mpi_wait_all_plain): up to so
 * many, in turn. */
#define WAITALL_CHUNK 64

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status sts[])
{
	MPI_CHECK_INIT("MPI_Waitall");
	if (count < 0)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_COUNT, "MPI_Waitall", "count %d < 0", count);
	/* The first chunk's requests not done yet, as the check finds them. */
	struct mpi_req *rs[WAITALL_CHUNK];
	int nrs = 0;
	for (int i = 0; i < count; i++) {
		struct mpi_req *r = mpi_req_null(reqs[i]) ? NULL : req_get(reqs[i]);
		if (!r && !mpi_req_null(reqs[i]))
			return mpi_err(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Waitall", "request %d (index %d) is not active",
				       reqs[i], i);
		if (i < WAITALL_CHUNK && r && !r->done)
			rs[nrs++] = r;
	}
	int errs = 0;
	struct mpi_req failed; /* only .err is read unless finish fills it */
	failed.err = 0;
	for (int base = 0; base < count; base += WAITALL_CHUNK) {
		int end = count - base > WAITALL_CHUNK ? base + WAITALL_CHUNK : count;
		if (base > 0) {
			nrs = 0;
			for (int i = base; i < end; i++) {
				struct mpi_req *r = mpi_req_null(reqs[i]) ? NULL : req_get(reqs[i]);
				if (r && !r->done)
					rs[nrs++] = r;
			}
		}
		/* All of the chunk at once (a window's events are taken as they
		 * come, not one wait each), then each finished: the lookup again
		 * sees a handle given twice as finished. */
		mpi_wait_all_plain(rs, nrs);
		for (int i = base; i < end; i++) {
			MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
			struct mpi_req *r = mpi_req_null(reqs[i]) ? NULL : req_get(reqs[i]);
			if (!r) {
				empty_status(st);
				continue;
			}
			int e = finish(&reqs[i], r, st, &failed);
			if (st)
				st->MPI_ERROR = e;
			errs += e != 0;
		}
	}
	return errs ? many_err(&failed, errs, "MPI_Waitall") : MPI_SUCCESS;
}

int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
	MPI_CHECK_INIT("MPI_Testall");
	mpi_progress(0);
	for (int pass = 0; pass < 2; pass++) {
		bool all = true;
		for (int i = 0; i < count && all; i++) {
			if (mpi_req_null(reqs[i]))
				continue;
			struct mpi_req *r = req_get(reqs[i]);
			if (!r)
				return mpi_err(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Testall", "request %d is not active",
					       reqs[i]);
			all = r->done;
		}
		if (all) {
			*flag = 1;
			return PMPI_Waitall(count, reqs, sts);
		}
		if (pass || !test_check_active(count, reqs))
			break;
	}
	*flag = 0;
	return MPI_SUCCESS;
}

/* Waitany's and Testany's pass: the first request done, finished. The
 * whole array is looked at before it is: a handle that is neither null
 * nor active anywhere in it is refused with nothing completed, as
 * refuse_inactive does for Waitsome (one walk, the done request found on
 * the way). */
__attribute__((always_inline)) static inline int any_done(int count, MPI_Request reqs[], int *index, MPI_Status *st, bool *active,
							const char *fn)
{
	*active = false;
	struct mpi_req *first = NULL;
	int at = 0;
	for (int i = 0; i < count; i++) {
		if (mpi_req_null(reqs[i]))
			continue;
		struct mpi_req *r = req_get(reqs[i]);
		if (!r)
			return mpi_err(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "request %d (index %d) is not active", reqs[i], i);
		*active = true;
		if (!first && r->done) {
			first = r;
			at = i;
		}
	}
	if (!first)
		return MPI_SUCCESS;
	*index = at;
	return finish_one(&reqs[at], first, st, fn);
}

int PMPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
	MPI_CHECK_INIT("MPI_Waitany");
	if (count < 0)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_COUNT, "MPI_Waitany", "count %d < 0", count);
	*index = MPI_UNDEFINED;
	struct mpi_idle idle = { 0, 0 };
	for (;;) {
		bool active;
		int rc = any_done(count, reqs, index, status, &active, "MPI_Waitany");
		if (rc || *index != MPI_UNDEFINED)
			return rc;
		if (!active) {
			empty_status(status);
			return MPI_SUCCESS;
		}
		if (mpi_idle_due(&idle, mpi_progress(100) == 0))
			check_active(count, reqs);
	}
}

int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	MPI_CHECK_INIT("MPI_Testany");
	if (count < 0)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_COUNT, "MPI_Testany", "count %d < 0", count);
	mpi_progress(0);
	*index = MPI_UNDEFINED;
	bool active;
	int rc = any_done(count, reqs, index, status, &active, "MPI_Testany");
	if (!rc && *index == MPI_UNDEFINED && active && test_check_active(count, reqs))
		rc = any_done(count, reqs, index, status, &active, "MPI_Testany");
	*flag = *index != MPI_UNDEFINED || !active;
	if (!active)
		empty_status(status);
	return rc;
}

/* The first handle of reqs that is neither null nor active, refused: a
 * call that completes several requests looks at all of them before it
 * completes one, or it would free requests it never reports. */
static int refuse_inactive(int count, MPI_Request reqs[], const char *fn)
{
	for (int i = 0; i < count; i++)
		if (!mpi_req_null(reqs[i]) && !req_get(reqs[i]))
			return mpi_err(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "request %d (index %d) is not active", reqs[i], i);
	return MPI_SUCCESS;
}

/* Waitsome's and Testsome's pass, their handles checked (refuse_inactive):
 * one that is not found is a handle given twice, finished already. */
static int some_done(int count, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[], bool *active,
		     const char *fn)
{
	*active = false;
	*outcount = 0;
	int errs = 0;
	struct mpi_req failed; /* only .err is read unless finish fills it */
	failed.err = 0;
	for (int i = 0; i < count; i++) {
		struct mpi_req *r = mpi_req_null(reqs[i]) ? NULL : req_get(reqs[i]);
		if (!r)
			continue;
		*active = true;
		if (r->done) {
			MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[*outcount];
			int e = finish(&reqs[i], r, st, &failed);
			if (st)
				st->MPI_ERROR = e;
			errs += e != 0;
			idx[(*outcount)++] = i;
		}
	}
	if (!*active)
		*outcount = MPI_UNDEFINED;
	return errs ? many_err(&failed, errs, fn) : MPI_SUCCESS;
}

int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
	MPI_CHECK_INIT("MPI_Waitsome");
	if (incount < 0)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_COUNT, "MPI_Waitsome", "incount %d < 0", incount);
	int rc = refuse_inactive(incount, reqs, "MPI_Waitsome");
	if (rc)
		return rc;
	struct mpi_idle idle = { 0, 0 };
	for (;;) {
		bool active;
		rc = some_done(incount, reqs, outcount, idx, sts, &active, "MPI_Waitsome");
		if (rc || !active || *outcount > 0)
			return rc;
		if (mpi_idle_due(&idle, mpi_progress(100) == 0))
			check_active(incount, reqs);
	}
}

int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
	MPI_CHECK_INIT("MPI_Testsome");
	if (incount < 0)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_COUNT, "MPI_Testsome", "incount %d < 0", incount);
	int rc = refuse_inactive(incount, reqs, "MPI_Testsome");
	if (rc)
		return rc;
	mpi_progress(0);
	bool active;
	rc = some_done(incount, reqs, outcount, idx, sts, &active, "MPI_Testsome");
	if (!rc && active && *outcount == 0 && test_check_active(incount, reqs))
		rc = some_done(incount, reqs, outcount, idx, sts, &active, "MPI_Testsome");
	return rc;
}

/* MPI_Request_get_status: MPI_Test that leaves the request active, so the
 * caller still waits on or tests it later (ptlreplay waits this way for a
 * request the recorded program found complete, without a trace event).
 * As MPI_Test it returns a failed request's error, on the request's
 * communicator; the Wait or Test that completes it returns it again. */
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
	MPI_CHECK_INIT("MPI_Request_get_status");
	if (!flag)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Request_get_status", "NULL flag");
	struct mpi_req *r;
	int rc = lookup(&request, &r, "MPI_Request_get_status");
	if (rc)
		return rc;
	if (!r) {
		*flag = 1;
		empty_status(status);
		return MPI_SUCCESS;
	}
	if (!r->done)
		mpi_progress(0);
	*flag = r->done;
	if (!r->done)
		return MPI_SUCCESS;
	status_out(r, status);
	keep_icoll_why(r);
	return r->err ? req_err(r, r->err, "MPI_Request_get_status") : MPI_SUCCESS;
}

/* MPI_Cancel's and MPI_Request_free's lookup: only the Wait and Test calls
 * take MPI_REQUEST_NULL (MPI-3.1 2.5.1: a null handle is an erroneous
 * argument anywhere else). */
static int lookup_nonnull(MPI_Request *h, struct mpi_req **out, const char *fn)
{
	if (h && *h == MPI_REQUEST_NULL) {
		*out = NULL;
		return mpi_err(MPI_COMM_NULL, MPI_ERR_REQUEST, fn,
			       "MPI_REQUEST_NULL (only the Wait and Test calls take a null request)");
	}
	return lookup(h, out, fn);
}

int PMPI_Cancel(MPI_Request *request)
{
	MPI_CHECK_INIT("MPI_Cancel");
	struct mpi_req *r;
	int rc = lookup_nonnull(request, &r, "MPI_Cancel");
	if (rc || !r)
		return rc;
	if (r->kind != MPI_REQ_RECV)
		return MPI_SUCCESS; /* sends are not cancelled: they complete normally */
	return mpi_cancel_recv(r);
}

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
	*flag = status ? status->ptl_cancelled : 0;
	return MPI_SUCCESS;
}

int PMPI_Request_free(MPI_Request *request)
{
	MPI_CHECK_INIT("MPI_Request_free");
	if (request && mpi_persist_handle(*request))
		return mpi_persist_free(request);
	struct mpi_req *r;
	int rc = lookup_nonnull(request, &r, "MPI_Request_free");
	if (rc || !r)
		return rc;
	mpi_req_drop(r);
	*request = MPI_REQUEST_NULL;
	return MPI_SUCCESS;
}
