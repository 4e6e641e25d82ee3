/*
 * What arrives from peers (the NALs' recv upcall, library lock held):
 *  - requests (PUT, GET, GETPUT) run the target side of PORTALS33.md's
 *    address translation: ACL, match list walk, MD acceptance, data
 *    movement, events, answer, unlink;
 *  - answers (ACK, REPLY) complete the initiator's op.
 * A malformed message is dropped and counted, never trusted.
 */
#include "config.h"

#include <string.h>

#include "nal/nal_copy.h"
#include "ptl/ptl_internal.h"

#define PTL_HF_NOACK 0x08 /* answer flag: the target's MD disabled ACKs */

/* Answers an initiator that waits, without touching any MD (drops). */
static __attribute__((noinline)) void ptl_answer_fail_send(int peer, const struct ptl_hdr *req, ptl_ni_fail_t why)
{
	struct ptl_hdr a = *req;
	a.type = req->type == PTL_MSG_PUT ? PTL_MSG_ACK : PTL_MSG_REPLY;
	a.flags = 0;
	a.nseg = 0;
	a.uid = ptl_uid(); /* the answer's initiator is us (ptl_target) */
	a.jid = ptl_jid();
	a.ni_fail = (uint32_t)why;
	a.mlength = 0;
	ptl_send(peer, &a, sizeof a, NULL, 0);
}
/* The test inline, the answer not: ptl_target of a PTL_MSG_PUT_SHORT or
 * PTL_MSG_PUT_TINY, whose flags are 0, has no call left that takes its
 * header's address, so the header it is given need not be built
 * (ptl_recv_put_inline). */
static inline void ptl_answer_fail(int peer, const struct ptl_hdr *req, ptl_ni_fail_t why)
{
	if (req->flags & PTL_HF_ANSWER)
		ptl_answer_fail_send(peer, req, why);
}

static void ptl_target_done(struct ptl_ni *ni, struct ptl_op *t);

/* Starts the bulk moves between md's [off, off+mlen) and the initiator's
 * segments; t counts the ones still pending. */
static void ptl_target_bulk(struct ptl_md *md, int peer, enum nal_bulk_op dir, ptl_size_t off,
			    ptl_size_t mlen, const struct ptl_seg *segs, int nseg, struct ptl_op *t)
{
	ptl_size_t done = 0;
	t->bulk_left = 1; /* held until every move is started */
	/* A request from a peer on another host may be its first contact. */
	if (ptl_lib.peers[peer].nal < 0 && ptl_route(peer) != 0) {
		t->bulk_status = NAL_EPEER;
		return;
	}
	struct ptl_nalinst *nal = &ptl_lib.nals[ptl_lib.peers[peer].nal];
	for (int k = 0; k < nseg && done < mlen; k++) {
		ptl_size_t n = segs[k].len < mlen - done ? segs[k].len : mlen - done;
		struct iovec iov[PTL_LIM_MAX_IOV];
		int niov = ptl_md_iovecs(md, off + done, n, iov, PTL_LIM_MAX_IOV);
		int rc = niov < 0 ? NAL_EINVAL
				  : nal->ops->bulk(nal->n, peer, dir, iov, niov, segs[k].addr, segs[k].key, n, t);
		if (rc == 1) {
			t->bulk_left++;
		} else if (rc != 0) {
			t->bulk_status = rc;
			break;
		}
		done += n;
	}
}

/* Fills every field of e but sequence: an event of request h on md. */
__attribute__((always_inline)) static inline void ptl_target_event_fill(ptl_event_t *e, ptl_event_kind_t kind, const struct ptl_md *md,
				  ptl_process_id_t src, const struct ptl_hdr *h, ptl_size_t off, ptl_size_t mlen)
{
	e->type = kind;
	e->initiator = src;
	e->uid = h->uid;
	e->jid = h->jid;
	e->pt_index = h->pt_index;
	e->match_bits = h->match_bits;
	e->rlength = h->rlength;
	e->mlength = mlen;
	e->offset = off;
	e->md_handle = md->handle;
	e->md = md->md;
	e->hdr_data = h->hdr_data;
	e->link = 0;
	e->ni_fail_type = PTL_NI_OK;
}

