/* ptlreplay_coll.c: replaying collectives, blocking and nonblocking alike.
 *
 * A nonblocking collective is recorded with its blocking form's fields
 * under the same names (tracer/trc_mpi.spec), so one reader takes the
 * fields of either by name, one sizing gives the buffers, and the call is
 * the blocking one or its I-form. A blocking call runs on scratch buffers;
 * a nonblocking one gets a block of its own (buffers and count arrays,
 * which MPI reads until completion), freed when its request completes. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "trc.h"
#include "ptlreplay.h"

/* One collective's recorded arguments, by field name. */
struct rp_args {
	int64_t count, scount, rcount, root;
	int64_t dt, sdt, rdt, op, comm;
	const int64_t *scounts, *rcounts;	/* NULL where none was recorded */
	int64_t nscounts, nrcounts;
	const int64_t *sdts, *rdts;		/* the w-forms' datatypes per block */
	int64_t nsdts, nrdts, inplace;
};

/* The blocking call each nonblocking one is the I-form of. */
static const struct {
	int iop, op;
} rp_iform[] = {
	{ TRC_OP_IBARRIER, TRC_OP_BARRIER },
	{ TRC_OP_IBCAST, TRC_OP_BCAST },
	{ TRC_OP_IREDUCE, TRC_OP_REDUCE },
	{ TRC_OP_IALLREDUCE, TRC_OP_ALLREDUCE },
	{ TRC_OP_IALLGATHER, TRC_OP_ALLGATHER },
	{ TRC_OP_IALLGATHERV, TRC_OP_ALLGATHERV },
	{ TRC_OP_IGATHER, TRC_OP_GATHER },
	{ TRC_OP_IGATHERV, TRC_OP_GATHERV },
	{ TRC_OP_ISCATTER, TRC_OP_SCATTER },
	{ TRC_OP_ISCATTERV, TRC_OP_SCATTERV },
	{ TRC_OP_IALLTOALL, TRC_OP_ALLTOALL },
	{ TRC_OP_IALLTOALLV, TRC_OP_ALLTOALLV },
	{ TRC_OP_IALLTOALLW, TRC_OP_ALLTOALLW },
	{ TRC_OP_IREDUCE_SCATTER, TRC_OP_REDUCE_SCATTER },
	{ TRC_OP_IREDUCE_SCATTER_BLOCK, TRC_OP_REDUCE_SCATTER_BLOCK },
	{ TRC_OP_ISCAN, TRC_OP_SCAN },
	{ TRC_OP_IEXSCAN, TRC_OP_EXSCAN },
};

static int rp_is_coll(int op)
{
	switch (op) {
	case TRC_OP_NEIGHBOR_ALLGATHER: case TRC_OP_NEIGHBOR_ALLGATHERV: case TRC_OP_NEIGHBOR_ALLTOALL:
	case TRC_OP_NEIGHBOR_ALLTOALLV:
	case TRC_OP_BARRIER: case TRC_OP_BCAST: case TRC_OP_REDUCE: case TRC_OP_ALLREDUCE:
	case TRC_OP_ALLGATHER: case TRC_OP_ALLGATHERV: case TRC_OP_GATHER: case TRC_OP_GATHERV:
	case TRC_OP_SCATTER: case TRC_OP_SCATTERV: case TRC_OP_ALLTOALL: case TRC_OP_ALLTOALLV:
	case TRC_OP_REDUCE_SCATTER: case TRC_OP_REDUCE_SCATTER_BLOCK: case TRC_OP_SCAN: case TRC_OP_EXSCAN:
		return 1;
	}
	return 0;
}

