/*
 * Memory descriptors across processes: acceptance (operation, threshold,
 * fit, truncate), local vs remote offsets, max_size, threshold and unlink
 * chains (MD then ME), RETAIN, START/END disabling, ACK and ACK_DISABLE,
 * GET/REPLY and the region calls, PtlMDUpdate's conditional update, IOVEC,
 * EQ handlers that unlink and bind MDs inside events. Rank 0 initiates, rank 1 is the target.
 */
#include "mp_common.h"

#include <unistd.h>

#define I 0
#define T 1
#define INF PTL_MD_THRESH_INF

/* Target-side PUT_START + PUT_END of one put from I. */
#define EXP_PUT(eq, what, bits_, rl, ml, off, hdr, thr, mdh)                                          \
	do {                                                                                          \
		MP_EXPECT(eq, what, .type = PTL_EVENT_PUT_START, .initiator = I, .match_bits = bits_, \
			  .rlength = rl, .mlength = ml, .offset = off, .hdr_data = hdr,               \
			  .threshold = thr, .md = mdh);                                               \
		MP_EXPECT(eq, what, .type = PTL_EVENT_PUT_END, .initiator = I, .match_bits = bits_,   \
			  .rlength = rl, .mlength = ml, .offset = off, .hdr_data = hdr,               \
			  .threshold = thr, .md = mdh);                                               \
	} while (0)

static void test_accept(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 10;
	char gbuf[8], zbuf[32], sbuf[4], okbuf[32], small[4], tbuf[4], src[8], got[8];
	mp_fill(src, sizeof src, 31);
	mp_fill(gbuf, sizeof gbuf, 32);
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me[6] = { 0 };
	ptl_handle_md_t md[6] = { 0 };
	long drop0 = mp_sr(PTL_SR_DROP_COUNT);
	if (mp_rank == T) {
		me[0] = mp_me_md(pt, 1, 0, PTL_RETAIN, mp_md(gbuf, 8, INF, PTL_MD_OP_GET, eq), PTL_RETAIN, &md[0]);
		me[1] = mp_me_md(pt, 1, 0, PTL_RETAIN, mp_md(zbuf, 32, 0, PTL_MD_OP_PUT, eq), PTL_RETAIN, &md[1]);
		me[2] = mp_me_md(pt, 1, 0, PTL_RETAIN, mp_md(sbuf, 4, INF, PTL_MD_OP_PUT, eq), PTL_RETAIN, &md[2]);
		me[3] = mp_me_md(pt, 1, 0, PTL_RETAIN, mp_md(okbuf, 32, INF, PTL_MD_OP_PUT, eq), PTL_RETAIN, &md[3]);
		me[4] = mp_me_md(pt, 2, 0, PTL_RETAIN, mp_md(small, 4, INF, PTL_MD_OP_PUT, eq), PTL_RETAIN, &md[4]);
		me[5] = mp_me_md(pt, 3, 0, PTL_RETAIN,
				 mp_md(tbuf, 4, INF, PTL_MD_OP_PUT | PTL_MD_TRUNCATE, eq), PTL_RETAIN, &md[5]);
	}
	mp_barrier();
	if (mp_rank == I) {
		ptl_handle_md_t h = mp_bind(src, 8, INF, 0, eq);
		mp_put_acked(h, eq, T, pt, 0, 1, 8, 0, 1, 8, 0, PTL_NI_OK,
			     "put past a get-only, a used-up and a too-small MD");
		mp_put_acked(h, eq, T, pt, 0, 2, 8, 3, 2, 0, 3, PTL_NI_DROPPED,
			     "put too long for the only MD, no TRUNCATE");
		mp_put_acked(h, eq, T, pt, 0, 3, 8, 0, 3, 4, 0, PTL_NI_OK, "put into a TRUNCATE MD");
		ptl_handle_md_t g = mp_bind(got, 8, INF, 0, eq);
		MP_RC(PtlGet(g, mp_id(T), pt, 0, 1, 0), PTL_OK);
		MP_EXPECT(eq, "get", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = 1, .rlength = 8,
			  .mlength = 8, .threshold = INF);
		MP_EXPECT(eq, "get", .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = 1, .rlength = 8,
			  .mlength = 8, .threshold = INF);
		MP_EXPECT(eq, "get from the get-only MD", .type = PTL_EVENT_REPLY_START, .initiator = T,
			  .match_bits = 1, .rlength = 8, .mlength = 8, .threshold = INF);
		MP_EXPECT(eq, "get from the get-only MD", .type = PTL_EVENT_REPLY_END, .initiator = T,
			  .match_bits = 1, .rlength = 8, .mlength = 8, .threshold = INF);
		MP_CHECK(got, 8, 32, "reply data");
		MP_RC(PtlMDUnlink(h), PTL_OK);
		MP_RC(PtlMDUnlink(g), PTL_OK);
	}
	mp_barrier();
	if (mp_rank == T) {
		EXP_PUT(eq, "put accepted by the 4th ME", 1, 8, 8, 0, 1, INF, md[3]);
		MP_CHECK(okbuf, 8, 31, "data in the accepting MD");
		EXP_PUT(eq, "truncated put", 3, 8, 4, 0, 3, INF, md[5]);
		MP_CHECK(tbuf, 4, 31, "data that fit");
		MP_EXPECT(eq, "get", .type = PTL_EVENT_GET_START, .initiator = I, .match_bits = 1, .rlength = 8,
			  .mlength = 8, .threshold = INF, .md = md[0]);
		MP_EXPECT(eq, "get", .type = PTL_EVENT_GET_END, .initiator = I, .match_bits = 1, .rlength = 8,
			  .mlength = 8, .threshold = INF, .md = md[0]);
		MP_EMPTY(eq, 0, "nothing else");
		assert_int_equal(mp_sr(PTL_SR_DROP_COUNT) - drop0, 1);
		for (int k = 0; k < 6; k++)
			MP_RC(PtlMEUnlink(me[k]), PTL_OK);
	}
	mp_eq_free(eq);
	mp_end();
}

