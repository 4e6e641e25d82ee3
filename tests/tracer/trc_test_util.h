/* Helpers shared by the tracer's unit tests. */
#ifndef TRC_TEST_UTIL_H
#define TRC_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "trc.h"

/* An Isend-like event: dest, count, dt double, tag, comm 0. */
static inline struct trc_ev tu_send(int op, int64_t peer, int count, int tag, uint32_t sig, int32_t rank,
				    int32_t nranks)
{
	struct trc_ev e;
	memset(&e, 0, sizeof e);
	e.op = (uint16_t)op;
	e.sig = sig;
	e.f[0].v = peer;
	e.f[1].v = count;
	e.f[2].v = ((int64_t)TRC_DT_DOUBLE << 32) | 8;
	e.f[3].v = tag;
	e.f[4].v = 0;
	trc_ev_setpeers(&e, rank, nranks);
	trc_tstat_add(&e.t, 100);
	return e;
}

static inline struct trc_ev tu_barrier(uint32_t sig)
{
	struct trc_ev e;
	memset(&e, 0, sizeof e);
	e.op = TRC_OP_BARRIER;
	e.sig = sig;
	trc_tstat_add(&e.t, 50);
	return e;
}

/* Expansion of one rank as text lines, joined by '\n'. */
struct tu_text {
	char *s;
	size_t len, cap;
	size_t n;
};

static inline int tu_collect(const struct trc_flat *e, void *ctx)
{
	struct tu_text *t = ctx;
	char line[1024];
	trc_flat_format(e, line, sizeof line);
	size_t l = strlen(line);
	if (t->len + l + 2 > t->cap) {
		t->cap = (t->len + l + 2) * 2;
		t->s = realloc(t->s, t->cap);
	}
	memcpy(t->s + t->len, line, l);
	t->len += l;
	t->s[t->len++] = '\n';
	t->s[t->len] = 0;
	t->n++;
	return 0;
}

static inline char *tu_expand(const struct trc_trace *t, int32_t rank, size_t *n)
{
	struct tu_text x = { 0 };
	x.s = calloc(1, 1);
	trc_expand(t, rank, tu_collect, &x);
	if (n)
		*n = x.n;
	return x.s;
}

/* The text of a flat list of events, formatted the same way. */
static inline char *tu_events_text(const struct trc_ev *ev, size_t n, int32_t rank, int32_t nranks)
{
	struct trc_trace t;
	trc_trace_init(&t, TRC_LEVEL_DUMP, rank, nranks, -1);
	for (size_t i = 0; i < n; i++)
		trc_append(&t, &ev[i]);
	char *s = tu_expand(&t, rank, NULL);
	trc_trace_free(&t);
	return s;
}

#endif
