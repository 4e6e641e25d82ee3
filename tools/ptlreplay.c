/* ptlreplay: reissue the MPI calls of a ptl trace.
 *
 * Start it with as many ranks as the trace has. Each rank expands its own
 * event sequence from the trace and makes every recorded call in order,
 * with the recorded counts, datatypes, peers, tags, roots, reduction ops
 * and communicators, on synthesized buffers. Run under the tracer
 * (LD_PRELOAD=libptltrace-mpich.so) it records a trace that
 * `ptltool trace diff` calls equal to the original. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "trc.h"
#include "ptlreplay.h"

#define MAXCOMM 4096
#define REQRING (1u << 16)

struct rcomm {
	MPI_Comm c;
	int *from_world;	/* world rank -> rank in c, NULL for world */
};

static struct {
	int rank, size;
	int compute, verbose;
	struct rcomm comms[MAXCOMM];
	MPI_Request req[REQRING];
	void *rbuf[REQRING];
	uint64_t next;
	char *sbuf, *rscratch;
	size_t scap, rcap;
	MPI_Datatype bytes[64];	/* contiguous byte types by size, for derived types */
	MPI_Op user_op;
	uint64_t events;
	uint64_t compute_ns;	/* recorded compute time waited out */
} R;

_Noreturn void rp_die(const char *what, const char *detail)
{
	fprintf(stderr, "ptlreplay: rank %d: %s%s\n", R.rank, what, detail);
	MPI_Abort(MPI_COMM_WORLD, 2);
	exit(2);
}

static void spin_ns(uint64_t ns)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)(b.tv_nsec - a.tv_nsec) < ns);
}

char *rp_scratch(char **p, size_t *cap, size_t n)
{
	if (n > *cap) {
		char *q = realloc(*p, n);
		if (!q)
			rp_die("out of memory for a message buffer", "");
		memset(q + *cap, 0, n - *cap);
		*p = q;
		*cap = n;
	}
	return *p;
}

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)in;
	(void)inout;
	(void)len;
	(void)dt;
}

MPI_Datatype rp_dtype(int64_t v, size_t *size)
{
	static const MPI_Datatype tab[TRC_NDT] = {
		MPI_DATATYPE_NULL, MPI_BYTE, MPI_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG,
		MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_INT8_T,
		MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T,
		MPI_UINT64_T, MPI_DOUBLE_INT, MPI_2INT, MPI_PACKED,
	};
	int64_t code = v >> 32, sz = v & 0xffffffff;
	*size = (size_t)sz;
	if (code < 0 || code >= TRC_NDT)
		rp_die("trace names an unknown datatype", "");
	if (code != TRC_DT_DERIVED)
		return tab[code];
	if (!sz)
		return MPI_DATATYPE_NULL;
	/* a derived type: one of the same size, made of bytes */
	for (int i = 0; i < 64; i++) {
		if (R.bytes[i] == MPI_DATATYPE_NULL) {
			MPI_Type_contiguous((int)sz, MPI_BYTE, &R.bytes[i]);
			MPI_Type_commit(&R.bytes[i]);
			return R.bytes[i];
		}
		int s;
		MPI_Type_size(R.bytes[i], &s);
		if (s == sz)
			return R.bytes[i];
	}
	rp_die("too many distinct derived datatype sizes", "");
	return MPI_BYTE;
}

MPI_Op rp_mop(int64_t v)
{
	static const MPI_Op tab[TRC_NMOP] = {
		MPI_OP_NULL, MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR,
		MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_OP_NULL,
	};
	if (v < 0 || v >= TRC_NMOP)
		rp_die("trace names an unknown reduction op", "");
	if (v == TRC_MOP_USER) {
		if (R.user_op == MPI_OP_NULL)
			MPI_Op_create(user_fn, 1, &R.user_op);
		return R.user_op;
	}
	return tab[v];
}

MPI_Comm rp_comm(int64_t id)
{
	if (id == TRC_COMM_NULL)
		return MPI_COMM_NULL;
	if (id < 0 || id >= MAXCOMM || R.comms[id].c == MPI_COMM_NULL) {
		char s[32];
		snprintf(s, sizeof s, " %" PRId64, id);
		rp_die("trace uses a communicator it never created:", s);
	}
	return R.comms[id].c;
}

