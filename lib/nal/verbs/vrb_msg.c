/*
 * Eager messages, credits, progress and sleep.
 *
 * Credits (see vrb.h): a send needs one; the receiver reposts each buffer
 * as soon as the upcall returns and tells the sender, by an RDMA WRITE of
 * its running count into the sender's slot, once a quarter of the grant is
 * consumed. The write needs no receive buffer, so credits always flow.
 *
 * Copies: a message is copied once, into the peer's keep ring (registered,
 * one VRB_EAGER slot per credit), and sent from there. It stays until the
 * peer's consumed count covers it, which credits guarantee before its slot
 * is needed again; so after a re-open (vrb.h, "Breaks") the messages the
 * peer did not consume go again, in order, before any new one.
 *
 * Keepalive: every ka_ms, progress() looks at the UP peers; one that
 * completed nothing with us since the last look (no message in, no send,
 * credit or bulk acknowledged) gets a probe: a credit write of the count it
 * already has, which needs no receive buffer and changes nothing. If the
 * peer is gone the write fails with RETRY_EXC_ERR and the peer is failed.
 * sleep() wakes for the scan while peers are UP, so a rank that only waits
 * for a dead peer notices too.
 *
 * Sleep: sleep() arms the CQ, then takes whatever completed before it was
 * armed into a stash (under cq_busy, as progress() may run concurrently)
 * and returns at once if there was any; otherwise it waits in poll() on
 * the completion channel and the kick eventfd. progress() drains the stash
 * before the CQ, so no completion is lost or reordered. While an
 * application thread polls (set_polling(1)) sleep() does neither: it waits
 * for the kick or its timeout only, so completions wake no thread and the
 * poller finds them on the CQ.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nal/verbs/vrb.h"
#include "nal/verbs/vrb_zip.h"

int vrb_post_recvs(struct nal *n, uint32_t count)
{
	while (count--) {
		uint32_t i = n->rbuf_posted++;
		struct ibv_sge sge = { .addr = (uintptr_t)(n->rbuf + (size_t)i * VRB_EAGER),
				       .length = VRB_EAGER, .lkey = n->rbuf_mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = VRB_WR(VRB_WR_RECV, 0, i), .sg_list = &sge, .num_sge = 1 }, *bad;
		if (ibv_post_srq_recv(n->srq, &wr, &bad))
			return NAL_EIO;
	}
	return 0;
}

static int vrb_repost(struct nal *n, uint32_t i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(n->rbuf + (size_t)i * VRB_EAGER),
			       .length = VRB_EAGER, .lkey = n->rbuf_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = VRB_WR(VRB_WR_RECV, 0, i), .sg_list = &sge, .num_sge = 1 }, *bad;
	return ibv_post_srq_recv(n->srq, &wr, &bad);
}

/* Posts again the buffer the last message was handled in, if it waits. */
static void vrb_repost_due(struct nal *n)
{
	if (n->repost_due) {
		vrb_repost(n, n->repost_due - 1);
		n->repost_due = 0;
	}
}

static void vrb_starve(struct nal *n, struct vrb_peer *p)
{
	if (!p->starved) {
		p->starved = true;
		atomic_fetch_add(&n->waiting, 1);
	}
}

static uint64_t vrb_credit_left(struct nal *n, int peer)
{
	struct vrb_peer *p = &n->peers[peer];
	return p->grant - (p->sent - vrb_peer_back(n, peer));
}

/* Registered copies of what we send to p (see the top of this file),
 * made when its first connection comes up. */
int vrb_keep_init(struct nal *n, struct vrb_peer *p)
{
	if (p->keep)
		return 0;
	size_t bytes = VRB_PAGES((size_t)VRB_CREDITS * VRB_EAGER);
	p->keep = aligned_alloc(4096, bytes);
	p->keep_len = calloc(VRB_CREDITS, sizeof *p->keep_len);
	if (p->keep && p->keep_len)
		p->keep_mr = ibv_reg_mr(n->pd, p->keep, bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!p->keep_mr) {
		fprintf(stderr, "ptl: verbs: cannot register %zu bytes of send buffers: %s (memlock limit? ulimit -l)\n",
			bytes, strerror(errno));
		free(p->keep);
		free(p->keep_len);
		p->keep = NULL;
		p->keep_len = NULL;
		return NAL_ENOMEM;
	}
	return 0;
}

