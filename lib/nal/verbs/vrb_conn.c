/*
 * Lazy RC connections. The first send to a peer (connect()) creates its RC
 * QP and sends a REQ over the NI's UD QP; the peer creates its own QP,
 * brings it to RTS and answers with a REP; the REP brings ours to RTS.
 * Until then send() says NAL_EAGAIN. Lost datagrams are sent again every
 * VRB_CM_RETRY_MS; a peer silent for VRB_CM_TRIES periods is dead.
 * close() sends a BYE to every peer it talked to, so they know the QP
 * errors that follow are no failure worth a message.
 *
 * Re-opens (see vrb.h, "Breaks"): a connection that broke without its
 * peer dying gets a new QP through the same handshake, one epoch later;
 * the broken QP is moved to the error state and retired until its WRs
 * have flushed. Both sides may notice at once (the side whose RDMA failed,
 * and the responder whose QP the bad request put in error): then the
 * crossed-handshake rule picks one REQ, as for a first connection. A side
 * that did not notice learns it from the REQ of the newer epoch.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nal/verbs/vrb.h"

#define VRB_CM_SIZE (40 + sizeof(struct vrb_cm)) /* GRH + message */

static uint32_t vrb_hash(uint32_t q, uint32_t cap)
{
	return (q * 2654435761u) & (cap - 1);
}

static void vrb_qpn_add(struct nal *n, uint32_t qpn, int peer)
{
	uint32_t i = vrb_hash(qpn, n->qpn_cap);
	while (n->qpn_map[i] >= 0 && n->qpn_key[i] != qpn)
		i = (i + 1) & (n->qpn_cap - 1);
	n->qpn_key[i] = qpn;
	n->qpn_map[i] = peer;
}

/* Linear probing: later entries of the run move back into the hole, so
 * that every lookup still finds them. */
static void vrb_qpn_del(struct nal *n, uint32_t qpn)
{
	uint32_t mask = n->qpn_cap - 1, i = vrb_hash(qpn, n->qpn_cap);
	while (n->qpn_map[i] >= 0 && n->qpn_key[i] != qpn)
		i = (i + 1) & mask;
	if (n->qpn_map[i] < 0)
		return;
	for (uint32_t j = (i + 1) & mask; n->qpn_map[j] >= 0; j = (j + 1) & mask) {
		uint32_t h = vrb_hash(n->qpn_key[j], n->qpn_cap);
		bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
		if (stays)
			continue;
		n->qpn_key[i] = n->qpn_key[j];
		n->qpn_map[i] = n->qpn_map[j];
		i = j;
	}
	n->qpn_map[i] = -1;
}

int vrb_qpn_peer(struct nal *n, uint32_t qpn)
{
	uint32_t i = vrb_hash(qpn, n->qpn_cap);
	while (n->qpn_map[i] >= 0) {
		if (n->qpn_key[i] == qpn)
			return n->qpn_map[i];
		i = (i + 1) & (n->qpn_cap - 1);
	}
	return -1;
}

static int vrb_cm_post_recv(struct nal *n, uint32_t i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(n->cmbuf + (size_t)i * VRB_CM_SIZE),
			       .length = VRB_CM_SIZE, .lkey = n->cm_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = VRB_WR(VRB_WR_CM_RECV, 0, i), .sg_list = &sge, .num_sge = 1 }, *bad;
	return ibv_post_recv(n->ud, &wr, &bad);
}