static void comm_set(int64_t id, MPI_Comm c)
{
	if (id < 0)
		return;
	if (id >= MAXCOMM)
		rp_die("too many communicators in the trace", "");
	R.comms[id].c = c;
	free(R.comms[id].from_world);
	R.comms[id].from_world = NULL;
	int inter = 0;
	if (c == MPI_COMM_NULL || (MPI_Comm_test_inter(c, &inter) == MPI_SUCCESS && inter))
		return;	/* an intercommunicator's peers are remote ranks as recorded */
	MPI_Group g, wg;
	int *in = malloc(2 * (size_t)R.size * sizeof *in);
	if (!in)
		rp_die("out of memory", "");
	for (int i = 0; i < R.size; i++)
		in[i] = i;
	MPI_Comm_group(c, &g);
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	MPI_Group_translate_ranks(wg, R.size, in, g, in + R.size);
	MPI_Group_free(&g);
	MPI_Group_free(&wg);
	memmove(in, in + R.size, (size_t)R.size * sizeof *in);
	R.comms[id].from_world = in;
}

/* A recorded peer (a world rank) as a rank of the call's communicator. */
static int peer(int64_t p, int64_t cid)
{
	if (p == TRC_ANY_SOURCE)
		return MPI_ANY_SOURCE;
	if (p == TRC_PROC_NULL)
		return MPI_PROC_NULL;
	if (p < 0 || p >= R.size)
		rp_die("trace names a peer outside the job", "");
	if (cid == 0 || !R.comms[cid].from_world)
		return (int)p;
	return R.comms[cid].from_world[p];
}

static int tag(int64_t t)
{
	return t == TRC_ANY_TAG ? MPI_ANY_TAG : (int)t;
}

/* ---- requests: slots by creation number, like the tracer's offsets ---- */
void rp_req_new(MPI_Request r, void *buf)
{
	uint64_t i = R.next++ % REQRING;
	if (R.req[i] != MPI_REQUEST_NULL)
		rp_die("more than 65536 requests outstanding", "");
	R.req[i] = r;
	R.rbuf[i] = buf;
}

static uint64_t req_slot(int64_t off)
{
	if (off <= 0 || (uint64_t)off > R.next || (uint64_t)off > REQRING)
		rp_die("trace has a request offset out of range", "");
	return (R.next - (uint64_t)off) % REQRING;
}

/* Wait, without completing it (and without the tracer seeing it), until a
 * request the recorded program found complete is complete here too. */
static void until_complete(MPI_Request r)
{
	int flag = 0;
	for (unsigned polls = 0; !flag; polls++) {
		MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
		if (!flag && polls >= 64) {
			/* the peer is not there yet: give the core away between polls */
			struct timespec nap = { 0, 20000 };
			nanosleep(&nap, NULL);
		}
	}
}

/* The request of a replayed MPI_Cancel or MPI_Request_free that the trace
 * names as none: the recorded call's was a persistent request not active
 * then (the tracer records each start as the Isend or Irecv it starts, so
 * the replay has no persistent handle of its own), or MPI_REQUEST_NULL,
 * which both calls refuse (MPI-3.1 2.5.1). An inactive persistent request
 * made outside the trace (PMPI_), whose call records as the recorded one. */
static MPI_Request inactive_request(void)
{
	MPI_Request p;
	if (PMPI_Recv_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &p) != MPI_SUCCESS)
		rp_die("cannot make a persistent request", "");
	return p;
}

static void req_done(uint64_t slot)
{
	if (R.req[slot] == MPI_REQUEST_NULL) {
		free(R.rbuf[slot]);
		R.rbuf[slot] = NULL;
	}
}

static MPI_Request *req_array(const int64_t *offs, int n, uint64_t *slots)
{
	MPI_Request *a = malloc((size_t)(n ? n : 1) * sizeof *a);
	if (!a)
		rp_die("out of memory", "");
	for (int i = 0; i < n; i++) {
		if (offs[i] == TRC_REQ_NULL) {
			a[i] = MPI_REQUEST_NULL;
			slots[i] = UINT64_MAX;
		} else {
			slots[i] = req_slot(offs[i]);
			a[i] = R.req[slots[i]];
		}
	}
	return a;
}