/* Posts message seq (still in its keep slot) to peer's QP. */
static int vrb_post_msg(struct nal *n, int peer, uint64_t seq)
{
	struct vrb_peer *p = &n->peers[peer];
	uint32_t k = (uint32_t)(seq % VRB_CREDITS);
	uint32_t zipped = p->keep_len[k] & VRB_IMM_ZIPPED;
	struct ibv_sge sge = { .addr = (uintptr_t)(p->keep + (size_t)k * VRB_EAGER),
			       .length = p->keep_len[k] & ~VRB_IMM_ZIPPED, .lkey = p->keep_mr->lkey };
	/* Signaled every VRB_SIG_EVERY-th time (vrb.h), and whenever this WR
	 * leaves no room for another send: then only a completion can make
	 * room, and the next signaled one might never be posted. */
	bool sig = p->unsig + 1 >= VRB_SIG_EVERY || p->sq_used + 1 + 2 > VRB_SQ_DEPTH ||
		   n->unsig_total >= VRB_UNSIG_MAX;
	struct ibv_send_wr wr = { .wr_id = VRB_WR(VRB_WR_SEND, peer, sig ? p->unsig + 1 : 0), .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
				  .send_flags = sig ? IBV_SEND_SIGNALED : 0,
				  .imm_data = htonl(((uint32_t)p->consumed & VRB_IMM_COUNT) | zipped) }, *bad;
	if (sge.length <= n->max_inline_data)
		wr.send_flags |= IBV_SEND_INLINE;
	if (ibv_post_send(p->qp, &wr, &bad))
		return vrb_post_failed(n, peer, "cannot post a send");
	if (sig) {
		vrb_sq_take(n, p, 1);
		p->unsig = 0;
		n->sends_signaled++;
	} else {
		p->sq_used++;
		p->unsig++;
		p->unsig_out++;
		n->unsig_total++;
	}
	p->told = p->consumed;
	p->credit_owed = false;
	return 0;
}

/* Sends again, in order, what the peer had not consumed when its
 * connection re-opened, as far as the send queue takes. */
int vrb_resend(struct nal *n, int peer)
{
	struct vrb_peer *p = &n->peers[peer];
	int done = 0;
	while (p->state == VRB_UP && p->resend != p->sent && vrb_sq_room(n, p, 2)) {
		if (vrb_post_msg(n, peer, p->resend) != 0)
			break;
		p->resend++;
		done++;
	}
	p->resent += (uint64_t)done;
	return done;
}

int vrb_send(struct nal *n, int peer, const void *hdr, size_t hdr_len, const void *payload, size_t len)
{
	if (peer < 0 || peer >= n->args.size || hdr_len + len > VRB_EAGER)
		return NAL_EINVAL;
	struct vrb_peer *p = &n->peers[peer];
	if (p->state == VRB_FAILED)
		return NAL_EPEER;
	if (p->state != VRB_UP)
		return NAL_EAGAIN; /* the handshake's end wakes progress() */
	/* What a re-open left to send again goes first, and one send-queue
	 * slot stays free for credit returns. */
	if (p->resend != p->sent)
		vrb_resend(n, peer);
	if (p->state != VRB_UP)
		return p->state == VRB_FAILED ? NAL_EPEER : NAL_EAGAIN;
	if (p->resend != p->sent || vrb_credit_left(n, peer) == 0 || !vrb_sq_room(n, p, 2)) {
		vrb_starve(n, p);
		return NAL_EAGAIN;
	}
	uint32_t k = (uint32_t)(p->sent % VRB_CREDITS);
	char *buf = p->keep + (size_t)k * VRB_EAGER;
	/* Zipped in the slot, so a resend after a re-open sends the same
	 * bytes; the slot's length keeps the flag the immediate data carries. */
	bool zipped;
	size_t wire = vrb_zip((unsigned char *)buf, hdr, hdr_len, payload, len, &zipped);
	p->keep_len[k] = (uint32_t)wire | (zipped ? VRB_IMM_ZIPPED : 0);
	n->sends_zipped += zipped;
	int rc = vrb_post_msg(n, peer, p->sent);
	if (rc != 0)
		return rc; /* not sent: the caller tries again (or the peer failed) */
	p->sent++;
	p->resend = p->sent;
	n->awaiting = true;
	n->await_since_ms = 0;
	return 0;
}

