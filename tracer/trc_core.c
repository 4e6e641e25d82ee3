/* trc_core.c: events, node lists and on-the-fly loop compression. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trc.h"
#include "trc_internal.h"

const char *const trc_dt_names[TRC_NDT] = {
	"derived", "byte", "char", "short", "int", "long", "long_long", "unsigned",
	"unsigned_long", "float", "double", "long_double", "int8", "int16", "int32",
	"int64", "uint8", "uint16", "uint32", "uint64", "double_int", "2int", "packed",
};
const char *const trc_mop_names[TRC_NMOP] = {
	"user", "sum", "prod", "max", "min", "land", "lor", "lxor", "band", "bor",
	"bxor", "maxloc", "minloc", "replace", "null",
};

int trc_op_lookup(const char *name)
{
	for (int i = 0; i < TRC_NOPS; i++)
		if (!strcmp(trc_optab[i].name, name))
			return i;
	return -1;
}

void trc_tstat_add(struct trc_tstat *t, uint64_t ns)
{
	if (!t->n || ns < t->min)
		t->min = ns;
	if (!t->n || ns > t->max)
		t->max = ns;
	t->n++;
	t->sum += ns;
}

void trc_tstat_merge(struct trc_tstat *dst, const struct trc_tstat *src)
{
	if (!src->n)
		return;
	if (!dst->n || src->min < dst->min)
		dst->min = src->min;
	if (!dst->n || src->max > dst->max)
		dst->max = src->max;
	dst->n += src->n;
	dst->sum += src->sum;
}

void trc_val_peer(struct trc_val *v, int64_t peer, int32_t rank, int32_t nranks)
{
	v->v = peer;
	if (peer < 0 || nranks <= 0) {	/* PROC_NULL, ANY_SOURCE: absolute only */
		v->rel = 0;
		v->pf = TRC_PF_ABS;
		return;
	}
	int64_t d = (peer - rank) % nranks;
	if (d < 0)
		d += nranks;
	if (d > nranks / 2)
		d -= nranks;
	v->rel = d;
	v->pf = TRC_PF_ABS | TRC_PF_REL;
}

void trc_ev_setpeers(struct trc_ev *ev, int32_t rank, int32_t nranks)
{
	const struct trc_opdesc *d = &trc_optab[ev->op];
	for (unsigned i = 0; i < d->nf; i++)
		if (d->kinds[i] == TRC_K_PEER)
			trc_val_peer(&ev->f[i], ev->f[i].v, rank, nranks);
}

void trc_ev_free(struct trc_ev *ev)
{
	if (ev->plr) {
		for (uint32_t i = 0; i < ev->npl; i++)
			if (ev->plr[i]) {
				trc_rset_free(ev->plr[i]);
				free(ev->plr[i]);
			}
		free(ev->plr);
		ev->plr = NULL;
	}
	free(ev->arr);
	free(ev->pl);
	free(ev->h);
	ev->arr = NULL;
	ev->pl = NULL;
	ev->h = NULL;
}

static void *dupmem(const void *p, size_t n)
{
	if (!n)
		return NULL;
	void *q = malloc(n);
	if (q)
		memcpy(q, p, n);
	return q;
}

int trc_ev_copy(struct trc_ev *dst, const struct trc_ev *src)
{
	*dst = *src;
	dst->arr = dupmem(src->arr, src->narr * sizeof *src->arr);
	dst->pl = dupmem(src->pl, src->npl * sizeof *src->pl);
	dst->h = dupmem(src->h, src->h ? TRC_MAXF * sizeof *src->h : 0);
	dst->plr = NULL;
	if ((src->narr && !dst->arr) || (src->npl && !dst->pl) || (src->h && !dst->h)) {
		trc_ev_free(dst);
		return -ENOMEM;
	}
	if (src->plr) {
		dst->plr = calloc(src->npl, sizeof *dst->plr);
		if (!dst->plr) {
			trc_ev_free(dst);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < src->npl; i++)
			if (src->plr[i] && !(dst->plr[i] = trc_rset_dup(src->plr[i]))) {
				trc_ev_free(dst);
				return -ENOMEM;
			}
	}
	return 0;
}