/* Logs an event of request h on md, written straight into its EQ's slot. */
__attribute__((always_inline)) static inline void ptl_target_event(const struct ptl_md *md, ptl_event_kind_t kind, ptl_process_id_t src,
			     const struct ptl_hdr *h, ptl_size_t off, ptl_size_t mlen)
{
	struct ptl_eq *eq = ptl_md_eq(md, kind);
	if (!eq)
		return;
	ptl_event_t *e = ptl_eq_slot(eq);
	ptl_target_event_fill(e, kind, md, src, h, off, mlen);
	ptl_eq_commit(eq, e);
}

/* Inline in each caller: a PTL_MSG_PUT_SHORT's or PTL_MSG_PUT_TINY's,
 * whose h is built in place with most fields constant, keeps none of the
 * branches for gets, answers and bulk moves. */
__attribute__((always_inline)) static inline void ptl_target(struct ptl_ni *ni, int peer, const struct ptl_hdr *h,
							    const void *payload, size_t plen)
{
	ptl_process_id_t src;
	if (ptl_peer_id(peer, &src) != PTL_OK)
		return;
	if (h->pt_index > (ptl_pt_index_t)ni->limits.max_pt_index) {
		ptl_sr_inc(PTL_SR_DROP_COUNT);
		ptl_answer_fail(peer, h, PTL_NI_DROPPED);
		return;
	}
	if (!ptl_ac_admits(ni, h->ac_index, src, h->uid, h->jid, h->pt_index)) {
		ptl_sr_inc(PTL_SR_PERMISSIONS_VIOLATIONS);
		ptl_answer_fail(peer, h, PTL_NI_DROPPED);
		return;
	}
	bool bulk = h->flags & PTL_HF_BULK;
	const struct ptl_seg *segs = bulk ? payload : NULL;
	if ((bulk && h->type == PTL_MSG_GETPUT) ||
	    (h->type == PTL_MSG_GETPUT && h->rlength > (uint64_t)ni->limits.max_getput_md) ||
	    (bulk ? plen != (size_t)h->nseg * sizeof *segs || h->nseg > PTL_LIM_MAX_IOV
		  : (h->type == PTL_MSG_GET ? plen != 0 : plen != h->rlength))) {
		ptl_sr_inc(PTL_SR_DROP_COUNT);
		ptl_answer_fail(peer, h, PTL_NI_DROPPED);
		return;
	}
	enum ptl_match_op mop = h->type == PTL_MSG_PUT ? PTL_MATCH_PUT
			      : h->type == PTL_MSG_GET ? PTL_MATCH_GET : PTL_MATCH_GETPUT;
	ptl_size_t off = 0, mlen = 0;
	struct ptl_me *me = ptl_match_pt(&ni->pts[h->pt_index], src, h->match_bits, mop,
					   h->offset, h->rlength, &off, &mlen);
	if (!me) {
		ptl_sr_inc(PTL_SR_DROP_COUNT);
		ptl_answer_fail(peer, h, PTL_NI_DROPPED);
		return;
	}
	struct ptl_md *md = me->md;
	if (md->md.threshold != PTL_MD_THRESH_INF)
		md->md.threshold--;
	if (!(md->md.options & PTL_MD_MANAGE_REMOTE))
		md->local_offset += mlen;

	/* The answer, if the initiator waits for one (a small put without
	 * an ACK, the commonest message, needs none: not built). */
	struct ptl_hdr a;
	if ((h->flags & PTL_HF_ANSWER) || h->type != PTL_MSG_PUT) {
		a = *h;
		a.type = h->type == PTL_MSG_PUT ? PTL_MSG_ACK : PTL_MSG_REPLY;
		a.flags = 0;
		a.nseg = 0;
		/* An answer swaps initiator and target (3.3's acknowledgment
		 * and reply): its event names us as the initiator, so the uid
		 * and jid beside that id are ours, not the request's echoed. */
		a.uid = ptl_uid();
		a.jid = ptl_jid();
		a.ni_fail = PTL_NI_OK;
		a.mlength = mlen;
		a.offset = off;
		if (h->type == PTL_MSG_PUT && (md->md.options & PTL_MD_ACK_DISABLE))
			a.flags |= PTL_HF_NOACK;
	}

	/* An EQ handler runs inside an event, and may call PtlMDUnlink or
	 * PtlMDUpdate: from START until the data has moved the MD is held
	 * (pending), and they say PTL_MD_IN_USE and PTL_MD_NO_UPDATE; after
	 * END, what the handler left is looked up again by handle (it may
	 * have unlinked the MD, and bound another into its slot). */
	uint64_t mh = md->handle;
	if (h->type == PTL_MSG_GETPUT) {
		/* The swap happens under the library lock, so no other operation
		 * on this MD sees half of it. */
		unsigned char old[PTL_LIM_MAX_GETPUT];
		md->pending++;
		ptl_target_event(md, PTL_EVENT_PUT_START, src, h, off, mlen);
		ptl_md_copy_out(md, off, old, mlen);
		ptl_md_copy_in(md, off, payload, mlen);
		md->pending--;
		ptl_target_event(md, PTL_EVENT_PUT_END, src, h, off, mlen);
		ptl_send(peer, &a, sizeof a, old, mlen);
		ptl_md_maybe_autounlink_h(ni, mh);
		return;
	}
	ptl_event_kind_t start = h->type == PTL_MSG_PUT ? PTL_EVENT_PUT_START : PTL_EVENT_GET_START;
	ptl_event_kind_t end = h->type == PTL_MSG_PUT ? PTL_EVENT_PUT_END : PTL_EVENT_GET_END;
	md->pending++;
	if (ptl_md_wants_event(md, start))
		ptl_target_event(md, start, src, h, off, mlen);
	if (!bulk) {
		if (h->type == PTL_MSG_PUT) {
			if (md->iov)
				ptl_md_copy_in(md, off, payload, mlen);
			else
				nal_copy((char *)md->md.start + off, payload, mlen);
			md->pending--;
			ptl_target_event(md, end, src, h, off, mlen);
			if (h->flags & PTL_HF_ANSWER)
				ptl_send(peer, &a, sizeof a, NULL, 0);
		} else {
			/* The reply carries the data; END once it is handed over. */
			const void *data = (const char *)md->md.start + off;
			if (md->iov && mlen) {
				ptl_md_copy_out(md, off, ptl_lib.scratch, mlen);
				data = ptl_lib.scratch;
			}
			ptl_send(peer, &a, sizeof a, mlen ? data : NULL, mlen);
			md->pending--;
			ptl_target_event(md, end, src, h, off, mlen);
		}
		ptl_md_maybe_autounlink_h(ni, mh);
		return;
	}
	/* Bulk: the data moves between the MD and the initiator's segments;
	 * END and the answer wait until every move has finished. */
	uint64_t cookie;
	struct ptl_op *t = ptl_htab_alloc(&ni->ops, &cookie);
	if (!t) {
		/* No room to track the move: refuse it cleanly. */
		md->pending--;
		ptl_md_give_back(md);
		if (!(md->md.options & PTL_MD_MANAGE_REMOTE))
			md->local_offset -= mlen;
		ptl_sr_inc(PTL_SR_DROP_COUNT);
		ptl_answer_fail(peer, h, PTL_NI_DROPPED);
		return;
	}
	t->cookie = cookie;
	ptl_list_init(&t->link);
	ptl_list_add_before(&t->link, &ptl_lib.peers[peer].ops);
	t->kind = PTL_OP_TARGET;
	t->peer = peer;
	t->md_handle = md->handle;
	t->end_kind = end;
	ptl_target_event_fill(&t->ev, end, md, src, h, off, mlen);
	t->answer_due = h->flags & PTL_HF_ANSWER;
	if (t->answer_due)
		t->answer = a;
	/* (pending, held since START, now the move's until ptl_target_done) */
	ptl_target_bulk(md, peer, h->type == PTL_MSG_PUT ? NAL_BULK_READ : NAL_BULK_WRITE, off, mlen,
			segs, h->nseg, t);
	if (--t->bulk_left == 0)
		ptl_target_done(ni, t);
}

