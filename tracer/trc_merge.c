/* trc_merge.c: cross-rank merge of two traces.
 *
 * Walks b's nodes in order and looks for each one in a, after the last
 * match. A match joins the participant lists; b's unmatched nodes go in
 * just before the next match (or at the end). Each rank's own order is
 * untouched, and a and b hold disjoint ranks, so the interleaving of
 * a-only and b-only nodes cannot change what any rank expands to. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trc.h"
#include "trc_internal.h"

static int peer_compat(const struct trc_val *a, const struct trc_val *b, uint8_t *pf)
{
	uint8_t f = a->pf & b->pf;
	if (a->v != b->v)
		f &= (uint8_t)~TRC_PF_ABS;
	if (a->rel != b->rel)
		f &= (uint8_t)~TRC_PF_REL;
	*pf = f;
	return f != 0;
}

static int ev_compat(const struct trc_ev *a, const struct trc_ev *b, double pct)
{
	if (a->op != b->op || a->sig != b->sig || a->narr != b->narr)
		return 0;
	const struct trc_opdesc *d = &trc_optab[a->op];
	int pi = trc_peer_index(a->op);
	uint8_t pf;
	for (unsigned i = 0; i < d->nf; i++) {
		if (d->kinds[i] == TRC_K_PEER) {
			if ((int)i == pi)
				continue;
			if (!peer_compat(&a->f[i], &b->f[i], &pf))
				return 0;
		} else if (d->kinds[i] == TRC_K_INT) {
			if (!trc_close_enough(a->f[i].v, b->f[i].v, pct))
				return 0;
		} else if (a->f[i].v != b->f[i].v) {
			return 0;
		}
	}
	if (a->narr && memcmp(a->arr, b->arr, a->narr * sizeof *a->arr))
		return 0;
	if (a->npl + b->npl > TRC_MAXPL)
		return 0;
	return 1;
}

/* A single first peer as a list of one, so lists can merge. */
static int as_list(struct trc_ev *e, int pi, const struct trc_rset *ranks)
{
	if (!e->npl) {
		if (!(e->pl = malloc(sizeof *e->pl)))
			return -ENOMEM;
		e->pl[0] = e->f[pi];
		e->pl[0].slot = 0;
		e->npl = 1;
		memset(&e->f[pi], 0, sizeof e->f[pi]);
	}
	if (!e->plr && !(e->plr = calloc(e->npl, sizeof *e->plr)))
		return -ENOMEM;
	for (uint32_t i = 0; i < e->npl; i++)
		if (!e->plr[i] && !(e->plr[i] = trc_rset_dup(ranks)))
			return -ENOMEM;
	return 0;
}

/* Merge b's list into a's. Entries keep the position (slot) they had in
 * their rank's list; each rank has one entry per slot, so ordering the
 * merged list by slot keeps every rank's order. Within a slot, entries
 * whose peers agree join (their participant sets unite): the left
 * neighbour is one entry "-1" for all ranks that have one and one entry
 * "null" for the left edge, at any job size. Both lists have their
 * participant sets materialized. */
static int pl_merge(struct trc_ev *a, struct trc_ev *b)
{
	uint32_t na = a->npl, nb = b->npl, n = 0;
	struct trc_val *pl = malloc((na + nb) * sizeof *pl);
	struct trc_rset **plr = calloc(na + nb, sizeof *plr);
	if (!pl || !plr) {
		free(pl);
		free(plr);
		return -ENOMEM;
	}
	int rc = 0;
	uint32_t i = 0, j = 0;
	while (i < na || j < nb) {
		uint16_t slot = i < na && (j >= nb || a->pl[i].slot <= b->pl[j].slot) ? a->pl[i].slot : b->pl[j].slot;
		uint32_t first = n;
		for (; i < na && a->pl[i].slot == slot; i++) {
			pl[n] = a->pl[i];
			plr[n++] = a->plr[i];
			a->plr[i] = NULL;
		}
		for (; j < nb && b->pl[j].slot == slot; j++) {
			uint32_t k;
			uint8_t pf = 0;
			for (k = first; k < n; k++)
				if (peer_compat(&pl[k], &b->pl[j], &pf))
					break;
			if (k < n) {
				pl[k].pf = pf;
				if (trc_rset_union(plr[k], b->plr[j]))
					rc = -ENOMEM;
			} else {
				pl[n] = b->pl[j];
				plr[n++] = b->plr[j];
				b->plr[j] = NULL;
			}
		}
	}
	free(a->pl);
	free(a->plr);
	a->pl = pl;
	a->plr = plr;
	a->npl = n;
	return rc;
}

static int ev_merge(struct trc_ev *a, const struct trc_rset *ra, struct trc_ev *b, const struct trc_rset *rb,
		    uint32_t *flags)
{
	const struct trc_opdesc *d = &trc_optab[a->op];
	int pi = trc_peer_index(a->op);
	uint8_t pf;
	if (pi >= 0) {
		/* the first peer: one value if it agrees, else a list */
		if (!a->npl && !b->npl && peer_compat(&a->f[pi], &b->f[pi], &pf)) {
			a->f[pi].pf = pf;
		} else {
			int rc;
			if ((rc = as_list(a, pi, ra)) || (rc = as_list(b, pi, rb)) || (rc = pl_merge(a, b)))
				return rc;
		}
	}
	for (unsigned i = 0; i < d->nf; i++) {
		if (d->kinds[i] == TRC_K_PEER && (int)i != pi) {
			peer_compat(&a->f[i], &b->f[i], &pf);
			a->f[i].pf = pf;
		} else if (d->kinds[i] == TRC_K_INT && (a->f[i].v != b->f[i].v || a->h || b->h)) {
			if (!a->h) {
				a->h = calloc(TRC_MAXF, sizeof *a->h);
				if (!a->h)
					return -ENOMEM;
			}
			trc_histo_merge(&a->h[i], b->h ? &b->h[i] : NULL, a->f[i].v, b->f[i].v);
			a->f[i].v = trc_histo_mode(&a->h[i]);
			if (a->h[i].nb > 1)
				*flags |= TRC_FL_LOSSY;
		}
	}
	trc_tstat_merge(&a->t, &b->t);
	return 0;
}

