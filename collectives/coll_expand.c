/* coll_expand.c: turning a request into per-rank command lists, and reading
 * and checking them. The algorithms themselves live in coll_ring.c,
 * coll_hd.c, coll_tree.c and coll_misc.c; each emits one rank at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

struct coll_cmd *coll_emit(struct coll_gen *g, enum coll_kind kind, uint32_t step,
                           int dir, int chunk, int sub, int peer)
{
	if (g->err)
		return NULL;
	if (g->ncmds == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct coll_cmd *c = realloc(g->cmds, cap * sizeof *c);
		if (!c) {
			g->err = -ENOMEM;
			return NULL;
		}
		g->cmds = c;
		g->cap = cap;
	}
	struct coll_cmd *c = &g->cmds[g->ncmds++];
	memset(c, 0, sizeof *c);
	c->id = coll_id(g, step, dir, chunk, g->rank, sub);
	c->match = c->id;
	c->kind = (uint8_t)kind;
	c->step = step;
	c->dir = (uint8_t)dir;
	c->chunk = (uint16_t)chunk;
	c->peer = peer;
	c->peer_rank = peer < 0 ? COLL_PEER_NONE
	               : g->req->participants ? g->req->participants[peer] : peer;
	c->buf = COLL_BUF_DATA;
	c->src_buf = COLL_BUF_SCRATCH;
	return c;
}

struct coll_cmd *coll_emit_recv(struct coll_gen *g, enum coll_kind kind, uint32_t step,
                                int dir, int chunk, int sub, int peer, int peer_sub,
                                size_t off, size_t len)
{
	struct coll_cmd *c = coll_emit(g, kind, step, dir, chunk, sub, peer);
	if (c) {
		c->off = off;
		c->len = len;
		c->match = coll_id(g, step, dir, chunk, peer, peer_sub);
	}
	return c;
}

struct coll_cmd *coll_emit_send(struct coll_gen *g, uint32_t step, int dir, int chunk,
                                int sub, int peer, size_t off, size_t len)
{
	struct coll_cmd *c = coll_emit(g, COLL_SEND, step, dir, chunk, sub, peer);
	if (c) {
		c->off = off;
		c->len = len;
	}
	return c;
}

int coll_emit_input_copy(struct coll_gen *g, int sub)
{
	if (!g->req->input || !g->req->bytes)
		return 0;
	struct coll_cmd *c = coll_emit(g, COLL_COPY, 0, 0, 0, sub, COLL_PEER_NONE);
	if (!c)
		return g->err;
	c->len = g->req->bytes;
	c->src_buf = COLL_BUF_INPUT;
	return 0;
}

bool coll_input_apart(enum coll_op op, enum coll_algo algo)
{
	(void)algo; /* every allreduce, reduce and reduce_scatter algorithm does */
	return op == COLL_OP_ALLREDUCE || op == COLL_OP_REDUCE || op == COLL_OP_REDUCE_SCATTER;
}

static int cmd_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct coll_cmd *)a)->id, y = ((const struct coll_cmd *)b)->id;
	return x < y ? -1 : x > y;
}

/* Everything coll_expand and coll_expand_rank share: normalize, choose,
 * find the implementation, compute the shape. */
