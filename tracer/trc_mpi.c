/* trc_mpi.c: the recording runtime behind the hooks, and the merge at
 * MPI_Finalize. The only file of the tracer core that calls MPI (always
 * through PMPI_*, on a private duplicate of MPI_COMM_WORLD). */
#include "config.h"

#include <errno.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trc_hooks.h"

struct trc_comm {
	MPI_Comm h;
	int id, size, myrank;
	int *world;		/* world rank of each rank in the comm */
};

static struct {
	int started, finished;
	int rank, size;
	struct trc_config cfg;
	struct trc_trace t;
	struct trc_reqtab rq;
	struct trc_flatw flat;
	int flat_on;
	uint64_t last_end;
	struct trc_comm *comms;
	int ncomms, capcomms, next_id;
	MPI_Comm priv;
} S;

/* recording (trc_hooks.h: the wrappers look before anything else) */
int trc_on;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void say(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "ptl tracer: rank %d: ", S.rank);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
}

/* ---- communicators ---- */

static struct trc_comm *comm_find(MPI_Comm h)
{
	for (int i = 0; i < S.ncomms; i++)
		if (S.comms[i].h == h)
			return &S.comms[i];
	return NULL;
}

static struct trc_comm *comm_add(MPI_Comm h, int id)
{
	if (S.ncomms == S.capcomms) {
		int cap = S.capcomms ? 2 * S.capcomms : 8;
		struct trc_comm *c = realloc(S.comms, (size_t)cap * sizeof *c);
		if (!c)
			return NULL;
		S.comms = c;
		S.capcomms = cap;
	}
	struct trc_comm *c = &S.comms[S.ncomms];
	memset(c, 0, sizeof *c);
	c->h = h;
	c->id = id;
	int inter = 0;
	PMPI_Comm_test_inter(h, &inter);
	PMPI_Comm_size(h, &c->size);
	PMPI_Comm_rank(h, &c->myrank);
	if (!inter && h != MPI_COMM_WORLD) {
		MPI_Group g, wg;
		int *in = malloc((size_t)c->size * sizeof *in);
		c->world = malloc((size_t)c->size * sizeof *c->world);
		if (in && c->world) {
			PMPI_Comm_group(h, &g);
			PMPI_Comm_group(MPI_COMM_WORLD, &wg);
			for (int i = 0; i < c->size; i++)
				in[i] = i;
			PMPI_Group_translate_ranks(g, c->size, in, wg, c->world);
			PMPI_Group_free(&g);
			PMPI_Group_free(&wg);
		} else {
			free(c->world);
			c->world = NULL;
		}
		free(in);
	}
	S.ncomms++;
	return c;
}

static struct trc_comm *comm_get(MPI_Comm h)
{
	struct trc_comm *c = comm_find(h);
	if (!c)	/* made by a call the tracer does not wrap (e.g. Cart_create) */
		c = comm_add(h, S.next_id++);
	return c;
}

int trc_comm_size(MPI_Comm comm)
{
	int n = 0;
	if (comm == MPI_COMM_WORLD)
		return S.size;
	PMPI_Comm_size(comm, &n);
	return n;
}

int trc_at_root(int root, MPI_Comm comm)
{
	int r = -1;
	if (comm == MPI_COMM_WORLD)
		return root == S.rank;
	PMPI_Comm_rank(comm, &r);
	return root == r;
}

int trc_cart_ndims(MPI_Comm comm)
{
	int n = 0, topo = MPI_UNDEFINED;
	if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS || topo != MPI_CART || PMPI_Cartdim_get(comm, &n) != MPI_SUCCESS)
		return 0;
	return n;
}

int trc_nbrs(MPI_Comm comm, int out)
{
	int topo = MPI_UNDEFINED, n = 0, in = 0, o = 0, w = 0, r = 0;
	if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS)
		return 0;
	if (topo == MPI_CART)
		return 2 * trc_cart_ndims(comm);
	if (topo == MPI_GRAPH && PMPI_Comm_rank(comm, &r) == MPI_SUCCESS &&
	    PMPI_Graph_neighbors_count(comm, r, &n) == MPI_SUCCESS)
		return n;
	if (topo == MPI_DIST_GRAPH && PMPI_Dist_graph_neighbors_count(comm, &in, &o, &w) == MPI_SUCCESS)
		return out ? o : in;
	return 0;
}