/* Writes our consumed count of peer's messages into its credit slot; a
 * probe (keepalive) when nothing is owed. */
static void vrb_credit_return(struct nal *n, int peer, bool probe)
{
	struct vrb_peer *p = &n->peers[peer];
	if (p->state != VRB_UP || !vrb_sq_room(n, p, 1)) {
		if (!probe) {
			p->credit_owed = true;
			n->deferred = true;
		}
		return;
	}
	uint64_t val = p->consumed;
	struct ibv_sge sge = { .addr = (uintptr_t)&val, .length = sizeof val };
	struct ibv_send_wr wr = {
		.wr_id = VRB_WR(VRB_WR_CREDIT, peer, probe), .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
		.wr.rdma = { .remote_addr = p->rslot_addr, .rkey = p->rslot_rkey },
	}, *bad;
	if (n->max_inline_data < sizeof val) {
		vrb_peer_fail(n, peer, "its QP cannot send 8 bytes inline for credit returns");
		return;
	}
	if (ibv_post_send(p->qp, &wr, &bad)) {
		vrb_post_failed(n, peer, "cannot post a credit return");
		return;
	}
	vrb_sq_take(n, p, 1);
	p->told = val;
	p->credit_owed = false;
	if (probe)
		p->probing = true;
	else
		p->credit_writes++;
}

/* The keepalive scan (see the top of this file). */
int vrb_keepalive(struct nal *n, uint64_t now)
{
	atomic_store_explicit(&n->next_ka_ms, now + n->ka_ms, memory_order_relaxed);
	for (int r = 0; r < n->args.size; r++) {
		struct vrb_peer *p = &n->peers[r];
		if (p->state != VRB_UP)
			continue;
		if (p->acts != p->acts_seen) {
			p->acts_seen = p->acts;
			continue;
		}
		if (!p->probing) {
			if (n->debug)
				fprintf(stderr, "ptl: verbs: rank %d: probing silent rank %d\n", n->args.rank, r);
			vrb_credit_return(n, r, true);
		}
	}
	return 0;
}

static void vrb_recv_wc(struct nal *n, const struct ibv_wc *wc)
{
	uint32_t i = VRB_WR_IDX(wc->wr_id);
	int peer = vrb_qpn_peer(n, wc->qp_num);
	/* Only the peer's current QP counts: a message that arrives on a
	 * broken one was not counted in the consumed count our handshake
	 * carried, so the peer sends it again on the new QP. */
	bool current = peer >= 0 && n->peers[peer].state == VRB_UP && n->peers[peer].qp &&
		       n->peers[peer].qp->qp_num == wc->qp_num;
	if (wc->status != IBV_WC_SUCCESS || !current) {
		if (current)
			vrb_qp_error(n, peer, wc->status);
		vrb_repost(n, i);
		return;
	}
	struct vrb_peer *p = &n->peers[peer];
	p->acts++;
	n->awaiting = false;
	unsigned char *msg = (unsigned char *)n->rbuf + (size_t)i * VRB_EAGER;
	long len = wc->byte_len;
	if (wc->wc_flags & IBV_WC_WITH_IMM) {
		/* 31 bits of a count that never runs more than the grant
		 * ahead of what we know: extend it from our own. */
		uint32_t imm = ntohl(wc->imm_data);
		uint64_t back = vrb_peer_back(n, peer);
		back += (imm - (uint32_t)back) & VRB_IMM_COUNT;
		if (back <= p->sent)
			p->imm_back = back;
		if (imm & VRB_IMM_ZIPPED)
			len = vrb_unzip(msg, wc->byte_len);
	}
	/* Counted before the upcall: a send from inside it may break the
	 * connection, and the handshake then says this one was consumed. */
	p->consumed++;
	if (len >= 0)
		n->args.up.recv(n->args.up.arg, peer, msg, (size_t)len);
	else
		fprintf(stderr, "ptl: verbs: rank %d: dropped a malformed message (%u bytes) from rank %d\n",
			n->args.rank, wc->byte_len, peer);
	/* The buffer goes back at the next poll, which in a ping-pong comes
	 * after the answer is sent: posting a receive is a provider call and
	 * a lock, kept off the critical path (VRB_RECV_SPARE covers it). */
	vrb_repost_due(n);
	n->repost_due = i + 1;
	uint32_t quarter = p->granted / 4 ? p->granted / 4 : 1;
	if (p->consumed - p->told >= quarter && p->state == VRB_UP)
		vrb_credit_return(n, peer, false);
}

