/*
 * Bulk moves (RDMA READ/WRITE straight between MD memory of two ranks) and
 * the registration cache behind mem_reg() and bulk().
 *
 * lib/ptl registers an MD's pieces when a move starts and never
 * deregisters, so registrations are cached. A cached registration pins the
 * pages it had: if the application frees the memory and the same
 * addresses are mapped again (malloc of a large block after free does
 * exactly that), the old registration would move the old pages. So a hit
 * is checked against the page frames recorded at registration time
 * (/proc/self/pagemap), for the pages the request covers; a mismatch drops
 * the entry and registers afresh. Where page frames are hidden (no
 * CAP_SYS_ADMIN) nothing is reused: every request registers anew and the
 * cache only bounds how many registrations stay alive (oldest go first).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nal/verbs/vrb.h"

#define VRB_PFN_MASK ((1ull << 55) - 1)

static uintptr_t vrb_page;

static int vrb_pfns(struct nal *n, uintptr_t start, size_t npages, uint64_t *out)
{
	size_t bytes = npages * 8;
	off_t off = (off_t)(start / vrb_page) * 8;
	if (pread(n->pagemap_fd, out, bytes, off) != (ssize_t)bytes)
		return -1;
	for (size_t i = 0; i < npages; i++)
		out[i] = (out[i] >> 63) ? (out[i] & VRB_PFN_MASK) : 0; /* present? */
	return 0;
}

int vrb_reg_init(struct nal *n)
{
	vrb_page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const char *e = getenv("PTL_VERBS_REG_CACHE");
	if (e && !strcmp(e, "0"))
		return 0;
	n->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (n->pagemap_fd < 0)
		return 0;
	/* Are frames visible? Look at a page we just touched. */
	static volatile char probe[1];
	probe[0] = 1;
	uint64_t f = 0;
	if (vrb_pfns(n, (uintptr_t)probe & ~(vrb_page - 1), 1, &f) != 0 || f == 0) {
		close(n->pagemap_fd);
		n->pagemap_fd = -1;
	}
	return 0;
}

static void vrb_reg_free(struct vrb_reg *r)
{
	ibv_dereg_mr(r->mr);
	free(r->pfn);
}

void vrb_reg_fini(struct nal *n)
{
	for (unsigned i = 0; i < n->nregs; i++)
		vrb_reg_free(&n->regs[i]);
	n->nregs = 0;
	if (n->pagemap_fd >= 0)
		close(n->pagemap_fd);
	n->pagemap_fd = -1;
}

/* Whether r still maps [a, a+len) to the pages it registered. */
static bool vrb_reg_valid(struct nal *n, struct vrb_reg *r, uintptr_t a, size_t len)
{
	if (!r->pfn)
		return false;
	uintptr_t first = (a & ~(vrb_page - 1)), last = ((a + (len ? len : 1) - 1) & ~(vrb_page - 1));
	uint64_t now[2];
	size_t i0 = (first - r->start) / vrb_page, i1 = (last - r->start) / vrb_page;
	if (vrb_pfns(n, first, 1, &now[0]) || vrb_pfns(n, last, 1, &now[1]))
		return false;
	return now[0] == r->pfn[i0] && now[1] == r->pfn[i1] && now[0] && now[1];
}

static void vrb_reg_remove(struct nal *n, unsigned i)
{
	vrb_reg_free(&n->regs[i]);
	memmove(&n->regs[i], &n->regs[i + 1], (n->nregs - i - 1) * sizeof n->regs[0]);
	n->nregs--;
}