/* Histogram mode: integers within pct percent of each other are equal. */
int trc_close_enough(int64_t a, int64_t b, double pct)
{
	if (a == b)
		return 1;
	if (pct < 0 || a < 0 || b < 0)
		return 0;
	int64_t hi = a > b ? a : b, lo = a > b ? b : a;
	return (double)(hi - lo) * 100.0 <= pct * (double)hi;
}

/* Events match when everything but the first peer agrees; first peers
 * that differ merge into a parameter list whose entries say which ranks
 * use them (so a stencil's boundary ranks share the interior's node). */
static void histo_add(struct trc_histo *h, int64_t v, uint64_t n)
{
	for (unsigned i = 0; i < h->nb; i++)
		if (h->v[i] == v) {
			h->n[i] += n;
			return;
		}
	if (h->nb < TRC_HBINS) {
		h->v[h->nb] = v;
		h->n[h->nb++] = n;
		return;
	}
	/* full: fold into the nearest bin */
	unsigned best = 0;
	for (unsigned i = 1; i < h->nb; i++)
		if (llabs(h->v[i] - v) < llabs(h->v[best] - v))
			best = i;
	h->n[best] += n;
}

void trc_histo_merge(struct trc_histo *dst, const struct trc_histo *src, int64_t dv, int64_t sv)
{
	if (!dst->nb)
		histo_add(dst, dv, 1);
	if (src && src->nb)
		for (unsigned i = 0; i < src->nb; i++)
			histo_add(dst, src->v[i], src->n[i]);
	else
		histo_add(dst, sv, 1);
}

/* The value a histogram stands for on expansion: its most frequent bin. */
int64_t trc_histo_mode(const struct trc_histo *h)
{
	unsigned best = 0;
	for (unsigned i = 1; i < h->nb; i++)
		if (h->n[i] > h->n[best])
			best = i;
	return h->v[best];
}

/* ---- lists ---- */

void trc_list_append(struct trc_list *l, struct trc_node *n)
{
	n->next = NULL;
	n->prev = l->tail;
	if (l->tail)
		l->tail->next = n;
	else
		l->head = n;
	l->tail = n;
	l->n++;
}

void trc_list_remove(struct trc_list *l, struct trc_node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		l->head = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		l->tail = n->prev;
	n->next = n->prev = NULL;
	l->n--;
}

void trc_node_free(struct trc_node *n)
{
	if (!n)
		return;
	if (n->is_loop)
		trc_list_free(&n->body);
	else
		trc_ev_free(&n->ev);
	if (n->ranks) {
		trc_rset_free(n->ranks);
		free(n->ranks);
	}
	free(n->ih);
	free(n);
}

void trc_list_free(struct trc_list *l)
{
	struct trc_node *n = l->head;
	while (n) {
		struct trc_node *next = n->next;
		trc_node_free(n);
		n = next;
	}
	l->head = l->tail = NULL;
	l->n = 0;
}

/* ---- hashing and equality (per rank: exact) ---- */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

/* Per-rank folding compares exactly, or in histogram mode with integer
 * fields and loop counts equal within pct percent (then they are left out
 * of the hashes). fold_pct is set by trc_append for the call it makes:
 * the recorder is single-threaded. */
static double fold_pct = -1;
static uint32_t *fold_flags;

static uint64_t ev_hash(const struct trc_ev *e)
{
	uint64_t h = mix(e->op, e->sig);
	for (unsigned i = 0; i < trc_optab[e->op].nf; i++)
		if (fold_pct < 0 || trc_optab[e->op].kinds[i] != TRC_K_INT)
			h = mix(h, (uint64_t)e->f[i].v);
	for (uint32_t i = 0; i < e->narr; i++)
		h = mix(h, (uint64_t)e->arr[i]);
	for (uint32_t i = 0; i < e->npl; i++)
		h = mix(h, (uint64_t)e->pl[i].v);
	return mix(h, e->npl);
}