static void vrb_send_wc(struct nal *n, const struct ibv_wc *wc)
{
	int kind = VRB_WR_KIND(wc->wr_id);
	int peer = VRB_WR_PEER(wc->wr_id);
	/* An unsignaled SEND completes alone only when its QP flushes: it
	 * holds no CQ room and is no retired QP's outstanding WR. */
	bool unsig = kind == VRB_WR_SEND && VRB_WR_IDX(wc->wr_id) == 0;
	if (!unsig)
		n->tx_out--;
	if (kind == VRB_WR_CM_SEND) {
		n->cm_sfree[n->ncm_sfree++] = VRB_WR_IDX(wc->wr_id);
		return;
	}
	if (peer >= n->args.size)
		return;
	struct vrb_peer *p = &n->peers[peer];
	if (!p->qp || wc->qp_num != p->qp->qp_num) {
		if (!unsig)
			vrb_retired_wc(n, wc->qp_num); /* a broken QP drains */
		return;
	}
	/* A signaled SEND retires the unsignaled ones before it as well; a
	 * flushed unsignaled one, itself. */
	unsigned retire = kind == VRB_WR_SEND && !unsig ? VRB_WR_IDX(wc->wr_id) : 1;
	unsigned u = unsig ? 1 : retire - 1;
	if (u > p->unsig_out)
		u = p->unsig_out;
	p->unsig_out -= u;
	n->unsig_total -= u;
	p->sq_used = p->sq_used > retire ? p->sq_used - retire : 0;
	if (kind == VRB_WR_CREDIT && VRB_WR_IDX(wc->wr_id))
		p->probing = false;
	if (wc->status == IBV_WC_SUCCESS)
		p->acts++;
	else
		vrb_qp_error(n, peer, wc->status);
}

static void vrb_wc(struct nal *n, const struct ibv_wc *wc, int *done)
{
	switch (VRB_WR_KIND(wc->wr_id)) {
	case VRB_WR_RECV:
		vrb_recv_wc(n, wc);
		(*done)++;
		break;
	case VRB_WR_CM_RECV:
		vrb_cm_recv(n, wc, done);
		break;
	case VRB_WR_BULK:
		n->tx_out--;
		vrb_bulk_wc(n, wc);
		(*done)++;
		break;
	default:
		vrb_send_wc(n, wc);
		break;
	}
}

/* The CQ's lock: held only around a poll (and sleep()'s arming), never
 * across a wait, and almost never contended: progress() takes it on every
 * poll, where a mutex's two library calls cost more than the poll itself
 * under emulation. */
static void vrb_cq_lock(struct nal *n)
{
	while (atomic_exchange_explicit(&n->cq_busy, true, memory_order_acquire))
		sched_yield();
}

static void vrb_cq_unlock(struct nal *n)
{
	atomic_store_explicit(&n->cq_busy, false, memory_order_release);
}

/* vrb_poll's rare part, lock held: the completions sleep() stashed come
 * first, then the CQ's. Out of line, so that a poll of an empty CQ saves
 * no registers for it. */
