/*
 * Address translation across processes: the ACL check with every wildcard,
 * the ordered match-list walk (match id, match and ignore bits),
 * PtlMEAttach/PtlMEInsert positions, PtlMEAttachAny. Rank 0 initiates,
 * rank 1 is the target; other ranks only meet at the barriers.
 */
#include "mp_common.h"

#include <string.h>
#include <unistd.h>

#define I 0 /* initiator */
#define T 1 /* target */

static void test_acl(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 5, pt2 = 6;
	ptl_uid_t uid = (ptl_uid_t)getuid();
	ptl_jid_t jid = 0;
	MP_RC(PtlGetJid(mp_ni, &jid), PTL_OK);
	ptl_process_id_t i_id = mp_id(I);
	/* ac index, portal, admitted? */
	static const struct { ptl_ac_index_t ac; ptl_pt_index_t pt; int ok; } puts[] = {
		{ 0, 5, 1 },  /* default entry 0: the job's own processes */
		{ 1, 5, 1 },  /* exact id, uid, jid, portal */
		{ 2, 5, 0 },  /* pid of another process */
		{ 3, 5, 0 },  /* another uid */
		{ 4, 5, 0 },  /* another jid */
		{ 5, 5, 1 },  /* every wildcard */
		{ 6, 5, 0 },  /* entry for portal 6 only */
		{ 6, 6, 1 },
		{ 7, 5, 0 },  /* another nid */
		{ 8, 5, 1 },  /* NID_ANY with pid, UID_ANY, JID_ANY */
		{ 9, 5, 0 },  /* never set */
		{ 64, 5, 0 }, /* beyond max_ac_index (63) */
	};
	const int nputs = (int)(sizeof puts / sizeof puts[0]);
	char buf[64], src[32];
	mp_fill(src, sizeof src, 7);
	long perm0 = mp_sr(PTL_SR_PERMISSIONS_VIOLATIONS), drop0 = mp_sr(PTL_SR_DROP_COUNT);
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me1 = 0, me2 = 0;
	if (mp_rank == T) {
		ptl_process_id_t other = { i_id.nid + 1, PTL_PID_ANY };
		MP_RC(PtlACEntry(mp_ni, 1, i_id, uid, jid, pt), PTL_OK);
		MP_RC(PtlACEntry(mp_ni, 2, mp_id(T), uid, jid, pt), PTL_OK);
		MP_RC(PtlACEntry(mp_ni, 3, mp_any, uid + 1, jid, pt), PTL_OK);
		MP_RC(PtlACEntry(mp_ni, 4, mp_any, uid, jid + 1, pt), PTL_OK);
		MP_RC(PtlACEntry(mp_ni, 5, mp_any, PTL_UID_ANY, PTL_JID_ANY, PTL_PT_INDEX_ANY), PTL_OK);
		MP_RC(PtlACEntry(mp_ni, 6, mp_any, uid, jid, pt2), PTL_OK);
		MP_RC(PtlACEntry(mp_ni, 7, other, PTL_UID_ANY, PTL_JID_ANY, PTL_PT_INDEX_ANY), PTL_OK);
		ptl_process_id_t anynid = { PTL_NID_ANY, i_id.pid };
		MP_RC(PtlACEntry(mp_ni, 8, anynid, PTL_UID_ANY, PTL_JID_ANY, pt), PTL_OK);
		/* Bad arguments. */
		MP_RC(PtlACEntry(mp_ni, 64, mp_any, uid, jid, pt), PTL_AC_INDEX_INVALID);
		MP_RC(PtlACEntry(mp_ni, 10, mp_any, uid, jid, 64), PTL_PT_INDEX_INVALID);
		ptl_process_id_t nobody = { i_id.nid, (ptl_pid_t)mp_size + 5 };
		MP_RC(PtlACEntry(mp_ni, 10, nobody, uid, jid, pt), PTL_PROCESS_INVALID);
		MP_RC(PtlACEntry(mp_ni ^ 0x100000000ull, 10, mp_any, uid, jid, pt), PTL_NI_INVALID);
		me1 = mp_me_md(pt, 0x77, 0, PTL_RETAIN,
			       mp_md(buf, sizeof buf, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq),
			       PTL_RETAIN, NULL);
		me2 = mp_me_md(pt2, 0x77, 0, PTL_RETAIN,
			       mp_md(buf, sizeof buf, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq),
			       PTL_RETAIN, NULL);
	}
	mp_barrier();
	if (mp_rank == I) {
		ptl_handle_md_t md = mp_bind(src, sizeof src, PTL_MD_THRESH_INF, 0, eq);
		for (int k = 0; k < nputs; k++) {
			char what[64];
			snprintf(what, sizeof what, "put through ac %u on portal %u", puts[k].ac, puts[k].pt);
			mp_put_acked(md, eq, T, puts[k].pt, puts[k].ac, 0x77, sizeof src, 0, (ptl_hdr_data_t)k,
				     puts[k].ok ? sizeof src : 0, 0, puts[k].ok ? PTL_NI_OK : PTL_NI_DROPPED,
				     what);
		}
		MP_RC(PtlMDUnlink(md), PTL_OK);
	}
	mp_barrier();
	if (mp_rank == T) {
		int denied = 0;
		for (int k = 0; k < nputs; k++) {
			if (!puts[k].ok) {
				denied++;
				continue;
			}
			char what[64];
			snprintf(what, sizeof what, "put admitted by ac %u on portal %u", puts[k].ac, puts[k].pt);
			MP_EXPECT(eq, what, .type = PTL_EVENT_PUT_START, .initiator = I, .match_bits = 0x77,
				  .rlength = sizeof src, .mlength = sizeof src, .hdr_data = (ptl_hdr_data_t)k,
				  .threshold = PTL_MD_THRESH_INF);
			MP_EXPECT(eq, what, .type = PTL_EVENT_PUT_END, .initiator = I, .match_bits = 0x77,
				  .rlength = sizeof src, .mlength = sizeof src, .hdr_data = (ptl_hdr_data_t)k,
				  .threshold = PTL_MD_THRESH_INF);
		}
		MP_EMPTY(eq, 0, "no event for a denied put");
		MP_CHECK(buf, sizeof src, 7, "data of the admitted puts");
		assert_int_equal(mp_sr(PTL_SR_PERMISSIONS_VIOLATIONS) - perm0, denied);
		assert_int_equal(mp_sr(PTL_SR_DROP_COUNT) - drop0, 0);
		MP_RC(PtlMEUnlink(me1), PTL_OK);
		MP_RC(PtlMEUnlink(me2), PTL_OK);
		for (ptl_ac_index_t a = 1; a <= 8; a++)
			MP_RC(PtlACEntry(mp_ni, a, mp_any, uid, jid, PTL_PT_INDEX_ANY), PTL_OK);
	} else {
		assert_int_equal(mp_sr(PTL_SR_PERMISSIONS_VIOLATIONS) - perm0, 0);
	}
	mp_eq_free(eq);
	mp_end();
}

