/* coll_engine.c: one rank's executor, shared by every transport, and the
 * element-wise reductions. The engine keeps the schedule's order; the
 * transport only moves bytes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

size_t coll_dtype_size(enum coll_dtype dt)
{
	switch (dt) {
	case COLL_INT32: return 4;
	case COLL_INT64: return 8;
	case COLL_FLOAT: return sizeof(float);
	case COLL_DOUBLE: return sizeof(double);
	default: return 0;
	}
}

const char *coll_dtype_name(enum coll_dtype dt)
{
	static const char *const names[] = { "int32", "int64", "float", "double" };
	return (unsigned)dt < COLL_DTYPE_COUNT ? names[dt] : "?";
}

const char *coll_redop_name(enum coll_redop op)
{
	static const char *const names[] = { "sum", "max", "min" };
	return (unsigned)op < COLL_REDOP_COUNT ? names[op] : "?";
}

/* Loads and stores go through memcpy: a scratch slot's offset need not be
 * aligned for the type, and this keeps the compiler honest about aliasing.
 * Signed integers add as unsigned so overflow wraps instead of being
 * undefined. A floating sum whose first operand (a, the lower ranks'
 * part) is a NaN is that NaN (COLL_NAN_FIRST, the form of mpi_impl.h's
 * MPI_OP_NAN_FIRST; ptl's MPI takes the other part first, combine()'s
 * b OP a): of two NaNs x86 keeps the one the compiler made the first
 * source, and it may order x + y either way; with the rule the bits
 * follow the operands' order, which every schedule fixes. The sum is
 * computed before KEEP chooses (mpi_impl.h says why). */
#define COLL_NAN_FIRST(a, r) (isnan(a) ? (a) : (r))
#define COLL_ANY(a, r) (r)
#define COLL_REDUCE_LOOP(T, ADD, KEEP)                                         \
	do {                                                                   \
		for (size_t i = 0; i < cnt; i++) {                             \
			T x, y, r;                                             \
			memcpy(&x, pa + i * sizeof(T), sizeof(T));             \
			memcpy(&y, pb + i * sizeof(T), sizeof(T));             \
			switch (op) {                                          \
			case COLL_SUM: r = ADD; x = KEEP(x, r); break;         \
			case COLL_MAX: x = x < y ? y : x; break;               \
			case COLL_MIN: x = y < x ? y : x; break;               \
			default: break;                                        \
			}                                                      \
			memcpy(d + i * sizeof(T), &x, sizeof(T));              \
		}                                                              \
	} while (0)

int coll_reduce_local(void *dst, const void *a, const void *b, size_t len, enum coll_dtype dt,
                      enum coll_redop op)
{
	size_t sz = coll_dtype_size(dt);
	if (!sz || (unsigned)op >= COLL_REDOP_COUNT || len % sz)
		return -EINVAL;
	size_t cnt = len / sz;
	unsigned char *d = dst;
	const unsigned char *pa = a, *pb = b;
	switch (dt) {
	case COLL_INT32: COLL_REDUCE_LOOP(int32_t, (int32_t)((uint32_t)x + (uint32_t)y), COLL_ANY); break;
	case COLL_INT64: COLL_REDUCE_LOOP(int64_t, (int64_t)((uint64_t)x + (uint64_t)y), COLL_ANY); break;
	case COLL_FLOAT: COLL_REDUCE_LOOP(float, x + y, COLL_NAN_FIRST); break;
	case COLL_DOUBLE: COLL_REDUCE_LOOP(double, x + y, COLL_NAN_FIRST); break;
	default: return -EINVAL;
	}
	return 0;
}

enum { ST_WAIT, ST_POSTED, ST_DONE };

/* The engine's ready queues, in the order drain takes them. */
enum { Q_SEND_FIRST, Q_OTHER, Q_SEND_LAST, Q_COUNT };

struct coll_fifo {
	size_t *ids;
	size_t head, tail;
};