int trc_weights(const int *w)
{
	return w == MPI_UNWEIGHTED ? 0 : w == MPI_WEIGHTS_EMPTY ? 2 : 1;
}

int trc_sum(int n, const int *v)
{
	int t = 0;
	for (int i = 0; v && i < n; i++)
		t += v[i];
	return t;
}

/* ---- start and finish ---- */

static void check_writable(const char *path)
{
	char dir[4200];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	else
		snprintf(dir, sizeof dir, ".");
	if (access(dir, W_OK)) {
		fprintf(stderr, "ptl tracer: rank %d: cannot write the trace to %s (directory %s: %s); "
			"the program runs on, but set PTL_TRACE_OUT or line 4 of record.in to a writable "
			"path to keep its trace\n", S.rank, path, dir, strerror(errno));
	}
}

void trc_start(void)
{
	char msgs[4096];
	int init = 0;
	PMPI_Initialized(&init);
	if (S.started || !init)
		return;
	S.started = 1;
	PMPI_Comm_rank(MPI_COMM_WORLD, &S.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &S.size);
	int bad = trc_config_load(&S.cfg, access("record.in", F_OK) ? NULL : "record.in", msgs, sizeof msgs);
	if (bad && S.rank == 0)
		for (char *l = strtok(msgs, "\n"); l; l = strtok(NULL, "\n"))
			fprintf(stderr, "ptl tracer: %s\n", l);
	trc_trace_init(&S.t, S.cfg.level, S.rank, S.size, S.cfg.window);
	S.t.histo = S.cfg.histo;
	if (trc_reqtab_init(&S.rq, (uint64_t)S.cfg.reqbuf)) {
		say("cannot allocate the request-offset buffer of %s entries; %s", "PTL_TRACE_REQBUF", "not recording");
		return;
	}
	comm_add(MPI_COMM_WORLD, 0);
	comm_add(MPI_COMM_SELF, 1);
	S.next_id = 2;
	PMPI_Comm_dup(MPI_COMM_WORLD, &S.priv);
	if (S.rank == 0)	/* per-rank files go to the same directory */
		check_writable(S.cfg.out);
	int level = MPI_THREAD_SINGLE;
	PMPI_Query_thread(&level);
	if (level == MPI_THREAD_MULTIPLE && S.rank == 0)
		fprintf(stderr, "ptl tracer: MPI_THREAD_MULTIPLE: the tracer is not thread-safe; its trace is "
			"right only if one thread at a time calls MPI\n");
	if (S.cfg.flat[0]) {
		char p[4200];
		snprintf(p, sizeof p, "%s.%d", S.cfg.flat, S.rank);
		if (trc_flatw_open(&S.flat, p, S.rank, S.size))
			say("cannot write the flat trace %s: %s", p, strerror(errno));
		else
			S.flat_on = 1;
	}
	S.last_end = now_ns();
	trc_on = 1;
}

static void write_out(const struct trc_trace *t, const char *path)
{
	char err[512];
	if (trc_write_file(t, S.cfg.fmt, path, err, sizeof err))
		say("%s; the trace of this run is lost%s", err, "");
}