__attribute__((noinline)) static int vrb_unstash(struct nal *n, struct ibv_wc *wc, int max)
{
	unsigned take = n->nstash < (unsigned)max ? n->nstash : (unsigned)max;
	memcpy(wc, n->stash, take * sizeof *wc);
	memmove(n->stash, n->stash + take, (n->nstash - take) * sizeof *n->stash);
	n->nstash -= take;
	int k = (int)take;
	if (k < max) {
		int got = ibv_poll_cq(n->cq, max - k, wc + k);
		if (got > 0)
			k += got;
	}
	return k;
}

/* Takes up to max completions: the stash first, then the CQ, under one
 * lock hold so that nothing sleep() stashes can be overtaken. */
static inline int vrb_poll(struct nal *n, struct ibv_wc *wc, int max)
{
	int k;
	vrb_cq_lock(n);
	if (n->nstash) {
		k = vrb_unstash(n, wc, max);
	} else {
		k = ibv_poll_cq(n->cq, max, wc);
		k = k > 0 ? k : 0;
	}
	vrb_cq_unlock(n);
	return k;
}

/* Handles the k completions at wc, and the CQ's further ones while it
 * gives full batches. */
__attribute__((noinline)) static int vrb_progress_wcs(struct nal *n, struct ibv_wc *wc, int k, int max)
{
	int done = 0;
	for (;;) {
		for (int i = 0; i < k; i++)
			vrb_wc(n, &wc[i], &done);
		if (k < max || (k = vrb_poll(n, wc, max)) <= 0)
			return done;
	}
}

/* What a poll does besides the CQ, which few polls need: draining broken
 * QPs, handshakes and starved peers, the keepalive, deferred work. */
__attribute__((noinline)) static int vrb_progress_rare(struct nal *n)
{
	int done = 0;
	if (n->nretired)
		vrb_retired_sweep(n);
	if (atomic_load_explicit(&n->waiting, memory_order_relaxed)) {
		done += vrb_cm_timers(n);
		for (int r = 0; r < n->args.size; r++) {
			struct vrb_peer *p = &n->peers[r];
			if (p->starved && p->state == VRB_UP && vrb_credit_left(n, r) > 0 && vrb_sq_room(n, p, 2)) {
				p->starved = false;
				atomic_fetch_sub(&n->waiting, 1);
				done++;
			}
		}
	}
	/* The keepalive runs in seconds: a clock read every VRB_KA_POLLS
	 * calls is plenty (sleep() also wakes for it). */
	if (n->ka_polls >= VRB_KA_POLLS) {
		n->ka_polls = 0;
		if (n->ka_ms && atomic_load_explicit(&n->nup, memory_order_relaxed)) {
			uint64_t now = vrb_now_ms();
			if (now >= atomic_load_explicit(&n->next_ka_ms, memory_order_relaxed))
				done += vrb_keepalive(n, now);
		}
	}
	if (!n->deferred)
		return done;
	n->deferred = false;
	bool left = false;
	for (int r = 0; r < n->args.size; r++) {
		struct vrb_peer *p = &n->peers[r];
		if (p->resend != p->sent)
			done += vrb_resend(n, r);
		if (p->credit_owed)
			vrb_credit_return(n, r, false);
		if (p->pend_head)
			done += vrb_bulk_pending(n, p);
		left = left || p->resend != p->sent || p->credit_owed || p->pend_head;
	}
	n->deferred = n->deferred || left;
	return done;
}

/* A poll that finds nothing is what a waiting rank repeats: it posts again
 * the last message's buffer if that waits, takes the CQ lock, polls, and
 * tests four words; the rest is out of line. */
int vrb_progress(struct nal *n)
{
	struct ibv_wc wc[32];
	vrb_repost_due(n);
	int k = vrb_poll(n, wc, 32);
	int done = k > 0 ? vrb_progress_wcs(n, wc, k, 32) : 0;
	if (++n->ka_polls >= VRB_KA_POLLS || n->nretired || atomic_load_explicit(&n->waiting, memory_order_relaxed) ||
	    n->deferred)
		done += vrb_progress_rare(n);
	return done;
}