/* A put that waits for no answer (no ACK, data inline: the tiny header
 * of lib/ptl/ptl_proto.h up to 32 bytes and from 81 to 96, the short one
 * between and above) carries everything a put does: the target's ACL
 * sees its uid, jid, portal and AC index, and its events its match bits,
 * remote offset, header data and lengths. An AC index the short header
 * cannot hold goes the long way, and is denied like any other past
 * max_ac_index; one the tiny header cannot hold (300, whose low byte
 * names entry 44, set to admit; with 8 and with 96 bytes),
 * a portal (0x10009: portal 9's low bits) or an offset (4 GiB + 8) it
 * cannot, take a wider header: denied or dropped, not cut down to what
 * would land. Refused puts come first: once the last admitted one has
 * arrived, the target has seen them all (one peer's messages arrive in
 * order). */
static void test_noack_fields(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 9;
	const ptl_match_bits_t bits = 0x5a5a00000099ull;
	const ptl_hdr_data_t hd = 0x1234567890abcdefull;
	ptl_uid_t uid = (ptl_uid_t)getuid();
	ptl_jid_t jid = 0;
	MP_RC(PtlGetJid(mp_ni, &jid), PTL_OK);
	char buf[288], src[96];
	mp_fill(src, sizeof src, 11);
	memset(buf, 0, sizeof buf);
	long perm0 = mp_sr(PTL_SR_PERMISSIONS_VIOLATIONS), drop0 = mp_sr(PTL_SR_DROP_COUNT);
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me = 0;
	ptl_handle_md_t mdh = 0;
	if (mp_rank == T) {
		MP_RC(PtlACEntry(mp_ni, 1, mp_id(I), uid, jid, pt), PTL_OK);
		MP_RC(PtlACEntry(mp_ni, 3, mp_any, uid + 1, jid, pt), PTL_OK);
		MP_RC(PtlACEntry(mp_ni, 4, mp_any, uid, jid + 1, pt), PTL_OK);
		MP_RC(PtlACEntry(mp_ni, 44, mp_any, uid, jid, pt), PTL_OK);
		me = mp_me_md(pt, bits, 0, PTL_RETAIN,
			      mp_md(buf, sizeof buf, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq),
			      PTL_RETAIN, &mdh);
	}
	mp_barrier();
	if (mp_rank == I) {
		ptl_handle_md_t md = mp_bind(src, sizeof src, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE);
		ptl_process_id_t t = mp_id(T);
		MP_RC(PtlPutRegion(md, 0, 8, PTL_NO_ACK_REQ, t, pt, 3, bits, 0, hd), PTL_OK);       /* uid */
		MP_RC(PtlPutRegion(md, 0, 8, PTL_NO_ACK_REQ, t, pt, 4, bits, 0, hd), PTL_OK);       /* jid */
		MP_RC(PtlPutRegion(md, 0, 8, PTL_NO_ACK_REQ, t, pt, 0x10000, bits, 0, hd), PTL_OK); /* long */
		MP_RC(PtlPutRegion(md, 0, 8, PTL_NO_ACK_REQ, t, pt, 0, bits ^ 1, 0, hd), PTL_OK);   /* no ME */
		MP_RC(PtlPutRegion(md, 0, 8, PTL_NO_ACK_REQ, t, pt, 300, bits, 0, hd), PTL_OK);     /* ac */
		MP_RC(PtlPutRegion(md, 0, 96, PTL_NO_ACK_REQ, t, pt, 300, bits, 0, hd), PTL_OK);    /* ac */
		MP_RC(PtlPutRegion(md, 0, 8, PTL_NO_ACK_REQ, t, 0x10000 | pt, 0, bits, 0, hd), PTL_OK);
		MP_RC(PtlPutRegion(md, 0, 8, PTL_NO_ACK_REQ, t, pt, 0, bits, (1ull << 32) + 8, hd), PTL_OK);
		MP_RC(PtlPutRegion(md, 0, 16, PTL_NO_ACK_REQ, t, pt, 0, bits, 8, hd), PTL_OK);
		MP_RC(PtlPutRegion(md, 4, 8, PTL_NO_ACK_REQ, t, pt, 1, bits, 40, hd + 1), PTL_OK);
		MP_RC(PtlPutRegion(md, 0, 40, PTL_NO_ACK_REQ, t, pt, 1, bits, 64, hd + 2), PTL_OK); /* short */
		MP_RC(PtlPutRegion(md, 0, 80, PTL_NO_ACK_REQ, t, pt, 1, bits, 104, hd + 3), PTL_OK); /* short */
		MP_RC(PtlPutRegion(md, 0, 96, PTL_NO_ACK_REQ, t, pt, 1, bits, 192, hd + 4), PTL_OK); /* tiny */
		MP_RC(PtlMDUnlink(md), PTL_OK);
	} else if (mp_rank == T) {
		const struct { ptl_size_t len, off; ptl_hdr_data_t hd; } ok[] = {
			{ 16, 8, hd }, { 8, 40, hd + 1 }, { 40, 64, hd + 2 }, { 80, 104, hd + 3 }, { 96, 192, hd + 4 }
		};
		for (int k = 0; k < 5; k++) {
			for (int e = 0; e < 2; e++) {
				ptl_event_t ev = MP_EXPECT(eq, "an admitted put without ACK",
							   .type = e ? PTL_EVENT_PUT_END : PTL_EVENT_PUT_START,
							   .initiator = I, .match_bits = bits, .rlength = ok[k].len,
							   .mlength = ok[k].len, .offset = ok[k].off, .hdr_data = ok[k].hd,
							   .threshold = PTL_MD_THRESH_INF, .md = mdh);
				assert_int_equal(ev.uid, uid);
				assert_int_equal(ev.jid, jid);
				assert_int_equal(ev.pt_index, pt);
			}
		}
		MP_EMPTY(eq, 0, "no event for a refused put");
		assert_memory_equal(buf + 8, src, 16);
		assert_memory_equal(buf + 40, src + 4, 8);
		assert_memory_equal(buf + 64, src, 40);
		assert_memory_equal(buf + 104, src, 80);
		assert_memory_equal(buf + 192, src, 96);
		assert_int_equal(mp_sr(PTL_SR_PERMISSIONS_VIOLATIONS) - perm0, 5);
		assert_int_equal(mp_sr(PTL_SR_DROP_COUNT) - drop0, 3);
		MP_RC(PtlMEUnlink(me), PTL_OK);
		for (ptl_ac_index_t a = 1; a <= 4; a++)
			MP_RC(PtlACEntry(mp_ni, a, mp_any, uid, jid, PTL_PT_INDEX_ANY), PTL_OK);
		MP_RC(PtlACEntry(mp_ni, 44, mp_any, uid, jid, PTL_PT_INDEX_ANY), PTL_OK);
	}
	mp_barrier();
	mp_eq_free(eq);
	mp_end();
}

