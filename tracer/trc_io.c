/* trc_io.c: trace files. Compressed binary (rsd), flat records, text.
 *
 * All integers are LEB128 varints (signed ones zigzagged), so a loop count
 * of 100 costs one byte and a participant list of all ranks three. The
 * reader checks every length against the bytes left and every index
 * against its table, so no input can make it read out of bounds. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trc.h"
#include "trc_internal.h"

#define TRC_MAGIC "PTLTRACE"
#define TRC_FLAT_MAGIC "PTLFLAT1"
#define TRC_VERSION 1
#define TRC_MAXDEPTH 64
#define TRC_MAXRANKS (1 << 24)

/* ---- crc32 (IEEE, reflected), table built on first use ---- */
static uint32_t crc_tab[256];
static int crc_ready;

uint32_t trc_crc32(uint32_t crc, const void *p, size_t len)
{
	if (!crc_ready) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			crc_tab[i] = c;
		}
		crc_ready = 1;
	}
	const uint8_t *b = p;
	crc = ~crc;
	while (len--)
		crc = crc_tab[(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---- output buffer ---- */
void trc_buf_free(struct trc_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

static void put(struct trc_buf *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *q = realloc(b->p, cap);
		if (!q) {
			b->oom = 1;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_u8(struct trc_buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_uv(struct trc_buf *b, uint64_t v)
{
	uint8_t t[10];
	int n = 0;
	do {
		t[n] = v & 0x7f;
		v >>= 7;
		if (v)
			t[n] |= 0x80;
		n++;
	} while (v);
	put(b, t, (size_t)n);
}

static void put_sv(struct trc_buf *b, int64_t v)
{
	put_uv(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void put_u32(struct trc_buf *b, uint32_t v)
{
	uint8_t t[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };
	put(b, t, 4);
}

void trc_put_rset(struct trc_buf *b, const struct trc_rset *s)
{
	size_t nb = trc_rset_blocks(s, NULL, 0);
	struct trc_rblock *k = nb ? malloc(nb * sizeof *k) : NULL;
	if (nb && !k) {
		b->oom = 1;
		return;
	}
	trc_rset_blocks(s, k, nb);
	put_uv(b, nb);
	for (size_t i = 0; i < nb; i++) {
		put_uv(b, (uint64_t)k[i].start);
		put_uv(b, (uint64_t)k[i].nd);
		for (int d = 0; d < k[i].nd; d++) {
			put_uv(b, k[i].count[d]);
			put_sv(b, k[i].stride[d]);
		}
	}
	free(k);
}

/* ---- signature table ---- */
struct sigtab {
	uint32_t *s;
	size_t n, cap;
};

static size_t sig_index(struct sigtab *t, uint32_t sig, int add)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->s[i] == sig)
			return i;
	if (!add)
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		uint32_t *s = realloc(t->s, cap * sizeof *s);
		if (!s)
			return 0;
		t->s = s;
		t->cap = cap;
	}
	t->s[t->n] = sig;
	return t->n++;
}

static void collect_sigs(const struct trc_list *l, struct sigtab *t)
{
	for (const struct trc_node *n = l->head; n; n = n->next)
		if (n->is_loop)
			collect_sigs(&n->body, t);
		else
			sig_index(t, n->ev.sig, 1);
}

/* Times as a 1-2 byte log-scale code (8 significant bits, 0.4%): a
 * trace's size must not grow with how long the program ran. */
static uint64_t tq_enc(uint64_t v)
{
	if (v < 256)
		return v;
	int e = 63;
	while (!(v >> e))
		e--;
	return 256 + (uint64_t)(e - 8) * 128 + ((v >> (e - 7)) & 0x7f);
}

static uint64_t tq_dec(uint64_t c)
{
	if (c < 256)
		return c;
	uint64_t e = (c - 256) / 128 + 8, m = (c - 256) % 128;
	if (e > 63)
		return UINT64_MAX;
	return ((128 + m) << (e - 7)) + (1ull << (e - 8));
}

/* A parameter-list entry: flags (peer flags, 4: own participants, 8: same
 * slot as the previous entry, else the next one), values, participants. */
static void put_peer_x(struct trc_buf *b, const struct trc_val *v, const struct trc_rset *who, int same_slot)
{
	put_u8(b, (uint8_t)(v->pf | (who ? 4 : 0) | (same_slot ? 8 : 0)));
	if (v->pf & TRC_PF_ABS)
		put_sv(b, v->v);
	if (v->pf & TRC_PF_REL)
		put_sv(b, v->rel);
	if (who)
		trc_put_rset(b, who);
}

static void put_peer(struct trc_buf *b, const struct trc_val *v)
{
	put_u8(b, v->pf);
	if (v->pf & TRC_PF_ABS)
		put_sv(b, v->v);
	if (v->pf & TRC_PF_REL)
		put_sv(b, v->rel);
}

static void put_histo(struct trc_buf *b, const struct trc_histo *h)
{
	put_uv(b, h->nb);
	for (unsigned i = 0; i < h->nb; i++) {
		put_sv(b, h->v[i]);
		put_uv(b, h->n[i]);
	}
}

static void put_list(struct trc_buf *b, const struct trc_list *l, struct sigtab *st);

static void put_node(struct trc_buf *b, const struct trc_node *n, struct sigtab *st)
{
	uint8_t tag = (n->is_loop ? 1 : 0) | (n->ranks ? 2 : 0) |
		      ((n->is_loop ? n->ih != NULL : n->ev.h != NULL) ? 4 : 0) |
		      (!n->is_loop && n->ev.t.n ? 8 : 0);
	put_u8(b, tag);
	if (n->ranks)
		trc_put_rset(b, n->ranks);
	if (n->is_loop) {
		put_uv(b, n->iters);
		if (n->ih)
			put_histo(b, n->ih);
		put_list(b, &n->body, st);
		return;
	}
	const struct trc_ev *e = &n->ev;
	const struct trc_opdesc *d = &trc_optab[e->op];
	put_uv(b, e->op);
	put_uv(b, sig_index(st, e->sig, 0));
	uint32_t ai = 0;
	for (unsigned i = 0; i < d->nf; i++) {
		switch (d->kinds[i]) {
		case TRC_K_PEER:
			put_peer(b, &e->f[i]);
			break;
		case TRC_K_INTS:
		case TRC_K_REQS:
			put_uv(b, (uint64_t)e->f[i].v);
			for (int64_t k = 0; k < e->f[i].v && ai < e->narr; k++)
				put_sv(b, e->arr[ai++]);
			break;
		default:
			put_sv(b, e->f[i].v);
		}
	}
	put_uv(b, e->npl);
	for (uint32_t i = 0; i < e->npl; i++)
		put_peer_x(b, &e->pl[i], e->plr ? e->plr[i] : NULL, i && e->pl[i].slot == e->pl[i - 1].slot);
	if (e->h)
		for (unsigned i = 0; i < d->nf; i++)
			put_histo(b, &e->h[i]);
	if (e->t.n) {
		/* mean, min, max: enough to replay; the sample count follows
		 * from the structure (trc_io sets it on reading) */
		put_uv(b, tq_enc(e->t.sum / e->t.n));
		put_uv(b, tq_enc(e->t.min));
		put_uv(b, tq_enc(e->t.max));
	}
}

static void put_list(struct trc_buf *b, const struct trc_list *l, struct sigtab *st)
{
	put_uv(b, l->n);
	for (const struct trc_node *n = l->head; n; n = n->next)
		put_node(b, n, st);
}

int trc_serialize(const struct trc_trace *t, struct trc_buf *b)
{
	struct sigtab st = { 0 };
	collect_sigs(&t->top, &st);
	put(b, TRC_MAGIC, 8);
	put_u8(b, TRC_VERSION);
	put_uv(b, t->flags);
	put_uv(b, (uint64_t)t->level);
	put_uv(b, (uint64_t)t->nranks);
	put_sv(b, t->rank);
	put_sv(b, t->histo < 0 ? -1 : (int64_t)(t->histo * 1000));
	trc_put_rset(b, &t->all);
	put_uv(b, st.n);
	for (size_t i = 0; i < st.n; i++)
		put_u32(b, st.s[i]);
	put_list(b, &t->top, &st);
	free(st.s);
	put_u32(b, b->oom ? 0 : trc_crc32(0, b->p, b->len));
	return b->oom ? -ENOMEM : 0;
}

/* ---- reader ---- */
struct rd {
	const uint8_t *p;
	size_t len, off;
	char *err;
	size_t errlen;
	int failed;
	int32_t nranks;
	uint32_t *sigs;
	uint64_t nsig;
};

static int fail(struct rd *r, const char *what)
{
	if (!r->failed)
		snprintf(r->err, r->errlen, "%s at byte %zu", what, r->off);
	r->failed = 1;
	return -1;
}

static int get_u8(struct rd *r, uint8_t *v)
{
	if (r->off >= r->len)
		return fail(r, "truncated trace");
	*v = r->p[r->off++];
	return 0;
}

static int get_uv(struct rd *r, uint64_t *v)
{
	uint64_t x = 0;
	for (int s = 0; s < 64; s += 7) {
		uint8_t c;
		if (get_u8(r, &c))
			return -1;
		x |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return fail(r, "corrupt trace: varint too long");
}

static int get_sv(struct rd *r, int64_t *v)
{
	uint64_t u;
	if (get_uv(r, &u))
		return -1;
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return 0;
}

static int get_u32(struct rd *r, uint32_t *v)
{
	if (r->len - r->off < 4 || r->off > r->len)
		return fail(r, "truncated trace");
	const uint8_t *p = r->p + r->off;
	*v = p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	r->off += 4;
	return 0;
}

/* A count that must fit in the bytes left (each item takes at least one). */
static int get_count(struct rd *r, uint64_t *n, const char *what)
{
	if (get_uv(r, n))
		return -1;
	if (*n > r->len - r->off)
		return fail(r, what);
	return 0;
}

static int get_rset(struct rd *r, struct trc_rset *s)
{
	uint64_t nb;
	trc_rset_init(s);
	if (get_count(r, &nb, "corrupt trace: participant list too long"))
		return -1;
	for (uint64_t i = 0; i < nb; i++) {
		uint64_t start, nd, total = 1;
		uint64_t cnt[TRC_RDIMS];
		int64_t str[TRC_RDIMS];
		if (get_uv(r, &start) || get_uv(r, &nd))
			return -1;
		if (nd < 1 || nd > TRC_RDIMS)
			return fail(r, "corrupt trace: bad participant block");
		for (uint64_t d = 0; d < nd; d++) {
			if (get_uv(r, &cnt[d]) || get_sv(r, &str[d]))
				return -1;
			if (cnt[d] < 1 || cnt[d] > (uint64_t)r->nranks || str[d] > r->nranks || str[d] < -r->nranks)
				return fail(r, "corrupt trace: bad participant block");
			total *= cnt[d];
			if (total > (uint64_t)r->nranks)
				return fail(r, "corrupt trace: participant block larger than the job");
		}
		if (start >= (uint64_t)r->nranks)
			return fail(r, "corrupt trace: participant rank out of range");
		for (uint64_t k = 0; k < total; k++) {
			int64_t rank = (int64_t)start;
			uint64_t q = k;
			for (uint64_t d = 0; d < nd; d++) {
				rank += (int64_t)(q % cnt[d]) * str[d];
				q /= cnt[d];
			}
			if (rank < 0 || rank >= r->nranks)
				return fail(r, "corrupt trace: participant rank out of range");
			if (trc_rset_add(s, (int32_t)rank))
				return fail(r, "out of memory");
		}
		if (s->n > (uint32_t)r->nranks)
			return fail(r, "corrupt trace: participant list larger than the job");
	}
	return 0;
}

/* The absolute and/or rank-relative values flags pf announce, checked
 * against the job: a peer field and a parameter list entry alike. */
static int get_peer_values(struct rd *r, uint8_t pf, struct trc_val *v)
{
	if ((pf & TRC_PF_ABS) && get_sv(r, &v->v))
		return -1;
	if ((pf & TRC_PF_REL) && get_sv(r, &v->rel))
		return -1;
	if (v->v < TRC_ANY_SOURCE || v->v >= r->nranks || v->rel <= -r->nranks || v->rel >= r->nranks)
		return fail(r, "corrupt trace: peer out of range");
	return 0;
}

static int get_peer(struct rd *r, struct trc_val *v)
{
	uint8_t pf;
	memset(v, 0, sizeof *v);
	if (get_u8(r, &pf))
		return -1;
	if (pf & ~(TRC_PF_ABS | TRC_PF_REL))
		return fail(r, "corrupt trace: bad peer flags");
	v->pf = pf;
	return get_peer_values(r, pf, v);
}

static int get_histo(struct rd *r, struct trc_histo *h)
{
	uint64_t nb;
	if (get_uv(r, &nb))
		return -1;
	if (nb > TRC_HBINS)
		return fail(r, "corrupt trace: histogram too large");
	h->nb = (unsigned)nb;
	for (unsigned i = 0; i < h->nb; i++)
		if (get_sv(r, &h->v[i]) || get_uv(r, &h->n[i]))
			return -1;
	return 0;
}

static int get_list(struct rd *r, struct trc_list *l, int depth);

static int get_node(struct rd *r, struct trc_node *n, int depth)
{
	uint8_t tag;
	if (get_u8(r, &tag))
		return -1;
	if (tag & ~15u || (tag & 9) == 9)
		return fail(r, "corrupt trace: bad node tag");
	n->is_loop = tag & 1;
	if (tag & 2) {
		if (!(n->ranks = calloc(1, sizeof *n->ranks)))
			return fail(r, "out of memory");
		if (get_rset(r, n->ranks))
			return -1;
	}
	if (n->is_loop) {
		if (get_uv(r, &n->iters))
			return -1;
		if (!n->iters)
			return fail(r, "corrupt trace: loop of zero iterations");
		if (tag & 4) {
			if (!(n->ih = calloc(1, sizeof *n->ih)))
				return fail(r, "out of memory");
			if (get_histo(r, n->ih))
				return -1;
		}
		if (get_list(r, &n->body, depth + 1))
			return -1;
		if (!n->body.n)
			return fail(r, "corrupt trace: empty loop");
		return 0;
	}
	struct trc_ev *e = &n->ev;
	uint64_t op, si;
	if (get_uv(r, &op) || get_uv(r, &si))
		return -1;
	if (op >= TRC_NOPS)
		return fail(r, "corrupt trace: unknown MPI call");
	if (si >= r->nsig)
		return fail(r, "corrupt trace: bad signature index");
	e->op = (uint16_t)op;
	e->sig = r->sigs[si];
	const struct trc_opdesc *d = &trc_optab[op];
	for (unsigned i = 0; i < d->nf; i++) {
		uint64_t len;
		switch (d->kinds[i]) {
		case TRC_K_PEER:
			if (get_peer(r, &e->f[i]))
				return -1;
			break;
		case TRC_K_INTS:
		case TRC_K_REQS:
			if (get_count(r, &len, "corrupt trace: array too long"))
				return -1;
			e->f[i].v = (int64_t)len;
			if (len) {
				int64_t *a = realloc(e->arr, (e->narr + len) * sizeof *a);
				if (!a)
					return fail(r, "out of memory");
				e->arr = a;
				for (uint64_t k = 0; k < len; k++)
					if (get_sv(r, &e->arr[e->narr++]))
						return -1;
			}
			break;
		default:
			if (get_sv(r, &e->f[i].v))
				return -1;
		}
	}
	uint64_t npl;
	if (get_count(r, &npl, "corrupt trace: parameter list too long"))
		return -1;
	if (npl > TRC_MAXPL || (npl && trc_peer_index(e->op) < 0))
		return fail(r, "corrupt trace: bad parameter list");
	if (npl) {
		if (!(e->pl = calloc(npl, sizeof *e->pl)))
			return fail(r, "out of memory");
		e->npl = (uint32_t)npl;
		for (uint64_t i = 0; i < npl; i++) {
			uint8_t pf;
			struct trc_val *v = &e->pl[i];
			if (get_u8(r, &pf))
				return -1;
			if (pf & ~15u || (!i && (pf & 8)))
				return fail(r, "corrupt trace: bad parameter list entry");
			v->pf = pf & 3;
			v->slot = (uint16_t)(!i ? 0 : (pf & 8) ? e->pl[i - 1].slot : e->pl[i - 1].slot + 1);
			if (get_peer_values(r, pf, v))
				return -1;
			if (pf & 4) {	/* entry with its own participants */
				if (!e->plr && !(e->plr = calloc(npl, sizeof *e->plr)))
					return fail(r, "out of memory");
				if (!(e->plr[i] = calloc(1, sizeof *e->plr[i])))
					return fail(r, "out of memory");
				if (get_rset(r, e->plr[i]))
					return -1;
			}
		}
	}
	if (tag & 4) {
		if (!(e->h = calloc(TRC_MAXF, sizeof *e->h)))
			return fail(r, "out of memory");
		for (unsigned i = 0; i < d->nf; i++)
			if (get_histo(r, &e->h[i]))
				return -1;
	}
	if (tag & 8) {
		uint64_t mean, mn, mx;
		if (get_uv(r, &mean) || get_uv(r, &mn) || get_uv(r, &mx))
			return -1;
		e->t.n = 1;	/* until set_counts() */
		e->t.sum = tq_dec(mean);
		e->t.min = tq_dec(mn);
		e->t.max = tq_dec(mx);
	}
	return 0;
}

static int get_list(struct rd *r, struct trc_list *l, int depth)
{
	uint64_t n;
	if (depth > TRC_MAXDEPTH)
		return fail(r, "corrupt trace: loops nested too deep");
	if (get_count(r, &n, "corrupt trace: node count too large"))
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		struct trc_node *x = calloc(1, sizeof *x);
		if (!x)
			return fail(r, "out of memory");
		trc_list_append(l, x);
		if (get_node(r, x, depth))
			return -1;
	}
	return 0;
}

static int read_flat(struct trc_trace *t, struct rd *r);

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* Sample counts of the time summaries: how often each event ran. */
static void set_counts(struct trc_list *l, uint32_t nparent, uint64_t mult)
{
	for (struct trc_node *n = l->head; n; n = n->next) {
		uint32_t nr = n->ranks ? n->ranks->n : nparent;
		if (n->is_loop) {
			set_counts(&n->body, nr, sat_mul(mult, n->iters));
			continue;
		}
		struct trc_ev *e = &n->ev;
		if (!e->t.n)
			continue;
		uint64_t k = 0;
		if (!e->npl)
			k = nr;
		for (uint32_t i = 0; i < e->npl; i++)
			k += e->plr && e->plr[i] ? e->plr[i]->n : nr;
		e->t.n = sat_mul(mult, k ? k : 1);
		e->t.sum = sat_mul(e->t.sum, e->t.n);
	}
}

int trc_deserialize(struct trc_trace *t, const uint8_t *p, size_t len, char *err, size_t errlen)
{
	struct rd r = { .p = p, .len = len, .err = err, .errlen = errlen };
	trc_trace_init(t, TRC_LEVEL_GLOB, -1, 0, -1);
	if (len < 8 || (memcmp(p, TRC_MAGIC, 8) && memcmp(p, TRC_FLAT_MAGIC, 8))) {
		snprintf(err, errlen, "not a ptl trace (bad magic)");
		return -1;
	}
	if (!memcmp(p, TRC_FLAT_MAGIC, 8)) {
		r.off = 8;
		return read_flat(t, &r);
	}
	if (len < 13) {
		snprintf(err, errlen, "truncated trace (%zu bytes)", len);
		return -1;
	}
	uint32_t crc = p[len - 4] | (uint32_t)p[len - 3] << 8 | (uint32_t)p[len - 2] << 16 | (uint32_t)p[len - 1] << 24;
	if (p[8] != TRC_VERSION) {
		snprintf(err, errlen, "trace format version %u, this ptl reads version %u", p[8], TRC_VERSION);
		return -1;
	}
	if (trc_crc32(0, p, len - 4) != crc) {
		snprintf(err, errlen, "checksum mismatch: trace is truncated or corrupted");
		return -1;
	}
	r.len = len - 4;
	r.off = 9;
	uint64_t flags, level, nranks;
	int64_t rank, histo;
	if (get_uv(&r, &flags) || get_uv(&r, &level) || get_uv(&r, &nranks) || get_sv(&r, &rank) ||
	    get_sv(&r, &histo))
		goto bad;
	if (level > TRC_LEVEL_GLOB || nranks < 1 || nranks > TRC_MAXRANKS || rank < -1 ||
	    rank >= (int64_t)nranks || histo < -1 || histo > 100000) {
		fail(&r, "corrupt trace: bad header");
		goto bad;
	}
	t->flags = (uint32_t)flags;
	t->level = (int)level;
	t->nranks = r.nranks = (int32_t)nranks;
	t->rank = (int32_t)rank;
	t->histo = histo < 0 ? -1 : (double)histo / 1000;
	trc_rset_free(&t->all);
	if (get_rset(&r, &t->all))
		goto bad;
	if (get_count(&r, &r.nsig, "corrupt trace: signature table too long"))
		goto bad;
	if (r.nsig && !(r.sigs = calloc(r.nsig, sizeof *r.sigs))) {
		fail(&r, "out of memory");
		goto bad;
	}
	for (uint64_t i = 0; i < r.nsig; i++)
		if (get_u32(&r, &r.sigs[i]))
			goto bad;
	if (get_list(&r, &t->top, 0))
		goto bad;
	if (r.off != r.len) {
		fail(&r, "corrupt trace: trailing bytes");
		goto bad;
	}
	set_counts(&t->top, t->all.n, 1);
	free(r.sigs);
	return 0;
bad:
	free(r.sigs);
	trc_trace_free(t);
	trc_trace_init(t, TRC_LEVEL_GLOB, -1, 0, -1);
	return -1;
}

/* ---- flat records ---- */
static void put_flat(struct trc_buf *b, const struct trc_flat *e)
{
	const struct trc_opdesc *d = &trc_optab[e->op];
	put_u8(b, 1);
	put_uv(b, e->op);
	put_u32(b, e->sig);
	uint32_t ai = 0;
	for (unsigned i = 0; i < d->nf; i++) {
		if (d->kinds[i] == TRC_K_INTS || d->kinds[i] == TRC_K_REQS) {
			put_uv(b, (uint64_t)e->v[i]);
			for (int64_t k = 0; k < e->v[i] && ai < e->narr; k++)
				put_sv(b, e->arr[ai++]);
		} else {
			put_sv(b, e->v[i]);
		}
	}
	put_uv(b, e->tns);
}

int trc_flatw_open(struct trc_flatw *w, const char *path, int32_t rank, int32_t nranks)
{
	struct trc_buf b = { 0 };
	w->f = fopen(path, "wb");
	if (!w->f)
		return -errno;
	put(&b, TRC_FLAT_MAGIC, 8);
	put_u8(&b, TRC_VERSION);
	put_sv(&b, rank);
	put_uv(&b, (uint64_t)nranks);
	w->rank = rank;
	w->crc = trc_crc32(0, b.p, b.len);
	int rc = fwrite(b.p, 1, b.len, w->f) == b.len ? 0 : -EIO;
	trc_buf_free(&b);
	return rc;
}

int trc_flatw_put(struct trc_flatw *w, const struct trc_flat *e)
{
	uint8_t tmp[512];
	struct trc_buf b = { .p = tmp, .cap = sizeof tmp };
	put_flat(&b, e);
	if (b.oom)
		return -ENOMEM;
	w->crc = trc_crc32(w->crc, b.p, b.len);
	int rc = fwrite(b.p, 1, b.len, w->f) == b.len ? 0 : -EIO;
	if (b.p != tmp)
		free(b.p);
	return rc;
}

int trc_flatw_close(struct trc_flatw *w)
{
	uint8_t end[5] = { 0, w->crc & 0xff, (w->crc >> 8) & 0xff, (w->crc >> 16) & 0xff, w->crc >> 24 };
	int rc = fwrite(end, 1, 5, w->f) == 5 ? 0 : -EIO;
	if (fclose(w->f))
		rc = -EIO;
	w->f = NULL;
	return rc;
}

static int read_flat(struct trc_trace *t, struct rd *r)
{
	uint8_t ver;
	int64_t rank;
	uint64_t nranks;
	if (get_u8(r, &ver))
		return -1;
	if (ver != TRC_VERSION) {
		snprintf(r->err, r->errlen, "flat trace format version %u, this ptl reads version %u", ver, TRC_VERSION);
		return -1;
	}
	if (get_sv(r, &rank) || get_uv(r, &nranks))
		return -1;
	if (nranks < 1 || nranks > TRC_MAXRANKS || rank < 0 || rank >= (int64_t)nranks)
		return fail(r, "corrupt flat trace: bad header");
	trc_trace_free(t);
	trc_trace_init(t, TRC_LEVEL_DUMP, (int32_t)rank, (int32_t)nranks, -1);
	r->nranks = (int32_t)nranks;
	for (;;) {
		uint8_t tag;
		if (get_u8(r, &tag))
			goto bad;
		if (tag == 0)
			break;
		if (tag != 1) {
			fail(r, "corrupt flat trace: bad record tag");
			goto bad;
		}
		struct trc_ev e;
		uint64_t op, tns;
		memset(&e, 0, sizeof e);
		if (get_uv(r, &op))
			goto bad;
		if (op >= TRC_NOPS) {
			fail(r, "corrupt flat trace: unknown MPI call");
			goto bad;
		}
		e.op = (uint16_t)op;
		if (get_u32(r, &e.sig))
			goto bad;
		const struct trc_opdesc *d = &trc_optab[op];
		for (unsigned i = 0; i < d->nf; i++) {
			if (d->kinds[i] == TRC_K_INTS || d->kinds[i] == TRC_K_REQS) {
				uint64_t len;
				if (get_count(r, &len, "corrupt flat trace: array too long"))
					goto badev;
				e.f[i].v = (int64_t)len;
				if (len) {
					int64_t *a = realloc(e.arr, (e.narr + len) * sizeof *a);
					if (!a) {
						fail(r, "out of memory");
						goto badev;
					}
					e.arr = a;
					for (uint64_t k = 0; k < len; k++)
						if (get_sv(r, &e.arr[e.narr++]))
							goto badev;
				}
			} else if (get_sv(r, &e.f[i].v)) {
				goto badev;
			} else if (d->kinds[i] == TRC_K_PEER &&
				   (e.f[i].v < TRC_ANY_SOURCE || e.f[i].v >= (int64_t)nranks)) {
				fail(r, "corrupt flat trace: peer out of range");
				goto badev;
			}
		}
		if (get_uv(r, &tns))
			goto badev;
		trc_tstat_add(&e.t, tns);
		trc_ev_setpeers(&e, t->rank, t->nranks);
		if (trc_append(t, &e)) {
			fail(r, "out of memory");
			goto badev;
		}
		trc_ev_free(&e);
		continue;
badev:
		trc_ev_free(&e);
		goto bad;
	}
	{
		size_t body = r->off - 1;	/* the end tag is outside the checksum */
		uint32_t crc;
		if (get_u32(r, &crc))
			goto bad;
		if (trc_crc32(0, r->p, body) != crc) {
			snprintf(r->err, r->errlen, "checksum mismatch: flat trace is truncated or corrupted");
			goto bad2;
		}
		if (r->off != r->len) {
			fail(r, "corrupt flat trace: trailing bytes");
			goto bad;
		}
	}
	return 0;
bad:
	if (!r->failed)
		fail(r, "corrupt flat trace");
bad2:
	trc_trace_free(t);
	trc_trace_init(t, TRC_LEVEL_GLOB, -1, 0, -1);
	return -1;
}

int trc_read_mem(struct trc_trace *t, const uint8_t *p, size_t len, char *err, size_t errlen)
{
	return trc_deserialize(t, p, len, err, errlen);
}

int trc_read_file(struct trc_trace *t, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	trc_trace_init(t, TRC_LEVEL_GLOB, -1, 0, -1);
	if (!f) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	struct trc_buf b = { 0 };
	uint8_t tmp[65536];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		put(&b, tmp, n);
	int rerr = ferror(f);
	fclose(f);
	if (rerr || b.oom) {
		snprintf(err, errlen, "cannot read %s", path);
		trc_buf_free(&b);
		return -1;
	}
	char e2[200];
	int rc = trc_deserialize(t, b.p ? b.p : (const uint8_t *)"", b.len, e2, sizeof e2);
	if (rc)
		snprintf(err, errlen, "%s: %s", path, e2);
	trc_buf_free(&b);
	return rc;
}

/* ---- text ---- */
static void fmt_peer(char *s, size_t n, const struct trc_val *v)
{
	/* absolute ranks plain, offsets signed: "3", "+1", "3(+1)" */
	if (v->v == TRC_ANY_SOURCE && (v->pf & TRC_PF_ABS))
		snprintf(s, n, "any");
	else if (v->v == TRC_PROC_NULL && (v->pf & TRC_PF_ABS))
		snprintf(s, n, "null");
	else if (v->pf == (TRC_PF_ABS | TRC_PF_REL))
		snprintf(s, n, "%" PRId64 "(%+" PRId64 ")", v->v, v->rel);
	else if (v->pf & TRC_PF_ABS)
		snprintf(s, n, "%" PRId64, v->v);
	else
		snprintf(s, n, "%+" PRId64, v->rel);
}

static void print_ev(FILE *out, const struct trc_ev *e)
{
	const struct trc_opdesc *d = &trc_optab[e->op];
	int pi = trc_peer_index(e->op);
	uint32_t ai = 0;
	char s[64];
	fprintf(out, "%s", d->name);
	for (unsigned i = 0; i < d->nf; i++) {
		fprintf(out, " %s=", d->fnames[i]);
		switch (d->kinds[i]) {
		case TRC_K_PEER:
			if ((int)i == pi && e->npl) {
				fputc('{', out);
				for (uint32_t k = 0; k < e->npl; k++) {
					fmt_peer(s, sizeof s, &e->pl[k]);
					fprintf(out, "%s%s", !k ? "" : e->pl[k].slot == e->pl[k - 1].slot ? "|" : ",", s);
					if (e->plr && e->plr[k]) {
						char rs[128];
						trc_rset_format(e->plr[k], rs, sizeof rs);
						fprintf(out, "@%s", rs);
					}
				}
				fputc('}', out);
			} else {
				fmt_peer(s, sizeof s, &e->f[i]);
				fputs(s, out);
			}
			break;
		case TRC_K_DTYPE: {
			int64_t code = e->f[i].v >> 32;
			fprintf(out, "%s:%" PRId64, code >= 0 && code < TRC_NDT ? trc_dt_names[code] : "?",
				e->f[i].v & 0xffffffff);
			break;
		}
		case TRC_K_OP:
			fprintf(out, "%s", e->f[i].v >= 0 && e->f[i].v < TRC_NMOP ? trc_mop_names[e->f[i].v] : "?");
			break;
		case TRC_K_INTS:
		case TRC_K_REQS:
			fputc('[', out);
			for (int64_t k = 0; k < e->f[i].v && ai < e->narr; k++)
				fprintf(out, "%s%" PRId64, k ? "," : "", e->arr[ai++]);
			fputc(']', out);
			break;
		default:
			fprintf(out, "%" PRId64, e->f[i].v);
			if (e->h && e->h[i].nb > 1) {
				fputs("~{", out);
				for (unsigned k = 0; k < e->h[i].nb; k++)
					fprintf(out, "%s%" PRId64 ":%" PRIu64, k ? "," : "", e->h[i].v[k], e->h[i].n[k]);
				fputc('}', out);
			}
		}
	}
	fprintf(out, " @%08x", e->sig);
	if (e->t.n)
		fprintf(out, " t=%" PRIu64 "/%" PRIu64 "/%" PRIu64 "ns", e->t.min, e->t.sum / e->t.n, e->t.max);
}

static void print_list(FILE *out, const struct trc_list *l, int depth)
{
	char rs[256];
	for (const struct trc_node *n = l->head; n; n = n->next) {
		fprintf(out, "%*s", 2 * depth, "");
		if (n->is_loop) {
			fprintf(out, "loop %" PRIu64, n->iters);
			if (n->ih && n->ih->nb > 1) {
				fputs("~{", out);
				for (unsigned k = 0; k < n->ih->nb; k++)
					fprintf(out, "%s%" PRId64 ":%" PRIu64, k ? "," : "", n->ih->v[k], n->ih->n[k]);
				fputc('}', out);
			}
			fprintf(out, " (%zu)", n->body.n);
		} else {
			print_ev(out, &n->ev);
		}
		if (n->ranks) {
			trc_rset_format(n->ranks, rs, sizeof rs);
			fprintf(out, " ranks=%s", rs);
		}
		fputc('\n', out);
		if (n->is_loop)
			print_list(out, &n->body, depth + 1);
	}
}

void trc_print(const struct trc_trace *t, FILE *out)
{
	static const char *const lv[] = { "dump", "node", "glob" };
	char rs[256];
	trc_rset_format(&t->all, rs, sizeof rs);
	fprintf(out, "# ptl trace v%d level=%s ranks=%s of %d%s%s\n", TRC_VERSION,
		t->level >= 0 && t->level <= 2 ? lv[t->level] : "?", rs, t->nranks,
		t->flags & TRC_FL_LOSSY ? " LOSSY(histograms)" : "",
		t->flags & TRC_FL_INCOMPLETE ? " INCOMPLETE" : "");
	print_list(out, &t->top, 0);
}

static int emit_flat(const struct trc_flat *e, void *ctx)
{
	struct trc_flatw *w = ctx;
	return trc_flatw_put(w, e) ? -1 : 0;
}

int trc_write_file(const struct trc_trace *t, int fmt, const char *path, char *err, size_t errlen)
{
	int rc = 0;
	if (fmt == TRC_FMT_BINARY) {
		/* flat records, one file per rank of a merged trace */
		for (uint32_t i = 0; i < t->all.n && !rc; i++) {
			char p[4200];
			struct trc_flatw w;
			int32_t r = t->all.r[i];
			if (t->rank >= 0)
				snprintf(p, sizeof p, "%s", path);
			else
				snprintf(p, sizeof p, "%s.%d", path, r);
			if (trc_flatw_open(&w, p, r, t->nranks)) {
				snprintf(err, errlen, "cannot write trace %s: %s", p, strerror(errno));
				return -1;
			}
			rc = trc_expand(t, r, emit_flat, &w);
			if (trc_flatw_close(&w) || rc) {
				snprintf(err, errlen, "cannot write trace %s: write failed", p);
				return -1;
			}
		}
		return 0;
	}
	FILE *f = fopen(path, "wb");
	if (!f) {
		snprintf(err, errlen, "cannot write trace %s: %s", path, strerror(errno));
		return -1;
	}
	if (fmt == TRC_FMT_ASCII) {
		trc_print(t, f);
	} else {
		struct trc_buf b = { 0 };
		rc = trc_serialize(t, &b);
		if (!rc && fwrite(b.p, 1, b.len, f) != b.len)
			rc = -EIO;
		trc_buf_free(&b);
	}
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) || rc) {
		snprintf(err, errlen, "cannot write trace %s: write failed", path);
		return -1;
	}
	return 0;
}