static void test_offsets(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 11;
	char lbuf[32], rbuf[32], src[8];
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me[2] = { 0 };
	ptl_handle_md_t md[2] = { 0 };
	if (mp_rank == T) {
		memset(rbuf, 0, sizeof rbuf);
		me[0] = mp_me_md(pt, 1, 0, PTL_RETAIN, mp_md(lbuf, 32, INF, PTL_MD_OP_PUT, eq), PTL_RETAIN, &md[0]);
		me[1] = mp_me_md(pt, 2, 0, PTL_RETAIN,
				 mp_md(rbuf, 32, INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq), PTL_RETAIN, &md[1]);
	}
	mp_barrier();
	if (mp_rank == I) {
		ptl_handle_md_t h = mp_bind(src, 8, INF, 0, eq);
		for (int k = 0; k < 5; k++) {
			mp_fill(src, 8, 40u + (unsigned)k);
			/* The remote offset is ignored: the MD's own offset advances. */
			mp_put_acked(h, eq, T, pt, 0, 1, 8, 100, (ptl_hdr_data_t)k, k < 4 ? 8 : 0,
				     k < 4 ? (ptl_size_t)k * 8 : 100, k < 4 ? PTL_NI_OK : PTL_NI_DROPPED,
				     k < 4 ? "put at the local offset" : "put past the end of a local-offset MD");
		}
		static const ptl_size_t roff[3] = { 12, 4, 30 };
		for (int k = 0; k < 3; k++) {
			mp_fill(src, 8, 50u + (unsigned)k);
			mp_put_acked(h, eq, T, pt, 0, 2, 8, roff[k], (ptl_hdr_data_t)k, k < 2 ? 8 : 0, roff[k],
				     k < 2 ? PTL_NI_OK : PTL_NI_DROPPED,
				     k < 2 ? "put at the remote offset" : "put past the end at a remote offset");
		}
		MP_RC(PtlMDUnlink(h), PTL_OK);
	}
	mp_barrier();
	if (mp_rank == T) {
		for (int k = 0; k < 4; k++) {
			EXP_PUT(eq, "local offset", 1, 8, 8, (ptl_size_t)k * 8, (ptl_hdr_data_t)k, INF, md[0]);
			MP_CHECK(lbuf + k * 8, 8, 40u + (unsigned)k, "data at the local offset");
		}
		EXP_PUT(eq, "remote offset 12", 2, 8, 8, 12, 0, INF, md[1]);
		EXP_PUT(eq, "remote offset 4", 2, 8, 8, 4, 1, INF, md[1]);
		MP_CHECK(rbuf + 4, 8, 51, "data at remote offset 4");
		MP_CHECK(rbuf + 12, 4, 50, "data at remote offset 12 not overwritten");
		MP_EMPTY(eq, 0, "nothing for the rejected puts");
		MP_RC(PtlMEUnlink(me[0]), PTL_OK);
		MP_RC(PtlMEUnlink(me[1]), PTL_OK);
	}
	mp_eq_free(eq);
	mp_end();
}

static void test_max_size(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 12;
	char buf[64], src[16];
	mp_fill(src, sizeof src, 60);
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me = 0;
	ptl_handle_md_t md = 0;
	if (mp_rank == T) {
		ptl_md_t d = mp_md(buf, 64, INF, PTL_MD_OP_PUT | PTL_MD_MAX_SIZE, eq);
		d.max_size = 20;
		me = mp_me_md(pt, 1, 0, PTL_UNLINK, d, PTL_UNLINK, &md);
	}
	mp_barrier();
	if (mp_rank == I) {
		ptl_handle_md_t h = mp_bind(src, 16, INF, 0, eq);
		for (int k = 0; k < 3; k++)
			mp_put_acked(h, eq, T, pt, 0, 1, 16, 0, 0, 16, (ptl_size_t)k * 16, PTL_NI_OK,
				     "put into a MAX_SIZE MD");
		mp_put_acked(h, eq, T, pt, 0, 1, 16, 0, 0, 0, 0, PTL_NI_DROPPED,
			     "put after the MAX_SIZE MD and its ME unlinked");
		MP_RC(PtlMDUnlink(h), PTL_OK);
	}
	mp_barrier();
	if (mp_rank == T) {
		for (int k = 0; k < 3; k++)
			EXP_PUT(eq, "MAX_SIZE MD", 1, 16, 16, (ptl_size_t)k * 16, 0, INF, md);
		MP_EXPECT(eq, "16 bytes left < max_size 20: unlink", .type = PTL_EVENT_UNLINK, .initiator = T,
			  .match_bits = 1, .link = 1, .threshold = INF, .md = md);
		MP_EMPTY(eq, 0, "nothing for the dropped put");
		MP_RC(PtlMEUnlink(me), PTL_ME_INVALID);
		MP_RC(PtlMDUnlink(md), PTL_MD_INVALID);
	}
	mp_eq_free(eq);
	mp_end();
}