static void req_array_back(MPI_Request *a, int n, const uint64_t *slots)
{
	for (int i = 0; i < n; i++)
		if (slots[i] != UINT64_MAX) {
			R.req[slots[i]] = a[i];
			req_done(slots[i]);
		}
	free(a);
}

/* ---- matched-probe messages: a ring in probe order, like requests ---- */
#define MSGRING 4096u

static struct {
	MPI_Message m[MSGRING];
	uint64_t next;
} M;

static void msg_new(MPI_Message m)
{
	M.m[M.next++ % MSGRING] = m;
}

/* The message taken off matched probes ago (1 = the latest); off 0 (the
 * recording lost track) or out of range ends the replay. */
static MPI_Message *msg_take(int64_t off)
{
	if (off <= 0 || (uint64_t)off > M.next || (uint64_t)off > MSGRING)
		rp_die("trace has a matched-probe message offset out of range", "");
	return &M.m[(M.next - (uint64_t)off) % MSGRING];
}

/* A recorded int array as C ints (never NULL). */
static int *ints(const int64_t *v, int n)
{
	int *a = malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
	if (!a)
		rp_die("out of memory", "");
	for (int i = 0; i < n; i++)
		a[i] = (int)v[i];
	return a;
}

/* A recorded weights argument (trc_weights' kind) as the call takes it. */
static const int *weights(int64_t kind, const int *w)
{
	return kind == 0 ? MPI_UNWEIGHTED : kind == 2 ? MPI_WEIGHTS_EMPTY : w;
}