/* The last bulk move of a target op finished: END event, answer, unlink.
 * The MD is released before END, whose handler may unlink it (ptl_target
 * says why it is looked up again). */
static void ptl_target_done(struct ptl_ni *ni, struct ptl_op *t)
{
	uint64_t mh = t->md_handle;
	struct ptl_md *md = ptl_md_lookup(ni, mh);
	ptl_ni_fail_t fail = t->bulk_status == 0 ? PTL_NI_OK : PTL_NI_FAIL;
	if (md) {
		md->pending--;
		t->ev.ni_fail_type = fail;
		ptl_md_event(md, t->end_kind, &t->ev);
	}
	if (t->answer_due && !ptl_lib.peers[t->peer].failed) {
		t->answer.ni_fail = (uint32_t)fail;
		ptl_send(t->peer, &t->answer, sizeof t->answer, NULL, 0);
	}
	ptl_op_finish(ni, t);
	if (md)
		ptl_md_maybe_autounlink_h(ni, mh);
}

/* Completes an initiator op with its answer (or with a failure). */
static void ptl_answer(struct ptl_ni *ni, struct ptl_op *op, const struct ptl_hdr *a,
		       const void *data, size_t dlen)
{
	struct ptl_md *md = ptl_md_lookup(ni, op->md_handle);
	ptl_ni_fail_t fail = (ptl_ni_fail_t)a->ni_fail;
	ptl_process_id_t target = { 0, 0 };
	ptl_peer_id(op->peer, &target);
	ptl_event_t ev = {
		.initiator = target,
		.uid = a->uid,
		.jid = a->jid,
		.pt_index = op->pt_index,
		.match_bits = op->match_bits,
		.rlength = op->length,
		.mlength = fail == PTL_NI_OK ? a->mlength : 0,
		.offset = a->offset,
		.hdr_data = op->hdr_data,
		.ni_fail_type = fail,
	};
	if (!md) {
		ptl_op_finish(ni, op);
		ptl_sr_inc(PTL_SR_ACK_DROP_COUNT);
		return;
	}
	/* The op holds the MD (pending) through every event but its last,
	 * whose handler may unlink it (ptl_target says why it is looked up
	 * again). */
	uint64_t mh = md->handle;
	if (op->kind == PTL_OP_PUT) {
		bool ack = op->ack_req && !(a->flags & PTL_HF_NOACK);
		if (op->bulk) {
			/* Our own event, logged late: the answer's uid and
			 * jid are the target's, not the SEND_END's. */
			ptl_event_t se = ev;
			se.initiator = ni->id;
			se.uid = ptl_uid();
			se.jid = ptl_jid();
			se.mlength = op->length;
			se.offset = op->local_offset;
			md->pending -= !ack;
			ptl_md_event(md, PTL_EVENT_SEND_END, &se);
		}
		if (ack) {
			if (md->md.threshold > 0)
				md->md.threshold--;
			md->pending--;
			ptl_md_event(md, PTL_EVENT_ACK, &ev);
		} else if (!op->bulk) {
			md->pending--;
		}
	} else {
		/* REPLY: data inline, or already written by the target's bulk. */
		ptl_size_t mlen = ev.mlength;
		if (mlen > op->length)
			mlen = ev.mlength = op->length;
		ev.offset = op->local_offset;
		if (md->md.threshold > 0)
			md->md.threshold--;
		ptl_md_event(md, PTL_EVENT_REPLY_START, &ev);
		if (fail == PTL_NI_OK && data && dlen >= mlen)
			ptl_md_copy_in(md, op->local_offset, data, mlen);
		md->pending--;
		ptl_md_event(md, PTL_EVENT_REPLY_END, &ev);
	}
	ptl_op_finish(ni, op);
	ptl_md_maybe_autounlink_h(ni, mh);
}