static void rp_read_args(const struct trc_flat *e, struct rp_args *a)
{
	const struct trc_opdesc *d = &trc_optab[e->op];
	uint32_t used = 0;
	memset(a, 0, sizeof *a);
	a->root = -1;
	for (unsigned i = 0; i < d->nf; i++) {
		const char *f = d->fnames[i];
		int64_t v = e->v[i];
		if (d->kinds[i] == TRC_K_INTS) {
			const int64_t *p = v > 0 && used + (uint64_t)v <= e->narr ? e->arr + used : NULL;
			used += p ? (uint32_t)v : 0;
			if (!strcmp(f, "scounts"))
				a->scounts = p, a->nscounts = p ? v : 0;
			else if (!strcmp(f, "rcounts"))
				a->rcounts = p, a->nrcounts = p ? v : 0;
			else if (!strcmp(f, "sdts"))
				a->sdts = p, a->nsdts = p ? v : 0;
			else if (!strcmp(f, "rdts"))
				a->rdts = p, a->nrdts = p ? v : 0;
			continue;
		}
		if (!strcmp(f, "count"))
			a->count = v;
		else if (!strcmp(f, "scount"))
			a->scount = v;
		else if (!strcmp(f, "rcount"))
			a->rcount = v;
		else if (!strcmp(f, "root"))
			a->root = v;
		else if (!strcmp(f, "dt"))
			a->dt = v;
		else if (!strcmp(f, "sdt"))
			a->sdt = v;
		else if (!strcmp(f, "rdt"))
			a->rdt = v;
		else if (!strcmp(f, "op"))
			a->op = v;
		else if (!strcmp(f, "comm"))
			a->comm = v;
		else if (!strcmp(f, "inplace"))
			a->inplace = v;
	}
}

static size_t rp_total(const int64_t *v, int64_t n)
{
	size_t t = 0;
	for (int64_t i = 0; v && i < n; i++)
		t += (size_t)(v[i] > 0 ? v[i] : 0);
	return t;
}

/* Counts from a recorded array (all zeros where none was recorded: a
 * non-root rank of Gatherv/Scatterv) and their packed displacements. */
static void rp_counts(const int64_t *v, int64_t nv, int n, int *c, int *d)
{
	int t = 0;
	for (int i = 0; i < n; i++) {
		c[i] = v && i < nv ? (int)v[i] : 0;
		d[i] = t;
		t += c[i] > 0 ? c[i] : 0;
	}
}

static size_t rp_round(size_t n)
{
	return (n + 1 + 15) & ~(size_t)15;	/* never empty, 16-byte aligned */
}

/* How many neighbours c's topology gives this rank, in and out. */
static void rp_nbrs(MPI_Comm c, int *nin, int *nout)
{
	int topo = MPI_UNDEFINED, r = 0, w = 0;
	*nin = *nout = 0;
	MPI_Topo_test(c, &topo);
	if (topo == MPI_CART) {
		MPI_Cartdim_get(c, nin);
		*nin *= 2;
		*nout = *nin;
	} else if (topo == MPI_GRAPH) {
		MPI_Comm_rank(c, &r);
		MPI_Graph_neighbors_count(c, r, nin);
		*nout = *nin;
	} else if (topo == MPI_DIST_GRAPH) {
		MPI_Dist_graph_neighbors_count(c, nin, nout, &w);
	}
}

/* One side of a w-form: block k is counts[k] of its own datatype, packed
 * one after another (the replay's own displacements). */
struct rp_wside {
	int *counts, *idispls;
	MPI_Aint *adispls;
	MPI_Datatype *types;
	size_t bytes;
};

static void rp_wside_fill(struct rp_wside *w, const int64_t *counts, const int64_t *dts, int64_t nrec, int n)
{
	size_t at = 0;
	for (int k = 0; k < n; k++) {
		size_t sz = 1;
		MPI_Datatype t = MPI_BYTE;
		int cnt = 0;
		if (k < nrec && counts && dts) {
			t = rp_dtype(dts[k], &sz);
			cnt = (int)counts[k];
		}
		if (t == MPI_DATATYPE_NULL)	/* a derived type of no bytes */
			t = MPI_BYTE, cnt = 0, sz = 1;
		w->types[k] = t;
		w->counts[k] = cnt;
		w->idispls[k] = (int)at;
		w->adispls[k] = (MPI_Aint)at;
		at += (size_t)cnt * sz;
	}
	w->bytes = at;
}

/* The arrays of one side of n blocks, carved from *at (rp_wside_room
 * bytes; MPI_Aint first, so each array keeps its alignment). */