/* One recorded call. Field order is the spec's (trc_mpi.spec). */
static int replay(const struct trc_flat *e, void *ctx)
{
	(void)ctx;
	const int64_t *v = e->v, *arr = e->arr;
	size_t sz, sz2;
	MPI_Datatype dt, dt2;
	MPI_Status st;
	int flag, idx;
	R.events++;
	if (R.compute && e->tns) {
		spin_ns(e->tns);
		R.compute_ns += e->tns;
	}
	switch (e->op) {
	case TRC_OP_INIT:
	case TRC_OP_INIT_THREAD:
	case TRC_OP_FINALIZE:
		break;		/* made by main() */
	case TRC_OP_ABORT:
		MPI_Abort(rp_comm(v[0]), (int)v[1]);
		break;
	case TRC_OP_SEND:
	case TRC_OP_SSEND:
	case TRC_OP_RSEND:
	case TRC_OP_BSEND:
	case TRC_OP_ISEND:
	case TRC_OP_ISSEND:
	case TRC_OP_IRSEND:
	case TRC_OP_IBSEND: {
		dt = rp_dtype(v[2], &sz);
		/* a nonblocking send reads its buffer until it completes: one of
		 * its own then (the scratch may move under the next, larger call) */
		bool nb = e->op == TRC_OP_ISEND || e->op == TRC_OP_ISSEND || e->op == TRC_OP_IRSEND ||
			  e->op == TRC_OP_IBSEND;
		void *b = nb ? calloc(1, (size_t)v[1] * sz + 1) : rp_scratch(&R.sbuf, &R.scap, (size_t)v[1] * sz + 1);
		if (!b)
			rp_die("out of memory for a send buffer", "");
		int p = peer(v[0], v[4]);
		MPI_Comm c = rp_comm(v[4]);
		MPI_Request r;
		if (e->op == TRC_OP_SEND)
			MPI_Send(b, (int)v[1], dt, p, tag(v[3]), c);
		else if (e->op == TRC_OP_SSEND)
			MPI_Ssend(b, (int)v[1], dt, p, tag(v[3]), c);
		else if (e->op == TRC_OP_RSEND)
			MPI_Rsend(b, (int)v[1], dt, p, tag(v[3]), c);
		else if (e->op == TRC_OP_BSEND)
			MPI_Bsend(b, (int)v[1], dt, p, tag(v[3]), c);
		else {
			if (e->op == TRC_OP_ISEND)
				MPI_Isend(b, (int)v[1], dt, p, tag(v[3]), c, &r);
			else if (e->op == TRC_OP_ISSEND)
				MPI_Issend(b, (int)v[1], dt, p, tag(v[3]), c, &r);
			else if (e->op == TRC_OP_IRSEND)
				MPI_Irsend(b, (int)v[1], dt, p, tag(v[3]), c, &r);
			else
				MPI_Ibsend(b, (int)v[1], dt, p, tag(v[3]), c, &r);
			rp_req_new(r, b);
		}
		break;
	}
	case TRC_OP_IRECV: {
		dt = rp_dtype(v[2], &sz);
		void *b = calloc(1, (size_t)v[1] * sz + 1);
		MPI_Request r;
		if (!b)
			rp_die("out of memory for a receive buffer", "");
		MPI_Irecv(b, (int)v[1], dt, peer(v[0], v[4]), tag(v[3]), rp_comm(v[4]), &r);
		rp_req_new(r, b);
		break;
	}
	case TRC_OP_RECV:
		dt = rp_dtype(v[2], &sz);
		MPI_Recv(rp_scratch(&R.rscratch, &R.rcap, (size_t)v[1] * sz + 1), (int)v[1], dt, peer(v[0], v[4]),
			 tag(v[3]), rp_comm(v[4]), &st);
		break;
	case TRC_OP_SENDRECV:
		dt = rp_dtype(v[2], &sz);
		dt2 = rp_dtype(v[6], &sz2);
		MPI_Sendrecv(rp_scratch(&R.sbuf, &R.scap, (size_t)v[1] * sz + 1), (int)v[1], dt, peer(v[0], v[8]),
			     tag(v[3]), rp_scratch(&R.rscratch, &R.rcap, (size_t)v[5] * sz2 + 1), (int)v[5], dt2,
			     peer(v[4], v[8]), tag(v[7]), rp_comm(v[8]), &st);
		break;
	case TRC_OP_SENDRECV_REPLACE:
		dt = rp_dtype(v[2], &sz);
		MPI_Sendrecv_replace(rp_scratch(&R.rscratch, &R.rcap, (size_t)v[1] * sz + 1), (int)v[1], dt,
				     peer(v[0], v[6]), tag(v[3]), peer(v[4], v[6]), tag(v[5]), rp_comm(v[6]), &st);
		break;
	case TRC_OP_WAIT:
	case TRC_OP_TEST:
	case TRC_OP_CANCEL:
	case TRC_OP_REQUEST_FREE: {
		MPI_Request nul = MPI_REQUEST_NULL, *r = &nul;
		uint64_t slot = UINT64_MAX;
		if (v[0] != TRC_REQ_NULL) {
			slot = req_slot(v[0]);
			r = &R.req[slot];
		} else if (e->op == TRC_OP_CANCEL || e->op == TRC_OP_REQUEST_FREE) {
			nul = inactive_request();
		}
		if (e->op == TRC_OP_WAIT) {
			MPI_Wait(r, &st);
		} else if (e->op == TRC_OP_TEST) {
			if (v[1])	/* it completed in the recorded run */
				until_complete(*r);
			MPI_Test(r, &flag, &st);
		}
		else if (e->op == TRC_OP_CANCEL) {
			MPI_Cancel(r);
			if (r == &nul)
				PMPI_Request_free(r); /* inactive_request's, outside the trace as it came */
		} else {
			MPI_Request_free(r);
			slot = UINT64_MAX;	/* the buffer may still be in use */
		}
		if (slot != UINT64_MAX)
			req_done(slot);
		break;
	}
	case TRC_OP_WAITALL:
	case TRC_OP_WAITANY:
	case TRC_OP_WAITSOME:
	case TRC_OP_TESTALL:
	case TRC_OP_TESTANY:
	case TRC_OP_TESTSOME: {
		int n = (int)v[0], outn;
		uint64_t *slots = malloc((size_t)(n ? n : 1) * sizeof *slots);
		int *ind = malloc((size_t)(n ? n : 1) * sizeof *ind);
		MPI_Status *sts = malloc((size_t)(n ? n : 1) * sizeof *sts);
		if (!slots || !ind || !sts)
			rp_die("out of memory", "");
		MPI_Request *a = req_array(arr, n, slots);
		/* reproduce the recorded outcome where MPI lets us: wait for
		 * what completed in the recorded run before asking again */
		if ((e->op == TRC_OP_TESTALL && v[1]))
			for (int i = 0; i < n; i++)
				until_complete(a[i]);
		if (e->op == TRC_OP_WAITANY && v[1] >= 0 && v[1] < n)
			until_complete(a[v[1]]);
		if (e->op == TRC_OP_TESTANY && v[1] && v[2] >= 0 && v[2] < n)
			until_complete(a[v[2]]);
		if (e->op == TRC_OP_WAITSOME || e->op == TRC_OP_TESTSOME)
			for (int64_t i = 0; i < v[1]; i++)
				if (arr[n + i] >= 0 && arr[n + i] < n)
					until_complete(a[arr[n + i]]);
		if (e->op == TRC_OP_WAITALL)
			MPI_Waitall(n, a, sts);
		else if (e->op == TRC_OP_WAITANY)
			MPI_Waitany(n, a, &idx, &st);
		else if (e->op == TRC_OP_WAITSOME)
			MPI_Waitsome(n, a, &outn, ind, sts);
		else if (e->op == TRC_OP_TESTALL)
			MPI_Testall(n, a, &flag, sts);
		else if (e->op == TRC_OP_TESTANY)
			MPI_Testany(n, a, &idx, &flag, &st);
		else
			MPI_Testsome(n, a, &outn, ind, sts);
		req_array_back(a, n, slots);
		free(slots);
		free(ind);
		free(sts);
		break;
	}
	case TRC_OP_PROBE:
		MPI_Probe(peer(v[0], v[2]), tag(v[1]), rp_comm(v[2]), &st);
		break;
	case TRC_OP_IPROBE:
		if (v[3])	/* a message was there: wait for it, unrecorded */
			PMPI_Probe(peer(v[0], v[2]), tag(v[1]), rp_comm(v[2]), &st);
		MPI_Iprobe(peer(v[0], v[2]), tag(v[1]), rp_comm(v[2]), &flag, &st);
		break;
	case TRC_OP_MPROBE:
	case TRC_OP_IMPROBE: {
		MPI_Message m = MPI_MESSAGE_NULL;
		flag = 1;
		if (e->op == TRC_OP_MPROBE) {
			MPI_Mprobe(peer(v[0], v[2]), tag(v[1]), rp_comm(v[2]), &m, &st);
		} else {
			if (v[3])	/* a message was there: wait for it, unrecorded */
				PMPI_Probe(peer(v[0], v[2]), tag(v[1]), rp_comm(v[2]), &st);
			MPI_Improbe(peer(v[0], v[2]), tag(v[1]), rp_comm(v[2]), &flag, &m, &st);
		}
		if (flag)
			msg_new(m);
		break;
	}
	case TRC_OP_MRECV:
	case TRC_OP_IMRECV: {
		/* count dt msg: the message taken msg matched probes ago */
		dt = rp_dtype(v[1], &sz);
		MPI_Message *m = msg_take(v[2]);
		if (e->op == TRC_OP_MRECV) {
			MPI_Mrecv(rp_scratch(&R.rscratch, &R.rcap, (size_t)v[0] * sz + 1), (int)v[0], dt, m, &st);
		} else {
			void *b = calloc(1, (size_t)v[0] * sz + 1);
			MPI_Request r;
			if (!b)
				rp_die("out of memory for a receive buffer", "");
			MPI_Imrecv(b, (int)v[0], dt, m, &r);
			rp_req_new(r, b);
		}
		break;
	}
	case TRC_OP_COMM_DUP: {
		MPI_Comm nc;
		MPI_Comm_dup(rp_comm(v[0]), &nc);
		comm_set(v[1], nc);
		break;
	}
	case TRC_OP_COMM_SPLIT: {
		MPI_Comm nc;
		MPI_Comm_split(rp_comm(v[0]), (int)v[1], (int)v[2], &nc);
		comm_set(v[3], nc);
		break;
	}
	case TRC_OP_COMM_CREATE:
	case TRC_OP_COMM_CREATE_GROUP: {
		/* comm group[] [tag] newcomm: the group as world ranks */
		MPI_Group wg, g;
		MPI_Comm nc;
		int n = (int)v[1], *r = ints(arr, n);
		MPI_Comm_group(MPI_COMM_WORLD, &wg);
		MPI_Group_incl(wg, n, r, &g);
		if (e->op == TRC_OP_COMM_CREATE)
			MPI_Comm_create(rp_comm(v[0]), g, &nc);
		else
			MPI_Comm_create_group(rp_comm(v[0]), g, (int)v[2], &nc);
		MPI_Group_free(&g);
		MPI_Group_free(&wg);
		free(r);
		comm_set(v[e->op == TRC_OP_COMM_CREATE ? 2 : 3], nc);
		break;
	}
	case TRC_OP_COMM_FREE: {
		MPI_Comm c = rp_comm(v[0]);
		MPI_Comm_free(&c);
		comm_set(v[0], MPI_COMM_NULL);
		break;
	}
	case TRC_OP_INTERCOMM_CREATE: {
		/* comm leader peer rleader tag newcomm; peer is MPI_COMM_NULL off the leader */
		MPI_Comm nc;
		MPI_Intercomm_create(rp_comm(v[0]), (int)v[1], rp_comm(v[2]), (int)v[3], (int)v[4], &nc);
		comm_set(v[5], nc);
		break;
	}
	case TRC_OP_INTERCOMM_MERGE: {
		MPI_Comm nc;
		MPI_Intercomm_merge(rp_comm(v[0]), (int)v[1], &nc);
		comm_set(v[2], nc);
		break;
	}
	case TRC_OP_GRAPH_CREATE: {
		/* comm index[] edges[] reorder newcomm */
		MPI_Comm nc;
		int *index = ints(arr, (int)v[1]), *edges = ints(arr + v[1], (int)v[2]);
		MPI_Graph_create(rp_comm(v[0]), (int)v[1], index, edges, (int)v[3], &nc);
		free(index);
		free(edges);
		comm_set(v[4], nc);
		break;
	}
	case TRC_OP_DIST_GRAPH_CREATE_ADJACENT: {
		/* comm sources[] sw[] dests[] dw[] swkind dwkind reorder newcomm */
		MPI_Comm nc;
		const int64_t *a = arr;
		int *src = ints(a, (int)v[1]), *sw = ints(a += v[1], (int)v[2]);
		int *dst = ints(a += v[2], (int)v[3]), *dw = ints(a + v[3], (int)v[4]);
		MPI_Dist_graph_create_adjacent(rp_comm(v[0]), (int)v[1], src, weights(v[5], sw), (int)v[3], dst,
					       weights(v[6], dw), MPI_INFO_NULL, (int)v[7], &nc);
		free(src), free(sw), free(dst), free(dw);
		comm_set(v[8], nc);
		break;
	}
	case TRC_OP_DIST_GRAPH_CREATE: {
		/* comm sources[] degrees[] dests[] w[] wkind reorder newcomm */
		MPI_Comm nc;
		const int64_t *a = arr;
		int *src = ints(a, (int)v[1]), *deg = ints(a += v[1], (int)v[2]);
		int *dst = ints(a += v[2], (int)v[3]), *w = ints(a + v[3], (int)v[4]);
		MPI_Dist_graph_create(rp_comm(v[0]), (int)v[1], src, deg, dst, weights(v[5], w), MPI_INFO_NULL,
				      (int)v[6], &nc);
		free(src), free(deg), free(dst), free(w);
		comm_set(v[7], nc);
		break;
	}
	case TRC_OP_COMM_SPLIT_TYPE: {
		MPI_Comm nc;
		MPI_Comm_split_type(rp_comm(v[0]), (int)v[1], (int)v[2], MPI_INFO_NULL, &nc);
		comm_set(v[3], nc);
		break;
	}
	case TRC_OP_COMM_DUP_WITH_INFO: {
		MPI_Comm nc;
		MPI_Comm_dup_with_info(rp_comm(v[0]), MPI_INFO_NULL, &nc);
		comm_set(v[1], nc);
		break;
	}
	case TRC_OP_CART_CREATE: {
		/* comm dims[] periods[] reorder newcomm */
		MPI_Comm nc;
		int nd = (int)v[1], *dims = ints(arr, nd), *per = ints(arr + nd, (int)v[2]);
		MPI_Cart_create(rp_comm(v[0]), nd, dims, per, (int)v[3], &nc);
		free(dims);
		free(per);
		comm_set(v[4], nc);
		break;
	}
	case TRC_OP_CART_SUB: {
		/* comm remain[] newcomm */
		MPI_Comm nc;
		int *keep = ints(arr, (int)v[1]);
		MPI_Cart_sub(rp_comm(v[0]), keep, &nc);
		free(keep);
		comm_set(v[2], nc);
		break;
	}
	default:
		if (!rp_coll(e))
			rp_die("trace holds a call this ptlreplay cannot make", "");
	}
	return 0;
}

