/*
 * Data movement, initiator side: PtlPut, PtlPutRegion, PtlGet, PtlGetRegion,
 * PtlGetPut. Small data travels inline with the request; large data stays
 * in the initiator's MD, which the request describes as registered segments
 * for the target to read (put) or write (get) with the NAL's bulk moves.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptl/ptl_internal.h"

/* Segments a bulk request may carry: the MD's iovec limit. */
#define PTL_MAX_SEGS PTL_LIM_MAX_IOV

/* An initiator op for request h (its cookie set here) on md_handle at
 * loff, in a slot not zeroed: every field an answer reads is set here,
 * ack_req and bulk false (a target op's fields stay unused). A put's op
 * cost a 300-byte clear and a whole-struct store before. */
static struct ptl_op *ptl_op_new(struct ptl_ni *ni, enum ptl_op_kind kind, int peer, struct ptl_hdr *h,
				 uint64_t md_handle, ptl_size_t loff)
{
	struct ptl_op *op = ptl_htab_take(&ni->ops, &h->cookie);
	if (!op)
		return NULL;
	op->cookie = h->cookie;
	op->kind = kind;
	op->peer = peer;
	op->md_handle = md_handle;
	op->put_md_handle = 0;
	op->local_offset = loff;
	op->length = h->rlength;
	op->match_bits = h->match_bits;
	op->pt_index = h->pt_index;
	op->hdr_data = h->hdr_data;
	op->remote_offset = h->offset;
	op->ack_req = false;
	op->bulk = false;
	ptl_list_add_before(&op->link, &ptl_lib.peers[peer].ops);
	return op;
}

/* The op's exposure ended (answered, failed, its peer dead, the NI
 * gone): its registrations go back to the NAL. */
void ptl_op_unreg(struct ptl_op *op)
{
	if (!op->nmr) /* (its registration failed: maybe no NAL either) */
		return;
	struct ptl_nalinst *nal = &ptl_lib.nals[ptl_lib.peers[op->peer].nal];
	struct nal_mr *mrs = op->nmr > 1 ? op->mrs : &op->mr1;
	for (unsigned i = 0; i < op->nmr; i++)
		nal->ops->mem_dereg(nal->n, &mrs[i]);
	if (op->nmr > 1)
		free(op->mrs);
	op->nmr = 0;
}

/* The NI goes with ops in flight: what they registered goes too. */
void ptl_ops_unreg_all(void)
{
	for (int r = 0; ptl_lib.peers && r < ptl_lib.rt.size; r++) {
		struct ptl_list *head = &ptl_lib.peers[r].ops;
		for (struct ptl_list *l = head->next; l != head; l = l->next) {
			struct ptl_op *op = ptl_container_of(l, struct ptl_op, link);
			if (op->bulk)
				ptl_op_unreg(op);
		}
	}
}

void ptl_op_finish(struct ptl_ni *ni, struct ptl_op *op)
{
	if (op->bulk)
		ptl_op_unreg(op);
	ptl_list_del(&op->link);
	ptl_htab_release(&ni->ops, op->cookie);
}

/* Takes one use of md's threshold for an operation it starts. */
static bool ptl_md_take(struct ptl_md *md)
{
	if (md->md.threshold == 0 || md->doomed)
		return false;
	if (md->md.threshold != PTL_MD_THRESH_INF)
		md->md.threshold--;
	return true;
}


/* Describes md's [off, off+len) as registered segments for the target;
 * op keeps the registrations until it ends (ptl_op_finish). */
static int ptl_md_segs(struct ptl_md *md, int peer, ptl_size_t off, ptl_size_t len, struct ptl_seg *segs,
		       struct ptl_op *op)
{
	struct iovec iov[PTL_MAX_SEGS];
	int n = ptl_md_iovecs(md, off, len, iov, PTL_MAX_SEGS);
	if (n < 0)
		return -1;
	/* The first send to a peer on another host may be this one. */
	if (ptl_lib.peers[peer].nal < 0 && (ptl_lib.peers[peer].failed || ptl_route(peer) != 0))
		return -1;
	struct ptl_nalinst *nal = &ptl_lib.nals[ptl_lib.peers[peer].nal];
	struct nal_mr *mrs = &op->mr1;
	if (n > 1 && !(mrs = op->mrs = malloc((size_t)n * sizeof *mrs)))
		return -1;
	for (int i = 0; i < n; i++) {
		if (nal->ops->mem_reg(nal->n, iov[i].iov_base, iov[i].iov_len, &mrs[i]) != 0) {
			while (i-- > 0)
				nal->ops->mem_dereg(nal->n, &mrs[i]);
			if (n > 1)
				free(mrs);
			return -1;
		}
		segs[i] = (struct ptl_seg){ .addr = mrs[i].addr, .key = mrs[i].key, .len = iov[i].iov_len };
	}
	op->nmr = (uint16_t)n;
	return n;
}