int vrb_conn_init(struct nal *n)
{
	n->qpn_cap = 64;
	while (n->qpn_cap < 2u * (uint32_t)n->args.size + 16)
		n->qpn_cap <<= 1;
	n->qpn_map = malloc(n->qpn_cap * sizeof *n->qpn_map);
	n->qpn_key = malloc(n->qpn_cap * sizeof *n->qpn_key);
	n->cmbuf = calloc(2 * VRB_CM_BUFS, VRB_CM_SIZE);
	if (!n->qpn_map || !n->qpn_key || !n->cmbuf)
		return NAL_ENOMEM;
	for (uint32_t i = 0; i < n->qpn_cap; i++)
		n->qpn_map[i] = -1;
	n->cm_mr = ibv_reg_mr(n->pd, n->cmbuf, 2 * VRB_CM_BUFS * VRB_CM_SIZE, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp_init_attr qa = {
		.send_cq = n->cq, .recv_cq = n->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = VRB_CM_BUFS, .max_recv_wr = VRB_CM_BUFS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	n->ud = n->cm_mr ? ibv_create_qp(n->pd, &qa) : NULL;
	if (!n->ud) {
		fprintf(stderr, "ptl: verbs: cannot create the UD QP on %s\n", n->devname);
		return NAL_EIO;
	}
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = n->port,
				 .qkey = VRB_QKEY };
	if (ibv_modify_qp(n->ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return NAL_EIO;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(n->ud, &a, IBV_QP_STATE))
		return NAL_EIO;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0 };
	if (ibv_modify_qp(n->ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return NAL_EIO;
	for (uint32_t i = 0; i < VRB_CM_BUFS; i++)
		if (vrb_cm_post_recv(n, i))
			return NAL_EIO;
	for (uint32_t i = 0; i < VRB_CM_BUFS; i++)
		n->cm_sfree[n->ncm_sfree++] = VRB_CM_BUFS + i;
	n->me.ud_qpn = n->ud->qp_num;
	n->reopen_max = VRB_REOPEN_MAX;
	return 0;
}

void vrb_conn_fini(struct nal *n)
{
	if (n->ud)
		ibv_destroy_qp(n->ud);
	if (n->cm_mr)
		ibv_dereg_mr(n->cm_mr);
	free(n->cmbuf);
}

static void vrb_ah_attr(struct nal *n, const struct vrb_addr *a, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof *ah);
	ah->dlid = a->lid;
	ah->port_num = n->port;
	if (a->is_global) {
		ah->is_global = 1;
		memcpy(ah->grh.dgid.raw, a->gid, 16);
		ah->grh.sgid_index = (uint8_t)n->gid_index;
		ah->grh.hop_limit = 64;
	}
}

/* Whether a peer's address is one this NAL can connect to: this build's
 * verbs address, on a port of our kind (vrb_addr_refused says why not). */
static bool vrb_addr_fits(const struct nal *n, const struct vrb_addr *a)
{
	return a->magic == VRB_MAGIC && a->is_global == n->me.is_global;
}

/* Takes peer's address (from its blob or its REQ). */
static int vrb_set_addr(struct nal *n, int peer, const struct vrb_addr *a)
{
	struct vrb_peer *p = &n->peers[peer];
	if (!vrb_addr_fits(n, a))
		return NAL_EINVAL;
	if (p->have_addr)
		return 0;
	p->addr = *a;
	struct ibv_ah_attr ah;
	vrb_ah_attr(n, a, &ah);
	p->ah = ibv_create_ah(n->pd, &ah);
	if (!p->ah)
		return NAL_EIO;
	p->have_addr = true;
	return 0;
}

static int vrb_qp_create(struct nal *n, int peer)
{
	struct vrb_peer *p = &n->peers[peer];
	if (p->qp)
		return 0;
	struct ibv_qp_init_attr qa = {
		.send_cq = n->cq, .recv_cq = n->cq, .srq = n->srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = VRB_SQ_DEPTH, .max_send_sge = n->max_sge,
			 .max_inline_data = 128 },
	};
	p->qp = ibv_create_qp(n->pd, &qa);
	if (!p->qp) {
		qa.cap.max_inline_data = 0;
		p->qp = ibv_create_qp(n->pd, &qa);
	}
	if (!p->qp)
		return NAL_EIO;
	if (!n->max_inline_data || qa.cap.max_inline_data < n->max_inline_data)
		n->max_inline_data = qa.cap.max_inline_data;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = n->port,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_WRITE };
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return NAL_EIO;
	p->psn = (uint32_t)random() & 0xffffff;
	vrb_qpn_add(n, p->qp->qp_num, peer);
	/* A re-opened connection keeps the buffers granted to the first: they
	 * belong to the SRQ, not to the QP, and stay posted. */
	if (p->granted)
		return 0;
	/* The eager buffers this peer may fill. */
	uint32_t room = n->nrbuf - n->rbuf_posted;
	p->granted = room < VRB_CREDITS ? room : VRB_CREDITS;
	if (p->granted == 0) {
		fprintf(stderr, "ptl: verbs: rank %d: no eager buffers left for rank %d\n", n->args.rank, peer);
		return NAL_ENOMEM;
	}
	return vrb_post_recvs(n, p->granted);
}