/* A job of two users (uid.sh: rank I claims uid + 1 by the test option
 * PTL_TEST_UID, which main sets): a put that waits for no answer cannot
 * leave its uid out (ptl_proto.h's struct ptl_hdr_tiny) when the
 * target's is another, so the target's ACL sees the initiator's: an
 * entry for the target's own uid refuses it, one for the initiator's
 * admits it (a 40-byte header, or the 72-byte one when it wants an ACK),
 * and its events carry it. The other way, the initiator's default entry
 * 0, which admits its own uid only, refuses the target's put; an entry
 * for the target's admits one. Refused puts come first (one peer's
 * messages arrive in order). */
static void test_foreign_uid(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 9;
	const ptl_match_bits_t bits = 0x77;
	const ptl_uid_t real = (ptl_uid_t)getuid();
	ptl_uid_t mine = 0;
	ptl_jid_t jid = 0;
	MP_RC(PtlGetUid(mp_ni, &mine), PTL_OK);
	MP_RC(PtlGetJid(mp_ni, &jid), PTL_OK);
	assert_int_equal(mine, mp_rank == I ? real + 1 : real); /* the option took */
	char buf[64], src[8];
	mp_fill(src, sizeof src, 5);
	memset(buf, 0, sizeof buf);
	long perm0 = mp_sr(PTL_SR_PERMISSIONS_VIOLATIONS);
	ptl_handle_eq_t eq = mp_eq(64), seq = mp_eq(64); /* what we take, what we send */
	ptl_handle_md_t mdh = 0;
	ptl_handle_me_t me = mp_me_md(pt, bits, 0, PTL_RETAIN,
				      mp_md(buf, sizeof buf, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq),
				      PTL_RETAIN, &mdh);
	ptl_handle_me_t gme = 0; /* what I's get reads: the bytes I put */
	if (mp_rank == T) {
		MP_RC(PtlACEntry(mp_ni, 1, mp_any, real, jid, pt), PTL_OK);
		MP_RC(PtlACEntry(mp_ni, 2, mp_any, real + 1, jid, pt), PTL_OK);
		gme = mp_me_md(pt, bits + 1, 0, PTL_RETAIN,
			       mp_md(buf + 16, 8, PTL_MD_THRESH_INF, PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE, eq), PTL_RETAIN,
			       NULL);
	} else {
		MP_RC(PtlACEntry(mp_ni, 2, mp_any, real, jid, pt), PTL_OK);
	}
	mp_barrier();
	const int peer = mp_rank == I ? T : I;
	ptl_handle_md_t md = mp_bind(src, sizeof src, PTL_MD_THRESH_INF, 0, seq);
	if (mp_rank == I) {
		ptl_process_id_t t = mp_id(T);
		MP_RC(PtlPutRegion(md, 0, 8, PTL_NO_ACK_REQ, t, pt, 1, bits, 0, 1), PTL_OK);
		MP_RC(PtlPutRegion(md, 0, 8, PTL_NO_ACK_REQ, t, pt, 2, bits, 8, 2), PTL_OK);
		MP_RC(PtlPutRegion(md, 0, 8, PTL_ACK_REQ, t, pt, 2, bits, 16, 3), PTL_OK);
		for (int k = 0; k < 3; k++) {
			MP_EXPECT(seq, "our put", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = bits,
				  .rlength = 8, .mlength = 8, .offset = 0, .hdr_data = (ptl_hdr_data_t)k + 1,
				  .threshold = PTL_MD_THRESH_INF);
			MP_EXPECT(seq, "our put", .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = bits,
				  .rlength = 8, .mlength = 8, .offset = 0, .hdr_data = (ptl_hdr_data_t)k + 1,
				  .threshold = PTL_MD_THRESH_INF);
		}
		/* The ACK's initiator is the target (an answer swaps them), and
		 * its uid and jid are the target's too. */
		ptl_event_t ack = MP_EXPECT(seq, "the ACK", .type = PTL_EVENT_ACK, .initiator = T, .match_bits = bits,
					    .rlength = 8, .mlength = 8, .offset = 16, .hdr_data = 3,
					    .threshold = PTL_MD_THRESH_INF);
		assert_int_equal(ack.uid, real);
		assert_int_equal(ack.jid, jid);
	} else {
		ptl_process_id_t i = mp_id(I);
		MP_RC(PtlPutRegion(md, 0, 8, PTL_NO_ACK_REQ, i, pt, 0, bits, 0, 4), PTL_OK);
		MP_RC(PtlPutRegion(md, 0, 8, PTL_NO_ACK_REQ, i, pt, 2, bits, 24, 5), PTL_OK);
		for (int k = 0; k < 2; k++)
			for (int e = 0; e < 2; e++)
				MP_EXPECT(seq, "our put", .type = e ? PTL_EVENT_SEND_END : PTL_EVENT_SEND_START,
					  .initiator = T, .match_bits = bits, .rlength = 8, .mlength = 8,
					  .hdr_data = (ptl_hdr_data_t)k + 4, .threshold = PTL_MD_THRESH_INF);
	}
	/* What we took: the peer's admitted puts, with its uid. */
	const struct { ptl_size_t off; ptl_hdr_data_t hd; } in[2] = { { 8, 2 }, { 16, 3 } }, in_t = { 24, 5 };
	int n = mp_rank == T ? 2 : 1;
	for (int k = 0; k < n; k++) {
		ptl_size_t off = mp_rank == T ? in[k].off : in_t.off;
		ptl_hdr_data_t hd = mp_rank == T ? in[k].hd : in_t.hd;
		for (int e = 0; e < 2; e++) {
			ptl_event_t ev = MP_EXPECT(eq, "an admitted put", .type = e ? PTL_EVENT_PUT_END : PTL_EVENT_PUT_START,
						   .initiator = peer, .match_bits = bits, .rlength = 8, .mlength = 8,
						   .offset = off, .hdr_data = hd, .threshold = PTL_MD_THRESH_INF, .md = mdh);
			assert_int_equal(ev.uid, mp_rank == T ? real + 1 : real);
			assert_int_equal(ev.jid, jid);
		}
		assert_memory_equal(buf + off, src, 8);
	}
	MP_EMPTY(eq, 0, "no event for a refused put");
	assert_int_equal(mp_sr(PTL_SR_PERMISSIONS_VIOLATIONS) - perm0, 1);
	/* A get from I: its REPLY, as the ACK, carries the target's id,
	 * uid and jid; the target's events the initiator's. */
	mp_barrier();
	if (mp_rank == I) {
		char got[8];
		memset(got, 0, sizeof got);
		ptl_handle_md_t gmd = mp_bind(got, sizeof got, PTL_MD_THRESH_INF, 0, seq);
		MP_RC(PtlGetRegion(gmd, 0, 8, mp_id(T), pt, 2, bits + 1, 0), PTL_OK);
		ptl_event_t ev;
		do
			MP_WAIT(seq, &ev, "the get's REPLY_END");
		while (ev.type != PTL_EVENT_REPLY_END);
		assert_int_equal(ev.ni_fail_type, PTL_NI_OK);
		assert_int_equal(ev.mlength, 8);
		assert_int_equal(ev.initiator.nid, mp_id(T).nid);
		assert_int_equal(ev.initiator.pid, mp_id(T).pid);
		assert_int_equal(ev.uid, real);
		assert_int_equal(ev.jid, jid);
		assert_memory_equal(got, src, 8);
		MP_RC(PtlMDUnlink(gmd), PTL_OK);
	} else {
		ptl_event_t ev;
		do
			MP_WAIT(eq, &ev, "the get's GET_END");
		while (ev.type != PTL_EVENT_GET_END);
		assert_int_equal(ev.initiator.pid, mp_id(I).pid);
		assert_int_equal(ev.uid, real + 1);
		assert_int_equal(ev.jid, jid);
	}
	mp_barrier();
	if (mp_rank == T)
		MP_RC(PtlMEUnlink(gme), PTL_OK);
	MP_RC(PtlMDUnlink(md), PTL_OK);
	MP_RC(PtlMEUnlink(me), PTL_OK);
	for (ptl_ac_index_t a = 1; a <= 2; a++)
		MP_RC(PtlACEntry(mp_ni, a, mp_any, mine, jid, PTL_PT_INDEX_ANY), PTL_OK);
	mp_eq_free(eq);
	mp_eq_free(seq);
	mp_end();
}

