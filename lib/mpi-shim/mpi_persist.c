/* mpi_persist.c: persistent requests (MPI_Send_init and its modes,
 * MPI_Recv_init, MPI_Start, MPI_Startall).
 *
 * A persistent request is a record of the call's arguments under a handle
 * of its own range (MPI_PERSIST_BASE and up). MPI_Start starts an ordinary
 * request from it through the calls MPI_Isend and MPI_Irecv make, so it
 * travels and matches exactly as they do; the Wait and Test families
 * complete that request (mpi_req_get gives it for the persistent handle)
 * and leave the persistent handle in place, inactive, until the next
 * MPI_Start or MPI_Request_free. */
#include "config.h"

#include <stdlib.h>

#include "mpi_impl.h"

#define PERSIST_MAX (1u << 20)

struct mpi_persist {
	bool in_use;
	bool recv;
	int mode;               /* MPI_MODE_* of a send */
	void *buf;
	int count;
	MPI_Datatype dt;        /* ours: a derived type is duplicated, so MPI_Type_free of the user's leaves it */
	int peer, tag;
	MPI_Comm comm;
	struct mpi_req *active; /* started and not yet completed by Wait/Test */
	uint32_t active_gen;    /* active's generation when started: a reused slot is not ours */
};

static struct mpi_persist *table;
static uint32_t cap, used;

static struct mpi_persist *persist_get(MPI_Request h)
{
	if (h < MPI_PERSIST_BASE || (uint32_t)(h - MPI_PERSIST_BASE) >= used)
		return NULL;
	struct mpi_persist *p = &table[h - MPI_PERSIST_BASE];
	return p->in_use ? p : NULL;
}

/* The started request, while Wait/Test have not completed it. */
static struct mpi_req *persist_active(struct mpi_persist *p)
{
	struct mpi_req *r = p->active;
	if (r && (!r->in_use || !r->held || r->gen != p->active_gen))
		r = p->active = NULL;
	return r;
}

struct mpi_req *mpi_persist_req(MPI_Request h)
{
	struct mpi_persist *p = persist_get(h);
	return p ? persist_active(p) : NULL;
}

bool mpi_persist_inactive(MPI_Request h)
{
	struct mpi_persist *p = persist_get(h);
	return p && !persist_active(p);
}

static void release_type(MPI_Datatype dt)
{
	if (!mpi_dtype_get(dt)->predefined)
		PMPI_Type_free(&dt);
}

static int persist_new(const char *fn, struct mpi_persist *args, MPI_Request *request)
{
	MPI_CHECK_INIT(fn);
	if (!request)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL request pointer");
	/* What MPI_Start's MPI_Isend or MPI_Irecv would refuse, refused
	 * now, by the same checks: a NULL buffer with data to move was
	 * taken here and refused only at every MPI_Start. */
	int rc = mpi_p2p_check(fn, args->buf, args->count, args->dt, args->peer, args->tag, args->comm, args->recv);
	if (rc)
		return rc;
	if (!mpi_dtype_get(args->dt)->predefined) {
		MPI_Datatype own;
		rc = PMPI_Type_dup(args->dt, &own);
		if (rc)
			return rc;
		args->dt = own;
	}
	uint32_t i = 0;
	while (i < used && table[i].in_use)
		i++;
	if (i == used) {
		if (used == cap) {
			uint32_t nc = cap ? cap * 2 : 64;
			struct mpi_persist *t = nc <= PERSIST_MAX ? realloc(table, sizeof *t * nc) : NULL;
			if (!t) {
				release_type(args->dt);
				return mpi_err(args->comm, MPI_ERR_NO_MEM, fn, "no room for another persistent request");
			}
			table = t;
			cap = nc;
		}
		used++;
	}
	table[i] = *args;
	table[i].in_use = true;
	table[i].active = NULL;
	*request = (MPI_Request)(MPI_PERSIST_BASE + i);
	return MPI_SUCCESS;
}

static int send_init(const char *fn, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
		     MPI_Comm comm, int mode, MPI_Request *request)
{
	struct mpi_persist a = { .mode = mode, .buf = (void *)(uintptr_t)buf, .count = count, .dt = dt,
				 .peer = dest, .tag = tag, .comm = comm };
	return persist_new(fn, &a, request);
}

int PMPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		   MPI_Request *request)
{
	return send_init("MPI_Send_init", buf, count, dt, dest, tag, comm, MPI_MODE_STD, request);
}

int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		    MPI_Request *request)
{
	return send_init("MPI_Ssend_init", buf, count, dt, dest, tag, comm, MPI_MODE_SYNC, request);
}

int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		    MPI_Request *request)
{
	return send_init("MPI_Rsend_init", buf, count, dt, dest, tag, comm, MPI_MODE_READY, request);
}

int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		    MPI_Request *request)
{
	return send_init("MPI_Bsend_init", buf, count, dt, dest, tag, comm, MPI_MODE_BUFFERED, request);
}

int PMPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
		   MPI_Request *request)
{
	struct mpi_persist a = { .recv = true, .buf = buf, .count = count, .dt = dt, .peer = source, .tag = tag,
				 .comm = comm };
	return persist_new("MPI_Recv_init", &a, request);
}

static int start_one(MPI_Request h, const char *fn)
{
	struct mpi_persist *p = persist_get(h);
	if (!p)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "request %d is not a persistent request", h);
	if (persist_active(p))
		return mpi_err(p->comm, MPI_ERR_REQUEST, fn, "request %d is already active", h);
	MPI_Request r;
	int rc;
	if (p->recv)
		rc = PMPI_Irecv(p->buf, p->count, p->dt, p->peer, p->tag, p->comm, &r);
	else if (p->mode == MPI_MODE_SYNC)
		rc = PMPI_Issend(p->buf, p->count, p->dt, p->peer, p->tag, p->comm, &r);
	else if (p->mode == MPI_MODE_READY)
		rc = PMPI_Irsend(p->buf, p->count, p->dt, p->peer, p->tag, p->comm, &r);
	else if (p->mode == MPI_MODE_BUFFERED)
		rc = PMPI_Ibsend(p->buf, p->count, p->dt, p->peer, p->tag, p->comm, &r);
	else
		rc = PMPI_Isend(p->buf, p->count, p->dt, p->peer, p->tag, p->comm, &r);
	if (rc)
		return rc;
	p->active = mpi_req_get(r);
	p->active_gen = p->active ? p->active->gen : 0;
	return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request *request)
{
	MPI_CHECK_INIT("MPI_Start");
	if (!request)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Start", "NULL request pointer");
	return start_one(*request, "MPI_Start");
}

int PMPI_Startall(int count, MPI_Request requests[])
{
	MPI_CHECK_INIT("MPI_Startall");
	if (count < 0)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_COUNT, "MPI_Startall", "count %d < 0", count);
	for (int i = 0; i < count; i++) {
		int rc = start_one(requests[i], "MPI_Startall");
		if (rc)
			return rc;
	}
	return MPI_SUCCESS;
}

/* MPI_Request_free of a persistent handle: the record goes now; a started
 * operation still completes on its own (as a freed ordinary request). */
int mpi_persist_free(MPI_Request *request)
{
	struct mpi_persist *p = persist_get(*request);
	if (!p)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Request_free", "request %d is not a request",
			       *request);
	struct mpi_req *r = persist_active(p);
	if (r)
		mpi_req_drop(r);
	release_type(p->dt);
	p->in_use = false;
	*request = MPI_REQUEST_NULL;
	return MPI_SUCCESS;
}

void mpi_persist_fini(void)
{
	free(table);
	table = NULL;
	cap = used = 0;
}