/* Balanced binary tree over ranks: children 2r+1 and 2r+2. */
static void merge_tree(void)
{
	int kids[2] = { 2 * S.rank + 1, 2 * S.rank + 2 };
	char err[256];
	for (int k = 0; k < 2; k++) {
		if (kids[k] >= S.size)
			continue;
		uint64_t len;
		PMPI_Recv(&len, 1, MPI_UINT64_T, kids[k], 1, S.priv, MPI_STATUS_IGNORE);
		uint8_t *p = malloc(len ? len : 1);
		if (!p) {
			say("out of memory receiving a trace of %s bytes%s", "many", "");
			PMPI_Abort(MPI_COMM_WORLD, 1);
		}
		for (uint64_t off = 0; off < len;) {
			int chunk = len - off > (1u << 30) ? 1 << 30 : (int)(len - off);
			PMPI_Recv(p + off, chunk, MPI_BYTE, kids[k], 2, S.priv, MPI_STATUS_IGNORE);
			off += (uint64_t)chunk;
		}
		struct trc_trace child;
		if (trc_deserialize(&child, p, len, err, sizeof err)) {
			say("trace from a child rank is unreadable: %s%s", err, "");
		} else {
			child.histo = S.cfg.histo;
			S.t.histo = S.cfg.histo;
			if (trc_merge(&S.t, &child))
				say("out of memory merging traces%s%s", "", "");
		}
		free(p);
	}
	if (S.rank == 0)
		return;
	struct trc_buf b = { 0 };
	trc_serialize(&S.t, &b);
	uint64_t len = b.oom ? 0 : b.len;
	int parent = (S.rank - 1) / 2;
	PMPI_Send(&len, 1, MPI_UINT64_T, parent, 1, S.priv);
	for (uint64_t off = 0; off < len;) {
		int chunk = len - off > (1u << 30) ? 1 << 30 : (int)(len - off);
		PMPI_Send(b.p + off, chunk, MPI_BYTE, parent, 2, S.priv);
		off += (uint64_t)chunk;
	}
	trc_buf_free(&b);
}

void trc_finish(void)
{
	if (!S.started || S.finished)
		return;
	S.finished = 1;
	trc_on = 0;
	if (S.flat_on && trc_flatw_close(&S.flat))
		say("writing the flat trace failed (%s)%s", strerror(errno), "");
	S.flat_on = 0;
	if (S.cfg.level == TRC_LEVEL_GLOB) {
		merge_tree();
		if (S.rank == 0)
			write_out(&S.t, S.cfg.out);
	} else {
		char p[4200];
		snprintf(p, sizeof p, "%s.%d", S.cfg.out, S.rank);
		write_out(&S.t, p);
	}
	trc_trace_free(&S.t);
	trc_reqtab_free(&S.rq);
	PMPI_Comm_free(&S.priv);
	for (int i = 0; i < S.ncomms; i++)
		free(S.comms[i].world);
	free(S.comms);
	S.comms = NULL;
	S.ncomms = 0;
}

void trc_abort(void)
{
	if (S.flat_on)
		trc_flatw_close(&S.flat);
	S.flat_on = 0;
	trc_on = 0;
}

/* ---- per call ---- */

int trc_begin(struct trc_call *c, int op, void *caller)
{
	if (!trc_on)
		return 0;
	c->t0 = now_ns();
	memset(&c->ev, 0, sizeof c->ev);
	c->ev.op = (uint16_t)op;
	c->nf = 0;
	c->acap = TRC_INLINE_ARR;
	c->ev.arr = c->abuf;
	c->seq = c->sbuf;
	c->scap = TRC_INLINE_ARR;
	c->nseq = 0;
	c->nosq = 0;
	if (S.cfg.depth <= 1) {
		c->ev.sig = trc_sig_of(&caller, 1);
	} else {
		void *pcs[32];
		int n = backtrace(pcs, 32), i = 0;
		while (i < n && pcs[i] != caller)
			i++;
		if (i == n)
			c->ev.sig = trc_sig_of(&caller, 1);
		else
			c->ev.sig = trc_sig_of(pcs + i, n - i < S.cfg.depth ? n - i : S.cfg.depth);
	}
	return 1;
}

static void set(struct trc_call *c, int64_t v)
{
	if (c->nf < TRC_MAXF)
		c->ev.f[c->nf++].v = v;
}

void trc_f_int(struct trc_call *c, int v)
{
	set(c, v);
}

void trc_f_index(struct trc_call *c, int idx)
{
	set(c, idx == MPI_UNDEFINED ? -1 : idx);
}

void trc_f_tag(struct trc_call *c, int tag)
{
	set(c, tag == MPI_ANY_TAG ? TRC_ANY_TAG : tag);
}

void trc_f_root(struct trc_call *c, int root)
{
	set(c, root);
}