static void test_threshold_chain(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 13;
	char a[32], b[32], c[8], c2[8], src[8];
	mp_fill(src, sizeof src, 70);
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t mea = 0, meb = 0, mec = 0;
	ptl_handle_md_t mda = 0, mdb = 0, mdc = 0, mdc2 = 0;
	if (mp_rank == T) {
		mea = mp_me_md(pt, 1, 0, PTL_UNLINK, mp_md(a, 32, 2, PTL_MD_OP_PUT, eq), PTL_UNLINK, &mda);
		meb = mp_me_md(pt, 1, 0, PTL_RETAIN, mp_md(b, 32, 1, PTL_MD_OP_PUT, eq), PTL_RETAIN, &mdb);
		mec = mp_me_md(pt, 2, 0, PTL_RETAIN, mp_md(c, 8, 1, PTL_MD_OP_PUT, eq), PTL_UNLINK, &mdc);
	}
	mp_barrier();
	if (mp_rank == I) {
		ptl_handle_md_t h = mp_bind(src, 8, INF, 0, eq);
		mp_put_acked(h, eq, T, pt, 0, 1, 8, 0, 0, 8, 0, PTL_NI_OK, "1st put into A (threshold 2)");
		mp_put_acked(h, eq, T, pt, 0, 1, 8, 0, 1, 8, 8, PTL_NI_OK, "2nd put into A, which unlinks");
		mp_put_acked(h, eq, T, pt, 0, 1, 8, 0, 2, 8, 0, PTL_NI_OK, "put into B (threshold 1, RETAIN)");
		mp_put_acked(h, eq, T, pt, 0, 1, 8, 0, 3, 0, 0, PTL_NI_DROPPED, "put with B used up");
		mp_put_acked(h, eq, T, pt, 0, 2, 8, 0, 4, 8, 0, PTL_NI_OK, "put into C's MD, which unlinks");
		mp_barrier(); /* T attaches a new MD to the surviving ME C */
		mp_put_acked(h, eq, T, pt, 0, 2, 8, 0, 5, 8, 0, PTL_NI_OK, "put into C's new MD");
		MP_RC(PtlMDUnlink(h), PTL_OK);
	} else if (mp_rank == T) {
		EXP_PUT(eq, "A, threshold 2 -> 1", 1, 8, 8, 0, 0, 1, mda);
		EXP_PUT(eq, "A, threshold 1 -> 0", 1, 8, 8, 8, 1, 0, mda);
		MP_EXPECT(eq, "A used up: MD and ME unlink", .type = PTL_EVENT_UNLINK, .initiator = T,
			  .match_bits = 1, .link = 1, .md = mda);
		EXP_PUT(eq, "B, threshold 1 -> 0", 1, 8, 8, 0, 2, 0, mdb);
		EXP_PUT(eq, "C's MD", 2, 8, 8, 0, 4, 0, mdc);
		MP_EXPECT(eq, "C's MD used up: it unlinks, ME C (RETAIN) stays", .type = PTL_EVENT_UNLINK,
			  .initiator = T, .match_bits = 2, .link = 1, .md = mdc);
		MP_RC(PtlMEUnlink(mea), PTL_ME_INVALID);
		MP_RC(PtlMDUnlink(mda), PTL_MD_INVALID);
		MP_RC(PtlMDUnlink(mdc), PTL_MD_INVALID);
		ptl_md_t old;
		MP_RC(PtlMDUpdate(mdb, &old, NULL, PTL_EQ_NONE), PTL_OK);
		assert_int_equal(old.threshold, 0);
		MP_RC(PtlMDAttach(mec, mp_md(c2, 8, 1, PTL_MD_OP_PUT, eq), PTL_RETAIN, &mdc2), PTL_OK);
		mp_barrier();
	} else {
		mp_barrier();
	}
	mp_barrier();
	if (mp_rank == T) {
		EXP_PUT(eq, "C's new MD", 2, 8, 8, 0, 5, 0, mdc2);
		MP_CHECK(c2, 8, 70, "data in C's new MD");
		MP_EMPTY(eq, 0, "no unlink for a RETAIN MD");
		MP_RC(PtlMEUnlink(meb), PTL_OK);
		MP_RC(PtlMEUnlink(mec), PTL_OK);
		MP_RC(PtlMDUnlink(mdc2), PTL_MD_INVALID); /* went with its ME */
	}
	mp_eq_free(eq);
	mp_end();
}

static void test_event_disable(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 14;
	char b1[8], b2[8], src[8];
	mp_fill(src, 8, 80);
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me1 = 0, me2 = 0;
	ptl_handle_md_t md1 = 0, md2 = 0;
	if (mp_rank == T) {
		me1 = mp_me_md(pt, 1, 0, PTL_RETAIN,
			       mp_md(b1, 8, INF, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq), PTL_RETAIN, &md1);
		me2 = mp_me_md(pt, 2, 0, PTL_RETAIN,
			       mp_md(b2, 8, INF, PTL_MD_OP_PUT | PTL_MD_EVENT_END_DISABLE, eq), PTL_RETAIN, &md2);
	}
	mp_barrier();
	if (mp_rank == I) {
		ptl_handle_md_t h = mp_bind(src, 8, INF, PTL_MD_EVENT_START_DISABLE, eq);
		MP_RC(PtlPut(h, PTL_ACK_REQ, mp_id(T), pt, 0, 1, 0, 0), PTL_OK);
		MP_EXPECT(eq, "SEND_START disabled", .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = 1,
			  .rlength = 8, .mlength = 8, .threshold = INF);
		MP_EXPECT(eq, "ACK", .type = PTL_EVENT_ACK, .initiator = T, .match_bits = 1, .rlength = 8,
			  .mlength = 8, .threshold = INF);
		MP_RC(PtlMDUnlink(h), PTL_OK);
		h = mp_bind(src, 8, INF, PTL_MD_EVENT_END_DISABLE, eq);
		MP_RC(PtlPut(h, PTL_ACK_REQ, mp_id(T), pt, 0, 2, 0, 0), PTL_OK);
		MP_EXPECT(eq, "SEND_END disabled", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = 2,
			  .rlength = 8, .mlength = 8, .threshold = INF);
		MP_EXPECT(eq, "ACK", .type = PTL_EVENT_ACK, .initiator = T, .match_bits = 2, .rlength = 8,
			  .mlength = 8, .threshold = INF);
		MP_RC(PtlMDUnlink(h), PTL_OK);
	}
	mp_barrier();
	if (mp_rank == T) {
		MP_EXPECT(eq, "PUT_START disabled", .type = PTL_EVENT_PUT_END, .initiator = I, .match_bits = 1,
			  .rlength = 8, .mlength = 8, .threshold = INF, .md = md1);
		MP_EXPECT(eq, "PUT_END disabled", .type = PTL_EVENT_PUT_START, .initiator = I, .match_bits = 2,
			  .rlength = 8, .mlength = 8, .threshold = INF, .md = md2);
		MP_EMPTY(eq, 0, "nothing else");
		MP_CHECK(b1, 8, 80, "data with START disabled");
		MP_CHECK(b2, 8, 80, "data with END disabled");
		MP_RC(PtlMEUnlink(me1), PTL_OK);
		MP_RC(PtlMEUnlink(me2), PTL_OK);
	}
	mp_eq_free(eq);
	mp_end();
}

/* Unlinks md once its answers are in (bounded). */
static void unlink_when_idle(ptl_handle_md_t md, const char *what)
{
	int64_t t0 = mp_now_ms();
	int rc;
	while ((rc = PtlMDUnlink(md)) == PTL_MD_IN_USE && mp_now_ms() - t0 < mp_timeout_ms)
		usleep(1000);
	if (rc != PTL_OK)
		MP_FAIL("rank %d: %s: PtlMDUnlink: %s", mp_rank, what, PtlErrorStr((unsigned)rc));
}