static void loop_rehash(struct trc_node *n)
{
	uint64_t h = mix(0x100000001b3ULL, fold_pct < 0 ? n->iters : 0);
	for (struct trc_node *c = n->body.head; c; c = c->next)
		h = mix(h, c->hash);
	n->hash = h;
}

static int ev_eq(const struct trc_ev *a, const struct trc_ev *b)
{
	if (a->op != b->op || a->sig != b->sig || a->narr != b->narr || a->npl != b->npl)
		return 0;
	for (unsigned i = 0; i < trc_optab[a->op].nf; i++)
		if (a->f[i].v != b->f[i].v &&
		    (trc_optab[a->op].kinds[i] != TRC_K_INT || !trc_close_enough(a->f[i].v, b->f[i].v, fold_pct)))
			return 0;
	if (a->narr && memcmp(a->arr, b->arr, a->narr * sizeof *a->arr))
		return 0;
	for (uint32_t i = 0; i < a->npl; i++)
		if (a->pl[i].v != b->pl[i].v)
			return 0;
	return 1;
}

static int node_eq(const struct trc_node *a, const struct trc_node *b);

static int list_eq_from(const struct trc_node *a, const struct trc_node *b, size_t len)
{
	for (size_t i = 0; i < len; i++, a = a->next, b = b->next)
		if (!a || !b || !node_eq(a, b))
			return 0;
	return 1;
}

static int node_eq(const struct trc_node *a, const struct trc_node *b)
{
	if (a->hash != b->hash || a->is_loop != b->is_loop)
		return 0;
	if (!a->is_loop)
		return ev_eq(&a->ev, &b->ev);
	return trc_close_enough((int64_t)a->iters, (int64_t)b->iters, fold_pct) && a->body.n == b->body.n &&
	       list_eq_from(a->body.head, b->body.head, a->body.n);
}

/* Fold a duplicate (dup, freed by the caller) into the kept copy: its
 * times, and in histogram mode its unequal integers and loop counts. */
static void absorb_times(struct trc_node *keep, const struct trc_node *dup)
{
	if (!keep->is_loop) {
		struct trc_ev *k = &keep->ev;
		const struct trc_ev *d = &dup->ev;
		trc_tstat_merge(&k->t, &d->t);
		for (unsigned i = 0; fold_pct >= 0 && i < trc_optab[k->op].nf; i++) {
			if (trc_optab[k->op].kinds[i] != TRC_K_INT || (k->f[i].v == d->f[i].v && !k->h && !d->h))
				continue;
			if (!k->h && !(k->h = calloc(TRC_MAXF, sizeof *k->h)))
				return;	/* out of memory: keep the first value */
			trc_histo_merge(&k->h[i], d->h ? &d->h[i] : NULL, k->f[i].v, d->f[i].v);
			k->f[i].v = trc_histo_mode(&k->h[i]);
			if (k->h[i].nb > 1 && fold_flags)
				*fold_flags |= TRC_FL_LOSSY;
		}
		return;
	}
	if (fold_pct >= 0 && (keep->iters != dup->iters || keep->ih || dup->ih) &&
	    (keep->ih || (keep->ih = calloc(1, sizeof *keep->ih)))) {
		trc_histo_merge(keep->ih, dup->ih, (int64_t)keep->iters, (int64_t)dup->iters);
		keep->iters = (uint64_t)trc_histo_mode(keep->ih);
		if (keep->ih->nb > 1 && fold_flags)
			*fold_flags |= TRC_FL_LOSSY;
	}
	const struct trc_node *d = dup->body.head;
	for (struct trc_node *k = keep->body.head; k && d; k = k->next, d = d->next)
		absorb_times(k, d);
}

/* ---- trace ---- */

