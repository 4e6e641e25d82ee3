/*
 * tracer/trc_persist.c - persistent requests in the trace, written by hand
 * because one call here records what another call did: MPI_Send_init and
 * its kind only remember their arguments (nothing moves yet), and each
 * MPI_Start / MPI_Startall records, per request started, the Isend, Issend
 * or Irecv that start is, with the persistent handle as its request. The
 * Wait/Test wrappers then find it as any request, the replay posts the
 * same operations, and the next start of the handle is a new request.
 * MPI_Request_free forgets the arguments (trc_a_forget_persist, from the
 * spec's Request_free).
 */
#include <stdlib.h>
#include <string.h>

#include "trc_hooks.h"
#include "trc_ops.h"

struct trc_persist {
	MPI_Request h;
	int op; /* TRC_OP_ISEND, TRC_OP_ISSEND or TRC_OP_IRECV */
	int count, peer, tag;
	int64_t dt;     /* the datatype field's value, taken while the type exists */
	MPI_Comm comm;
};

static struct trc_persist *ptab;
static size_t pn, pcap;

static struct trc_persist *find(MPI_Request h)
{
	for (size_t i = 0; i < pn; i++)
		if (ptab[i].h == h)
			return &ptab[i];
	return NULL;
}

/* Remembers a new handle's arguments; without room, its starts go
 * unrecorded (as calls outside the tracer's list do). */
static void remember(MPI_Request h, int op, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm)
{
	struct trc_persist *p = find(h);
	if (!p) {
		if (pn == pcap) {
			size_t nc = pcap ? 2 * pcap : 16;
			struct trc_persist *t = realloc(ptab, nc * sizeof *t);
			if (!t)
				return;
			ptab = t;
			pcap = nc;
		}
		p = &ptab[pn++];
	}
	*p = (struct trc_persist){ h, op, count, peer, tag, trc_dtype_value(dt), comm };
}

void trc_a_forget_persist(struct trc_call *c, MPI_Request h)
{
	(void)c;
	struct trc_persist *p = find(h);
	if (p)
		*p = ptab[--pn];
}

/* The four send modes: the call, then its arguments remembered. Bsend and
 * Rsend starts are replayed as standard sends: they match the same. */
#define TRC_SEND_INIT(mode, op)                                                                    \
	int MPI_##mode##_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,     \
			      MPI_Comm comm, MPI_Request *request)                                \
	{                                                                                          \
		int rc = PMPI_##mode##_init(buf, count, dt, dest, tag, comm, request);             \
		if (rc == MPI_SUCCESS)                                                             \
			remember(*request, op, count, dt, dest, tag, comm);                        \
		return rc;                                                                         \
	}
TRC_SEND_INIT(Send, TRC_OP_ISEND)
TRC_SEND_INIT(Bsend, TRC_OP_ISEND)
TRC_SEND_INIT(Rsend, TRC_OP_ISEND)
TRC_SEND_INIT(Ssend, TRC_OP_ISSEND)

int MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
		  MPI_Request *request)
{
	int rc = PMPI_Recv_init(buf, count, dt, source, tag, comm, request);
	if (rc == MPI_SUCCESS)
		remember(*request, TRC_OP_IRECV, count, dt, source, tag, comm);
	return rc;
}

/* One start, recorded as the operation it starts (the Isend/Irecv
 * wrappers' fields, in their order) once it has started: a start that
 * failed (the request was active) started nothing to replay. */
static int start_one(MPI_Request *request, void *caller)
{
	struct trc_persist *p = find(*request);
	struct trc_call c;
	int rc = PMPI_Start(request);
	if (rc != MPI_SUCCESS || !p || !trc_begin(&c, p->op, caller))
		return rc;
	trc_f_peer(&c, p->peer, p->comm);
	trc_f_int(&c, p->count);
	trc_f_dtype_value(&c, p->dt);
	trc_f_tag(&c, p->tag);
	trc_f_comm(&c, p->comm);
	trc_a_newreq(&c, *request);
	trc_end(&c);
	return rc;
}

int MPI_Start(MPI_Request *request)
{
	return start_one(request, TRC_CALLER);
}

int MPI_Startall(int count, MPI_Request requests[])
{
	if (count < 0 || !pn)
		return PMPI_Startall(count, requests);
	void *caller = TRC_CALLER;
	for (int i = 0; i < count; i++) {
		int rc = start_one(&requests[i], caller);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}