static void test_ack(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 15;
	char b1[8], b2[8], src[8];
	mp_fill(src, 8, 90);
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me1 = 0, me2 = 0;
	if (mp_rank == T) {
		me1 = mp_me_md(pt, 1, 0, PTL_RETAIN,
			       mp_md(b1, 8, INF, PTL_MD_OP_PUT | PTL_MD_ACK_DISABLE, eq), PTL_RETAIN, NULL);
		me2 = mp_me_md(pt, 2, 0, PTL_RETAIN, mp_md(b2, 8, INF, PTL_MD_OP_PUT, eq), PTL_RETAIN, NULL);
	}
	mp_barrier();
	ptl_handle_md_t h = 0;
	if (mp_rank == I) {
		h = mp_bind(src, 8, INF, 0, eq);
		MP_RC(PtlPut(h, PTL_ACK_REQ, mp_id(T), pt, 0, 1, 0, 7), PTL_OK);
		MP_RC(PtlPut(h, PTL_NO_ACK_REQ, mp_id(T), pt, 0, 2, 0, 8), PTL_OK);
		MP_RC(PtlPut(h, (ptl_ack_req_t)7, mp_id(T), pt, 0, 2, 0, 8), PTL_FAIL);
		for (int k = 0; k < 2; k++) {
			MP_EXPECT(eq, "put", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = 1u + k,
				  .rlength = 8, .mlength = 8, .hdr_data = 7u + k, .threshold = INF);
			MP_EXPECT(eq, "put", .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = 1u + k,
				  .rlength = 8, .mlength = 8, .hdr_data = 7u + k, .threshold = INF);
		}
	}
	if (mp_rank == T) {
		EXP_PUT(eq, "put into an ACK_DISABLE MD", 1, 8, 8, 0, 7, INF, 0);
		EXP_PUT(eq, "put without ACK request", 2, 8, 8, 0, 8, INF, 0);
	}
	mp_barrier();
	if (mp_rank == I) {
		unlink_when_idle(h, "the put's answer");
		MP_EMPTY(eq, 50, "no ACK: the target's MD disabled it / none was asked for");
	}
	if (mp_rank == T) {
		MP_RC(PtlMEUnlink(me1), PTL_OK);
		MP_RC(PtlMEUnlink(me2), PTL_OK);
	}
	mp_eq_free(eq);
	mp_end();
}