/* INIT -> RTR -> RTS toward the peer's (qpn, psn). */
static int vrb_qp_up(struct nal *n, int peer)
{
	struct vrb_peer *p = &n->peers[peer];
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = (enum ibv_mtu)(p->addr.mtu < n->me.mtu ? p->addr.mtu : n->me.mtu),
		.dest_qp_num = p->rqpn, .rq_psn = p->rpsn,
		.max_dest_rd_atomic = 16, .min_rnr_timer = 12,
	};
	vrb_ah_attr(n, &p->addr, &a.ah_attr);
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return NAL_EIO;
	/* rnr_retry 7 (forever) is safe: credits keep the SRQ from running dry. */
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = VRB_ACK_TIMEOUT, .retry_cnt = VRB_RETRY_CNT,
				  .rnr_retry = 7, .sq_psn = p->psn, .max_rd_atomic = 16 };
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		return NAL_EIO;
	p->state = VRB_UP;
	p->acts++;
	atomic_fetch_add(&n->nup, 1);
	if (n->debug)
		fprintf(stderr, "ptl: verbs: rank %d: rank %d up (qpn %u -> %u)\n", n->args.rank, peer,
			p->qp->qp_num, p->rqpn);
	return 0;
}

static int vrb_cm_send(struct nal *n, int peer, enum vrb_cm_type type)
{
	struct vrb_peer *p = &n->peers[peer];
	if (!n->ncm_sfree)
		return NAL_EAGAIN;
	uint32_t i = n->cm_sfree[--n->ncm_sfree];
	struct vrb_cm *m = (struct vrb_cm *)(n->cmbuf + (size_t)i * VRB_CM_SIZE);
	*m = (struct vrb_cm){
		.magic = VRB_MAGIC, .type = type, .rank = (uint32_t)n->args.rank,
		.qpn = p->qp ? p->qp->qp_num : 0, .psn = p->psn, .credits = p->granted,
		.slot_addr = (uintptr_t)&n->slots[peer], .slot_rkey = n->slots_mr->rkey,
		.epoch = p->epoch, .consumed = p->consumed, .addr = n->me,
	};
	memcpy(m->key, n->key, sizeof m->key);
	struct ibv_sge sge = { .addr = (uintptr_t)m, .length = sizeof *m, .lkey = n->cm_mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = VRB_WR(VRB_WR_CM_SEND, peer, i), .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = p->ah, .remote_qpn = p->addr.ud_qpn, .remote_qkey = VRB_QKEY },
	}, *bad;
	if (ibv_post_send(n->ud, &wr, &bad)) {
		n->cm_sfree[n->ncm_sfree++] = i;
		return NAL_EIO;
	}
	n->tx_out++;
	return 0;
}

/* Why a peer's address (its blob) cannot be ours to connect to, said on
 * stderr; 0 if it can. A magic of "VRB" and another digit is another
 * build's verbs NAL (vrb.h's VRB_MAGIC: eager buffers of another size). */
static int vrb_addr_refused(const struct nal *n, int peer, const struct vrb_addr *a)
{
	if (vrb_addr_fits(n, a))
		return 0;
	if ((a->magic & 0xffffff00u) == (VRB_MAGIC & 0xffffff00u) && a->magic != VRB_MAGIC) {
		fprintf(stderr,
			"ptl: verbs: rank %d: rank %d runs another version of libptl's verbs NAL (VRB%c, this "
			"one VRB%c: eager buffers of another size); every rank of a job must run the same libptl\n",
			n->args.rank, peer, (char)(a->magic & 0xff), (char)(VRB_MAGIC & 0xff));
		return NAL_EINVAL;
	}
	if (a->magic != VRB_MAGIC) {
		fprintf(stderr, "ptl: verbs: rank %d: rank %d's address is not a verbs address (magic %#x)\n",
			n->args.rank, peer, a->magic);
		return NAL_EINVAL;
	}
	fprintf(stderr,
		"ptl: verbs: rank %d: rank %d's port is addressed by %s, ours by %s: they cannot "
		"connect (PTL_VERBS_DEVICE picks another device)\n",
		n->args.rank, peer, a->is_global ? "GID (RoCE)" : "LID (InfiniBand)",
		n->me.is_global ? "GID (RoCE)" : "LID (InfiniBand)");
	return NAL_EINVAL;
}