/* Whether hdr plus len bytes go inline to peer. A NAL's max_inline
 * leaves NAL_HDR_ROOM for this header over a power-of-two payload. */
_Static_assert(sizeof(struct ptl_hdr) <= NAL_HDR_ROOM, "struct ptl_hdr fits the NALs' header room");
static bool ptl_fits_inline(size_t len)
{
	return sizeof(struct ptl_hdr) + len <= ptl_lib.max_inline;
}

static void ptl_send_event_post(struct ptl_md *md, ptl_event_kind_t kind, ptl_pt_index_t pt,
				ptl_match_bits_t bits, ptl_size_t len, ptl_hdr_data_t hdr_data, ptl_size_t loff,
				ptl_ni_fail_t fail)
{
	ptl_event_t ev = {
		.initiator = ptl_lib.ni->id,
		.uid = ptl_uid(),
		.jid = ptl_jid(),
		.pt_index = pt,
		.match_bits = bits,
		.rlength = len,
		.mlength = len,
		.offset = loff,
		.hdr_data = hdr_data,
		.ni_fail_type = fail,
	};
	ptl_md_event(md, kind, &ev);
}

/* The check inline: most sends (an MPI eager slot's) log no SEND events. */
static inline void ptl_send_event(struct ptl_md *md, ptl_event_kind_t kind, const struct ptl_hdr *h,
				  ptl_size_t loff, ptl_ni_fail_t fail)
{
	if (ptl_md_wants_event(md, kind))
		ptl_send_event_post(md, kind, h->pt_index, h->match_bits, h->rlength, h->hdr_data, loff, fail);
}

/* Maps a NAL refusal to the caller's return code. */
static int ptl_send_rc(int nrc)
{
	if (nrc == 0)
		return PTL_OK;
	return nrc == NAL_ENOMEM ? PTL_NO_SPACE : PTL_FAIL;
}

/* Checks what every initiator call shares; fills *peer. Lock held.
 * Inline, as are ptl_initiate and ptl_put_common: a put's checks cost
 * more in calls and frames (eleven arguments passed down twice) than in
 * tests. */
static inline int ptl_check_target(ptl_process_id_t target, int *peer)
{
	int rank = ptl_id_rank(target);
	if (rank < 0)
		return PTL_PROCESS_INVALID;
	if (ptl_lib.peers[rank].failed)
		return PTL_FAIL;
	*peer = rank;
	return PTL_OK;
}

/* What every put and get checks before it starts, in the order users see
 * the errors: a live MD, a region inside it (the whole MD unless region),
 * a target of this job that is not known dead, and a use of the MD's
 * threshold. Lock held. */
static inline int ptl_initiate(ptl_handle_md_t md_handle, bool region, ptl_size_t *loff, ptl_size_t *len,
			ptl_process_id_t target, struct ptl_md **mdp, int *peer)
{
	struct ptl_md *md = ptl_lib.ni ? ptl_md_lookup(ptl_lib.ni, md_handle) : NULL;
	if (!md)
		return PTL_MD_INVALID;
	if (!region) {
		*loff = 0;
		*len = md->total;
	} else if (*loff > md->total || *len > md->total - *loff) {
		return PTL_MD_ILLEGAL;
	}
	int rc = ptl_check_target(target, peer);
	if (rc != PTL_OK)
		return rc;
	if (!ptl_md_take(md))
		return PTL_MD_INVALID;
	*mdp = md;
	return PTL_OK;
}