/* The first ME (in list order) whose match id and bits admit the request
 * and whose MD accepts it takes it. */
static void test_match_walk(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 7;
	char bufs[5][32];
	char src[8];
	mp_fill(src, sizeof src, 3);
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me[5] = { 0 };
	ptl_handle_md_t md[5] = { 0 };
	long drop0 = mp_sr(PTL_SR_DROP_COUNT);
	if (mp_rank == T) {
		ptl_process_id_t i_id = mp_id(I);
		const struct {
			ptl_process_id_t id;
			ptl_match_bits_t bits, ignore;
			int thr;
			ptl_unlink_t unl;
		} mes[5] = {
			{ { PTL_NID_ANY, mp_id(T).pid }, 0x10, 0, PTL_MD_THRESH_INF, PTL_RETAIN },  /* A: another pid */
			{ { PTL_NID_ANY, PTL_PID_ANY }, 0x10, 0x0f, 1, PTL_UNLINK },                /* B: 0x1?, once */
			{ i_id, 0x10, 0, PTL_MD_THRESH_INF, PTL_RETAIN },                           /* C: exact */
			{ { i_id.nid + 1, PTL_PID_ANY }, 0, ~0ull, PTL_MD_THRESH_INF, PTL_RETAIN }, /* D: another nid */
			{ { PTL_NID_ANY, i_id.pid }, 0, ~0ull, PTL_MD_THRESH_INF, PTL_RETAIN },     /* E: catch-all */
		};
		for (int k = 0; k < 5; k++) {
			MP_RC(PtlMEAttach(mp_ni, pt, mes[k].id, mes[k].bits, mes[k].ignore, mes[k].unl,
					  PTL_INS_AFTER, &me[k]),
			      PTL_OK);
			MP_RC(PtlMDAttach(me[k], mp_md(bufs[k], sizeof bufs[k], mes[k].thr, PTL_MD_OP_PUT, eq),
					  mes[k].unl, &md[k]),
			      PTL_OK);
		}
		memset(bufs, 0, sizeof bufs);
	}
	mp_barrier();
	/* bits of each put, and which ME takes it */
	static const struct { ptl_match_bits_t bits; int me; ptl_size_t off; } seq[] = {
		{ 0x13, 1, 0 }, { 0x13, 4, 0 }, { 0x10, 2, 0 }, { 0x1f, 4, 8 }, { 0x20, 4, 16 },
	};
	if (mp_rank == I) {
		ptl_handle_md_t h = mp_bind(src, sizeof src, PTL_MD_THRESH_INF, 0, eq);
		for (int k = 0; k < 5; k++) {
			char what[48];
			snprintf(what, sizeof what, "put %d into the match list", k);
			mp_put_acked(h, eq, T, pt, 0, seq[k].bits, sizeof src, 0, (ptl_hdr_data_t)k,
				     sizeof src, seq[k].off, PTL_NI_OK, what);
		}
		MP_RC(PtlMDUnlink(h), PTL_OK);
	}
	mp_barrier();
	if (mp_rank == T) {
		int used[5] = { 0 };
		for (int k = 0; k < 5; k++) {
			int m = seq[k].me;
			int thr = m == 1 ? 0 : PTL_MD_THRESH_INF;
			char what[64];
			snprintf(what, sizeof what, "put %d (bits 0x%llx) into ME %c", k,
				 (unsigned long long)seq[k].bits, 'A' + m);
			MP_EXPECT(eq, what, .type = PTL_EVENT_PUT_START, .initiator = I, .match_bits = seq[k].bits,
				  .rlength = sizeof src, .mlength = sizeof src, .offset = (ptl_size_t)used[m] * 8,
				  .hdr_data = (ptl_hdr_data_t)k, .threshold = thr, .md = md[m]);
			MP_EXPECT(eq, what, .type = PTL_EVENT_PUT_END, .initiator = I, .match_bits = seq[k].bits,
				  .rlength = sizeof src, .mlength = sizeof src, .offset = (ptl_size_t)used[m] * 8,
				  .hdr_data = (ptl_hdr_data_t)k, .threshold = thr, .md = md[m]);
			if (m == 1)
				MP_EXPECT(eq, "B used up: its MD unlinks, and B (PTL_UNLINK) with it",
					  .type = PTL_EVENT_UNLINK, .initiator = T, .match_bits = 0x10, .link = 1,
					  .threshold = 0, .md = md[1]);
			MP_CHECK(bufs[m] + used[m] * 8, 8, 3, what);
			used[m]++;
		}
		MP_EMPTY(eq, 0, "nothing else");
		assert_int_equal(used[0] + used[3], 0);
		MP_RC(PtlMEUnlink(me[1]), PTL_ME_INVALID);
		MP_RC(PtlMDUnlink(md[1]), PTL_MD_INVALID);
		for (int k = 0; k < 5; k++)
			if (k != 1)
				MP_RC(PtlMEUnlink(me[k]), PTL_OK);
	}
	assert_int_equal(mp_sr(PTL_SR_DROP_COUNT) - drop0, 0);
	mp_eq_free(eq);
	mp_end();
}