int vrb_connect(struct nal *n, int peer, const void *addr, size_t len)
{
	if (peer < 0 || peer >= n->args.size || peer == n->args.rank || len != sizeof(struct vrb_addr))
		return NAL_EINVAL;
	struct vrb_peer *p = &n->peers[peer];
	if (p->state == VRB_FAILED)
		return NAL_EPEER;
	if (p->state != VRB_IDLE)
		return 0; /* it asked us first, or we asked already */
	struct vrb_addr a;
	memcpy(&a, addr, sizeof a);
	int rc = vrb_addr_refused(n, peer, &a);
	if (rc)
		return rc;
	rc = vrb_set_addr(n, peer, &a);
	if (rc == 0)
		rc = vrb_qp_create(n, peer);
	if (rc != 0) {
		fprintf(stderr, "ptl: verbs: rank %d: cannot set up a connection to rank %d (%d)\n",
			n->args.rank, peer, rc);
		return rc;
	}
	p->state = VRB_REQ_SENT;
	p->tries = 1;
	p->next_try_ms = vrb_now_ms() + VRB_CM_RETRY_MS;
	atomic_fetch_add(&n->waiting, 1);
	vrb_cm_send(n, peer, VRB_CM_REQ);
	return 0;
}

int vrb_reaches(struct nal *n, int peer)
{
	return peer >= 0 && peer < n->args.size && peer != n->args.rank &&
	       n->peers[peer].state != VRB_FAILED;
}

void vrb_peer_fail(struct nal *n, int peer, const char *why)
{
	struct vrb_peer *p = &n->peers[peer];
	if (p->state == VRB_FAILED)
		return;
	if (p->state == VRB_REQ_SENT)
		atomic_fetch_sub(&n->waiting, 1);
	if (p->starved)
		atomic_fetch_sub(&n->waiting, 1);
	if (p->state == VRB_UP)
		atomic_fetch_sub(&n->nup, 1);
	p->starved = false;
	p->probing = false;
	p->state = VRB_FAILED;
	if (!p->bye || n->debug)
		fprintf(stderr, "ptl: verbs: rank %d: rank %d %s: %s\n", n->args.rank, peer,
			p->bye ? "closed" : "failed", why);
	/* lib/ptl fails everything in flight to the peer: its bulks say nothing more. */
	vrb_bulk_drop(n, p);
	if (n->args.up.peer_failed)
		n->args.up.peer_failed(n->args.up.arg, peer, NAL_EPEER);
}

/* Moves p's QP to the error state, so that its WRs flush, and keeps it
 * until they have completed: destroying it earlier could take their
 * completions (and the bulk_done they owe) off the CQ. */
static int vrb_retire(struct nal *n, int peer)
{
	struct vrb_peer *p = &n->peers[peer];
	if (n->nretired == VRB_RETIRED)
		return NAL_ENOMEM;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE))
		return NAL_EIO;
	n->retired[n->nretired++] = (struct vrb_retired){ .qp = p->qp, .peer = peer,
							  .out = p->sq_used - p->unsig_out,
							  .since_ms = vrb_now_ms() };
	p->qp = NULL;
	p->sq_used = 0;
	n->unsig_total -= p->unsig_out;
	p->unsig_out = 0;
	p->unsig = 0;
	return 0;
}

/* A send-side completion of a QP that is no peer's current one: if it is
 * a retired QP's, it counts toward its draining. */
void vrb_retired_wc(struct nal *n, uint32_t qpn)
{
	for (unsigned i = 0; i < n->nretired; i++) {
		struct vrb_retired *r = &n->retired[i];
		if (r->qp->qp_num != qpn)
			continue;
		if (r->out && --r->out == 0)
			r->since_ms = vrb_now_ms();
		return;
	}
}

/* Destroys the retired QPs that have drained. Called after progress()
 * emptied the CQ: receive completions of the QP (from the SRQ, not
 * counted in out) were polled by then, as VRB_RETIRE_MS passed since its
 * last WR completed. */
void vrb_retired_sweep(struct nal *n)
{
	uint64_t now = vrb_now_ms();
	for (unsigned i = 0; i < n->nretired;) {
		struct vrb_retired *r = &n->retired[i];
		if (r->out || now - r->since_ms < VRB_RETIRE_MS) {
			i++;
			continue;
		}
		vrb_qpn_del(n, r->qp->qp_num);
		ibv_destroy_qp(r->qp);
		*r = n->retired[--n->nretired];
	}
}

void vrb_retired_fini(struct nal *n)
{
	while (n->nretired)
		ibv_destroy_qp(n->retired[--n->nretired].qp);
}

/* The connection to peer broke, the peer did not die: fail what was in
 * flight on the QP (its WRs flush: bulks report NAL_EIO, messages are sent
 * again), retire the QP and make a new one. ask: we noticed, so we ask for
 * the new connection; else the peer asked and the caller answers it.
 * 0: re-opening; NAL_EPEER: the peer is failed instead. */