/* The registration covering [addr, addr+len), from the cache or new. */
static struct ibv_mr *vrb_reg_get(struct nal *n, void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	for (unsigned i = 0; i < n->nregs; i++) {
		struct vrb_reg *r = &n->regs[i];
		if (a < r->start || a + len > r->end)
			continue;
		if (vrb_reg_valid(n, r, a, len)) {
			if (i) { /* most recent first */
				struct vrb_reg hit = *r;
				memmove(&n->regs[1], &n->regs[0], i * sizeof n->regs[0]);
				n->regs[0] = hit;
			}
			return n->regs[0].mr;
		}
		if (n->pagemap_fd >= 0) {
			vrb_reg_remove(n, i); /* freed and mapped again */
			break;
		}
	}
	struct vrb_reg r = { .start = a & ~(vrb_page - 1),
			     .end = (a + (len ? len : 1) + vrb_page - 1) & ~(vrb_page - 1) };
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	r.mr = ibv_reg_mr(n->pd, (void *)r.start, r.end - r.start, acc);
	if (!r.mr) /* read-only memory can still be read */
		r.mr = ibv_reg_mr(n->pd, (void *)r.start, r.end - r.start, IBV_ACCESS_REMOTE_READ);
	if (!r.mr) {
		fprintf(stderr, "ptl: verbs: cannot register %zu bytes at %p: %s (memlock limit? ulimit -l)\n",
			len, addr, strerror(errno));
		return NULL;
	}
	if (n->pagemap_fd >= 0) {
		size_t np = (r.end - r.start) / vrb_page;
		r.pfn = malloc(np * sizeof *r.pfn);
		if (r.pfn && vrb_pfns(n, r.start, np, r.pfn) != 0) {
			free(r.pfn);
			r.pfn = NULL;
		}
	}
	if (n->nregs == VRB_REG_MAX)
		vrb_reg_remove(n, n->nregs - 1);
	memmove(&n->regs[1], &n->regs[0], n->nregs * sizeof n->regs[0]);
	n->regs[0] = r;
	n->nregs++;
	return r.mr;
}

int vrb_mem_reg(struct nal *n, void *addr, size_t len, struct nal_mr *mr)
{
	struct ibv_mr *m = vrb_reg_get(n, addr, len);
	if (!m)
		return NAL_ENOMEM;
	mr->addr = (uintptr_t)addr;
	mr->key = m->rkey;
	mr->priv = m;
	return 0;
}

void vrb_mem_dereg(struct nal *n, struct nal_mr *mr)
{
	/* Cached: stays until evicted, found stale, or close(). */
	(void)n;
	(void)mr;
}

static struct vrb_bulk *vrb_bulk_alloc(struct nal *n)
{
	struct vrb_bulk *b = n->bulk_free;
	if (b)
		n->bulk_free = b->next;
	else
		b = malloc(sizeof *b);
	return b;
}

static void vrb_bulk_release(struct nal *n, struct vrb_bulk *b)
{
	if (b->sge != b->sge_inline)
		free(b->sge);
	b->next = n->bulk_free;
	n->bulk_free = b;
}

/* Posts what fits of b's WRs. 1: all posted; 0: some wait; <0: posting
 * failed, and the connection re-opens (NAL_EAGAIN) or the peer failed. */
static int vrb_bulk_post(struct nal *n, struct vrb_bulk *b)
{
	struct vrb_peer *p = &n->peers[b->peer];
	while (b->posted_sge < b->nsge) {
		if (!vrb_sq_room(n, p, 2))
			return 0;
		int k = b->nsge - b->posted_sge;
		if (k > (int)n->max_sge)
			k = (int)n->max_sge;
		uint64_t off = 0;
		for (int i = 0; i < b->posted_sge; i++)
			off += b->sge[i].length;
		struct ibv_send_wr wr = {
			.wr_id = (uintptr_t)b | VRB_WR_BULK, .sg_list = b->sge + b->posted_sge, .num_sge = k,
			.opcode = b->op == NAL_BULK_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = b->raddr + off, .rkey = b->rkey },
		}, *bad;
		if (ibv_post_send(p->qp, &wr, &bad))
			return vrb_post_failed(n, b->peer, "cannot post an RDMA operation");
		vrb_sq_take(n, p, 1);
		b->left++;
		b->posted_sge += k;
	}
	return 1;
}