static int prepare(const struct coll_req *req, struct coll_sched *s, struct coll_gen *g,
                   const struct coll_algo_impl **impl, char *msg, size_t msglen)
{
	int rc = coll_req_normalize(req, &s->req, msg, msglen);
	if (rc)
		return rc;
	rc = coll_choose(&s->req, &s->choice, msg, msglen);
	if (rc)
		return rc;
	if (s->req.input && !coll_input_apart(s->req.op, s->choice.algo)) {
		coll_msg(msg, msglen, "%s %s cannot read its input apart (input)",
		         coll_op_name(s->req.op), coll_algo_name(s->choice.algo));
		return -ENOTSUP;
	}
	*impl = coll_impl(&s->req, s->choice.algo);
	if (!*impl) {
		coll_msg(msg, msglen, "algorithm %s does not implement %s",
		         coll_algo_name(s->choice.algo), coll_op_name(s->req.op));
		return -ENOTSUP;
	}
	memset(g, 0, sizeof *g);
	g->req = &s->req;
	g->algo = s->choice.algo;
	g->n = s->req.nranks;
	g->ndirs = 1;
	g->chunks = 1;
	g->stride = 1;
	rc = (*impl)->shape(g);
	if (rc) {
		coll_msg(msg, msglen, "%s %s: cannot lay out a schedule for %d ranks",
		         coll_op_name(s->req.op), coll_algo_name(g->algo), g->n);
		return rc;
	}

	struct coll_info *in = &s->info;
	memset(in, 0, sizeof *in);
	in->op = s->req.op;
	in->algo = g->algo;
	in->nranks = g->n;
	in->ndirs = g->ndirs;
	in->num_chunks = g->chunks;
	in->steps = g->steps;
	in->id_stride = g->stride;
	in->link_slots = (uint64_t)g->steps * (uint64_t)g->n * (uint64_t)g->ndirs;
	in->scratch_bytes = g->scratch;
	in->min_transfer = SIZE_MAX;
	if (s->req.op == COLL_OP_ALLTOALL && s->req.counts) {
		/* cannot fail: coll_req_normalize checked these sums */
		coll_a2a_sums(&s->req, &in->input_bytes, &in->data_bytes);
	} else if (s->req.op == COLL_OP_ALLTOALL) {
		in->data_bytes = s->req.bytes * (size_t)g->n;
		in->input_bytes = in->data_bytes;
	} else if (s->req.op == COLL_OP_GATHER || s->req.op == COLL_OP_SCATTER
	           || (s->req.op == COLL_OP_ALLGATHER && s->req.counts)) {
		in->data_bytes = coll_gs_total(&s->req);
	} else if (s->req.op == COLL_OP_EXSCAN) {
		in->data_bytes = 2 * s->req.bytes;
	} else {
		in->data_bytes = s->req.bytes;
		in->input_bytes = s->req.input ? s->req.bytes : 0;
	}
	return 0;
}

static int emit_rank(const struct coll_algo_impl *impl, struct coll_gen *g, int rank)
{
	g->rank = rank;
	g->ncmds = 0;
	g->err = 0;
	int rc = impl->emit(g);
	if (!rc)
		rc = g->err;
	if (rc)
		return rc;
	for (size_t i = 1; i < g->ncmds; i++)
		if (g->cmds[i - 1].id > g->cmds[i].id) {
			qsort(g->cmds, g->ncmds, sizeof *g->cmds, cmd_cmp);
			break;
		}
	return 0;
}

static void count_rank(struct coll_info *in, const struct coll_cmd *c, size_t n)
{
	in->entries += n;
	for (size_t i = 0; i < n; i++) {
		if (c[i].kind != COLL_SEND)
			continue;
		in->commands++;
		in->total_bytes += c[i].len;
		if (c[i].len < in->min_transfer)
			in->min_transfer = c[i].len;
		if (c[i].len > in->max_transfer)
			in->max_transfer = c[i].len;
	}
}

static void finish_info(struct coll_info *in)
{
	if (in->min_transfer == SIZE_MAX)
		in->min_transfer = 0;
}

static int expand(const struct coll_req *req, int only, struct coll_sched **out,
                  char *msg, size_t msglen)
{
	*out = NULL;
	struct coll_sched *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	struct coll_gen g;
	const struct coll_algo_impl *impl;
	int rc = prepare(req, s, &g, &impl, msg, msglen);
	if (rc) {
		free(s);
		return rc;
	}
	if (only < 0 && s->req.recv_counts) {
		coll_msg(msg, msglen, "alltoall counts given as one rank's row and column "
		         "expand that rank only (coll_expand_rank)");
		free(s);
		return -EINVAL;
	}
	if (only >= s->req.nranks) {
		coll_msg(msg, msglen, "rank %d is not in a group of %d", only, s->req.nranks);
		free(s);
		return -EINVAL;
	}
	s->nheld = only >= 0 ? 1 : s->req.nranks;
	s->ranks = calloc((size_t)s->nheld, sizeof *s->ranks);
	if (!s->ranks) {
		free(s);
		return -ENOMEM;
	}
	for (int h = 0; h < s->nheld; h++) {
		int rank = only >= 0 ? only : h;
		rc = emit_rank(impl, &g, rank);
		if (rc) {
			coll_msg(msg, msglen, "out of memory expanding rank %d", rank);
			free(g.cmds);
			coll_free(s);
			return rc;
		}
		struct coll_rank_sched *rs = &s->ranks[h];
		rs->rank = rank;
		rs->ncmds = g.ncmds;
		if (g.ncmds) {
			rs->cmds = realloc(g.cmds, g.ncmds * sizeof *g.cmds);
			if (!rs->cmds)
				rs->cmds = g.cmds;
		} else {
			free(g.cmds);
		}
		g.cmds = NULL;
		g.cap = 0;
		count_rank(&s->info, rs->cmds, rs->ncmds);
	}
	finish_info(&s->info);
	*out = s;
	return 0;
}