static int vrb_peer_break(struct nal *n, int peer, const char *why, bool ask)
{
	struct vrb_peer *p = &n->peers[peer];
	if (p->bye) {
		vrb_peer_fail(n, peer, why);
		return NAL_EPEER;
	}
	uint64_t now = vrb_now_ms();
	if (p->reopens == 0 || now - p->reopen_t0 > VRB_REOPEN_WIN_MS) {
		p->reopen_t0 = now;
		p->reopens = 0;
	}
	if (++p->reopens > n->reopen_max) {
		char msg[200];
		snprintf(msg, sizeof msg, "its connection broke %u times within %d s, the last time by %s "
			 "(RDMA to memory it no longer exposes?); giving up on it", p->reopens,
			 VRB_REOPEN_WIN_MS / 1000, why);
		vrb_cm_send(n, peer, VRB_CM_DROP); /* so that it gives up on us too */
		vrb_peer_fail(n, peer, msg);
		return NAL_EPEER;
	}
	fprintf(stderr, "ptl: verbs: rank %d: connection to rank %d broke (%s): what was in flight on it "
		"fails, and it re-opens\n", n->args.rank, peer, why);
	if (vrb_retire(n, peer) != 0 || vrb_qp_create(n, peer) != 0) {
		vrb_peer_fail(n, peer, "cannot re-open its broken connection");
		return NAL_EPEER;
	}
	vrb_bulk_break(p);
	atomic_fetch_sub(&n->nup, 1);
	p->probing = false;
	p->epoch++;
	if (!ask) {
		p->state = VRB_IDLE;
		return 0;
	}
	p->state = VRB_REQ_SENT;
	p->tries = 1;
	p->next_try_ms = now + VRB_CM_RETRY_MS;
	atomic_fetch_add(&n->waiting, 1);
	vrb_cm_send(n, peer, VRB_CM_REQ);
	return 0;
}

/* A completion of peer's current QP failed with st. Only a dead peer
 * (the transport's retries ran out) is fatal; anything else breaks the
 * connection, which re-opens. */
void vrb_qp_error(struct nal *n, int peer, enum ibv_wc_status st)
{
	if (n->peers[peer].state != VRB_UP)
		return;
	if (st == IBV_WC_RETRY_EXC_ERR || st == IBV_WC_RNR_RETRY_EXC_ERR)
		vrb_peer_fail(n, peer, ibv_wc_status_str(st));
	else
		vrb_peer_break(n, peer, ibv_wc_status_str(st), true);
}

/* Posting to peer's current QP failed: as an error completion would
 * have. NAL_EAGAIN: the connection re-opens; NAL_EPEER: the peer failed. */
int vrb_post_failed(struct nal *n, int peer, const char *what)
{
	struct vrb_peer *p = &n->peers[peer];
	if (p->state == VRB_UP)
		vrb_peer_break(n, peer, what, true);
	return p->state == VRB_FAILED ? NAL_EPEER : NAL_EAGAIN;
}

/* Takes the peer's side of the handshake (its REQ or REP) and brings our
 * QP up to it, then sends again what the peer has not consumed. On error
 * the peer is failed. */
static int vrb_accept(struct nal *n, int peer, const struct vrb_cm *m)
{
	struct vrb_peer *p = &n->peers[peer];
	uint64_t back = vrb_peer_back(n, peer);
	const char *bad = NULL;
	if (m->credits == 0 || m->credits > VRB_CREDITS)
		bad = "its handshake grants an impossible number of credits";
	else if (m->consumed > p->sent || m->consumed < back)
		bad = "its count of our messages does not match ours";
	else if (vrb_keep_init(n, p) != 0)
		bad = "cannot register the copies of messages for it";
	if (!bad) {
		p->rqpn = m->qpn;
		p->rpsn = m->psn;
		p->grant = m->credits;
		p->rslot_addr = m->slot_addr;
		p->rslot_rkey = m->slot_rkey;
		p->imm_back = m->consumed;
		p->resend = m->consumed;
		n->deferred = true;
		if (vrb_qp_up(n, peer) != 0)
			bad = "cannot bring its QP up";
	}
	if (bad) {
		vrb_peer_fail(n, peer, bad);
		return NAL_EPEER;
	}
	vrb_resend(n, peer);
	return 0;
}

