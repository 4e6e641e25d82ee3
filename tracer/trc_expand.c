/* trc_expand.c: from a compressed trace back to one rank's events. */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "trc.h"
#include "trc_internal.h"

struct xctx {
	const struct trc_trace *t;
	int32_t rank;
	trc_emit_fn fn;
	void *ctx;
};

static int64_t resolve(const struct trc_val *v, int32_t rank, int32_t nranks)
{
	if ((v->pf & TRC_PF_ABS) || !(v->pf & TRC_PF_REL) || nranks <= 0)
		return v->v;
	int64_t p = (rank + v->rel) % nranks;
	return p < 0 ? p + nranks : p;
}

static int emit_ev(const struct xctx *x, const struct trc_ev *e)
{
	const struct trc_opdesc *d = &trc_optab[e->op];
	struct trc_flat f;
	int pi = trc_peer_index(e->op);
	memset(&f, 0, sizeof f);
	f.op = e->op;
	f.sig = e->sig;
	f.narr = e->narr;
	f.arr = e->arr;
	f.tns = e->t.n ? e->t.sum / e->t.n : 0;
	for (unsigned i = 0; i < d->nf; i++)
		f.v[i] = d->kinds[i] == TRC_K_PEER ? resolve(&e->f[i], x->rank, x->t->nranks) : e->f[i].v;
	if (!e->npl)
		return x->fn(&f, x->ctx);
	for (uint32_t k = 0; k < e->npl; k++) {
		if (e->plr && e->plr[k] && !trc_rset_has(e->plr[k], x->rank))
			continue;
		f.v[pi] = resolve(&e->pl[k], x->rank, x->t->nranks);
		int rc = x->fn(&f, x->ctx);
		if (rc)
			return rc;
	}
	return 0;
}

static int expand_list(const struct xctx *x, const struct trc_list *l, int in_parent)
{
	for (const struct trc_node *n = l->head; n; n = n->next) {
		int in = n->ranks ? trc_rset_has(n->ranks, x->rank) : in_parent;
		if (!in)
			continue;
		int rc;
		if (n->is_loop) {
			for (uint64_t i = 0; i < n->iters; i++)
				if ((rc = expand_list(x, &n->body, 1)))
					return rc;
		} else if ((rc = emit_ev(x, &n->ev))) {
			return rc;
		}
	}
	return 0;
}

int trc_expand(const struct trc_trace *t, int32_t rank, trc_emit_fn fn, void *ctx)
{
	struct xctx x = { t, rank, fn, ctx };
	return expand_list(&x, &t->top, trc_rset_has(&t->all, rank));
}

void trc_flat_format(const struct trc_flat *e, char *buf, size_t len)
{
	const struct trc_opdesc *d = &trc_optab[e->op];
	size_t o = 0;
	uint32_t ai = 0;
#define OUT(...) do { int w_ = snprintf(buf + o, o < len ? len - o : 0, __VA_ARGS__); \
		if (w_ > 0) o += (size_t)w_; } while (0)
	buf[0] = 0;
	OUT("%s", d->name);
	for (unsigned i = 0; i < d->nf; i++) {
		OUT(" %s=", d->fnames[i]);
		switch (d->kinds[i]) {
		case TRC_K_DTYPE: {
			int64_t code = e->v[i] >> 32;
			OUT("%s:%" PRId64, code >= 0 && code < TRC_NDT ? trc_dt_names[code] : "?", e->v[i] & 0xffffffff);
			break;
		}
		case TRC_K_OP:
			OUT("%s", e->v[i] >= 0 && e->v[i] < TRC_NMOP ? trc_mop_names[e->v[i]] : "?");
			break;
		case TRC_K_PEER:
			if (e->v[i] == TRC_ANY_SOURCE)
				OUT("any");
			else if (e->v[i] == TRC_PROC_NULL)
				OUT("null");
			else
				OUT("%" PRId64, e->v[i]);
			break;
		case TRC_K_INTS:
		case TRC_K_REQS:
			OUT("[");
			for (int64_t k = 0; k < e->v[i] && ai < e->narr; k++)
				OUT("%s%" PRId64, k ? "," : "", e->arr[ai++]);
			OUT("]");
			break;
		default:
			OUT("%" PRId64, e->v[i]);
		}
	}
	OUT(" @%08x", e->sig);
#undef OUT
	if (o >= len && len > 4)
		strcpy(buf + len - 4, "...");
}

/* Bytes of one flat record (the form level dump writes). */
static uint64_t flat_size(const struct trc_ev *e)
{
	const struct trc_opdesc *d = &trc_optab[e->op];
	uint64_t n = 1 + 1 + 4 + 2;	/* tag, op, sig, time */
	for (unsigned i = 0; i < d->nf; i++)
		n += d->kinds[i] == TRC_K_DTYPE ? 5 : 1;
	return n + 2 * (uint64_t)e->narr;
}

static uint64_t stats_list(const struct trc_list *l, uint32_t nparent, struct trc_stats *st, uint64_t mult)
{
	uint64_t ev = 0;
	for (const struct trc_node *n = l->head; n; n = n->next) {
		uint32_t nr = n->ranks ? n->ranks->n : nparent;
		st->nodes++;
		if (n->is_loop) {
			st->loops++;
			uint64_t body = stats_list(&n->body, nr, st, mult * n->iters);
			ev += n->iters * body;
		} else {
			uint64_t k = n->ev.npl ? 0 : nr;
			for (uint32_t i = 0; i < n->ev.npl; i++)
				k += n->ev.plr && n->ev.plr[i] ? n->ev.plr[i]->n : nr;
			st->events_nodes++;
			st->flat_bytes += mult * k * flat_size(&n->ev);
			ev += k;
		}
	}
	return ev;
}

void trc_stats(const struct trc_trace *t, struct trc_stats *st)
{
	memset(st, 0, sizeof *st);
	st->events = stats_list(&t->top, t->all.n, st, 1);
}