static void ptl_hdr_init(struct ptl_hdr *h, enum ptl_msg_type type, ptl_pt_index_t pt,
			 ptl_ac_index_t ac, ptl_match_bits_t bits, ptl_size_t roff, ptl_size_t len)
{
	memset(h, 0, sizeof *h);
	h->type = (uint8_t)type;
	h->pt_index = pt;
	h->ac_index = ac;
	h->uid = ptl_uid();
	h->jid = ptl_jid();
	h->match_bits = bits;
	h->offset = roff;
	h->rlength = len;
}

/* Sends h (hlen bytes) with md's [off, off+len) inline (gathered if the
 * MD is IOVEC). */
static inline int ptl_send_inline(int peer, const void *h, size_t hlen, const struct ptl_md *md,
				  ptl_size_t off, ptl_size_t len)
{
	const void *payload = NULL;
	if (len && !md->iov) {
		payload = (const char *)md->md.start + off;
	} else if (len) {
		ptl_md_copy_out(md, off, ptl_lib.scratch, len);
		payload = ptl_lib.scratch;
	}
	return ptl_send(peer, h, hlen, payload, len);
}

/* Sends h followed by the segments of md's [off, off+len) to op's peer;
 * op keeps the registrations. (Arguments kept at five: a put's inlined
 * fast path, which does not come here, is sensitive to the call.) */
static int ptl_send_bulk(struct ptl_hdr *h, struct ptl_md *md, ptl_size_t off, ptl_size_t len, struct ptl_op *op)
{
	struct ptl_seg segs[PTL_MAX_SEGS];
	int peer = op->peer;
	op->bulk = true; /* a get's too: ptl_op_finish reads nmr */
	op->nmr = 0;
	int n = ptl_md_segs(md, peer, off, len, segs, op);
	if (n < 0)
		return NAL_EIO;
	h->flags |= PTL_HF_BULK;
	h->nseg = (uint16_t)n;
	return ptl_send(peer, h, sizeof *h, segs, (size_t)n * sizeof segs[0]);
}

/* A put's request went out: SEND_START; SEND_END unless a bulk move still
 * reads the buffer (the answer logs it then); the MD's autounlink, which
 * an op that waits for an answer holds off (pending) until it comes. Both
 * put paths end here; inline with constant flags, a short put keeps none
 * of the long path's branches. The events' EQ handlers may call the API:
 * the MD is held (pending) through SEND_START, and looked up again after
 * the events (ptl_recv.c's ptl_target says why). */
__attribute__((always_inline)) static inline void ptl_put_sent(struct ptl_ni *ni, struct ptl_md *md, ptl_pt_index_t pt,
							     ptl_match_bits_t bits, ptl_size_t len,
							     ptl_hdr_data_t hdr_data, ptl_size_t loff, bool waits,
							     bool bulk)
{
	bool start = ptl_md_wants_event(md, PTL_EVENT_SEND_START);
	/* Inline, the bytes are in the NAL's hands: the buffer is free. */
	bool end = !bulk && ptl_md_wants_event(md, PTL_EVENT_SEND_END);
	if (waits)
		md->pending++;
	if (start | end) {
		uint64_t mh = md->handle;
		md->pending += !waits;
		if (start)
			ptl_send_event_post(md, PTL_EVENT_SEND_START, pt, bits, len, hdr_data, loff, PTL_NI_OK);
		md->pending -= !waits;
		if (end)
			ptl_send_event_post(md, PTL_EVENT_SEND_END, pt, bits, len, hdr_data, loff, PTL_NI_OK);
		ptl_md_maybe_autounlink_h(ni, mh);
		return;
	}
	ptl_md_maybe_autounlink(ni, md);
}