int vrb_bulk(struct nal *n, int peer, enum nal_bulk_op op, const struct iovec *local, int niov,
	     uint64_t raddr, uint64_t rkey, size_t len, void *cookie)
{
	if (peer < 0 || peer >= n->args.size || niov < 0)
		return NAL_EINVAL;
	struct vrb_peer *p = &n->peers[peer];
	if (p->state == VRB_FAILED)
		return NAL_EPEER;
	/* A bulk answers a message from the peer, so its connection was up;
	 * while it re-opens, the bulk waits for the new QP. */
	bool reopening = p->state != VRB_UP && p->epoch > 0;
	if (p->state != VRB_UP && !reopening)
		return NAL_EINVAL;
	if (len == 0)
		return 0;
	struct vrb_bulk *b = vrb_bulk_alloc(n);
	if (!b)
		return NAL_ENOMEM;
	*b = (struct vrb_bulk){ .peer = peer, .op = op, .cookie = cookie, .raddr = raddr,
				.rkey = (uint32_t)rkey };
	b->sge = b->sge_inline;
	if (niov > (int)(sizeof b->sge_inline / sizeof b->sge_inline[0])) {
		b->sge = malloc((size_t)niov * sizeof *b->sge);
		if (!b->sge) {
			b->sge = b->sge_inline;
			vrb_bulk_release(n, b);
			return NAL_ENOMEM;
		}
	}
	size_t left = len;
	for (int i = 0; i < niov && left; i++) {
		size_t l = local[i].iov_len < left ? local[i].iov_len : left;
		if (!l)
			continue;
		struct ibv_mr *m = vrb_reg_get(n, local[i].iov_base, l);
		if (!m) {
			vrb_bulk_release(n, b);
			return NAL_ENOMEM;
		}
		b->sge[b->nsge++] = (struct ibv_sge){ .addr = (uintptr_t)local[i].iov_base,
						      .length = (uint32_t)l, .lkey = m->lkey };
		left -= l;
	}
	if (left) {
		vrb_bulk_release(n, b);
		return NAL_EINVAL;
	}
	int rc = p->pend_head || p->state != VRB_UP ? 0 : vrb_bulk_post(n, b);
	if (rc < 0 && b->left) {
		/* Some of it went to the broken QP: its flushed WRs report it
		 * (or free it, if the peer failed). */
		b->status = NAL_EIO;
		b->nsge = b->posted_sge;
		return rc == NAL_EPEER ? NAL_EPEER : 1;
	}
	if (rc == NAL_EPEER) {
		vrb_bulk_release(n, b);
		return NAL_EPEER;
	}
	if (rc <= 0) { /* waits for send-queue room, in order */
		b->next = NULL;
		if (p->pend_tail)
			p->pend_tail->next = b;
		else
			p->pend_head = b;
		p->pend_tail = b;
		n->deferred = true;
	}
	return 1;
}

/* Posts the waiting bulks of p that now fit. */
int vrb_bulk_pending(struct nal *n, struct vrb_peer *p)
{
	int done = 0;
	while (p->pend_head && p->state == VRB_UP) {
		struct vrb_bulk *b = p->pend_head;
		int rc = vrb_bulk_post(n, b);
		if (rc == 0)
			break;
		if (rc < 0)
			break; /* the break or the failure took it off the list */
		p->pend_head = b->next;
		if (!p->pend_head)
			p->pend_tail = NULL;
		done++;
	}
	return done;
}

void vrb_bulk_wc(struct nal *n, const struct ibv_wc *wc)
{
	struct vrb_bulk *b = (struct vrb_bulk *)(uintptr_t)(wc->wr_id & ~(uint64_t)7);
	struct vrb_peer *p = &n->peers[b->peer];
	bool current = p->qp && wc->qp_num == p->qp->qp_num;
	if (!current)
		vrb_retired_wc(n, wc->qp_num); /* a broken QP drains */
	else if (p->sq_used)
		p->sq_used--;
	b->left--;
	if (wc->status == IBV_WC_SUCCESS) {
		if (current)
			p->acts++;
	} else {
		/* This bulk fails; whether the peer does is vrb_qp_error()'s
		 * to say (bulk_done follows only if it does not). */
		if (b->status == 0)
			b->status = NAL_EIO;
		if (current)
			vrb_qp_error(n, b->peer, wc->status);
	}
	if (b->left > 0 || b->posted_sge < b->nsge)
		return;
	/* After peer_failed, lib/ptl has finished the op itself. */
	if (p->state != VRB_FAILED)
		n->args.up.bulk_done(n->args.up.arg, b->cookie, b->status);
	vrb_bulk_release(n, b);
}

/* The connection broke: a waiting bulk with WRs on the broken QP (only
 * the first can have some) fails when they have flushed; the others wait
 * for the new QP, as nothing of them was lost. */
void vrb_bulk_break(struct vrb_peer *p)
{
	struct vrb_bulk *b = p->pend_head;
	if (!b || b->left == 0)
		return;
	b->status = NAL_EIO;
	b->nsge = b->posted_sge;
	p->pend_head = b->next;
	if (!p->pend_head)
		p->pend_tail = NULL;
}

/* Forgets the waiting bulks of a failed or closing peer (their posted WRs
 * complete as flushed and are released in vrb_bulk_wc). */
void vrb_bulk_drop(struct nal *n, struct vrb_peer *p)
{
	while (p->pend_head) {
		struct vrb_bulk *b = p->pend_head;
		p->pend_head = b->next;
		if (b->left == 0)
			vrb_bulk_release(n, b);
		else
			b->nsge = b->posted_sge; /* the last flushed WR frees it */
	}
	p->pend_tail = NULL;
}