void trc_trace_init(struct trc_trace *t, int level, int32_t rank, int32_t nranks, int window)
{
	memset(t, 0, sizeof *t);
	t->level = level;
	t->rank = rank;
	t->nranks = nranks;
	t->window = window;
	t->fold = level != TRC_LEVEL_DUMP;
	t->histo = -1;
	trc_rset_init(&t->all);
	if (rank >= 0)
		trc_rset_add(&t->all, rank);
}

void trc_trace_free(struct trc_trace *t)
{
	free(t->tv);
	free(t->th);
	free(t->tk);
	t->tv = NULL;
	t->th = NULL;
	t->tk = NULL;
	t->tn = t->tcap = 0;
	trc_list_free(&t->top);
	trc_rset_free(&t->all);
}

/* Remove the last len nodes of l, folding their times into the body they
 * repeat (starting at keep). */
static void drop_tail(struct trc_list *l, struct trc_node *first_dup, struct trc_node *keep)
{
	struct trc_node *d = first_dup;
	while (d) {
		struct trc_node *next = d->next;
		absorb_times(keep, d);
		keep = keep->next;
		trc_list_remove(l, d);
		trc_node_free(d);
		d = next;
	}
}

/* In histogram mode a loop at the tail may still be counting up: 96
 * iterations of a loop that will run 101 must not be taken as "within 5%
 * of the last one's 100" and folded early. So nothing folds while the
 * tail is a loop; the next call closes it. */
static int spine_ok(const struct trc_node *x, const struct trc_node *tail)
{
	(void)x;
	return fold_pct < 0 || !tail->is_loop;
}

/* ---- the tail index ---- */

static int tix_push(struct trc_trace *t, struct trc_node *n)
{
	if (t->tn == t->tcap) {
		size_t cap = t->tcap ? 2 * t->tcap : 64;
		struct trc_node **v = realloc(t->tv, cap * sizeof *v);
		if (v)
			t->tv = v;
		uint64_t *h = realloc(t->th, cap * sizeof *h);
		if (h)
			t->th = h;
		uint32_t *k = realloc(t->tk, cap * sizeof *k);
		if (k)
			t->tk = k;
		if (!v || !h || !k)
			return -ENOMEM;
		t->tcap = cap;
	}
	t->tv[t->tn] = n;
	t->tk[t->tn] = n->is_loop ? (uint32_t)n->body.n : 0;
	t->th[t->tn++] = n->hash;
	return 0;
}

/* Rebuild if the list changed behind the index's back (or it is new). */
static int tix_sync(struct trc_trace *t)
{
	if (t->tn == t->top.n && (!t->tn || t->tv[t->tn - 1] == t->top.tail))
		return 0;
	t->tn = 0;
	for (struct trc_node *n = t->top.head; n; n = n->next)
		if (tix_push(t, n))
			return -ENOMEM;
	return 0;
}

/* One folding step at the tail; returns 1 if the list changed. Both cases
 * look back from the tail one candidate length at a time, first comparing
 * hashes in the index, so a step costs O(window) reads of contiguous
 * memory when nothing folds. */