static void test_get_reply(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 16;
	char tbuf[64], ibuf[64];
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me = 0;
	ptl_handle_md_t md = 0;
	long drop0 = mp_sr(PTL_SR_DROP_COUNT);
	if (mp_rank == T) {
		mp_fill(tbuf, 64, 100);
		me = mp_me_md(pt, 1, 0, PTL_RETAIN,
			      mp_md(tbuf, 64, INF, PTL_MD_OP_GET | PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq),
			      PTL_RETAIN, &md);
	}
	mp_barrier();
	if (mp_rank == I) {
		memset(ibuf, 0, sizeof ibuf);
		ptl_handle_md_t h = mp_bind(ibuf, 64, INF, 0, eq);
		/* Whole MD. */
		MP_RC(PtlGet(h, mp_id(T), pt, 0, 1, 0), PTL_OK);
		MP_EXPECT(eq, "get", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = 1, .rlength = 64,
			  .mlength = 64, .threshold = INF);
		MP_EXPECT(eq, "get", .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = 1, .rlength = 64,
			  .mlength = 64, .threshold = INF);
		MP_EXPECT(eq, "get", .type = PTL_EVENT_REPLY_START, .initiator = T, .match_bits = 1,
			  .rlength = 64, .mlength = 64, .threshold = INF);
		MP_EXPECT(eq, "get", .type = PTL_EVENT_REPLY_END, .initiator = T, .match_bits = 1, .rlength = 64,
			  .mlength = 64, .threshold = INF);
		MP_CHECK(ibuf, 64, 100, "get data");
		/* Region: 16 bytes from remote offset 4 into local offset 8. */
		memset(ibuf, 0, sizeof ibuf);
		MP_RC(PtlGetRegion(h, 8, 16, mp_id(T), pt, 0, 1, 4), PTL_OK);
		MP_EXPECT(eq, "get region", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = 1,
			  .rlength = 16, .mlength = 16, .offset = 8, .threshold = INF);
		MP_EXPECT(eq, "get region", .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = 1,
			  .rlength = 16, .mlength = 16, .offset = 8, .threshold = INF);
		MP_EXPECT(eq, "get region", .type = PTL_EVENT_REPLY_START, .initiator = T, .match_bits = 1,
			  .rlength = 16, .mlength = 16, .offset = 8, .threshold = INF);
		MP_EXPECT(eq, "get region", .type = PTL_EVENT_REPLY_END, .initiator = T, .match_bits = 1,
			  .rlength = 16, .mlength = 16, .offset = 8, .threshold = INF);
		char want[64];
		mp_fill(want, 64, 100);
		assert_memory_equal(ibuf + 8, want + 4, 16);
		assert_int_equal(ibuf[7], 0);
		assert_int_equal(ibuf[24], 0);
		/* Put region: local 8..24 to remote offset 40. */
		mp_fill(ibuf, 64, 101);
		MP_RC(PtlPutRegion(h, 8, 16, PTL_ACK_REQ, mp_id(T), pt, 0, 1, 40, 9), PTL_OK);
		MP_EXPECT(eq, "put region", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = 1,
			  .rlength = 16, .mlength = 16, .offset = 8, .hdr_data = 9, .threshold = INF);
		MP_EXPECT(eq, "put region", .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = 1,
			  .rlength = 16, .mlength = 16, .offset = 8, .hdr_data = 9, .threshold = INF);
		MP_EXPECT(eq, "put region", .type = PTL_EVENT_ACK, .initiator = T, .match_bits = 1,
			  .rlength = 16, .mlength = 16, .offset = 40, .hdr_data = 9, .threshold = INF);
		MP_RC(PtlGetRegion(h, 60, 16, mp_id(T), pt, 0, 1, 0), PTL_MD_ILLEGAL);
		MP_RC(PtlPutRegion(h, 65, 0, PTL_NO_ACK_REQ, mp_id(T), pt, 0, 1, 0, 0), PTL_MD_ILLEGAL);
		/* A get nobody matches: the REPLY reports the drop. */
		MP_RC(PtlGetRegion(h, 0, 8, mp_id(T), pt, 0, 0x99, 0), PTL_OK);
		MP_EXPECT(eq, "dropped get", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = 0x99,
			  .rlength = 8, .mlength = 8, .threshold = INF);
		MP_EXPECT(eq, "dropped get", .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = 0x99,
			  .rlength = 8, .mlength = 8, .threshold = INF);
		MP_EXPECT(eq, "dropped get", .type = PTL_EVENT_REPLY_START, .initiator = T, .match_bits = 0x99,
			  .rlength = 8, .mlength = 0, .fail = PTL_NI_DROPPED, .threshold = INF);
		MP_EXPECT(eq, "dropped get", .type = PTL_EVENT_REPLY_END, .initiator = T, .match_bits = 0x99,
			  .rlength = 8, .mlength = 0, .fail = PTL_NI_DROPPED, .threshold = INF);
		MP_RC(PtlMDUnlink(h), PTL_OK);
		/* A bound MD counts the get and its reply, then unlinks. */
		ptl_handle_md_t h2;
		MP_RC(PtlMDBind(mp_ni, mp_md(ibuf, 8, 2, 0, eq), PTL_UNLINK, &h2), PTL_OK);
		MP_RC(PtlGet(h2, mp_id(T), pt, 0, 1, 0), PTL_OK);
		MP_EXPECT(eq, "get, threshold 2", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = 1,
			  .rlength = 8, .mlength = 8, .threshold = 1);
		MP_EXPECT(eq, "get, threshold 2", .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = 1,
			  .rlength = 8, .mlength = 8, .threshold = 1);
		MP_EXPECT(eq, "reply, threshold 1", .type = PTL_EVENT_REPLY_START, .initiator = T,
			  .match_bits = 1, .rlength = 8, .mlength = 8, .threshold = 0);
		MP_EXPECT(eq, "reply, threshold 1", .type = PTL_EVENT_REPLY_END, .initiator = T, .match_bits = 1,
			  .rlength = 8, .mlength = 8, .threshold = 0);
		MP_EXPECT(eq, "bound MD used up", .type = PTL_EVENT_UNLINK, .initiator = I, .link = 1,
			  .threshold = 0, .md = h2);
		MP_RC(PtlMDUnlink(h2), PTL_MD_INVALID);
		MP_RC(PtlGet(h2, mp_id(T), pt, 0, 1, 0), PTL_MD_INVALID);
	}
	mp_barrier();
	if (mp_rank == T) {
		MP_EXPECT(eq, "get", .type = PTL_EVENT_GET_START, .initiator = I, .match_bits = 1, .rlength = 64,
			  .mlength = 64, .threshold = INF, .md = md);
		MP_EXPECT(eq, "get", .type = PTL_EVENT_GET_END, .initiator = I, .match_bits = 1, .rlength = 64,
			  .mlength = 64, .threshold = INF, .md = md);
		MP_EXPECT(eq, "get region", .type = PTL_EVENT_GET_START, .initiator = I, .match_bits = 1,
			  .rlength = 16, .mlength = 16, .offset = 4, .threshold = INF, .md = md);
		MP_EXPECT(eq, "get region", .type = PTL_EVENT_GET_END, .initiator = I, .match_bits = 1,
			  .rlength = 16, .mlength = 16, .offset = 4, .threshold = INF, .md = md);
		EXP_PUT(eq, "put region", 1, 16, 16, 40, 9, INF, md);
		char want[64];
		mp_fill(want, 64, 101);
		assert_memory_equal(tbuf + 40, want + 8, 16);
		MP_EXPECT(eq, "get for the bound MD", .type = PTL_EVENT_GET_START, .initiator = I,
			  .match_bits = 1, .rlength = 8, .mlength = 8, .threshold = INF, .md = md);
		MP_EXPECT(eq, "get for the bound MD", .type = PTL_EVENT_GET_END, .initiator = I, .match_bits = 1,
			  .rlength = 8, .mlength = 8, .threshold = INF, .md = md);
		MP_EMPTY(eq, 0, "nothing else");
		assert_int_equal(mp_sr(PTL_SR_DROP_COUNT) - drop0, 1);
		MP_RC(PtlMEUnlink(me), PTL_OK);
	}
	mp_eq_free(eq);
	mp_end();
}

static void test_md_update(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 17;
	char b1[16], b2[16], src[8];
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me = 0;
	ptl_handle_md_t md = 0;
	if (mp_rank == T) {
		memset(b1, 0, sizeof b1);
		memset(b2, 0, sizeof b2);
		me = mp_me_md(pt, 1, 0, PTL_RETAIN, mp_md(b1, 16, INF, PTL_MD_OP_PUT, eq), PTL_RETAIN, &md);
	}
	mp_barrier();
	ptl_handle_md_t h = 0;
	if (mp_rank == I) {
		mp_fill(src, 8, 110);
		h = mp_bind(src, 8, INF, 0, eq);
		mp_put_acked(h, eq, T, pt, 0, 1, 8, 0, 0, 8, 0, PTL_NI_OK, "put before the update");
	}
	mp_barrier();
	if (mp_rank == T) {
		ptl_md_t old, nmd = mp_md(b2, 16, INF, PTL_MD_OP_PUT, eq);
		/* The put's events wait in eq: the conditional update must refuse. */
		MP_RC(PtlMDUpdate(md, &old, &nmd, eq), PTL_MD_NO_UPDATE);
		assert_ptr_equal(old.start, b1);
		MP_RC(PtlMDUpdate(md, &old, NULL, eq), PTL_OK); /* a read is always fine */
		assert_ptr_equal(old.start, b1);
		MP_RC(PtlMDUpdate(md, &old, &nmd, eq + 1), PTL_EQ_INVALID);
		EXP_PUT(eq, "put before the update", 1, 8, 8, 0, 0, INF, md);
		MP_RC(PtlMDUpdate(md, &old, &nmd, eq), PTL_OK);
		assert_ptr_equal(old.start, b1);
		MP_RC(PtlMDUpdate(md, &old, NULL, PTL_EQ_NONE), PTL_OK);
		assert_ptr_equal(old.start, b2);
		ptl_md_t bad = nmd;
		bad.options |= 1u << 20;
		MP_RC(PtlMDUpdate(md, NULL, &bad, PTL_EQ_NONE), PTL_MD_ILLEGAL);
		MP_RC(PtlMDUpdate(md, &old, NULL, PTL_EQ_NONE), PTL_OK);
		assert_ptr_equal(old.start, b2); /* a refused update changes nothing */
	}
	mp_barrier();
	if (mp_rank == I) {
		mp_fill(src, 8, 111);
		mp_put_acked(h, eq, T, pt, 0, 1, 8, 0, 1, 8, 0, PTL_NI_OK, "put after the update");
		MP_RC(PtlMDUnlink(h), PTL_OK);
	}
	mp_barrier();
	if (mp_rank == T) {
		ptl_event_t ev = MP_EXPECT(eq, "put after the update", .type = PTL_EVENT_PUT_START, .initiator = I,
					   .match_bits = 1, .rlength = 8, .mlength = 8, .hdr_data = 1,
					   .threshold = INF, .md = md);
		assert_ptr_equal(ev.md.start, b2);
		MP_EXPECT(eq, "put after the update", .type = PTL_EVENT_PUT_END, .initiator = I, .match_bits = 1,
			  .rlength = 8, .mlength = 8, .hdr_data = 1, .threshold = INF, .md = md);
		MP_CHECK(b1, 8, 110, "old buffer kept the first put");
		MP_CHECK(b2, 8, 111, "the updated MD's buffer got the second put");
		MP_RC(PtlMEUnlink(me), PTL_OK);
	}
	mp_eq_free(eq);
	mp_end();
}