/* The first call tells how MPI was initialized: op and thread level. */
static int first_op(const struct trc_flat *e, void *ctx)
{
	int *o = ctx;
	o[0] = e->op;
	o[1] = e->op == TRC_OP_INIT_THREAD ? (int)e->v[0] : MPI_THREAD_SINGLE;
	return 1;	/* stop after one */
}

static void usage(FILE *out)
{
	fprintf(out, "usage: mpiexec -n N ptlreplay [--compute] [--verbose] TRACE\n"
		     "Reissues the MPI calls recorded in TRACE; N must be the trace's job size.\n"
		     "--compute  also wait the recorded compute time before each call\n"
		     "See ptlreplay(1).\n");
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--compute"))
			R.compute = 1;
		else if (!strcmp(argv[i], "--verbose"))
			R.verbose = 1;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!path && argv[i][0] != '-')
			path = argv[i];
		else {
			usage(stderr);
			return 2;
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	struct trc_trace t;
	char err[512];
	if (trc_read_file(&t, path, err, sizeof err)) {
		fprintf(stderr, "ptlreplay: %s\n", err);
		return 2;
	}
	if (t.flags & TRC_FL_LOSSY)
		fprintf(stderr, "ptlreplay: note: %s was recorded in histogram mode; counts are approximate\n", path);
	int first[2] = { TRC_OP_INIT, MPI_THREAD_SINGLE };
	trc_expand(&t, t.all.n ? t.all.r[0] : 0, first_op, first);
	int provided;
	if (first[0] == TRC_OP_INIT_THREAD)
		MPI_Init_thread(&argc, &argv, first[1], &provided);
	else
		MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &R.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &R.size);
	if (R.size != t.nranks) {
		char s[96];
		snprintf(s, sizeof s, "%d ranks but this job has %d; start ptlreplay with -n %d", t.nranks, R.size,
			 t.nranks);
		if (R.rank == 0)
			fprintf(stderr, "ptlreplay: %s was recorded with %s\n", path, s);
		MPI_Finalize();
		return 2;
	}
	for (int i = 0; i < MAXCOMM; i++)
		R.comms[i].c = MPI_COMM_NULL;
	for (uint32_t i = 0; i < REQRING; i++)
		R.req[i] = MPI_REQUEST_NULL;
	for (int i = 0; i < 64; i++)
		R.bytes[i] = MPI_DATATYPE_NULL;
	R.user_op = MPI_OP_NULL;
	R.comms[0].c = MPI_COMM_WORLD;
	R.comms[1].c = MPI_COMM_SELF;
	static char bsend[1 << 22];
	MPI_Buffer_attach(bsend, sizeof bsend);
	double t0 = MPI_Wtime();
	trc_expand(&t, R.rank, replay, NULL);
	double t1 = MPI_Wtime();
	void *b;
	int bs;
	MPI_Buffer_detach(&b, &bs);
	if (R.verbose)
		fprintf(stderr, "ptlreplay: rank %d: %" PRIu64 " calls replayed in %.0f ms, %.0f ms of it recorded "
			"compute time\n", R.rank, R.events, (t1 - t0) * 1e3, (double)R.compute_ns / 1e6);
	trc_trace_free(&t);
	MPI_Finalize();
	return 0;
}