static int fold_once(struct trc_trace *t)
{
	struct trc_list *l = &t->top;
	size_t n = t->tn;
	int window = t->window;
	size_t maxl = n / 2;
	if (window >= 0 && (size_t)window < maxl)
		maxl = (size_t)window;
	if (!n)
		return 0;
	struct trc_node *tail = t->tv[n - 1];
	uint64_t th = t->th[n - 1];

	/* Case 1: the last L nodes repeat the body of the loop just before
	 * them: one more iteration. */
	for (size_t len = 1; len < n && (window < 0 || len <= (size_t)window); len++) {
		if (t->tk[n - 1 - len] != len)
			continue;
		struct trc_node *lp = t->tv[n - 1 - len];
		if (lp->body.tail->hash == th && spine_ok(lp->body.tail, tail) &&
		    list_eq_from(lp->body.head, lp->next, len)) {
			drop_tail(l, lp->next, lp->body.head);
			lp->iters++;
			loop_rehash(lp);
			t->tn = n - len;
			t->th[t->tn - 1] = lp->hash;
			return 1;
		}
	}
	/* Case 2: the last L nodes equal the L before them: a new loop of 2. */
	for (size_t len = 1; len <= maxl; len++) {
		size_t last = n - 1 - len;	/* last node of the first copy */
		if (t->th[last] != th || !spine_ok(t->tv[last], tail))
			continue;
		struct trc_node *a_first = t->tv[n - 2 * len], *a_last = t->tv[last];
		if (!list_eq_from(a_first, a_last->next, len))
			continue;
		struct trc_node *loop = calloc(1, sizeof *loop);
		if (!loop)
			return 0;
		loop->is_loop = 1;
		loop->iters = 2;
		struct trc_node *dup = a_last->next;
		struct trc_node *before = a_first->prev;
		/* move the first copy into the loop body */
		for (size_t i = 0; i < len; i++) {
			struct trc_node *m = before ? before->next : l->head;
			trc_list_remove(l, m);
			trc_list_append(&loop->body, m);
		}
		drop_tail(l, dup, loop->body.head);
		loop_rehash(loop);
		trc_list_append(l, loop);
		t->tn = n - 2 * len;
		tix_push(t, loop);	/* cannot fail: the arrays just shrank */
		return 1;
	}
	return 0;
}

/* Neighbour operations that differ only in their first peer fold into one
 * node with a parameter list. A list that becomes two equal halves turns
 * into a loop of two over one half, so a loop of (left, right) with
 * nothing in between stays a loop of one two-peer node instead of a list
 * growing with the iterations. */
int trc_peer_index(unsigned op)
{
	for (unsigned i = 0; i < trc_optab[op].nf; i++)
		if (trc_optab[op].kinds[i] == TRC_K_PEER)
			return (int)i;
	return -1;
}

static int try_param_fold(struct trc_trace *t, const struct trc_ev *e)
{
	struct trc_list *tl = &t->top;
	struct trc_node *last = tl->tail;
	if (!last || last->is_loop || last->ev.op != e->op || last->ev.sig != e->sig || e->npl)
		return 0;
	int pi = trc_peer_index(e->op);
	if (pi < 0)
		return 0;
	const struct trc_ev *p = &last->ev;
	for (unsigned i = 0; i < trc_optab[e->op].nf; i++)
		if ((int)i != pi && p->f[i].v != e->f[i].v)
			return 0;
	if (p->narr != e->narr || (e->narr && memcmp(p->arr, e->arr, e->narr * sizeof *e->arr)))
		return 0;
	if (!p->npl && p->f[pi].v == e->f[pi].v)
		return 0;	/* same peer: a loop, not a list */
	if (p->npl >= TRC_MAXPL)
		return 0;
	uint32_t npl = p->npl ? p->npl + 1 : 2;
	struct trc_val *pl = realloc(last->ev.pl, npl * sizeof *pl);
	if (!pl)
		return 0;
	if (!last->ev.npl) {
		pl[0] = last->ev.f[pi];
		pl[0].slot = 0;
	}
	pl[npl - 1] = e->f[pi];
	pl[npl - 1].slot = (uint16_t)(npl - 1);
	last->ev.pl = pl;
	last->ev.npl = npl;
	last->ev.f[pi].v = 0;
	last->ev.f[pi].rel = 0;
	last->ev.f[pi].pf = 0;
	trc_tstat_merge(&last->ev.t, &e->t);
	uint32_t h = npl / 2;
	int halves = !(npl % 2);
	for (uint32_t i = 0; halves && i < h; i++)
		halves = pl[i].v == pl[h + i].v;
	if (halves) {
		struct trc_node *loop = calloc(1, sizeof *loop);
		if (loop) {
			last->ev.npl = h;
			if (h == 1) {	/* back to a plain event */
				last->ev.f[pi] = pl[0];
				last->ev.npl = 0;
			}
			last->hash = ev_hash(&last->ev);
			trc_list_remove(tl, last);
			loop->is_loop = 1;
			loop->iters = 2;
			trc_list_append(&loop->body, last);
			loop_rehash(loop);
			trc_list_append(tl, loop);
			t->tv[t->tn - 1] = loop;
			t->th[t->tn - 1] = loop->hash;
			t->tk[t->tn - 1] = 1;
			return 1;
		}
	}
	last->hash = ev_hash(&last->ev);
	t->th[t->tn - 1] = last->hash;
	return 1;
}