/* List order from PtlMEAttach (INS_BEFORE: head, INS_AFTER: tail) and
 * PtlMEInsert around a base ME; RETAIN MEs outlive their MDs. */
static void test_insert(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 8;
	enum { X, Y, Z, W, V, N };
	char bufs[N][8];
	char src[8];
	mp_fill(src, sizeof src, 11);
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me[N];
	ptl_handle_md_t md[N];
	long drop0 = mp_sr(PTL_SR_DROP_COUNT);
	if (mp_rank == T) {
		MP_RC(PtlMEAttach(mp_ni, pt, mp_any, 5, 0, PTL_RETAIN, PTL_INS_AFTER, &me[X]), PTL_OK);
		MP_RC(PtlMEInsert(me[X], mp_any, 5, 0, PTL_RETAIN, PTL_INS_BEFORE, &me[Y]), PTL_OK);
		MP_RC(PtlMEInsert(me[X], mp_any, 5, 0, PTL_RETAIN, PTL_INS_AFTER, &me[Z]), PTL_OK);
		MP_RC(PtlMEAttach(mp_ni, pt, mp_any, 5, 0, PTL_RETAIN, PTL_INS_BEFORE, &me[W]), PTL_OK);
		MP_RC(PtlMEAttach(mp_ni, pt, mp_any, 5, 0, PTL_RETAIN, PTL_INS_AFTER, &me[V]), PTL_OK);
		/* Bad insertions. */
		ptl_handle_me_t dummy;
		MP_RC(PtlMEInsert(me[X] ^ (1ull << 32), mp_any, 5, 0, PTL_RETAIN, PTL_INS_AFTER, &dummy),
		      PTL_ME_INVALID);
		MP_RC(PtlMEAttach(mp_ni, 64, mp_any, 5, 0, PTL_RETAIN, PTL_INS_AFTER, &dummy),
		      PTL_PT_INDEX_INVALID);
		for (int k = 0; k < N; k++)
			MP_RC(PtlMDAttach(me[k], mp_md(bufs[k], 8, 1, PTL_MD_OP_PUT, eq), PTL_UNLINK, &md[k]),
			      PTL_OK);
		ptl_handle_md_t dmd;
		MP_RC(PtlMDAttach(me[X], mp_md(bufs[X], 8, 1, PTL_MD_OP_PUT, eq), PTL_UNLINK, &dmd),
		      PTL_ME_IN_USE);
	}
	mp_barrier();
	if (mp_rank == I) {
		ptl_handle_md_t h = mp_bind(src, sizeof src, PTL_MD_THRESH_INF, 0, eq);
		for (int k = 0; k < N; k++)
			mp_put_acked(h, eq, T, pt, 0, 5, sizeof src, 0, (ptl_hdr_data_t)k, sizeof src, 0,
				     PTL_NI_OK, "put into W Y X Z V");
		mp_put_acked(h, eq, T, pt, 0, 5, sizeof src, 0, 99, 0, 0, PTL_NI_DROPPED,
			     "put when every ME has lost its MD");
		MP_RC(PtlMDUnlink(h), PTL_OK);
	}
	mp_barrier();
	if (mp_rank == T) {
		static const int order[N] = { W, Y, X, Z, V };
		for (int k = 0; k < N; k++) {
			int m = order[k];
			char what[48];
			snprintf(what, sizeof what, "put %d into ME %c", k, "XYZWV"[m]);
			MP_EXPECT(eq, what, .type = PTL_EVENT_PUT_START, .initiator = I, .match_bits = 5,
				  .rlength = 8, .mlength = 8, .hdr_data = (ptl_hdr_data_t)k, .md = md[m]);
			MP_EXPECT(eq, what, .type = PTL_EVENT_PUT_END, .initiator = I, .match_bits = 5,
				  .rlength = 8, .mlength = 8, .hdr_data = (ptl_hdr_data_t)k, .md = md[m]);
			MP_EXPECT(eq, what, .type = PTL_EVENT_UNLINK, .initiator = T, .match_bits = 5,
				  .link = 1, .md = md[m]);
			MP_CHECK(bufs[m], 8, 11, what);
		}
		MP_EMPTY(eq, 0, "nothing for the dropped put");
		assert_int_equal(mp_sr(PTL_SR_DROP_COUNT) - drop0, 1);
		/* The RETAIN MEs survive their MDs. */
		for (int k = 0; k < N; k++)
			MP_RC(PtlMEUnlink(me[k]), PTL_OK);
	}
	mp_eq_free(eq);
	mp_end();
}

