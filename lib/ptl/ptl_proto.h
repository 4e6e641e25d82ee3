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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ptl_msg_type {
	PTL_MSG_PUT = 1,
	PTL_MSG_GET,
	PTL_MSG_GETPUT,
	PTL_MSG_ACK,    /* answer to a put: ACK event if asked, SEND_END if bulk */
	PTL_MSG_REPLY,  /* answer to a get/getput: data inline, or already written */
	PTL_MSG_PUT_SHORT, /* a put that waits for no answer, data inline: struct ptl_hdr_short */
	/* the same, of ptl_tiny_len's sizes, uid and jid the target's: struct ptl_hdr_tiny */
	PTL_MSG_PUT_TINY,
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

/* The header of PTL_MSG_PUT_SHORT: what a put that expects no answer
 * and carries its data inline (the commonest message: MPI's eager sends)
 * needs of struct ptl_hdr. rlength is the payload's length; flags, nseg,
 * ni_fail, mlength and cookie are 0. 40 bytes where struct ptl_hdr has 72:
 * an 8-byte put with its shm ring record word is 56 bytes, one cache line
 * (lib/nal/shm: records start on a line), where it took two, and the
 * receiver waited for the second line's transfer too. An ac_index above
 * 0xffff (no AC entry has one: PTL_LIM_MAX_AC) goes in a struct ptl_hdr. */
struct ptl_hdr_short {
	uint8_t type;         /* PTL_MSG_PUT_SHORT, where struct ptl_hdr has its type */
	uint8_t pad;
	uint16_t ac_index;
	uint32_t pt_index;
	uint32_t uid;
	uint32_t jid;
	uint64_t match_bits;
	uint64_t offset;
	uint64_t hdr_data;
};
_Static_assert(sizeof(struct ptl_hdr_short) == 40, "struct ptl_hdr_short is 40 bytes on the wire");

/* The header of PTL_MSG_PUT_TINY: a PTL_MSG_PUT_SHORT of a size
 * ptl_tiny_len admits whose uid and jid are the target's own, left out.
 * 24 bytes: such a put of up to 32 bytes with its shm ring record word is
 * one cache line, where with a struct ptl_hdr_short 17 to 32 bytes took
 * two (MPI ping-pong 24 and 32 bytes 0.49-0.51 -> 0.35-0.37 us, on a host
 * whose cores are far apart; MPICH 0.62-0.65); one of 81 to 96 bytes two
 * lines, not three. Not between: this header on every short put made 33
 * to 64 bytes read 0.48 us against 0.43 behind a struct ptl_hdr_short
 * (ptl_pingpong, 5 interleaved rounds), records of as many lines; not
 * understood (the payload 48 bytes into the record, where a struct
 * ptl_hdr_short puts it: 0.45).
 * The initiator sends one only when its uid and jid equal the target's
 * (each rank publishes them with its node id: ptl_init.c's struct
 * ptl_rank_info) and the AC index fits 8 bits, the portal 16 and the
 * offset 32. Implied or carried, uid and jid are the initiator's claim:
 * no NAL authenticates them. */
struct ptl_hdr_tiny {
	uint8_t type;         /* PTL_MSG_PUT_TINY */
	uint8_t ac_index;
	uint16_t pt_index;
	uint32_t offset;
	uint64_t match_bits;
	uint64_t hdr_data;
};
_Static_assert(sizeof(struct ptl_hdr_tiny) == 24, "struct ptl_hdr_tiny is 24 bytes on the wire");
#define PTL_TINY_MAX 32 /* payload bytes: 64 - 24 - shm's 8-byte record word */
/* Payloads this header also takes, where it makes shm's three-line
 * record two: past 80 bytes (128 - 40 - 8, two lines behind a struct
 * ptl_hdr_short) up to 96 (128 - 24 - 8). The sizes are shm's reason;
 * the header goes so over every NAL (verbs zips both kinds). 2-rank MPI
 * ping-pong (far state, 3 interleaved rounds): 88 and 96 B half round
 * trip 0.47 - 0.49 -> 0.39 - 0.41 us, streaming 0.24 - 0.29 -> 0.36 -
 * 0.41 GB/s; 2-rank allreduce of 96 B 0.58 -> 0.45 us. Not between 33
 * and 80 bytes, whose record is two lines behind either header: there
 * the tiny one read 48 and 64 B half round trips 0.01 - 0.015 us slower
 * and 64 B streaming 0.26 against 0.30 GB/s (4 rounds), as before. */
#define PTL_TINY2_MIN 81
#define PTL_TINY2_MAX 96
/* Whether an inline put of len bytes that may take a struct ptl_hdr_tiny
 * does (see above). */
static inline bool ptl_tiny_len(size_t len)
{
	return len <= PTL_TINY_MAX || (len >= PTL_TINY2_MIN && len <= PTL_TINY2_MAX);
}

/* One piece of the initiator's memory for a bulk move. */
struct ptl_seg {
	uint64_t addr;
	uint64_t key;
	uint64_t len;
};

#endif