int coll_expand(const struct coll_req *req, struct coll_sched **out, char *msg, size_t msglen)
{
	return expand(req, -1, out, msg, msglen);
}

int coll_expand_rank(const struct coll_req *req, int rank, struct coll_sched **out,
                     char *msg, size_t msglen)
{
	if (rank < 0) {
		*out = NULL;
		coll_msg(msg, msglen, "rank %d is negative", rank);
		return -EINVAL;
	}
	return expand(req, rank, out, msg, msglen);
}

int coll_summarize(const struct coll_req *req, struct coll_info *info,
                   struct coll_choice *choice, char *msg, size_t msglen)
{
	struct coll_sched s;
	memset(&s, 0, sizeof s);
	struct coll_gen g;
	const struct coll_algo_impl *impl;
	int rc = prepare(req, &s, &g, &impl, msg, msglen);
	if (rc)
		return rc;
	if (s.req.recv_counts) {
		coll_msg(msg, msglen, "alltoall counts given as one rank's row and column "
		         "cannot be summarized over every rank");
		return -EINVAL;
	}
	for (int r = 0; r < s.req.nranks && !rc; r++) {
		rc = emit_rank(impl, &g, r);
		if (!rc)
			count_rank(&s.info, g.cmds, g.ncmds);
	}
	free(g.cmds);
	if (rc) {
		coll_msg(msg, msglen, "out of memory summarizing the schedule");
		return rc;
	}
	finish_info(&s.info);
	*info = s.info;
	if (choice)
		*choice = s.choice;
	return 0;
}

void coll_free(struct coll_sched *s)
{
	if (!s)
		return;
	for (int i = 0; s->ranks && i < s->nheld; i++)
		free(s->ranks[i].cmds);
	free(s->ranks);
	free(s);
}

/* ---- reading ---- */

static const struct coll_rank_sched *held(const struct coll_sched *s, int rank)
{
	if (!s || rank < 0)
		return NULL;
	if (s->nheld == s->req.nranks)
		return rank < s->nheld ? &s->ranks[rank] : NULL;
	for (int i = 0; i < s->nheld; i++)
		if (s->ranks[i].rank == rank)
			return &s->ranks[i];
	return NULL;
}

const struct coll_cmd *coll_rank_cmds(const struct coll_sched *s, int rank, size_t *n)
{
	const struct coll_rank_sched *rs = held(s, rank);
	*n = rs ? rs->ncmds : 0;
	return rs ? rs->cmds : NULL;
}

size_t coll_data_span(const struct coll_sched *s, int rank)
{
	size_t n, end = 0;
	const struct coll_cmd *c = coll_rank_cmds(s, rank, &n);
	for (size_t i = 0; i < n; i++) {
		if (c[i].buf == COLL_BUF_DATA && c[i].off + c[i].len > end)
			end = c[i].off + c[i].len;
		if ((c[i].kind == COLL_COPY || c[i].kind == COLL_REDUCE)
		    && c[i].src_buf == COLL_BUF_DATA && c[i].src_off + c[i].len > end)
			end = c[i].src_off + c[i].len;
	}
	return end;
}

static const struct coll_cmd *find_in(const struct coll_cmd *c, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && c[lo].id == id ? &c[lo] : NULL;
}

const struct coll_cmd *coll_find(const struct coll_sched *s, int rank, uint64_t id)
{
	size_t n;
	const struct coll_cmd *c = coll_rank_cmds(s, rank, &n);
	return c ? find_in(c, n, id) : NULL;
}

void coll_iter_init(struct coll_iter *it, const struct coll_sched *s, int rank)
{
	it->cmds = coll_rank_cmds(s, rank, &it->n);
	it->pos = 0;
}

const struct coll_cmd *coll_iter_next(struct coll_iter *it)
{
	return it->pos < it->n ? &it->cmds[it->pos++] : NULL;
}

/* ---- pairing, DAG, checking ---- */

static bool is_recv(const struct coll_cmd *c)
{
	return c->kind == COLL_RECV || (c->kind == COLL_REDUCE && c->peer >= 0);
}

