/* trc_ranks.c: participant lists.
 *
 * In memory a participant list is a sorted array (merge needs unions). On
 * disk and on the wire it is a list of blocks, each a start rank and up to
 * TRC_RDIMS nested (count, stride) dimensions, innermost first: all ranks
 * of a job are one block "0 x(n,1)", the interior of a 2-D grid is one
 * block with two dimensions. trc_io.c writes and reads the blocks. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trc.h"
#include "trc_internal.h"

void trc_rset_init(struct trc_rset *s)
{
	memset(s, 0, sizeof *s);
}

void trc_rset_free(struct trc_rset *s)
{
	free(s->r);
	memset(s, 0, sizeof *s);
}

static int reserve(struct trc_rset *s, uint32_t n)
{
	if (n <= s->cap)
		return 0;
	uint32_t cap = s->cap ? s->cap : 4;
	while (cap < n)
		cap *= 2;
	int32_t *r = realloc(s->r, cap * sizeof *r);
	if (!r)
		return -ENOMEM;
	s->r = r;
	s->cap = cap;
	return 0;
}

int trc_rset_add(struct trc_rset *s, int32_t r)
{
	uint32_t lo = 0, hi = s->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (s->r[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->n && s->r[lo] == r)
		return 0;
	if (reserve(s, s->n + 1))
		return -ENOMEM;
	memmove(s->r + lo + 1, s->r + lo, (s->n - lo) * sizeof *s->r);
	s->r[lo] = r;
	s->n++;
	return 0;
}

int trc_rset_union(struct trc_rset *dst, const struct trc_rset *src)
{
	if (!src->n)
		return 0;
	int32_t *m = malloc((dst->n + src->n) * sizeof *m);
	if (!m)
		return -ENOMEM;
	uint32_t i = 0, j = 0, k = 0;
	while (i < dst->n || j < src->n) {
		int32_t v;
		if (j >= src->n || (i < dst->n && dst->r[i] < src->r[j]))
			v = dst->r[i++];
		else if (i >= dst->n || src->r[j] < dst->r[i])
			v = src->r[j++];
		else {
			v = dst->r[i++];
			j++;
		}
		m[k++] = v;
	}
	free(dst->r);
	dst->r = m;
	dst->n = k;
	dst->cap = dst->n + src->n > k ? dst->n + src->n : k;
	dst->cap = k > dst->cap ? k : dst->cap;
	return 0;
}

int trc_rset_has(const struct trc_rset *s, int32_t r)
{
	uint32_t lo = 0, hi = s->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (s->r[mid] == r)
			return 1;
		if (s->r[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int trc_rset_eq(const struct trc_rset *a, const struct trc_rset *b)
{
	return a->n == b->n && (!a->n || !memcmp(a->r, b->r, a->n * sizeof *a->r));
}

struct trc_rset *trc_rset_dup(const struct trc_rset *s)
{
	struct trc_rset *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	if (s->n) {
		d->r = malloc(s->n * sizeof *d->r);
		if (!d->r) {
			free(d);
			return NULL;
		}
		memcpy(d->r, s->r, s->n * sizeof *d->r);
	}
	d->n = d->cap = s->n;
	return d;
}

/* Blocks: level 1 greedy strided runs; level k groups consecutive blocks
 * of level k-1 with equal shape and a constant distance between starts. */
size_t trc_rset_blocks(const struct trc_rset *s, struct trc_rblock *out, size_t max)
{
	size_t nb = 0;
	if (!s->n)
		return 0;
	struct trc_rblock *b = malloc(s->n * sizeof *b);
	if (!b)
		return 0;
	for (uint32_t i = 0; i < s->n;) {
		struct trc_rblock *k = &b[nb++];
		memset(k, 0, sizeof *k);
		k->start = s->r[i];
		k->nd = 1;
		k->count[0] = 1;
		k->stride[0] = 1;
		uint32_t j = i + 1;
		if (j < s->n) {
			int64_t d = s->r[j] - s->r[i];
			while (j < s->n && s->r[j] - s->r[j - 1] == d)
				j++;
			/* a lone pair mid-list is better left to the next run */
			if (j - i >= 3 || j == s->n) {
				k->count[0] = j - i;
				k->stride[0] = d;
				i = j;
				continue;
			}
		}
		i++;
	}
	for (int lvl = 1; lvl < TRC_RDIMS; lvl++) {
		size_t w = 0;
		for (size_t i = 0; i < nb;) {
			size_t j = i + 1;
			if (j < nb && b[j].nd == b[i].nd &&
			    !memcmp(b[j].count, b[i].count, sizeof b[i].count) &&
			    !memcmp(b[j].stride, b[i].stride, sizeof b[i].stride) && b[i].nd == lvl) {
				int64_t d = b[j].start - b[i].start;
				while (j + 1 < nb && b[j + 1].nd == b[i].nd &&
				       !memcmp(b[j + 1].count, b[i].count, sizeof b[i].count) &&
				       !memcmp(b[j + 1].stride, b[i].stride, sizeof b[i].stride) &&
				       b[j + 1].start - b[j].start == d)
					j++;
				j++;
			}
			struct trc_rblock k = b[i];
			if (j - i >= 2) {
				k.count[k.nd] = (uint32_t)(j - i);
				k.stride[k.nd] = b[i + 1].start - b[i].start;
				k.nd++;
			}
			b[w++] = k;
			i = j;
		}
		nb = w;
	}
	size_t n = nb < max ? nb : max;
	if (n)
		memcpy(out, b, n * sizeof *b);
	free(b);
	return nb;
}

size_t trc_rset_encoded_size(const struct trc_rset *s)
{
	struct trc_buf b = { 0 };
	trc_put_rset(&b, s);
	size_t n = b.len;
	trc_buf_free(&b);
	return n;
}

void trc_rset_format(const struct trc_rset *s, char *buf, size_t len)
{
	size_t nb = trc_rset_blocks(s, NULL, 0);
	struct trc_rblock *b = nb ? malloc(nb * sizeof *b) : NULL;
	size_t o = 0;
	buf[0] = 0;
	if (nb && !b)
		return;
	trc_rset_blocks(s, b, nb);
	for (size_t i = 0; i < nb && o + 1 < len; i++) {
		const struct trc_rblock *k = &b[i];
		int w;
		if (k->nd == 1 && k->count[0] == 1)
			w = snprintf(buf + o, len - o, "%s%lld", i ? "," : "", (long long)k->start);
		else if (k->nd == 1 && k->stride[0] == 1)
			w = snprintf(buf + o, len - o, "%s%lld-%lld", i ? "," : "", (long long)k->start,
				     (long long)(k->start + k->count[0] - 1));
		else {
			w = snprintf(buf + o, len - o, "%s%lld", i ? "," : "", (long long)k->start);
			for (int d = 0; d < k->nd && w >= 0 && o + (size_t)w < len; d++)
				w += snprintf(buf + o + w, len - o - w, "[%ux%+lld]", k->count[d], (long long)k->stride[d]);
		}
		if (w < 0)
			break;
		o += (size_t)w;
	}
	if (o >= len && len > 4)
		strcpy(buf + len - 4, "...");
	free(b);
}