struct coll_engine {
	const struct coll_cmd *cmds;
	size_t n;
	int rank;
	struct coll_bufs bufs;
	struct coll_engine_conf conf;
	const struct coll_engine_ops *ops;
	void *ctx;
	struct coll_dag dag;
	uint8_t *state;
	/* Ready, not yet run, in three queues drained in order (Q_*); every
	 * command enters one at most once. Sends wait in a queue of their own
	 * (Q_SEND_FIRST) and go first: a rank that is late to a step then puts its headers out
	 * before its receives ask for the peer's data. Over shm a rendezvous
	 * get is copied by the peer that serves it, inside the progress pass
	 * that finds it; a get that reached the peer ahead of our header made
	 * it copy our data before it had seen the header that asks for its
	 * own, and the two copies of a step's exchange ran one after the
	 * other instead of side by side (2-rank 512 KiB exchange with one
	 * rank 20 us late: 105 us receives first, 54 us sends first). Only
	 * sends above conf.send_first_min: a transport's eager messages are
	 * better off finding their receive posted, so the others wait in a
	 * queue of their own (Q_SEND_LAST) for the receives ready with them
	 * (Q_OTHER, with the local commands). Id order put a tree's first send ahead of its receive
	 * on one rank of each pair (the two trees' directions), whose send,
	 * posted first, served the partner's read before its own receive
	 * was up: a 2-rank 32 KiB tree allreduce 0.2 - 0.3 us longer than
	 * the ring's, the same exchange. */
	struct coll_fifo q[Q_COUNT];
	size_t *qmem; /* the queues' ids, one allocation */
	size_t ndone;
};

static unsigned char *bufp(const struct coll_engine *e, int which, size_t off)
{
	unsigned char *b = which == COLL_BUF_DATA ? e->bufs.data
	                   : which == COLL_BUF_INPUT ? (unsigned char *)(uintptr_t)e->bufs.input
	                   : e->bufs.scratch;
	return b ? b + off : NULL;
}

/* dst = a OP b, where a is dst or (from_input) INPUT's bytes at the same
 * offset: read there, not copied into dst first (the copy was a pass over
 * dst of its own: a 2-rank MPI_Allreduce of 1 MiB copied 512 KiB a call;
 * 10 interleaved launches each, medians 32 KiB 9.90 -> 8.80 us, 256 KiB
 * 56.3 -> 47.8, 1 MiB 190 -> 155); b is then usually dst itself,
 * received there (coll_reduce_from_input). src_first: a is the source
 * and b is dst. */
static int do_reduce(struct coll_engine *e, const struct coll_cmd *c)
{
	if (!c->len)
		return 0;
	unsigned char *dst = bufp(e, c->buf, c->off);
	const unsigned char *a = c->from_input ? bufp(e, COLL_BUF_INPUT, c->off) : dst;
	const unsigned char *b = bufp(e, c->src_buf, c->src_off);
	if (c->src_first) {
		a = b;
		b = dst;
	}
	if (e->ops && e->ops->reduce)
		return e->ops->reduce(e->ctx, dst, a, b, c->len, e->conf.dtype, e->conf.redop);
	return coll_reduce_local(dst, a, b, c->len, e->conf.dtype, e->conf.redop);
}

static void enqueue(struct coll_engine *e, size_t i)
{
	const struct coll_cmd *c = &e->cmds[i];
	struct coll_fifo *f = &e->q[c->kind != COLL_SEND                   ? Q_OTHER
	                            : c->len > e->conf.send_first_min ? Q_SEND_FIRST
	                                                               : Q_SEND_LAST];
	f->ids[f->tail++] = i;
}

static int complete(struct coll_engine *e, size_t i)
{
	const struct coll_cmd *c = &e->cmds[i];
	if (c->kind == COLL_REDUCE) {
		int rc = do_reduce(e, c);
		if (rc)
			return rc;
	}
	e->state[i] = ST_DONE;
	e->ndone++;
	for (size_t k = e->dag.dep_off[i]; k < e->dag.dep_off[i + 1]; k++) {
		size_t j = e->dag.dep_idx[k];
		if (--e->dag.nwait[j] == 0)
			enqueue(e, j);
	}
	return 0;
}