/* Field f of the header struct T at p, which may be unaligned. */
#define PTL_HDR_LOAD(T, p, f) ptl_load_field((const char *)(p) + offsetof(T, f), sizeof(((T *)0)->f))
/* ptl_load_field reads 8, 4, 2 or else 1 byte: each field loaded so is one of those. */
#define PTL_HDR_SIZE_OK(T, f)                                                                      \
	(sizeof(((T *)0)->f) == 8 || sizeof(((T *)0)->f) == 4 || sizeof(((T *)0)->f) == 2 ||      \
	 sizeof(((T *)0)->f) == 1)
#define PTL_HDR_SHORT_OK(f) PTL_HDR_SIZE_OK(struct ptl_hdr_short, f)
#define PTL_HDR_TINY_OK(f) PTL_HDR_SIZE_OK(struct ptl_hdr_tiny, f)
_Static_assert(PTL_HDR_SHORT_OK(pt_index) && PTL_HDR_SHORT_OK(ac_index) && PTL_HDR_SHORT_OK(uid) &&
		       PTL_HDR_SHORT_OK(jid) && PTL_HDR_SHORT_OK(match_bits) && PTL_HDR_SHORT_OK(offset) &&
		       PTL_HDR_SHORT_OK(hdr_data) && PTL_HDR_TINY_OK(pt_index) && PTL_HDR_TINY_OK(ac_index) &&
		       PTL_HDR_TINY_OK(match_bits) && PTL_HDR_TINY_OK(offset) && PTL_HDR_TINY_OK(hdr_data),
	       "a header field ptl_load_field cannot read");