static void test_iovec(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 18;
	char t1[5], t2[10], t3[17], i1[12], i2[20], g1[7], g2[7], g3[18];
	ptl_md_iovec_t tv[3] = { { t1, 5 }, { t2, 10 }, { t3, 17 } };
	ptl_md_iovec_t iv[2] = { { i1, 12 }, { i2, 20 } };
	ptl_md_iovec_t gv[3] = { { g1, 7 }, { g2, 7 }, { g3, 18 } };
	char flat[32], out[32];
	mp_fill(flat, 32, 120);
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me = 0;
	ptl_handle_md_t md = 0;
	if (mp_rank == T) {
		me = mp_me_md(pt, 1, 0, PTL_RETAIN,
			      mp_md(tv, 3, INF, PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_IOVEC | PTL_MD_MANAGE_REMOTE, eq),
			      PTL_RETAIN, &md);
	}
	mp_barrier();
	if (mp_rank == I) {
		memcpy(i1, flat, 12);
		memcpy(i2, flat + 12, 20);
		ptl_handle_md_t h = mp_bind(iv, 2, INF, PTL_MD_IOVEC, eq);
		mp_put_acked(h, eq, T, pt, 0, 1, 32, 0, 0, 32, 0, PTL_NI_OK, "IOVEC to IOVEC put");
		ptl_handle_md_t g = mp_bind(gv, 3, INF, PTL_MD_IOVEC, eq);
		MP_RC(PtlGetRegion(g, 3, 20, mp_id(T), pt, 0, 1, 6), PTL_OK);
		for (int k = 0; k < 4; k++)
			MP_EXPECT(eq, "IOVEC get", .type = (ptl_event_kind_t)(k < 2 ? PTL_EVENT_SEND_START + k
										 : PTL_EVENT_REPLY_START + k - 2),
				  .initiator = k < 2 ? I : T, .match_bits = 1, .rlength = 20, .mlength = 20,
				  .offset = 3, .threshold = INF);
		memcpy(out, g1, 7);
		memcpy(out + 7, g2, 7);
		memcpy(out + 14, g3, 18);
		assert_memory_equal(out + 3, flat + 6, 20);
		MP_RC(PtlMDUnlink(h), PTL_OK);
		MP_RC(PtlMDUnlink(g), PTL_OK);
	}
	mp_barrier();
	if (mp_rank == T) {
		EXP_PUT(eq, "IOVEC put", 1, 32, 32, 0, 0, INF, md);
		memcpy(out, t1, 5);
		memcpy(out + 5, t2, 10);
		memcpy(out + 15, t3, 17);
		assert_memory_equal(out, flat, 32);
		MP_EXPECT(eq, "IOVEC get", .type = PTL_EVENT_GET_START, .initiator = I, .match_bits = 1,
			  .rlength = 20, .mlength = 20, .offset = 6, .threshold = INF, .md = md);
		MP_EXPECT(eq, "IOVEC get", .type = PTL_EVENT_GET_END, .initiator = I, .match_bits = 1,
			  .rlength = 20, .mlength = 20, .offset = 6, .threshold = INF, .md = md);
		MP_RC(PtlMEUnlink(me), PTL_OK);
	}
	mp_eq_free(eq);
	mp_end();
}

/* Puts that wait for no answer (8 bytes: a PTL_MSG_PUT_TINY) meet the
 * same acceptance: too long for an MD without TRUNCATE, dropped (and no
 * answer to wait for); into a TRUNCATE MD, the part that fits. The
 * initiator logs SEND_START and SEND_END for each unless disabled. */
