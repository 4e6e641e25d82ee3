/*
 * Bulk moves: RDMA READ/WRITE straight between MD memory of two ranks, the
 * local pieces registered through the cache of vrb_reg.c.
 */
#include "config.h"

#include <stdlib.h>

#include "nal/verbs/vrb.h"

static struct vrb_bulk *vrb_bulk_alloc(struct nal *n)
{
	struct vrb_bulk *b = n->bulk_free;
	if (b)
		n->bulk_free = b->next;
	else
		b = malloc(sizeof *b);
	return b;
}

/* b is done: its local registrations and its record go back. */
static void vrb_bulk_release(struct nal *n, struct vrb_bulk *b)
{
	for (int i = 0; i < b->nreg; i++)
		vrb_reg_put(n, b->sge[i].lkey);
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
		b->nreg = b->nsge;
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