static inline uint64_t ptl_load_field(const void *p, size_t n)
{
	if (n == 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		return v;
	}
	if (n == 4) {
		uint32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	if (n == 2) {
		uint16_t v;
		memcpy(&v, p, 2);
		return v;
	}
	return *(const uint8_t *)p;
}

/* A PTL_MSG_PUT_SHORT (40-byte header) or, tiny, a PTL_MSG_PUT_TINY
 * (24 bytes, our uid and jid: ptl_proto.h): a put as ptl_target takes
 * it; it waits for no answer, so a drop answers none. h is never built
 * in memory: ptl_target is inline and no call left in it takes h's
 * address (flags 0 ends ptl_answer_fail's), so its fields stay the
 * header's loads and constants; built, h was ~30 instructions of an
 * arrival. Inline in its two callers, each with its own constant tiny. */
#define PTL_RECV_LOAD(f)                                                                           \
	(tiny ? PTL_HDR_LOAD(struct ptl_hdr_tiny, msg, f) : PTL_HDR_LOAD(struct ptl_hdr_short, msg, f))
__attribute__((always_inline)) static inline void ptl_recv_put_inline(struct ptl_ni *ni, int peer, const void *msg,
								      size_t len, bool tiny)
{
	size_t hlen = tiny ? sizeof(struct ptl_hdr_tiny) : sizeof(struct ptl_hdr_short);
	ptl_process_id_t src;
	/* A tiny header from a peer that published another uid or jid than
	 * ours claims ours: its sender broke the rule, so nothing it says
	 * is taken (ptl_target's own ptl_peer_id then finds the id known). */
	if (len < hlen || !ni ||
	    (tiny && (ptl_peer_id(peer, &src) != PTL_OK || !ptl_lib.peers[peer].cred_same))) {
		ptl_sr_inc(PTL_SR_DROP_COUNT);
		return;
	}
	/* Each field loaded once from the message, straight into h's
	 * scalars: a copy of the header to the stack first was stored and
	 * loaded again field by field. */
	const struct ptl_hdr h = {
		.type = PTL_MSG_PUT,
		.pt_index = (uint32_t)PTL_RECV_LOAD(pt_index),
		.ac_index = (uint32_t)PTL_RECV_LOAD(ac_index),
		.uid = tiny ? ptl_uid() : (uint32_t)PTL_HDR_LOAD(struct ptl_hdr_short, msg, uid),
		.jid = tiny ? ptl_jid() : (uint32_t)PTL_HDR_LOAD(struct ptl_hdr_short, msg, jid),
		.match_bits = PTL_RECV_LOAD(match_bits),
		.offset = PTL_RECV_LOAD(offset),
		.hdr_data = PTL_RECV_LOAD(hdr_data),
		.rlength = len - hlen,
	};
	ptl_target(ni, peer, &h, (const char *)msg + hlen, len - hlen);
}
#undef PTL_RECV_LOAD
static void ptl_recv_put_tiny(struct ptl_ni *ni, int peer, const void *msg, size_t len)
{
	ptl_recv_put_inline(ni, peer, msg, len, true);
}
static void ptl_recv_put_short(struct ptl_ni *ni, int peer, const void *msg, size_t len)
{
	ptl_recv_put_inline(ni, peer, msg, len, false);
}

void ptl_recv(void *arg, int peer, const void *msg, size_t len)
{
	(void)arg;
	struct ptl_ni *ni = ptl_lib.ni;
	struct ptl_hdr h;
	if (len < 1 || peer < 0 || peer >= ptl_lib.rt.size) {
		ptl_sr_inc(PTL_SR_DROP_COUNT);
		return;
	}
	/* The type is the first byte of every header. */
	uint8_t type = *(const uint8_t *)msg;
	if (type == PTL_MSG_PUT_TINY) {
		ptl_recv_put_tiny(ni, peer, msg, len);
		return;
	}
	if (type == PTL_MSG_PUT_SHORT) {
		ptl_recv_put_short(ni, peer, msg, len);
		return;
	}
	if (len < sizeof h) {
		ptl_sr_inc(PTL_SR_DROP_COUNT);
		return;
	}
	memcpy(&h, msg, sizeof h);
	const void *payload = (const char *)msg + sizeof h;
	size_t plen = len - sizeof h;
	switch (h.type) {
	case PTL_MSG_PUT:
	case PTL_MSG_GET:
	case PTL_MSG_GETPUT:
		if (!ni) {
			/* No NI yet or any more: nothing can match. */
			ptl_sr_inc(PTL_SR_DROP_COUNT);
			ptl_answer_fail(peer, &h, PTL_NI_DROPPED);
			return;
		}
		ptl_target(ni, peer, &h, payload, plen);
		return;
	case PTL_MSG_ACK:
	case PTL_MSG_REPLY: {
		struct ptl_op *op = ni ? ptl_htab_lookup(&ni->ops, h.cookie) : NULL;
		if (!op || op->peer != peer || op->kind == PTL_OP_TARGET ||
		    (h.type == PTL_MSG_ACK) != (op->kind == PTL_OP_PUT)) {
			ptl_sr_inc(PTL_SR_ACK_DROP_COUNT);
			return;
		}
		ptl_answer(ni, op, &h, plen ? payload : NULL, plen);
		return;
	}
	default:
		ptl_sr_inc(PTL_SR_DROP_COUNT);
	}
}

void ptl_bulk_done(void *arg, void *cookie, int status)
{
	(void)arg;
	struct ptl_op *t = cookie;
	struct ptl_ni *ni = ptl_lib.ni;
	if (!ni)
		return;
	if (status != 0 && t->bulk_status == 0)
		t->bulk_status = status;
	if (--t->bulk_left == 0)
		ptl_target_done(ni, t);
}

/* Every op in flight to a dead peer fails: initiators get their END/ACK/
 * REPLY with PTL_NI_FAIL, targets finish their moves as failed. The ACK or
 * REPLY made here stands in for the peer's own, so it names the peer as
 * the answer's initiator with the uid and jid the peer published, as its
 * answers do (ptl_target): an op went to it only once its rank info was
 * read (ptl_initiate's ptl_id_rank), so they are known. */
void ptl_peer_fail(int peer, int status)
{
	(void)status;
	struct ptl_peer *p = &ptl_lib.peers[peer];
	if (p->failed)
		return;
	p->failed = true;
	ptl_sr_inc(PTL_SR_PEER_FAILURES);
	struct ptl_ni *ni = ptl_lib.ni;
	while (ni && !ptl_list_empty(&p->ops)) {
		struct ptl_op *op = ptl_container_of(p->ops.next, struct ptl_op, link);
		if (op->kind == PTL_OP_TARGET) {
			/* Its moves will not complete; finish it now, failed. */
			op->bulk_status = NAL_EPEER;
			op->bulk_left = 0;
			ptl_target_done(ni, op);
			continue;
		}
		struct ptl_hdr a = { .type = op->kind == PTL_OP_PUT ? PTL_MSG_ACK : PTL_MSG_REPLY,
				     .uid = p->uid, .jid = p->jid,
				     .ni_fail = PTL_NI_FAIL, .offset = op->remote_offset };
		ptl_answer(ni, op, &a, NULL, 0);
	}
}

void ptl_peer_failed_upcall(void *arg, int peer, int status)
{
	(void)arg;
	if (peer >= 0 && peer < ptl_lib.rt.size)
		ptl_peer_fail(peer, status);
}