static int64_t dt_code(MPI_Datatype dt)
{
	static const struct {
		MPI_Datatype dt;
		int code;
	} tab[] = {
		{ MPI_DOUBLE, TRC_DT_DOUBLE }, { MPI_INT, TRC_DT_INT }, { MPI_BYTE, TRC_DT_BYTE },
		{ MPI_CHAR, TRC_DT_CHAR }, { MPI_FLOAT, TRC_DT_FLOAT }, { MPI_LONG, TRC_DT_LONG },
		{ MPI_LONG_LONG, TRC_DT_LONG_LONG }, { MPI_SHORT, TRC_DT_SHORT },
		{ MPI_UNSIGNED, TRC_DT_UNSIGNED }, { MPI_UNSIGNED_LONG, TRC_DT_UNSIGNED_LONG },
		{ MPI_LONG_DOUBLE, TRC_DT_LONG_DOUBLE }, { MPI_INT8_T, TRC_DT_INT8 },
		{ MPI_INT16_T, TRC_DT_INT16 }, { MPI_INT32_T, TRC_DT_INT32 }, { MPI_INT64_T, TRC_DT_INT64 },
		{ MPI_UINT8_T, TRC_DT_UINT8 }, { MPI_UINT16_T, TRC_DT_UINT16 },
		{ MPI_UINT32_T, TRC_DT_UINT32 }, { MPI_UINT64_T, TRC_DT_UINT64 },
		{ MPI_DOUBLE_INT, TRC_DT_DOUBLE_INT }, { MPI_2INT, TRC_DT_2INT }, { MPI_PACKED, TRC_DT_PACKED },
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (tab[i].dt == dt)
			return tab[i].code;
	return TRC_DT_DERIVED;
}

int64_t trc_dtype_value(MPI_Datatype dt)
{
	int size = 0;
	if (dt == MPI_DATATYPE_NULL)
		return 0;
	PMPI_Type_size(dt, &size);
	return (dt_code(dt) << 32) | (uint32_t)size;
}

void trc_f_dtype(struct trc_call *c, MPI_Datatype dt)
{
	set(c, trc_dtype_value(dt));
}

void trc_f_dtype_value(struct trc_call *c, int64_t v)
{
	set(c, v);
}

void trc_f_op(struct trc_call *c, MPI_Op op)
{
	static const struct {
		MPI_Op op;
		int code;
	} tab[] = {
		{ MPI_SUM, TRC_MOP_SUM }, { MPI_MAX, TRC_MOP_MAX }, { MPI_MIN, TRC_MOP_MIN },
		{ MPI_PROD, TRC_MOP_PROD }, { MPI_LAND, TRC_MOP_LAND }, { MPI_LOR, TRC_MOP_LOR },
		{ MPI_LXOR, TRC_MOP_LXOR }, { MPI_BAND, TRC_MOP_BAND }, { MPI_BOR, TRC_MOP_BOR },
		{ MPI_BXOR, TRC_MOP_BXOR }, { MPI_MAXLOC, TRC_MOP_MAXLOC }, { MPI_MINLOC, TRC_MOP_MINLOC },
		{ MPI_REPLACE, TRC_MOP_REPLACE }, { MPI_OP_NULL, TRC_MOP_NULL },
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (tab[i].op == op) {
			set(c, tab[i].code);
			return;
		}
	set(c, TRC_MOP_USER);
}

void trc_f_peer(struct trc_call *c, int peer, MPI_Comm comm)
{
	if (peer == MPI_ANY_SOURCE)
		set(c, TRC_ANY_SOURCE);
	else if (peer == MPI_PROC_NULL)
		set(c, TRC_PROC_NULL);
	else if (comm == MPI_COMM_WORLD)
		set(c, peer);
	else {
		struct trc_comm *k = comm_get(comm);
		set(c, k && k->world && peer >= 0 && peer < k->size ? k->world[peer] : peer);
	}
}

void trc_f_comm(struct trc_call *c, MPI_Comm comm)
{
	if (comm == MPI_COMM_WORLD)
		set(c, 0);
	else if (comm == MPI_COMM_NULL)
		set(c, TRC_COMM_NULL);
	else {
		struct trc_comm *k = comm_get(comm);
		set(c, k ? k->id : TRC_COMM_NULL);
	}
}

void trc_f_newcomm(struct trc_call *c, MPI_Comm comm)
{
	if (comm == MPI_COMM_NULL) {
		set(c, TRC_COMM_NULL);
		return;
	}
	struct trc_comm *k = comm_add(comm, S.next_id++);
	set(c, k ? k->id : TRC_COMM_NULL);
}

void trc_a_forget_comm(struct trc_call *c, MPI_Comm comm)
{
	(void)c;
	struct trc_comm *k = comm_find(comm);
	if (!k || k->id < 2)
		return;
	free(k->world);
	*k = S.comms[--S.ncomms];
}

static int64_t *arr_grow(struct trc_call *c, uint32_t n)
{
	if (c->ev.narr + n > c->acap) {
		uint32_t cap = c->acap * 2;
		while (cap < c->ev.narr + n)
			cap *= 2;
		int64_t *a = malloc(cap * sizeof *a);
		if (!a)
			return NULL;
		memcpy(a, c->ev.arr, c->ev.narr * sizeof *a);
		if (c->ev.arr != c->abuf)
			free(c->ev.arr);
		c->ev.arr = a;
		c->acap = cap;
	}
	int64_t *p = c->ev.arr + c->ev.narr;
	c->ev.narr += n;
	return p;
}

void trc_f_ints(struct trc_call *c, int n, const int *v)
{
	if (n <= 0 || !v) {
		set(c, 0);
		return;
	}
	int64_t *a = arr_grow(c, (uint32_t)n);
	if (!a) {
		set(c, 0);
		return;
	}
	for (int i = 0; i < n; i++)
		a[i] = v[i];
	set(c, n);
}

void trc_f_dtypes(struct trc_call *c, int n, const MPI_Datatype *v)
{
	int64_t *a = n > 0 && v ? arr_grow(c, (uint32_t)n) : NULL;
	if (!a) {
		set(c, 0);
		return;
	}
	for (int i = 0; i < n; i++)
		a[i] = trc_dtype_value(v[i]);
	set(c, n);
}

void trc_f_group(struct trc_call *c, MPI_Group g)
{
	int n = 0;
	MPI_Group wg;
	if (g == MPI_GROUP_NULL || PMPI_Group_size(g, &n) || n <= 0) {
		set(c, 0);
		return;
	}
	int *in = malloc(2 * (size_t)n * sizeof *in);
	if (!in) {
		set(c, 0);
		return;
	}
	for (int i = 0; i < n; i++)
		in[i] = i;
	PMPI_Comm_group(MPI_COMM_WORLD, &wg);
	PMPI_Group_translate_ranks(g, n, in, wg, in + n);
	PMPI_Group_free(&wg);
	trc_f_ints(c, n, in + n);
	free(in);
}

static uint64_t handle_of(MPI_Request r)
{
	uint64_t h = 0;
	memcpy(&h, &r, sizeof r < sizeof h ? sizeof r : sizeof h);
	return h;
}

static void overflowed(void)
{
	char cap[32];
	snprintf(cap, sizeof cap, "%ld", S.cfg.reqbuf);
	say("request-offset buffer overflow: more than %s requests outstanding; raise PTL_TRACE_REQBUF "
	    "(or line 3 of record.in). Recording stops on this rank; the program runs on and its trace "
	    "is marked %s", cap, "INCOMPLETE");
	S.t.flags |= TRC_FL_INCOMPLETE;
	trc_on = 0;
}

static int64_t req_lookup(struct trc_call *c, MPI_Request r)
{
	uint64_t seq = 0;
	if (r == MPI_REQUEST_NULL)
		return TRC_REQ_NULL;
	int64_t off = trc_reqtab_lookup(&S.rq, handle_of(r), &seq);
	if (c->nseq == c->scap) {	/* large Waitall: grow the claim list */
		uint64_t *s = malloc(2 * c->scap * sizeof *s);
		if (!s)
			return off;
		memcpy(s, c->seq, c->nseq * sizeof *s);
		if (c->seq != c->sbuf)
			free(c->seq);
		c->seq = s;
		c->scap *= 2;
	}
	c->seq[c->nseq++] = off == TRC_REQ_NULL ? UINT64_MAX : seq;
	return off;
}

void trc_f_req(struct trc_call *c, MPI_Request r)
{
	set(c, req_lookup(c, r));
}

void trc_f_reqs(struct trc_call *c, int n, const MPI_Request *r)
{
	if (n <= 0) {
		set(c, 0);
		return;
	}
	int64_t *a = arr_grow(c, (uint32_t)n);
	if (!a) {
		set(c, 0);
		return;
	}
	for (int i = 0; i < n; i++)
		a[i] = r[i] == MPI_REQUEST_NULL ? TRC_REQ_NULL : req_lookup(c, r[i]);
	set(c, n);
}

void trc_a_newreq(struct trc_call *c, MPI_Request r)
{
	(void)c;
	if (trc_on && trc_reqtab_add(&S.rq, handle_of(r)))
		overflowed();
}

/* Index i of the request array to its claim (NULL entries have none). */
static uint64_t *claim_of(struct trc_call *c, int i)
{
	const int64_t *a = c->ev.arr + (c->ev.narr - (c->nf ? (uint32_t)c->ev.f[c->nf - 1].v : 0));
	int k = 0;
	for (int j = 0; j < i; j++)
		if (a[j] != TRC_REQ_NULL)
			k++;
	return a[i] == TRC_REQ_NULL || (uint32_t)k >= c->nseq ? NULL : &c->seq[k];
}

void trc_a_retire_all(struct trc_call *c)
{
	for (uint32_t i = 0; i < c->nseq; i++)
		if (c->seq[i] != UINT64_MAX)
			trc_reqtab_retire(&S.rq, c->seq[i]);
}

void trc_a_keep_all(struct trc_call *c)
{
	for (uint32_t i = 0; i < c->nseq; i++)
		if (c->seq[i] != UINT64_MAX)
			trc_reqtab_unclaim(&S.rq, c->seq[i]);
}

void trc_a_retire_if(struct trc_call *c, int flag)
{
	if (flag)
		trc_a_retire_all(c);
	else
		trc_a_keep_all(c);
}

void trc_a_retire_index(struct trc_call *c, int idx)
{
	uint64_t keep = UINT64_MAX;
	if (idx >= 0 && idx != MPI_UNDEFINED) {
		uint64_t *s = claim_of(c, idx);
		if (s && *s != UINT64_MAX) {
			keep = *s;
			trc_reqtab_retire(&S.rq, *s);
		}
	}
	for (uint32_t i = 0; i < c->nseq; i++)
		if (c->seq[i] != UINT64_MAX && c->seq[i] != keep)
			trc_reqtab_unclaim(&S.rq, c->seq[i]);
}

void trc_a_retire_some(struct trc_call *c, int n, const int *idx)
{
	if (n != MPI_UNDEFINED)
		for (int i = 0; i < n; i++) {
			uint64_t *s = claim_of(c, idx[i]);
			if (s && *s != UINT64_MAX) {
				trc_reqtab_retire(&S.rq, *s);
				*s = UINT64_MAX;
			}
		}
	trc_a_keep_all(c);
}

void trc_end(struct trc_call *c)
{
	if (trc_on || c->ev.op == TRC_OP_FINALIZE || c->ev.op == TRC_OP_ABORT) {
		trc_tstat_add(&c->ev.t, c->t0 - S.last_end);
		trc_ev_setpeers(&c->ev, S.rank, S.size);
		if (S.flat_on) {
			struct trc_flat f;
			memset(&f, 0, sizeof f);
			f.op = c->ev.op;
			f.sig = c->ev.sig;
			for (unsigned i = 0; i < c->nf; i++)
				f.v[i] = c->ev.f[i].v;
			f.narr = c->ev.narr;
			f.arr = c->ev.arr;
			f.tns = c->t0 - S.last_end;
			trc_flatw_put(&S.flat, &f);
		}
		if (S.started && !S.finished && trc_append(&S.t, &c->ev)) {
			say("out of memory recording; recording stops on this rank%s%s", "", "");
			S.t.flags |= TRC_FL_INCOMPLETE;
			trc_on = 0;
		}
	}
	if (c->ev.arr != c->abuf)
		free(c->ev.arr);
	if (c->seq != c->sbuf)
		free(c->seq);
	c->ev.arr = NULL;
	S.last_end = now_ns();
}