/* A handshake datagram arrived. */
void vrb_cm_recv(struct nal *n, const struct ibv_wc *wc, int *done)
{
	uint32_t i = VRB_WR_IDX(wc->wr_id);
	struct vrb_cm m;
	memcpy(&m, n->cmbuf + (size_t)i * VRB_CM_SIZE + 40, sizeof m);
	vrb_cm_post_recv(n, i);
	if (wc->status != IBV_WC_SUCCESS || wc->byte_len < 40 + sizeof m || m.magic != VRB_MAGIC ||
	    memcmp(m.key, n->key, sizeof m.key) || m.rank >= (uint32_t)n->args.size ||
	    (int)m.rank == n->args.rank)
		return; /* not from this job */
	int peer = (int)m.rank;
	struct vrb_peer *p = &n->peers[peer];
	if (p->state == VRB_FAILED)
		return;
	if (m.type == VRB_CM_REQ) {
		if (m.epoch < p->epoch)
			return; /* from before a re-open */
		if (p->state == VRB_UP && m.epoch == p->epoch) {
			if (p->rqpn == m.qpn)
				vrb_cm_send(n, peer, VRB_CM_REP); /* our REP was lost */
			return;
		}
		if (p->state == VRB_REQ_SENT && m.epoch == p->epoch && n->args.rank < peer)
			return; /* both asked: ours wins, the peer answers it */
		/* A newer epoch while up: the peer's side of our connection broke. */
		if (p->state == VRB_UP && vrb_peer_break(n, peer, "it re-opened the connection", false) != 0) {
			(*done)++;
			return;
		}
		if (vrb_set_addr(n, peer, &m.addr) || vrb_qp_create(n, peer))
			return;
		bool was_asking = p->state == VRB_REQ_SENT;
		p->epoch = m.epoch;
		if (vrb_accept(n, peer, &m) != 0) {
			(*done)++;
			return;
		}
		if (was_asking)
			atomic_fetch_sub(&n->waiting, 1);
		vrb_cm_send(n, peer, VRB_CM_REP);
		(*done)++;
	} else if (m.type == VRB_CM_BYE) {
		/* The peer closed: what follows on its QP is no news. Asked and
		 * never answered, it will not answer now. */
		p->bye = true;
		if (p->state == VRB_REQ_SENT) {
			vrb_peer_fail(n, peer, "it closed before it answered");
			(*done)++;
		}
	} else if (m.type == VRB_CM_DROP) {
		vrb_peer_fail(n, peer, "it gave up on our connection, which broke too often");
		(*done)++;
	} else if (m.type == VRB_CM_REP && p->state == VRB_REQ_SENT && m.epoch == p->epoch) {
		if (vrb_accept(n, peer, &m) == 0)
			atomic_fetch_sub(&n->waiting, 1);
		(*done)++;
	}
}

/* Resends REQs whose answer is late; fails peers that never answer. */
int vrb_cm_timers(struct nal *n)
{
	if (atomic_load_explicit(&n->waiting, memory_order_relaxed) == 0)
		return 0;
	uint64_t now = vrb_now_ms();
	int done = 0;
	for (int r = 0; r < n->args.size; r++) {
		struct vrb_peer *p = &n->peers[r];
		if (p->state != VRB_REQ_SENT || now < p->next_try_ms)
			continue;
		if (p->tries >= VRB_CM_TRIES) {
			vrb_peer_fail(n, r, "no answer to the connection request");
			done++;
			continue;
		}
		p->tries++;
		p->next_try_ms = now + VRB_CM_RETRY_MS;
		vrb_cm_send(n, r, VRB_CM_REQ);
	}
	return done;
}

/* Tells every peer we talked to that we are closing, and waits (briefly)
 * for the datagrams to leave before the UD QP is destroyed. */
void vrb_cm_bye(struct nal *n)
{
	if (!n->peers || !n->ud)
		return;
	int sent = 0;
	for (int r = 0; r < n->args.size; r++) {
		struct vrb_peer *p = &n->peers[r];
		if ((p->state == VRB_UP || p->state == VRB_REQ_SENT) && p->ah && p->qp && !p->bye)
			sent += vrb_cm_send(n, r, VRB_CM_BYE) == 0;
	}
	uint64_t end = vrb_now_ms() + 100;
	while (sent > 0 && vrb_now_ms() < end) {
		struct ibv_wc wc[16];
		int k = ibv_poll_cq(n->cq, 16, wc);
		for (int i = 0; i < k; i++)
			if (VRB_WR_KIND(wc[i].wr_id) == VRB_WR_CM_SEND)
				sent--;
		if (k <= 0)
			nanosleep(&(struct timespec){ 0, 200000 }, NULL);
	}
}