static size_t rp_wside_room(int n)
{
	return (size_t)(n + 1) * (sizeof(MPI_Aint) + sizeof(MPI_Datatype) + 2 * sizeof(int));
}

static struct rp_wside rp_wside_at(int n, char **at)
{
	size_t m = (size_t)(n + 1);
	struct rp_wside w;
	w.adispls = (MPI_Aint *)(void *)*at;
	w.types = (MPI_Datatype *)(void *)(w.adispls + m);
	w.counts = (int *)(void *)(w.types + m);
	w.idispls = w.counts + m;
	w.bytes = 0;
	*at += rp_wside_room(n);
	return w;
}

/* MPI_Alltoallw, MPI_Ialltoallw (nb: its buffers and arrays live until the
 * request completes) and MPI_Neighbor_alltoallw. */
static void rp_wform(int op, const struct rp_args *a, MPI_Comm c, int nb)
{
	int n = 1, nin = 0, nout = 0;
	MPI_Comm_size(c, &n);
	if (op == TRC_OP_NEIGHBOR_ALLTOALLW)
		rp_nbrs(c, &nin, &nout);
	else
		nin = nout = n;
	/* the arrays give the buffers' sizes: filled aside, then moved to
	 * the front of one block with the buffers after them */
	size_t room = rp_wside_room(nout) + rp_wside_room(nin);
	char *aside = malloc(room), *at = aside;
	if (!aside)
		rp_die("out of memory", "");
	struct rp_wside s = rp_wside_at(nout, &at), r = rp_wside_at(nin, &at);
	rp_wside_fill(&s, a->scounts, a->sdts, a->nsdts, nout);
	rp_wside_fill(&r, a->rcounts, a->rdts, a->nrdts, nin);
	size_t sb = s.bytes, rb = r.bytes, total = room + rp_round(sb + 1) + rp_round(rb + 1);
	static char *arena; /* the blocking calls', reused */
	static size_t arena_cap;
	char *blk = nb ? malloc(total) : rp_scratch(&arena, &arena_cap, total);
	if (!blk)
		rp_die("out of memory", "");
	memcpy(blk, aside, room);
	free(aside);
	at = blk;
	s = rp_wside_at(nout, &at), r = rp_wside_at(nin, &at);
	s.bytes = sb, r.bytes = rb;
	char *sp = at, *rp = at + rp_round(sb + 1);
	MPI_Request rq = MPI_REQUEST_NULL;
	if (op == TRC_OP_ALLTOALLW && nb)
		MPI_Ialltoallw(a->inplace ? MPI_IN_PLACE : sp, s.counts, s.idispls, s.types, rp, r.counts, r.idispls,
			       r.types, c, &rq);
	else if (op == TRC_OP_ALLTOALLW)
		MPI_Alltoallw(a->inplace ? MPI_IN_PLACE : sp, s.counts, s.idispls, s.types, rp, r.counts, r.idispls,
			      r.types, c);
	else
		MPI_Neighbor_alltoallw(sp, s.counts, s.adispls, s.types, rp, r.counts, r.adispls, r.types, c);
	if (nb)
		rp_req_new(rq, blk);
}