static int run(struct coll_engine *e, size_t i)
{
	const struct coll_cmd *c = &e->cmds[i];
	switch (c->kind) {
	case COLL_SEND: {
		e->state[i] = ST_POSTED;
		int rc = e->ops->send(e->ctx, e->rank, i, c, bufp(e, c->buf, c->off), c->len);
		return rc == 1 ? complete(e, i) : rc; /* 1: over already */
	}
	case COLL_RECV:
		e->state[i] = ST_POSTED;
		return e->ops->recv(e->ctx, e->rank, i, c, bufp(e, c->buf, c->off), c->len);
	case COLL_REDUCE:
		if (c->peer >= 0) {
			e->state[i] = ST_POSTED;
			return e->ops->recv(e->ctx, e->rank, i, c, bufp(e, c->src_buf, c->src_off),
			                    c->len);
		}
		return complete(e, i);
	case COLL_COPY:
		if (c->len && e->ops->copy)
			e->ops->copy(e->ctx, bufp(e, c->buf, c->off), bufp(e, c->src_buf, c->src_off), c->len);
		else if (c->len)
			memmove(bufp(e, c->buf, c->off), bufp(e, c->src_buf, c->src_off), c->len);
		return complete(e, i);
	default:
		return -EINVAL;
	}
}

static int drain(struct coll_engine *e)
{
	for (;;) {
		int k = 0;
		while (k < Q_COUNT && e->q[k].head == e->q[k].tail)
			k++;
		if (k == Q_COUNT)
			return 0;
		int rc = run(e, e->q[k].ids[e->q[k].head++]);
		if (rc)
			return rc;
	}
}

int coll_engine_new(const struct coll_sched *s, int rank, const struct coll_bufs *bufs,
                    const struct coll_engine_conf *conf, const struct coll_engine_ops *ops,
                    void *ctx, struct coll_engine **out)
{
	*out = NULL;
	if (!ops || !ops->send || !ops->recv || !bufs || !conf)
		return -EINVAL;
	struct coll_engine *e = calloc(1, sizeof *e);
	if (!e)
		return -ENOMEM;
	e->cmds = coll_rank_cmds(s, rank, &e->n);
	if (!e->cmds && e->n == 0 && (rank < 0 || rank >= s->req.nranks)) {
		free(e);
		return -EINVAL;
	}
	e->rank = rank;
	e->bufs = *bufs;
	e->conf = *conf;
	e->ops = ops;
	e->ctx = ctx;
	size_t cap = e->n ? e->n : 1; /* each queue's: a command enters once */
	e->state = calloc(cap, 1);
	e->qmem = malloc(cap * Q_COUNT * sizeof *e->qmem);
	for (int k = 0; k < Q_COUNT; k++)
		e->q[k].ids = e->qmem ? e->qmem + (size_t)k * cap : NULL;
	int rc = (!e->state || !e->qmem) ? -ENOMEM : coll_dag_build(e->cmds, e->n, &e->dag);
	if (rc) {
		free(e->state);
		free(e->qmem);
		free(e);
		return rc;
	}
	*out = e;
	return 0;
}

int coll_engine_reset(struct coll_engine *e, const struct coll_bufs *bufs, void *ctx)
{
	/* A posted command may still complete into the old buffers: only an
	 * idle engine may take new ones. */
	for (size_t i = 0; i < e->n; i++)
		if (e->state[i] == ST_POSTED)
			return -EBUSY;
	memset(e->state, ST_WAIT, e->n);
	for (size_t i = 0; i < e->n; i++)
		e->dag.nwait[i] = e->cmds[i].ndeps;
	for (int k = 0; k < Q_COUNT; k++)
		e->q[k].head = e->q[k].tail = 0;
	e->ndone = 0;
	e->bufs = *bufs;
	e->ctx = ctx;
	return 0;
}

int coll_engine_start(struct coll_engine *e)
{
	for (size_t i = 0; i < e->n; i++)
		if (e->cmds[i].ndeps == 0)
			enqueue(e, i);
	return drain(e);
}

int coll_engine_done(struct coll_engine *e, size_t idx)
{
	if (idx >= e->n || e->state[idx] != ST_POSTED)
		return -EINVAL;
	int rc = complete(e, idx);
	return rc ? rc : drain(e);
}

bool coll_engine_finished(const struct coll_engine *e)
{
	return e->ndone == e->n;
}

uint64_t coll_engine_deadline(const struct coll_engine *e)
{
	return e->conf.deadline_ns;
}

const struct coll_cmd *coll_engine_waiting(const struct coll_engine *e)
{
	for (size_t i = 0; i < e->n; i++)
		if (e->state[i] == ST_POSTED)
			return &e->cmds[i];
	return NULL;
}

void coll_engine_free(struct coll_engine *e)
{
	if (!e)
		return;
	coll_dag_free(&e->dag);
	free(e->state);
	free(e->qmem);
	free(e);
}