void coll_pairs_free(const struct coll_sched *s, struct coll_pairs *p)
{
	for (int r = 0; r < s->nheld; r++) {
		if (p->rank)
			free(p->rank[r]);
		if (p->idx)
			free(p->idx[r]);
	}
	free(p->rank);
	free(p->idx);
	p->rank = NULL;
	p->idx = NULL;
}

int coll_pairs_build(const struct coll_sched *s, struct coll_pairs *p, char *msg, size_t msglen)
{
	int n = s->nheld;
	if (n != s->req.nranks) {
		coll_msg(msg, msglen, "a schedule of one rank cannot be paired; use coll_expand");
		return -EINVAL;
	}
	p->rank = calloc((size_t)n, sizeof *p->rank);
	p->idx = calloc((size_t)n, sizeof *p->idx);
	if (!p->rank || !p->idx)
		goto nomem;
	for (int r = 0; r < n; r++) {
		size_t m = s->ranks[r].ncmds ? s->ranks[r].ncmds : 1;
		p->rank[r] = malloc(m * sizeof **p->rank);
		p->idx[r] = malloc(m * sizeof **p->idx);
		if (!p->rank[r] || !p->idx[r])
			goto nomem;
		for (size_t i = 0; i < m; i++)
			p->rank[r][i] = -1;
	}
	for (int r = 0; r < n; r++) {
		const struct coll_rank_sched *rs = &s->ranks[r];
		for (size_t i = 0; i < rs->ncmds; i++) {
			const struct coll_cmd *c = &rs->cmds[i];
			if (!is_recv(c))
				continue;
			if (c->peer < 0 || c->peer >= n || c->peer == r) {
				coll_msg(msg, msglen, "rank %d command %llu receives from bad peer %d",
				         r, (unsigned long long)c->id, c->peer);
				goto bad;
			}
			const struct coll_rank_sched *ps = &s->ranks[c->peer];
			const struct coll_cmd *sc = find_in(ps->cmds, ps->ncmds, c->match);
			if (!sc || sc->kind != COLL_SEND || sc->peer != r) {
				coll_msg(msg, msglen, "rank %d step %u: receive %llu from rank %d has no "
				         "matching send %llu", r, c->step, (unsigned long long)c->id,
				         c->peer, (unsigned long long)c->match);
				goto bad;
			}
			size_t si = (size_t)(sc - ps->cmds);
			if (p->rank[c->peer][si] >= 0) {
				coll_msg(msg, msglen, "rank %d send %llu is received twice",
				         c->peer, (unsigned long long)sc->id);
				goto bad;
			}
			if (sc->len != c->len) {
				coll_msg(msg, msglen, "rank %d step %u: send of %zu bytes to rank %d "
				         "received as %zu", c->peer, sc->step, sc->len, r, c->len);
				goto bad;
			}
			p->rank[c->peer][si] = r;
			p->idx[c->peer][si] = i;
			p->rank[r][i] = c->peer;
			p->idx[r][i] = si;
		}
	}
	for (int r = 0; r < n; r++)
		for (size_t i = 0; i < s->ranks[r].ncmds; i++)
			if (s->ranks[r].cmds[i].kind == COLL_SEND && p->rank[r][i] < 0) {
				const struct coll_cmd *c = &s->ranks[r].cmds[i];
				coll_msg(msg, msglen, "rank %d step %u: send %llu to rank %d is never received",
				         r, c->step, (unsigned long long)c->id, c->peer);
				goto bad;
			}
	return 0;
nomem:
	coll_msg(msg, msglen, "out of memory pairing sends and receives");
	coll_pairs_free(s, p);
	return -ENOMEM;
bad:
	coll_pairs_free(s, p);
	return -EINVAL;
}

void coll_dag_free(struct coll_dag *d)
{
	free(d->dep_off);
	free(d->dep_idx);
	free(d->nwait);
	memset(d, 0, sizeof *d);
}