__attribute__((always_inline)) static inline int ptl_put_common(ptl_handle_md_t md_handle, bool region, ptl_size_t loff, ptl_size_t len,
			  ptl_ack_req_t ack_req, ptl_process_id_t target, ptl_pt_index_t pt,
			  ptl_ac_index_t ac, ptl_match_bits_t bits, ptl_size_t roff, ptl_hdr_data_t hdr_data)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	if (ack_req != PTL_ACK_REQ && ack_req != PTL_NO_ACK_REQ)
		return PTL_FAIL;
	ptl_lock();
	struct ptl_ni *ni = ptl_lib.ni;
	struct ptl_md *md;
	int peer;
	int rc = ptl_initiate(md_handle, region, &loff, &len, target, &md, &peer);
	if (rc != PTL_OK)
		goto out;
	bool bulk = !ptl_fits_inline(len);
	bool ack = ack_req == PTL_ACK_REQ;
	if (!ack && !bulk && ac <= UINT16_MAX) {
		/* The commonest put: no answer, data inline (ptl_proto.h). */
		int nrc;
		if (ptl_tiny_len(len) && ac <= UINT8_MAX && pt <= UINT16_MAX && roff <= UINT32_MAX &&
		    ptl_lib.peers[peer].cred_same) {
			struct ptl_hdr_tiny ht = {
				.type = PTL_MSG_PUT_TINY,
				.ac_index = (uint8_t)ac,
				.pt_index = (uint16_t)pt,
				.offset = (uint32_t)roff,
				.match_bits = bits,
				.hdr_data = hdr_data,
			};
			nrc = ptl_send_inline(peer, &ht, sizeof ht, md, loff, len);
		} else {
			struct ptl_hdr_short hs = {
				.type = PTL_MSG_PUT_SHORT,
				.ac_index = (uint16_t)ac,
				.pt_index = pt,
				.uid = ptl_uid(),
				.jid = ptl_jid(),
				.match_bits = bits,
				.offset = roff,
				.hdr_data = hdr_data,
			};
			nrc = ptl_send_inline(peer, &hs, sizeof hs, md, loff, len);
		}
		if (nrc != 0) {
			ptl_md_give_back(md);
			rc = ptl_send_rc(nrc);
			goto out;
		}
		ptl_put_sent(ni, md, pt, bits, len, hdr_data, loff, false, false);
		goto out;
	}
	struct ptl_hdr h;
	ptl_hdr_init(&h, PTL_MSG_PUT, pt, ac, bits, roff, len);
	h.hdr_data = hdr_data;
	struct ptl_op *op = NULL;
	if (ack || bulk) {
		op = ptl_op_new(ni, PTL_OP_PUT, peer, &h, md->handle, loff);
		if (!op) {
			ptl_md_give_back(md);
			rc = PTL_NO_SPACE;
			goto out;
		}
		op->ack_req = ack;
		op->bulk = bulk;
		h.flags |= PTL_HF_ANSWER | (ack ? PTL_HF_ACK_REQ : 0);
	}
	int nrc = bulk ? ptl_send_bulk(&h, md, loff, len, op) : ptl_send_inline(peer, &h, sizeof h, md, loff, len);
	if (nrc != 0) {
		if (op)
			ptl_op_finish(ni, op);
		ptl_md_give_back(md);
		rc = ptl_send_rc(nrc);
		goto out;
	}
	ptl_put_sent(ni, md, pt, bits, len, hdr_data, loff, op != NULL, bulk);
	rc = PTL_OK;
out:
	ptl_unlock();
	return rc;
}

int PtlPut(ptl_handle_md_t md_handle, ptl_ack_req_t ack_req, ptl_process_id_t target_id,
	   ptl_pt_index_t pt_index, ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
	   ptl_size_t remote_offset, ptl_hdr_data_t hdr_data)
{
	return ptl_put_common(md_handle, false, 0, 0, ack_req, target_id, pt_index, ac_index,
			      match_bits, remote_offset, hdr_data);
}

int PtlPutRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
		 ptl_ack_req_t ack_req, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
		 ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		 ptl_hdr_data_t hdr_data)
{
	return ptl_put_common(md_handle, true, local_offset, length, ack_req, target_id, pt_index,
			      ac_index, match_bits, remote_offset, hdr_data);
}

static int ptl_get_common(ptl_handle_md_t md_handle, bool region, ptl_size_t loff, ptl_size_t len,
			  ptl_process_id_t target, ptl_pt_index_t pt, ptl_ac_index_t ac,
			  ptl_match_bits_t bits, ptl_size_t roff)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	struct ptl_ni *ni = ptl_lib.ni;
	struct ptl_md *md;
	int peer;
	int rc = ptl_initiate(md_handle, region, &loff, &len, target, &md, &peer);
	if (rc != PTL_OK)
		goto out;
	struct ptl_hdr h;
	ptl_hdr_init(&h, PTL_MSG_GET, pt, ac, bits, roff, len);
	h.flags = PTL_HF_ANSWER;
	struct ptl_op *op = ptl_op_new(ni, PTL_OP_GET, peer, &h, md->handle, loff);
	if (!op) {
		ptl_md_give_back(md);
		rc = PTL_NO_SPACE;
		goto out;
	}
	int nrc = ptl_fits_inline(len) ? ptl_send(peer, &h, sizeof h, NULL, 0)
				       : ptl_send_bulk(&h, md, loff, len, op);
	if (nrc != 0) {
		ptl_op_finish(ni, op);
		ptl_md_give_back(md);
		rc = ptl_send_rc(nrc);
		goto out;
	}
	md->pending++;
	ptl_send_event(md, PTL_EVENT_SEND_START, &h, loff, PTL_NI_OK);
	ptl_send_event(md, PTL_EVENT_SEND_END, &h, loff, PTL_NI_OK);
	rc = PTL_OK;