static int node_compat(const struct trc_node *a, const struct trc_node *b, double pct)
{
	if (a->is_loop != b->is_loop)
		return 0;
	if (!a->is_loop)
		return ev_compat(&a->ev, &b->ev, pct);
	if (!trc_close_enough((int64_t)a->iters, (int64_t)b->iters, pct))
		return 0;
	/* bodies merge node by node; ask only that they start alike */
	const struct trc_node *x = a->body.head, *y = b->body.head;
	while (x && y && x->is_loop && y->is_loop) {
		x = x->body.head;
		y = y->body.head;
	}
	if (!x || !y || x->is_loop != y->is_loop)
		return 0;
	return x->ev.op == y->ev.op && x->ev.sig == y->ev.sig;
}

static int materialize(struct trc_list *l, const struct trc_rset *parent)
{
	for (struct trc_node *n = l->head; n; n = n->next)
		if (!n->ranks && !(n->ranks = trc_rset_dup(parent)))
			return -ENOMEM;
	return 0;
}

static int merge_list(struct trc_list *a, struct trc_list *b, double pct, uint32_t *flags);

static int merge_node(struct trc_node *a, struct trc_node *b, double pct, uint32_t *flags)
{
	int rc;
	if (!a->is_loop) {
		rc = ev_merge(&a->ev, a->ranks, &b->ev, b->ranks, flags);
	} else {
		if ((rc = materialize(&a->body, a->ranks)) || (rc = materialize(&b->body, b->ranks)))
			return rc;
		if (a->iters != b->iters || a->ih || b->ih) {
			if (!a->ih && !(a->ih = calloc(1, sizeof *a->ih)))
				return -ENOMEM;
			trc_histo_merge(a->ih, b->ih, (int64_t)a->iters, (int64_t)b->iters);
			a->iters = (uint64_t)trc_histo_mode(a->ih);
			if (a->ih->nb > 1)
				*flags |= TRC_FL_LOSSY;
		}
		rc = merge_list(&a->body, &b->body, pct, flags);
	}
	if (!rc)
		rc = trc_rset_union(a->ranks, b->ranks);
	return rc;
}

static int merge_list(struct trc_list *a, struct trc_list *b, double pct, uint32_t *flags)
{
	struct trc_list pending = { 0 };
	struct trc_node *p = a->head;
	int rc = 0;
	while (b->head) {
		struct trc_node *bn = b->head;
		trc_list_remove(b, bn);
		struct trc_node *m = p;
		while (m && !node_compat(m, bn, pct))
			m = m->next;
		if (!m) {
			trc_list_append(&pending, bn);
			continue;
		}
		/* pending b-only nodes go just before the match */
		while (pending.head) {
			struct trc_node *q = pending.head;
			trc_list_remove(&pending, q);
			q->prev = m->prev;
			q->next = m;
			if (m->prev)
				m->prev->next = q;
			else
				a->head = q;
			m->prev = q;
			a->n++;
		}
		rc = merge_node(m, bn, pct, flags);
		trc_node_free(bn);
		if (rc)
			break;
		p = m->next;
	}
	while (pending.head) {
		struct trc_node *q = pending.head;
		trc_list_remove(&pending, q);
		trc_list_append(a, q);
	}
	trc_list_free(b);
	return rc;
}

/* Drop participant lists equal to the enclosing one. */
static void normalize(struct trc_list *l, const struct trc_rset *parent)
{
	for (struct trc_node *n = l->head; n; n = n->next) {
		const struct trc_rset *mine = n->ranks ? n->ranks : parent;
		if (n->is_loop)
			normalize(&n->body, mine);
		else if (n->ev.plr) {
			int any = 0;
			for (uint32_t i = 0; i < n->ev.npl; i++) {
				if (n->ev.plr[i] && trc_rset_eq(n->ev.plr[i], mine)) {
					trc_rset_free(n->ev.plr[i]);
					free(n->ev.plr[i]);
					n->ev.plr[i] = NULL;
				}
				any |= n->ev.plr[i] != NULL;
			}
			if (!any) {
				free(n->ev.plr);
				n->ev.plr = NULL;
			}
		}
		if (n->ranks && trc_rset_eq(n->ranks, parent)) {
			trc_rset_free(n->ranks);
			free(n->ranks);
			n->ranks = NULL;
		}
	}
}

int trc_merge(struct trc_trace *a, struct trc_trace *b)
{
	int rc;
	if ((rc = materialize(&a->top, &a->all)) || (rc = materialize(&b->top, &b->all)))
		return rc;
	double pct = a->histo >= 0 ? a->histo : -1;
	rc = merge_list(&a->top, &b->top, pct, &a->flags);
	if (!rc)
		rc = trc_rset_union(&a->all, &b->all);
	a->flags |= b->flags;
	if (a->nranks < b->nranks)
		a->nranks = b->nranks;
	a->rank = -1;
	a->level = TRC_LEVEL_GLOB;
	normalize(&a->top, &a->all);
	trc_trace_free(b);
	return rc;
}
