/*
 * The wire protocol of lib/ptl, carried by every NAL unchanged. The
 * initiator's identity is never in the header: the receiver derives it from
 * the NAL's peer rank, so a process cannot claim to be another.
 *
 * Requests (PUT, GET, GETPUT) carry the initiator's op cookie when they
 * expect an answer; answers (ACK, REPLY, DONE) echo it. Large data never
 * travels inline: the request carries the initiator's registered segments
 * (struct ptl_seg[]) and the target moves the bytes with the NAL's bulk()
 * (read for a put, write for a get), then answers.
 */
#ifndef PTL_PROTO_H
#define PTL_PROTO_H

#include <stdint.h>

enum ptl_msg_type {
	PTL_MSG_PUT = 1,
	PTL_MSG_GET,
	PTL_MSG_GETPUT,
	PTL_MSG_ACK,    /* answer to a put: ACK event if asked, SEND_END if bulk */
	PTL_MSG_REPLY,  /* answer to a get/getput: data inline, or already written */
};

#define PTL_HF_ACK_REQ 0x01   /* initiator wants an ACK event */
#define PTL_HF_BULK 0x02      /* data is in the initiator's segments, not inline */
#define PTL_HF_ANSWER 0x04    /* initiator waits for an answer (cookie valid) */

struct ptl_hdr {
	uint8_t type;
	uint8_t flags;
	uint16_t nseg;        /* segments following the header (PTL_HF_BULK) */
	uint32_t pt_index;
	uint32_t ac_index;
	uint32_t uid;
	uint32_t jid;
	uint32_t ni_fail;     /* answers: PTL_NI_OK or why it failed */
	uint64_t match_bits;
	uint64_t offset;      /* request: remote offset; answer: offset used */
	uint64_t hdr_data;
	uint64_t rlength;     /* length requested */
	uint64_t mlength;     /* answers: length manipulated */
	uint64_t cookie;      /* initiator's op (index+generation) */
};

/* One piece of the initiator's memory for a bulk move. */
struct ptl_seg {
	uint64_t addr;
	uint64_t key;
	uint64_t len;
};

#endif