static void test_attach_any(void **state)
{
	(void)state;
	char buf[2][8], src[8];
	mp_fill(src, sizeof src, 5);
	ptl_handle_eq_t eq = mp_eq(16);
	ptl_pt_index_t pt[2] = { 99, 99 };
	ptl_handle_me_t me[2];
	ptl_handle_md_t md[2];
	if (mp_rank == T) {
		/* Every portal is empty now: AttachAny picks 0, then 1. */
		for (int k = 0; k < 2; k++) {
			MP_RC(PtlMEAttachAny(mp_ni, &pt[k], mp_any, 1, 0, PTL_RETAIN, &me[k]), PTL_OK);
			assert_int_equal(pt[k], (ptl_pt_index_t)k);
			MP_RC(PtlMDAttach(me[k], mp_md(buf[k], 8, PTL_MD_THRESH_INF, PTL_MD_OP_PUT, eq),
					  PTL_RETAIN, &md[k]),
			      PTL_OK);
		}
		MP_RC(PtlMEAttachAny(mp_ni, NULL, mp_any, 1, 0, PTL_RETAIN, &me[0]), PTL_SEGV);
		MP_RC(PtlMEAttachAny(mp_ni + 1, &pt[0], mp_any, 1, 0, PTL_RETAIN, &me[0]), PTL_NI_INVALID);
	}
	mp_barrier();
	if (mp_rank == I) {
		ptl_handle_md_t h = mp_bind(src, 8, PTL_MD_THRESH_INF, 0, eq);
		mp_put_acked(h, eq, T, 1, 0, 1, 8, 0, 0, 8, 0, PTL_NI_OK, "put to the portal AttachAny gave");
		MP_RC(PtlMDUnlink(h), PTL_OK);
	}
	mp_barrier();
	if (mp_rank == T) {
		MP_EXPECT(eq, "put on portal 1", .type = PTL_EVENT_PUT_START, .initiator = I, .match_bits = 1,
			  .rlength = 8, .mlength = 8, .threshold = PTL_MD_THRESH_INF, .md = md[1]);
		MP_EXPECT(eq, "put on portal 1", .type = PTL_EVENT_PUT_END, .initiator = I, .match_bits = 1,
			  .rlength = 8, .mlength = 8, .threshold = PTL_MD_THRESH_INF, .md = md[1]);
		MP_CHECK(buf[1], 8, 5, "data on portal 1");
		MP_RC(PtlMEUnlink(me[0]), PTL_OK);
		MP_RC(PtlMEUnlink(me[1]), PTL_OK);
	}
	mp_eq_free(eq);
	mp_end();
}

int main(void)
{
	/* uid.sh: a job of two users, rank 0 the other (set before PtlInit
	 * reads it; the launcher's rank variable, as libptl's runtime reads it) */
	const char *group = getenv("MP_MATCH_GROUP");
	if (group && !strcmp(group, "uid")) {
		const char *rank = getenv("PTL_RT_RANK");
		char uid[16];
		snprintf(uid, sizeof uid, "%u", (unsigned)getuid() + 1);
		if (rank && !strcmp(rank, "0"))
			setenv("PTL_TEST_UID", uid, 1);
		else
			unsetenv("PTL_TEST_UID");
		const struct CMUnitTest uid_tests[] = { MP_TEST(test_foreign_uid) };
		return mp_main("mp_match uid", uid_tests, 1);
	}
	const struct CMUnitTest tests[] = {
		MP_TEST(test_acl),
		MP_TEST(test_noack_fields),
		MP_TEST(test_match_walk),
		MP_TEST(test_insert),
		MP_TEST(test_attach_any),
	};
	return mp_main("mp_match", tests, sizeof tests / sizeof tests[0]);
}