/* The sleep proper; vrb_sleep() counts the sleepers around it. */
static int vrb_sleep_in(struct nal *n, int timeout_ms)
{
	/* Credits and handshakes arrive without waking us: poll for them. */
	if (atomic_load_explicit(&n->waiting, memory_order_relaxed) && (timeout_ms < 0 || timeout_ms > 5))
		timeout_ms = 5;
	/* Wake for the keepalive scan while peers are up. */
	if (n->ka_ms && atomic_load_explicit(&n->nup, memory_order_relaxed)) {
		uint64_t now = vrb_now_ms(), due = atomic_load_explicit(&n->next_ka_ms, memory_order_relaxed);
		int left = due > now ? (int)(due - now) : 0;
		if (timeout_ms < 0 || timeout_ms > left)
			timeout_ms = left;
	}
	/* While an application thread polls the CQ itself, a sleeper has
	 * nothing to wake for: it neither arms the CQ (so completions raise no
	 * event and wake nobody) nor takes completions away from the poller;
	 * it waits for the timeout or a kick (set_polling(0) kicks). */
	bool armed = !atomic_load(&n->app_polling);
	vrb_cq_lock(n);
	int pending = (int)n->nstash;
	if (!pending && armed) {
		ibv_req_notify_cq(n->cq, 0);
		int got = ibv_poll_cq(n->cq, VRB_STASH, n->stash);
		if (got > 0)
			n->nstash = (unsigned)got;
		pending = (int)n->nstash;
	}
	vrb_cq_unlock(n);
	if (pending)
		return 0;
	struct pollfd fds[2] = { { .fd = n->efd, .events = POLLIN }, { .fd = n->chan->fd, .events = POLLIN } };
	/* Unarmed, a channel event left over from an earlier arming would
	 * make poll() return at once: leave the channel out. */
	int rc = poll(fds, armed ? 2 : 1, timeout_ms);
	if (rc <= 0)
		return 0;
	if (armed && (fds[1].revents & POLLIN)) {
		struct ibv_cq *cq;
		void *ctx;
		if (ibv_get_cq_event(n->chan, &cq, &ctx) == 0)
			ibv_ack_cq_events(cq, 1);
	}
	if (fds[0].revents & POLLIN) {
		uint64_t v;
		ssize_t r = read(n->efd, &v, sizeof v);
		(void)r;
	}
	return 0;
}

int vrb_sleep(struct nal *n, int timeout_ms)
{
	atomic_fetch_add(&n->sleepers, 1);
	int rc = vrb_sleep_in(n, timeout_ms);
	atomic_fetch_sub(&n->sleepers, 1);
	return rc;
}

void vrb_kick(struct nal *n)
{
	uint64_t one = 1;
	ssize_t r = write(n->efd, &one, sizeof one);
	(void)r;
}

/* nal_ops.due: polls on while a message went out and none came in since,
 * up to due_ms. The time runs from the first time a waiter asks (after its
 * own spin budget, so a few ms late), not from the send: a send reads no
 * clock. The coarse clock is the vDSO's, no system call. */
int vrb_due(struct nal *n)
{
	if (!n->awaiting || !n->due_ms)
		return 0;
	uint64_t now = vrb_now_ms();
	if (!n->await_since_ms)
		n->await_since_ms = now;
	if (now - n->await_since_ms < n->due_ms)
		return 1;
	n->awaiting = false;
	return 0;
}

/* Verbs peers never make a system call to wake us (the completion channel
 * does), but a sleeper need not wake for completions an application
 * thread polls anyway: see vrb_sleep_in(). When the polling stops, a
 * thread sleeping unarmed is kicked so it sleeps again armed. The sleeper
 * counts itself before it reads app_polling (both sequentially
 * consistent), so either it sees the flag clear or we see it and kick. */
void vrb_set_polling(struct nal *n, int on)
{
	bool was = atomic_exchange(&n->app_polling, on != 0);
	if (was && !on && atomic_load(&n->sleepers))
		vrb_kick(n);
}