int trc_append(struct trc_trace *t, const struct trc_ev *ev)
{
	if (ev->op >= TRC_NOPS)
		return -EINVAL;
	fold_pct = t->histo;
	fold_flags = &t->flags;
	if (t->fold && tix_sync(t))
		return -ENOMEM;
	if (t->fold && try_param_fold(t, ev)) {
		while (fold_once(t))
			;
		return 0;
	}
	struct trc_node *n = calloc(1, sizeof *n);
	if (!n)
		return -ENOMEM;
	if (trc_ev_copy(&n->ev, ev)) {
		free(n);
		return -ENOMEM;
	}
	n->hash = ev_hash(&n->ev);
	trc_list_append(&t->top, n);
	if (t->fold) {
		if (tix_push(t, n))
			return -ENOMEM;	/* n is in the list; the index resyncs next time */
		while (fold_once(t))
			;
	}
	return 0;
}

/* Exported for trc_merge.c and trc_io.c. */
uint64_t trc_node_rehash(struct trc_node *n)
{
	if (!n->is_loop) {
		n->hash = ev_hash(&n->ev);
	} else {
		for (struct trc_node *c = n->body.head; c; c = c->next)
			trc_node_rehash(c);
		loop_rehash(n);
	}
	return n->hash;
}

/* ---- request offsets ---- */

int trc_reqtab_init(struct trc_reqtab *rt, uint64_t cap)
{
	memset(rt, 0, sizeof *rt);
	if (!cap)
		return -EINVAL;
	rt->h = calloc(cap, sizeof *rt->h);
	rt->live = calloc(cap, 1);
	if (!rt->h || !rt->live) {
		trc_reqtab_free(rt);
		return -ENOMEM;
	}
	rt->cap = cap;
	return 0;
}

void trc_reqtab_free(struct trc_reqtab *rt)
{
	free(rt->h);
	free(rt->live);
	rt->h = NULL;
	rt->live = NULL;
}

/* live: 0 free, 1 outstanding, 2 outstanding and claimed by the call being
 * recorded. */
int trc_reqtab_add(struct trc_reqtab *rt, uint64_t handle)
{
	while (rt->head < rt->next && !rt->live[rt->head % rt->cap])
		rt->head++;
	if (rt->next - rt->head >= rt->cap) {
		rt->overflow = 1;
		return -1;
	}
	rt->h[rt->next % rt->cap] = handle;
	rt->live[rt->next % rt->cap] = 1;
	rt->next++;
	return 0;
}

int64_t trc_reqtab_lookup(struct trc_reqtab *rt, uint64_t handle, uint64_t *seq)
{
	for (uint64_t s = rt->head; s < rt->next; s++) {
		uint64_t i = s % rt->cap;
		if (rt->live[i] == 1 && rt->h[i] == handle) {
			rt->live[i] = 2;
			*seq = s;
			return (int64_t)(rt->next - s);
		}
	}
	return TRC_REQ_NULL;
}

void trc_reqtab_unclaim(struct trc_reqtab *rt, uint64_t seq)
{
	if (seq >= rt->head && seq < rt->next && rt->live[seq % rt->cap] == 2)
		rt->live[seq % rt->cap] = 1;
}

void trc_reqtab_retire(struct trc_reqtab *rt, uint64_t seq)
{
	if (seq >= rt->head && seq < rt->next)
		rt->live[seq % rt->cap] = 0;
	while (rt->head < rt->next && !rt->live[rt->head % rt->cap])
		rt->head++;
}