static void test_short_truncate(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 19;
	char tbuf[8], nbuf[8], src[8];
	mp_fill(src, sizeof src, 61);
	memset(tbuf, '.', sizeof tbuf);
	memset(nbuf, '.', sizeof nbuf);
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me[2] = { 0 };
	ptl_handle_md_t md[2] = { 0 };
	long drop0 = mp_sr(PTL_SR_DROP_COUNT);
	if (mp_rank == T) {
		me[0] = mp_me_md(pt, 5, 0, PTL_RETAIN, mp_md(nbuf, 4, INF, PTL_MD_OP_PUT, eq), PTL_RETAIN, &md[0]);
		me[1] = mp_me_md(pt, 4, 0, PTL_RETAIN,
				 mp_md(tbuf, 4, INF, PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_MANAGE_REMOTE, eq),
				 PTL_RETAIN, &md[1]);
	}
	mp_barrier();
	if (mp_rank == I) {
		static const unsigned opts[3] = { 0, PTL_MD_EVENT_START_DISABLE, PTL_MD_EVENT_END_DISABLE };
		ptl_handle_md_t h = mp_bind(src, 8, INF, 0, eq);
		MP_RC(PtlPut(h, PTL_NO_ACK_REQ, mp_id(T), pt, 0, 5, 0, 0), PTL_OK);
		MP_EXPECT(eq, "short put", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = 5,
			  .rlength = 8, .mlength = 8, .threshold = INF);
		MP_EXPECT(eq, "short put", .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = 5,
			  .rlength = 8, .mlength = 8, .threshold = INF);
		MP_RC(PtlMDUnlink(h), PTL_OK);
		for (int k = 0; k < 3; k++) {
			h = mp_bind(src, 8, INF, opts[k], eq);
			MP_RC(PtlPut(h, PTL_NO_ACK_REQ, mp_id(T), pt, 0, 4, 0, (ptl_hdr_data_t)k), PTL_OK);
			if (k != 1)
				MP_EXPECT(eq, "short put", .type = PTL_EVENT_SEND_START, .initiator = I,
					  .match_bits = 4, .rlength = 8, .mlength = 8, .hdr_data = (ptl_hdr_data_t)k,
					  .threshold = INF);
			if (k != 2)
				MP_EXPECT(eq, "short put", .type = PTL_EVENT_SEND_END, .initiator = I,
					  .match_bits = 4, .rlength = 8, .mlength = 8, .hdr_data = (ptl_hdr_data_t)k,
					  .threshold = INF);
			MP_RC(PtlMDUnlink(h), PTL_OK);
		}
		MP_EMPTY(eq, 0, "nothing else");
	}
	mp_barrier();
	if (mp_rank == T) {
		for (int k = 0; k < 3; k++)
			EXP_PUT(eq, "short put into a TRUNCATE MD", 4, 8, 4, 0, (ptl_hdr_data_t)k, INF, md[1]);
		MP_CHECK(tbuf, 4, 61, "data that fit");
		assert_memory_equal(tbuf + 4, "....", 4);
		assert_memory_equal(nbuf, "........", 8);
		MP_EMPTY(eq, 0, "nothing else");
		/* the drop came first, from the same peer */
		assert_int_equal(mp_sr(PTL_SR_DROP_COUNT) - drop0, 1);
		for (int k = 0; k < 2; k++)
			MP_RC(PtlMEUnlink(me[k]), PTL_OK);
	}
	mp_eq_free(eq);
	mp_end();
}

/* An EQ handler runs while the library logs its event, and may call the
 * API (PtlEQAlloc(3)). From START until the data has moved the MD is in
 * use: PtlMDUnlink says PTL_MD_IN_USE there, PtlMDUpdate
 * PTL_MD_NO_UPDATE (the one code 3.3 gives it for no update). At END (and
 * at UNLINK) it may be unlinked, and an MD bound then may take its slot:
 * the library must not go on with the old one through it (the payload
 * into the new MD's buffer, its events, its unlink). */
static struct {
	char decoy[32];           /* every MD the handler binds describes it */
	ptl_handle_eq_t decoy_eq; /* theirs: no event may land there */
	ptl_handle_md_t bound[8];
	int nbound;
	int start_unlink, start_update, end_unlink, unlink_unlink;
	int late_unlink;          /* match bits whose MD is left to unlink on UNLINK */
} hr;

static void reentry_handler(ptl_event_t *ev)
{
	ptl_md_t d = mp_md(hr.decoy, sizeof hr.decoy, INF, PTL_MD_OP_PUT | PTL_MD_OP_GET, hr.decoy_eq);
	ptl_md_t tiny = d;
	tiny.length = 1;
	switch (ev->type) {
	case PTL_EVENT_PUT_START:
	case PTL_EVENT_SEND_START:
		hr.start_unlink = PtlMDUnlink(ev->md_handle);
		hr.start_update = PtlMDUpdate(ev->md_handle, NULL, &tiny, PTL_EQ_NONE);
		break;
	case PTL_EVENT_PUT_END:
	case PTL_EVENT_SEND_END:
		if ((int)ev->match_bits == hr.late_unlink)
			return;
		hr.end_unlink = PtlMDUnlink(ev->md_handle);
		break;
	case PTL_EVENT_UNLINK:
		hr.unlink_unlink = PtlMDUnlink(ev->md_handle);
		break;
	default:
		return;
	}
	if (hr.nbound < 8 && PtlMDBind(mp_ni, d, PTL_RETAIN, &hr.bound[hr.nbound]) == PTL_OK)
		hr.nbound++;
}