int coll_dag_build(const struct coll_cmd *cmds, size_t n, struct coll_dag *d)
{
	size_t edges = 0;
	for (size_t i = 0; i < n; i++)
		edges += cmds[i].ndeps;
	d->dep_off = calloc(n + 1, sizeof *d->dep_off);
	d->dep_idx = malloc((edges ? edges : 1) * sizeof *d->dep_idx);
	d->nwait = calloc(n ? n : 1, sizeof *d->nwait);
	size_t *fill = calloc(n + 1, sizeof *fill);
	if (!d->dep_off || !d->dep_idx || !d->nwait || !fill) {
		free(fill);
		coll_dag_free(d);
		return -ENOMEM;
	}
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		d->nwait[i] = cmds[i].ndeps;
		for (unsigned k = 0; k < cmds[i].ndeps; k++) {
			const struct coll_cmd *dc = find_in(cmds, n, cmds[i].deps[k]);
			if (!dc || dc >= &cmds[i]) {
				rc = -EINVAL;
				break;
			}
			d->dep_off[dc - cmds + 1]++;
		}
	}
	for (size_t i = 0; i < n; i++)
		d->dep_off[i + 1] += d->dep_off[i];
	for (size_t i = 0; i < n && !rc; i++)
		for (unsigned k = 0; k < cmds[i].ndeps; k++) {
			size_t j = (size_t)(find_in(cmds, n, cmds[i].deps[k]) - cmds);
			d->dep_idx[d->dep_off[j] + fill[j]++] = i;
		}
	free(fill);
	if (rc)
		coll_dag_free(d);
	return rc;
}

static size_t buf_size(const struct coll_info *in, int b)
{
	return b == COLL_BUF_DATA ? in->data_bytes
	       : b == COLL_BUF_INPUT ? in->input_bytes
	       : b == COLL_BUF_SCRATCH ? in->scratch_bytes : 0;
}

static bool in_range(const struct coll_info *in, int b, size_t off, size_t len)
{
	size_t sz = buf_size(in, b);
	return off <= sz && len <= sz - off;
}

int coll_check(const struct coll_sched *s, char *msg, size_t msglen)
{
	for (int h = 0; h < s->nheld; h++) {
		const struct coll_rank_sched *rs = &s->ranks[h];
		for (size_t i = 0; i < rs->ncmds; i++) {
			const struct coll_cmd *c = &rs->cmds[i];
			if (i && rs->cmds[i - 1].id >= c->id) {
				coll_msg(msg, msglen, "rank %d: ids not increasing at %llu", rs->rank,
				         (unsigned long long)c->id);
				return -EINVAL;
			}
			for (unsigned k = 0; k < c->ndeps; k++) {
				const struct coll_cmd *dc = find_in(rs->cmds, rs->ncmds, c->deps[k]);
				if (!dc || dc->id >= c->id) {
					coll_msg(msg, msglen, "rank %d command %llu depends on %llu, which is "
					         "not an earlier command of the rank", rs->rank,
					         (unsigned long long)c->id, (unsigned long long)c->deps[k]);
					return -EINVAL;
				}
			}
			bool local_src = c->kind == COLL_COPY || c->kind == COLL_REDUCE;
			if (c->step >= s->info.steps || c->dir >= s->info.ndirs
			    || !in_range(&s->info, c->buf, c->off, c->len)
			    || (local_src && !in_range(&s->info, c->src_buf, c->src_off, c->len))
			    || (c->from_input && (c->kind != COLL_REDUCE
			                          || !in_range(&s->info, COLL_BUF_INPUT, c->off, c->len)))
			    || (c->kind != COLL_SEND && c->buf == COLL_BUF_INPUT)) {
				coll_msg(msg, msglen, "rank %d command %llu (%s step %u): step, direction "
				         "or byte range out of bounds", rs->rank,
				         (unsigned long long)c->id, coll_kind_name(c->kind), c->step);
				return -EINVAL;
			}
			if (c->src_first && (c->kind != COLL_REDUCE || c->from_input)) {
				coll_msg(msg, msglen, "rank %d command %llu (%s step %u): src_first on other "
				         "than a reduce, or with from_input", rs->rank,
				         (unsigned long long)c->id, coll_kind_name(c->kind), c->step);
				return -EINVAL;
			}
			if ((c->kind == COLL_SEND || c->kind == COLL_RECV) && c->peer < 0) {
				coll_msg(msg, msglen, "rank %d command %llu: transfer without a peer",
				         rs->rank, (unsigned long long)c->id);
				return -EINVAL;
			}
		}
	}
	if (s->nheld != s->req.nranks)
		return 0;
	struct coll_pairs p;
	int rc = coll_pairs_build(s, &p, msg, msglen);
	if (!rc)
		coll_pairs_free(s, &p);
	return rc;
}