out:
	ptl_unlock();
	return rc;
}

int PtlGet(ptl_handle_md_t md_handle, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
	   ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset)
{
	return ptl_get_common(md_handle, false, 0, 0, target_id, pt_index, ac_index, match_bits,
			      remote_offset);
}

int PtlGetRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
		 ptl_process_id_t target_id, ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
		 ptl_match_bits_t match_bits, ptl_size_t remote_offset)
{
	return ptl_get_common(md_handle, true, local_offset, length, target_id, pt_index,
			      ac_index, match_bits, remote_offset);
}

int PtlGetPut(ptl_handle_md_t get_md_handle, ptl_handle_md_t put_md_handle,
	      ptl_process_id_t target_id, ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
	      ptl_match_bits_t match_bits, ptl_size_t remote_offset, ptl_hdr_data_t hdr_data)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	struct ptl_ni *ni = ptl_lib.ni;
	struct ptl_md *gmd = ni ? ptl_md_lookup(ni, get_md_handle) : NULL;
	struct ptl_md *pmd = ni ? ptl_md_lookup(ni, put_md_handle) : NULL;
	int peer = -1;
	int rc;
	if (!gmd || !pmd) {
		rc = PTL_MD_INVALID;
		goto out;
	}
	ptl_size_t len = pmd->total;
	if (len > (ptl_size_t)ni->limits.max_getput_md || gmd->total < len) {
		rc = PTL_MD_ILLEGAL;
		goto out;
	}
	if ((rc = ptl_check_target(target_id, &peer)) != PTL_OK)
		goto out;
	if (gmd == pmd) {
		/* One MD both gives and receives: it needs two uses. */
		if (gmd->md.threshold != PTL_MD_THRESH_INF && gmd->md.threshold < 2) {
			rc = PTL_MD_INVALID;
			goto out;
		}
	}
	if (!ptl_md_take(pmd)) {
		rc = PTL_MD_INVALID;
		goto out;
	}
	if (gmd->md.threshold == 0 || gmd->doomed) {
		ptl_md_give_back(pmd);
		rc = PTL_MD_INVALID;
		goto out;
	}
	struct ptl_hdr h;
	ptl_hdr_init(&h, PTL_MSG_GETPUT, pt_index, ac_index, match_bits, remote_offset, len);
	h.hdr_data = hdr_data;
	h.flags = PTL_HF_ANSWER;
	struct ptl_op *op = ptl_op_new(ni, PTL_OP_GETPUT, peer, &h, gmd->handle, 0);
	if (!op) {
		ptl_md_give_back(pmd);
		rc = PTL_NO_SPACE;
		goto out;
	}
	op->put_md_handle = pmd->handle;
	int nrc = ptl_send_inline(peer, &h, sizeof h, pmd, 0, len);
	if (nrc != 0) {
		ptl_op_finish(ni, op);
		ptl_md_give_back(pmd);
		rc = ptl_send_rc(nrc);
		goto out;
	}
	gmd->pending++;
	/* (held through SEND_START, as ptl_put_sent holds a put's) */
	uint64_t ph = pmd->handle;
	pmd->pending++;
	ptl_send_event(pmd, PTL_EVENT_SEND_START, &h, 0, PTL_NI_OK);
	pmd->pending--;
	ptl_send_event(pmd, PTL_EVENT_SEND_END, &h, 0, PTL_NI_OK);
	ptl_md_maybe_autounlink_h(ni, ph);
	rc = PTL_OK;
out:
	ptl_unlock();
	return rc;
}
