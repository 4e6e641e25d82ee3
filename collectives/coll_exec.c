/* coll_exec.c: the reference executor. All N ranks' engines run in this
 * process over an in-memory transport. A transfer happens only when both its
 * send and its receive are posted, and the bytes are read from the sender's
 * buffer at that moment (rendezvous), so a schedule that lets a rank
 * overwrite bytes it has not finished sending shows up as a wrong result.
 * With a seed, deliverable transfers go in random order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

struct xfer {
	int srank, rrank;
	size_t sidx, ridx;
};

struct xnet {
	const struct coll_sched *s;
	struct coll_pairs pairs;
	unsigned char **posted;
	void ***ptr;          /* buffer each posted send/receive named */
	struct xfer *ready;
	size_t head, tail, cap;
	int err;
};

static int post(struct xnet *x, int rank, size_t idx, void *buf)
{
	x->posted[rank][idx] = 1;
	x->ptr[rank][idx] = buf;
	int pr = x->pairs.rank[rank][idx];
	size_t pi = x->pairs.idx[rank][idx];
	if (pr < 0)
		return -EINVAL;
	if (!x->posted[pr][pi])
		return 0;
	if (x->tail == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 256;
		struct xfer *r = realloc(x->ready, cap * sizeof *r);
		if (!r)
			return -ENOMEM;
		x->ready = r;
		x->cap = cap;
	}
	bool is_send = x->s->ranks[rank].cmds[idx].kind == COLL_SEND;
	struct xfer *t = &x->ready[x->tail++];
	t->srank = is_send ? rank : pr;
	t->sidx = is_send ? idx : pi;
	t->rrank = is_send ? pr : rank;
	t->ridx = is_send ? pi : idx;
	return 0;
}

static int x_send(void *ctx, int rank, size_t idx, const struct coll_cmd *cmd,
                  const void *buf, size_t len)
{
	(void)cmd;
	(void)len;
	return post(ctx, rank, idx, (void *)(uintptr_t)buf);
}

static int x_recv(void *ctx, int rank, size_t idx, const struct coll_cmd *cmd,
                  void *buf, size_t len)
{
	(void)cmd;
	(void)len;
	return post(ctx, rank, idx, buf);
}

static unsigned next_rand(unsigned *st)
{
	unsigned v = *st;
	v ^= v << 13;
	v ^= v >> 17;
	v ^= v << 5;
	return *st = v;
}

static void xnet_free(struct xnet *x, int n)
{
	for (int r = 0; r < n; r++) {
		if (x->posted)
			free(x->posted[r]);
		if (x->ptr)
			free(x->ptr[r]);
	}
	free(x->posted);
	free(x->ptr);
	free(x->ready);
	if (x->pairs.rank)
		coll_pairs_free(x->s, &x->pairs);
}

int coll_exec_run(const struct coll_sched *s, const struct coll_bufs *bufs,
                  const struct coll_exec_opts *opts, char *msg, size_t msglen)
{
	int n = s->req.nranks, rc;
	struct xnet x;
	memset(&x, 0, sizeof x);
	x.s = s;
	if (s->nheld != n) {
		coll_msg(msg, msglen, "the reference executor needs every rank (coll_expand)");
		return -EINVAL;
	}
	if ((rc = coll_pairs_build(s, &x.pairs, msg, msglen)))
		return rc;
	struct coll_engine **eng = calloc((size_t)n, sizeof *eng);
	x.posted = calloc((size_t)n, sizeof *x.posted);
	x.ptr = calloc((size_t)n, sizeof *x.ptr);
	rc = (!eng || !x.posted || !x.ptr) ? -ENOMEM : 0;
	for (int r = 0; r < n && !rc; r++) {
		size_t m = s->ranks[r].ncmds ? s->ranks[r].ncmds : 1;
		x.posted[r] = calloc(m, 1);
		x.ptr[r] = calloc(m, sizeof *x.ptr[r]);
		if (!x.posted[r] || !x.ptr[r])
			rc = -ENOMEM;
	}
	struct coll_engine_conf conf = { opts->dtype, opts->redop, 0, 0 };
	static const struct coll_engine_ops ops = { x_send, x_recv, NULL, NULL };
	for (int r = 0; r < n && !rc; r++)
		rc = coll_engine_new(s, r, &bufs[r], &conf, &ops, &x, &eng[r]);
	if (rc == -ENOMEM)
		coll_msg(msg, msglen, "out of memory setting up %d ranks", n);
	else if (rc)
		coll_msg(msg, msglen, "cannot build the executor (bad dependencies)");
	for (int r = 0; r < n && !rc; r++)
		rc = coll_engine_start(eng[r]);

	unsigned st = opts->seed ? opts->seed : 1;
	while (!rc && x.head < x.tail) {
		if (opts->seed) {
			size_t j = x.head + next_rand(&st) % (x.tail - x.head);
			struct xfer t = x.ready[j];
			x.ready[j] = x.ready[x.head];
			x.ready[x.head] = t;
		}
		struct xfer t = x.ready[x.head++];
		size_t len = s->ranks[t.srank].cmds[t.sidx].len;
		if (len)
			memcpy(x.ptr[t.rrank][t.ridx], x.ptr[t.srank][t.sidx], len);
		rc = coll_engine_done(eng[t.srank], t.sidx);
		if (!rc)
			rc = coll_engine_done(eng[t.rrank], t.ridx);
		if (x.head == x.tail)
			x.head = x.tail = 0;
	}
	if (rc && rc != -ENOMEM && (!msg || !*msg))
		coll_msg(msg, msglen, "executor failed: %d", rc);
	for (int r = 0; r < n && !rc; r++) {
		if (coll_engine_finished(eng[r]))
			continue;
		const struct coll_cmd *c = coll_engine_waiting(eng[r]);
		if (c)
			coll_msg(msg, msglen, "deadlock: rank %d step %u: %s %s rank %d (id %llu) never "
			         "completed", r, c->step, coll_kind_name(c->kind),
			         c->kind == COLL_SEND ? "to" : "from", c->peer,
			         (unsigned long long)c->id);
		else
			coll_msg(msg, msglen, "deadlock: rank %d has commands whose dependencies "
			         "never completed", r);
		rc = -EDEADLK;
	}
	for (int r = 0; eng && r < n; r++)
		coll_engine_free(eng[r]);
	free(eng);
	xnet_free(&x, n);
	return rc;
}