static void test_handler_reentry(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 21;
	char t1[16], t2[16], src[8];
	memset(&hr, 0, sizeof hr);
	hr.late_unlink = 2;
	hr.start_unlink = hr.start_update = hr.end_unlink = hr.unlink_unlink = -1;
	hr.decoy_eq = mp_eq(16);
	ptl_handle_eq_t eq;
	MP_RC(PtlEQAlloc(mp_ni, 64, reentry_handler, &eq), PTL_OK);
	ptl_handle_me_t me1 = 0, me2 = 0;
	ptl_handle_md_t md1 = 0, md2 = 0;
	ptl_event_t ev;
	if (mp_rank == T) {
		memset(t1, 0, sizeof t1);
		memset(t2, 0, sizeof t2);
		me1 = mp_me_md(pt, 1, 0, PTL_RETAIN, mp_md(t1, 16, INF, PTL_MD_OP_PUT, eq), PTL_RETAIN, &md1);
		/* used up by one put: unlinked after it, its handler unlinks it at UNLINK */
		me2 = mp_me_md(pt, 2, 0, PTL_RETAIN, mp_md(t2, 16, 1, PTL_MD_OP_PUT, eq), PTL_UNLINK, &md2);
	}
	mp_barrier();
	if (mp_rank == I) {
		mp_fill(src, 8, 120);
		ptl_handle_md_t h = mp_bind(src, 8, INF, 0, eq);
		MP_RC(PtlPut(h, PTL_NO_ACK_REQ, mp_id(T), pt, 0, 1, 0, 0), PTL_OK);
		MP_WAIT(eq, &ev, "SEND_START of a put");
		MP_WAIT(eq, &ev, "SEND_END of a put");
		assert_int_equal(hr.start_unlink, PTL_MD_IN_USE);
		assert_int_equal(hr.start_update, PTL_MD_NO_UPDATE);
		assert_int_equal(hr.end_unlink, PTL_OK); /* the put was done with it */
		MP_RC(PtlMDUnlink(h), PTL_MD_INVALID);
		/* a second put from another MD, into the MD that unlinks itself */
		hr.end_unlink = -1;
		h = mp_bind(src, 8, INF, PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_END_DISABLE, PTL_EQ_NONE);
		MP_RC(PtlPut(h, PTL_NO_ACK_REQ, mp_id(T), pt, 0, 2, 0, 0), PTL_OK);
		MP_RC(PtlMDUnlink(h), PTL_OK);
	}
	if (mp_rank == T) {
		MP_WAIT(eq, &ev, "PUT_START");
		MP_WAIT(eq, &ev, "PUT_END");
		assert_int_equal(ev.match_bits, 1);
		assert_int_equal(hr.start_unlink, PTL_MD_IN_USE);
		assert_int_equal(hr.start_update, PTL_MD_NO_UPDATE);
		assert_int_equal(hr.end_unlink, PTL_OK);
		MP_CHECK(t1, 8, 120, "the put's data in its own MD's buffer");
		MP_WAIT(eq, &ev, "PUT_START (the MD used up by one put)");
		MP_WAIT(eq, &ev, "PUT_END (the MD used up by one put)");
		MP_WAIT(eq, &ev, "UNLINK (the MD used up by one put)");
		assert_int_equal(ev.type, PTL_EVENT_UNLINK);
		assert_int_equal(hr.unlink_unlink, PTL_OK);
		MP_CHECK(t2, 8, 120, "the second put's data in its MD's buffer");
		MP_RC(PtlMDUnlink(md1), PTL_MD_INVALID);
		MP_RC(PtlMDUnlink(md2), PTL_MD_INVALID);
		MP_RC(PtlMEUnlink(me1), PTL_OK);
		MP_RC(PtlMEUnlink(me2), PTL_OK);
	}
	/* What the handler bound, some of it in freed MDs' slots, is whole:
	 * no payload, no event, not held, not unlinked */
	for (size_t i = 0; i < sizeof hr.decoy; i++)
		if (hr.decoy[i])
			fail_msg("rank %d: byte %zu of the handler's MDs' buffer written", mp_rank, i);
	MP_EMPTY(hr.decoy_eq, 0, "the handler's MDs' EQ");
	/* (ranks past T, in a larger job, take no part) */
	assert_true(mp_rank > T || hr.nbound >= 2);
	for (int i = 0; i < hr.nbound; i++)
		MP_RC(PtlMDUnlink(hr.bound[i]), PTL_OK);
	mp_barrier();
	mp_eq_free(eq);
	mp_eq_free(hr.decoy_eq);
	mp_end();
}

/* A handler that calls into progress (PtlEQGet) while a message to this
 * process is being delivered: the delivery under way keeps its payload
 * (the self NAL once delivered the next message into the buffer the
 * current one was still being read from). Each rank puts to itself. */
static struct {
	ptl_handle_md_t src;
	ptl_handle_eq_t other;
	ptl_pt_index_t pt;
	int fired;
} sr;

static void self_handler(ptl_event_t *ev)
{
	ptl_event_t e;
	if (ev->type != PTL_EVENT_PUT_START || sr.fired++)
		return;
	MP_RC(PtlPutRegion(sr.src, 16, 8, PTL_NO_ACK_REQ, mp_id(mp_rank), sr.pt, 0, 1, 32, 0), PTL_OK);
	MP_RC(PtlEQGet(sr.other, &e), PTL_EQ_EMPTY);
}

static void test_handler_progress(void **state)
{
	(void)state;
	char tb[48], src[24];
	memset(tb, 0, sizeof tb);
	mp_fill(src, sizeof src, 130);
	memset(&sr, 0, sizeof sr);
	sr.pt = 22;
	sr.other = mp_eq(4);
	ptl_handle_eq_t eq;
	MP_RC(PtlEQAlloc(mp_ni, 64, self_handler, &eq), PTL_OK);
	ptl_handle_md_t md;
	ptl_handle_me_t me = mp_me_md(sr.pt, 1, 0, PTL_RETAIN,
				      mp_md(tb, sizeof tb, INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq), PTL_RETAIN,
				      &md);
	sr.src = mp_bind(src, sizeof src, INF, 0, PTL_EQ_NONE);
	/* two queued before anything is delivered, the handler adds a third */
	MP_RC(PtlPutRegion(sr.src, 0, 8, PTL_NO_ACK_REQ, mp_id(mp_rank), sr.pt, 0, 1, 0, 0), PTL_OK);
	MP_RC(PtlPutRegion(sr.src, 8, 8, PTL_NO_ACK_REQ, mp_id(mp_rank), sr.pt, 0, 1, 16, 0), PTL_OK);
	ptl_event_t ev;
	int ends = 0;
	for (int k = 0; k < 6; k++) {
		MP_WAIT(eq, &ev, "a put to this process");
		ends += ev.type == PTL_EVENT_PUT_END;
	}
	assert_int_equal(ends, 3);
	/* each put's 8 bytes where it was sent: src[0..8) at 0, [8..16) at 16, [16..24) at 32 */
	if (memcmp(tb, src, 8) || memcmp(tb + 16, src + 8, 8) || memcmp(tb + 32, src + 16, 8))
		fail_msg("rank %d: a put's data is not where it was sent", mp_rank);
	MP_RC(PtlMDUnlink(sr.src), PTL_OK);
	MP_RC(PtlMEUnlink(me), PTL_OK);
	mp_barrier();
	mp_eq_free(eq);
	mp_eq_free(sr.other);
	mp_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MP_TEST(test_accept),	     MP_TEST(test_offsets),	  MP_TEST(test_max_size),
		MP_TEST(test_threshold_chain), MP_TEST(test_event_disable), MP_TEST(test_ack),
		MP_TEST(test_get_reply),      MP_TEST(test_md_update),	  MP_TEST(test_iovec),
		MP_TEST(test_short_truncate), MP_TEST(test_handler_reentry),
		MP_TEST(test_handler_progress),
	};
	return mp_main("mp_md", tests, sizeof tests / sizeof tests[0]);
}