int rp_coll(const struct trc_flat *e)
{
	int op = e->op, nb = 0;
	for (size_t i = 0; i < sizeof rp_iform / sizeof rp_iform[0]; i++)
		if (rp_iform[i].iop == op) {
			op = rp_iform[i].op;
			nb = 1;
		}
	if (op == TRC_OP_ALLTOALLW || op == TRC_OP_NEIGHBOR_ALLTOALLW) {
		struct rp_args w;
		rp_read_args(e, &w);
		rp_wform(op, &w, rp_comm(w.comm), nb);
		return 1;
	}
	if (!rp_is_coll(op))
		return 0;

	struct rp_args a;
	rp_read_args(e, &a);
	MPI_Comm c = rp_comm(a.comm);
	int n = 1;
	MPI_Comm_size(c, &n);
	size_t sz = 0, ssz = 0, rsz = 0;
	MPI_Datatype dt = rp_dtype(a.dt, &sz), sdt = rp_dtype(a.sdt, &ssz), rdt = rp_dtype(a.rdt, &rsz);
	/* a neighbourhood collective's blocks: one per neighbour of the
	 * replay's own topology */
	int nin = 0, nout = 0;
	if (op == TRC_OP_NEIGHBOR_ALLGATHER || op == TRC_OP_NEIGHBOR_ALLGATHERV || op == TRC_OP_NEIGHBOR_ALLTOALL ||
	    op == TRC_OP_NEIGHBOR_ALLTOALLV)
		rp_nbrs(c, &nin, &nout);
	/* counts and displacements for every rank of the communicator, or
	 * neighbour (zeros where the record has none: a non-root rank of
	 * Gatherv/Scatterv) */
	int m = n > nin ? (n > nout ? n : nout) : (nin > nout ? nin : nout);
	size_t ints = 4 * (size_t)m * sizeof(int), sbytes = 0, rbytes = 0, nn = (size_t)n;
	size_t stot = rp_total(a.scounts, a.nscounts), rtot = rp_total(a.rcounts, a.nrcounts);
	switch (op) {
	case TRC_OP_BCAST:
		rbytes = (size_t)a.count * sz;
		break;
	case TRC_OP_REDUCE:
	case TRC_OP_ALLREDUCE:
	case TRC_OP_SCAN:
	case TRC_OP_EXSCAN:
		sbytes = rbytes = (size_t)a.count * sz;
		break;
	case TRC_OP_ALLGATHER:
	case TRC_OP_ALLTOALL:
	case TRC_OP_GATHER:
	case TRC_OP_SCATTER:
		sbytes = (size_t)a.scount * ssz * nn;
		rbytes = (size_t)a.rcount * rsz * nn;
		break;
	case TRC_OP_ALLGATHERV:
	case TRC_OP_GATHERV:
		sbytes = (size_t)a.scount * ssz;
		rbytes = rtot * rsz;
		break;
	case TRC_OP_SCATTERV:
		sbytes = stot * ssz;
		rbytes = (size_t)a.rcount * rsz;
		break;
	case TRC_OP_ALLTOALLV:
		sbytes = stot * ssz;
		rbytes = rtot * rsz;
		break;
	case TRC_OP_REDUCE_SCATTER:
		sbytes = rbytes = rtot * sz;
		break;
	case TRC_OP_REDUCE_SCATTER_BLOCK:
		sbytes = (size_t)a.rcount * sz * nn;
		rbytes = (size_t)a.rcount * sz;
		break;
	case TRC_OP_NEIGHBOR_ALLGATHER:
	case TRC_OP_NEIGHBOR_ALLTOALL:
		sbytes = (size_t)a.scount * ssz * (op == TRC_OP_NEIGHBOR_ALLTOALL ? (size_t)nout : 1);
		rbytes = (size_t)a.rcount * rsz * (size_t)nin;
		break;
	case TRC_OP_NEIGHBOR_ALLGATHERV:
		sbytes = (size_t)a.scount * ssz;
		rbytes = rtot * rsz;
		break;
	case TRC_OP_NEIGHBOR_ALLTOALLV:
		sbytes = stot * ssz;
		rbytes = rtot * rsz;
		break;
	}

	/* then one place for buffers and count arrays */
	size_t total = rp_round(sbytes) + rp_round(rbytes) + ints;
	static char *arena;	/* blocking calls' buffers, reused */
	static size_t arena_cap;
	char *blk = nb ? calloc(1, total) : rp_scratch(&arena, &arena_cap, total);
	if (!blk)
		rp_die("out of memory for a collective's buffers", "");
	void *s = blk, *r = blk + rp_round(sbytes);
	int *sc = (int *)(blk + rp_round(sbytes) + rp_round(rbytes)), *sd = sc + m, *rc = sd + m, *rd = rc + m;
	rp_counts(a.scounts, a.nscounts, m, sc, sd);
	rp_counts(a.rcounts, a.nrcounts, m, rc, rd);

	MPI_Request rq = MPI_REQUEST_NULL;
	MPI_Op o = op == TRC_OP_BCAST || op == TRC_OP_BARRIER ? MPI_OP_NULL : rp_mop(a.op);
	int root = (int)a.root;
#define RP_CALL(blocking, iform, ...) ((void)(nb ? iform(__VA_ARGS__, &rq) : blocking(__VA_ARGS__)))
	switch (op) {
	case TRC_OP_BARRIER:
		(void)(nb ? MPI_Ibarrier(c, &rq) : MPI_Barrier(c));
		break;
	case TRC_OP_BCAST:
		RP_CALL(MPI_Bcast, MPI_Ibcast, r, (int)a.count, dt, root, c);
		break;
	case TRC_OP_REDUCE:
		RP_CALL(MPI_Reduce, MPI_Ireduce, s, r, (int)a.count, dt, o, root, c);
		break;
	case TRC_OP_ALLREDUCE:
		RP_CALL(MPI_Allreduce, MPI_Iallreduce, s, r, (int)a.count, dt, o, c);
		break;
	case TRC_OP_SCAN:
		RP_CALL(MPI_Scan, MPI_Iscan, s, r, (int)a.count, dt, o, c);
		break;
	case TRC_OP_EXSCAN:
		RP_CALL(MPI_Exscan, MPI_Iexscan, s, r, (int)a.count, dt, o, c);
		break;
	case TRC_OP_ALLGATHER:
		RP_CALL(MPI_Allgather, MPI_Iallgather, s, (int)a.scount, sdt, r, (int)a.rcount, rdt, c);
		break;
	case TRC_OP_ALLTOALL:
		RP_CALL(MPI_Alltoall, MPI_Ialltoall, s, (int)a.scount, sdt, r, (int)a.rcount, rdt, c);
		break;
	case TRC_OP_GATHER:
		RP_CALL(MPI_Gather, MPI_Igather, s, (int)a.scount, sdt, r, (int)a.rcount, rdt, root, c);
		break;
	case TRC_OP_SCATTER:
		RP_CALL(MPI_Scatter, MPI_Iscatter, s, (int)a.scount, sdt, r, (int)a.rcount, rdt, root, c);
		break;
	case TRC_OP_ALLGATHERV:
		RP_CALL(MPI_Allgatherv, MPI_Iallgatherv, s, (int)a.scount, sdt, r, rc, rd, rdt, c);
		break;
	case TRC_OP_GATHERV:
		RP_CALL(MPI_Gatherv, MPI_Igatherv, s, (int)a.scount, sdt, r, rc, rd, rdt, root, c);
		break;
	case TRC_OP_SCATTERV:
		RP_CALL(MPI_Scatterv, MPI_Iscatterv, s, sc, sd, sdt, r, (int)a.rcount, rdt, root, c);
		break;
	case TRC_OP_ALLTOALLV:
		RP_CALL(MPI_Alltoallv, MPI_Ialltoallv, s, sc, sd, sdt, r, rc, rd, rdt, c);
		break;
	case TRC_OP_REDUCE_SCATTER:
		RP_CALL(MPI_Reduce_scatter, MPI_Ireduce_scatter, s, r, rc, dt, o, c);
		break;
	case TRC_OP_REDUCE_SCATTER_BLOCK:
		RP_CALL(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, s, r, (int)a.rcount, dt, o, c);
		break;
	case TRC_OP_NEIGHBOR_ALLGATHER:
		MPI_Neighbor_allgather(s, (int)a.scount, sdt, r, (int)a.rcount, rdt, c);
		break;
	case TRC_OP_NEIGHBOR_ALLGATHERV:
		MPI_Neighbor_allgatherv(s, (int)a.scount, sdt, r, rc, rd, rdt, c);
		break;
	case TRC_OP_NEIGHBOR_ALLTOALL:
		MPI_Neighbor_alltoall(s, (int)a.scount, sdt, r, (int)a.rcount, rdt, c);
		break;
	case TRC_OP_NEIGHBOR_ALLTOALLV:
		MPI_Neighbor_alltoallv(s, sc, sd, sdt, r, rc, rd, rdt, c);
		break;
	}
#undef RP_CALL
	if (nb)
		rp_req_new(rq, blk);
	return 1;
}
