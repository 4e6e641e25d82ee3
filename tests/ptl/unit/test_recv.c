/*
 * tests/ptl/unit/test_recv.c - what arrives (lib/ptl/ptl_recv.c) as a NAL
 * hands it over: a PTL_MSG_PUT_SHORT shorter than its 40-byte header is
 * dropped and counted, delivers nothing, answers nothing and reads no
 * byte past its end; a well-formed one lands, and one longer than the
 * ME's MD is truncated with PTL_MD_TRUNCATE and dropped without; its
 * PUT_END reports every field from the short header; the same of a
 * PTL_MSG_PUT_TINY (24-byte header), whose uid and jid are the target's
 * own (the _tiny runs of those tests); a dropped request
 * with a full header is answered only when its initiator waits; access
 * control admits it only when every field of the entry does; answers
 * carry the target's own uid and jid, not the request's; a bulk
 * put's SEND_END, logged when its answer comes, carries our uid and jid
 * where its ACK carries the target's; a dead peer's operations are
 * answered in its stead with the uid and jid it published.
 *
 * ptl_recv.c, ptl_md.c, ptl_me.c and ptl_handle.c are compiled in; the
 * functions of other modules they call are stand-ins below (an NI built
 * by hand, events recorded as ptl_eq_notify sees them, status registers
 * counted, sends recorded: a PUT_SHORT never answers). Messages end at a page boundary
 * with a PROT_NONE page after it: a read past the end faults.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "ptl/ptl_internal.h"
#include "ptl/ptl_proto.h"
#include "ut_ni.h"

/* ------------------------------------------------------------ stand-ins */
struct ptl_lib ptl_lib = { 0 };

#define PT 5
#define BITS 0xfeedull
#define SENDER 1

static struct ptl_ni the_ni;
static struct ptl_pt the_pts[8];
static struct ptl_ac the_acs[4];
static struct ptl_peer the_peers[2];

#define MAX_POSTED 16
static ptl_event_t posted[MAX_POSTED];
static int nposted, nsent;
static struct ptl_hdr last_sent; /* the header of the last full-header send */
static long sr[PTL_SR_COUNT];

struct ptl_ni *ptl_ni_lookup(ptl_handle_ni_t h)
{
	return ptl_lib.ni && h == ptl_lib.ni->handle ? ptl_lib.ni : NULL;
}

void ptl_eq_post(struct ptl_eq *eq, ptl_event_t *ev)
{
	(void)eq;
	assert_true(nposted < MAX_POSTED);
	posted[nposted++] = *ev;
}

void ptl_eq_notify(struct ptl_eq *eq, ptl_event_t *slot)
{
	(void)eq;
	assert_true(nposted < MAX_POSTED);
	posted[nposted++] = *slot;
}

static void never_called(ptl_event_t *ev)
{
	(void)ev;
	fail_msg("the EQ handler ran outside ptl_eq_notify");
}

void ptl_sr_inc(int reg)
{
	assert_true(reg >= 0 && (size_t)reg < sizeof sr / sizeof sr[0]);
	sr[reg]++;
}

int ptl_peer_id_fetch(int rank, ptl_process_id_t *id)
{
	(void)rank;
	(void)id;
	fail_msg("every peer's id is known here");
	return PTL_FAIL;
}

int ptl_route(int peer)
{
	(void)peer;
	return -1;
}

int ptl_send_slow(int peer, const void *hdr, size_t hdr_len, const void *payload, size_t len)
{
	(void)peer;
	(void)payload;
	(void)len;
	if (hdr_len == sizeof last_sent)
		memcpy(&last_sent, hdr, sizeof last_sent);
	nsent++;
	return 0;
}

int ptl_send_later(struct ptl_peer *p, int peer, const void *hdr, size_t hdr_len, const void *payload,
		   size_t len)
{
	(void)p;
	return ptl_send_slow(peer, hdr, hdr_len, payload, len);
}

void ptl_op_finish(struct ptl_ni *ni, struct ptl_op *op)
{
	ptl_list_del(&op->link);
	ptl_htab_free(&ni->ops, op);
}

/* ------------------------------------------------------------ fixture */
static struct ptl_view_eq *ring;
static ptl_handle_eq_t eqh;
static unsigned char *pages; /* two: the second PROT_NONE */
static size_t page;

/* The _tiny runs send PUT_TINY where the others send PUT_SHORT. */
static bool tiny;
#define HLEN (tiny ? sizeof(struct ptl_hdr_tiny) : sizeof(struct ptl_hdr_short))
/* The initiator's uid and jid, as the target sees them: a PUT_SHORT's
 * from its header (3, 4), a PUT_TINY's the target's own (setup). */
#define SENDER_UID ((ptl_uid_t)(tiny ? 13 : 3))
#define SENDER_JID ((ptl_jid_t)(tiny ? 14 : 4))

static int setup(void **state)
{
	(void)state;
	struct ptl_ni *ni = &the_ni;
	if (ut_ni_init(ni, the_pts, 8, 4, 2, 1, 4) || ptl_htab_init(&ni->ops, 0xfe, 0, 4, sizeof(struct ptl_op)) ||
	    !ut_eq_new(ni, &eqh, &ring, never_called))
		return -1;
	ni->limits.max_ac_index = 3;
	ni->id = (ptl_process_id_t){ 77, 0 };
	memset(the_acs, 0, sizeof the_acs);
	ptl_ac_set(&the_acs[0], (ptl_process_id_t){ PTL_NID_ANY, PTL_PID_ANY }, PTL_UID_ANY, PTL_JID_ANY,
		   PTL_PT_INDEX_ANY);
	ni->acs = the_acs;
	ptl_lib.uid = 13;
	ptl_lib.jid = 14;
	memset(the_peers, 0, sizeof the_peers);
	for (int i = 0; i < 2; i++) {
		the_peers[i].nal = -1;
		the_peers[i].id_known = true;
		the_peers[i].cred_same = true; /* published our uid and jid */
		the_peers[i].uid = ptl_lib.uid;
		the_peers[i].jid = ptl_lib.jid;
		the_peers[i].nid = 77;
		ptl_list_init(&the_peers[i].ops);
	}
	ptl_lib.peers = the_peers;
	ptl_lib.rt.size = 2;
	ptl_lib.rt.rank = 0;
	tiny = false;
	nposted = nsent = 0;
	memset(sr, 0, sizeof sr);
	page = (size_t)sysconf(_SC_PAGESIZE);
	pages = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED || mprotect(pages + page, page, PROT_NONE))
		return -1;
	return 0;
}

static int setup_tiny(void **state)
{
	int rc = setup(state);
	tiny = true;
	return rc;
}

static int teardown(void **state)
{
	(void)state;
	ptl_htab_fini(&the_ni.ops);
	ut_ni_fini(&the_ni);
	free(ring);
	ring = NULL;
	munmap(pages, 2 * page);
	ptl_lib.peers = NULL;
	return 0;
}

/* An ME on PT matching BITS from anyone, with an MD of len bytes of buf
 * that takes puts (and opts), logging to the EQ. */
static void post(char *buf, ptl_size_t len, unsigned opts)
{
	ptl_handle_md_t mdh;
	ptl_handle_me_t meh;
	struct ptl_md *md = ptl_htab_alloc(&the_ni.mds, &mdh);
	struct ptl_me *me = ptl_htab_alloc(&the_ni.mes, &meh);
	assert_non_null(md);
	assert_non_null(me);
	md->handle = mdh;
	ptl_md_t u = { .start = buf, .length = len, .threshold = PTL_MD_THRESH_INF,
		       .options = PTL_MD_OP_PUT | opts, .eq_handle = eqh };
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	md->unlink_op = PTL_RETAIN;
	me->handle = meh;
	me->pt_index = PT;
	me->unlink_op = PTL_RETAIN;
	ptl_me_set_match(me, (ptl_process_id_t){ PTL_NID_ANY, PTL_PID_ANY }, BITS, 0);
	ptl_list_init(&me->link);
	ptl_list_add_before(&me->link, &the_pts[PT].list);
	the_pts[PT].length++;
	me->md = md;
	md->me = me;
}

/* A PUT_SHORT (PUT_TINY if tiny) to PT, BITS with plen bytes of data
 * (each 0xa0 + i), its first len bytes handed to ptl_recv from SENDER,
 * ending where the readable page ends. */
static void arrive_ac(uint8_t ac, size_t plen, size_t len)
{
	unsigned char m[256];
	struct ptl_hdr_short s = { .type = PTL_MSG_PUT_SHORT, .ac_index = ac, .pt_index = PT, .uid = 3,
				   .jid = 4, .match_bits = BITS, .hdr_data = 9 };
	struct ptl_hdr_tiny t = { .type = PTL_MSG_PUT_TINY, .ac_index = ac, .pt_index = PT,
				  .match_bits = BITS, .hdr_data = 9 };
	assert_true(HLEN + plen <= sizeof m && len <= HLEN + plen);
	if (tiny)
		memcpy(m, &t, sizeof t);
	else
		memcpy(m, &s, sizeof s);
	for (size_t i = 0; i < plen; i++)
		m[HLEN + i] = (unsigned char)(0xa0 + i);
	unsigned char *at = pages + page - len;
	memcpy(at, m, len);
	ptl_recv(NULL, SENDER, at, len);
}

/* The same through access control entry 0 (any initiator, user, job and
 * portal). */
static void arrive(size_t plen, size_t len)
{
	arrive_ac(0, plen, len);
}

/* ------------------------------------------------------------ tests */

/* Every length from 1 to 39 of a PUT_SHORT (23 of a PUT_TINY), a
 * message that cannot hold its header: dropped, counted, nothing deposited, no event, no answer,
 * no read past the message (the guard page). A whole one then lands: the
 * ME would have taken every one of them. */
static void test_short_put_truncated_header(void **state)
{
	(void)state;
	char buf[16];
	memset(buf, '.', sizeof buf);
	post(buf, sizeof buf, 0);
	for (size_t len = 1; len < HLEN; len++) {
		arrive(8, len);
		assert_int_equal(sr[PTL_SR_DROP_COUNT], (long)len);
		assert_int_equal(nposted, 0);
		assert_int_equal(nsent, 0);
	}
	for (size_t i = 0; i < sizeof buf; i++)
		assert_int_equal(buf[i], '.');

	arrive(8, HLEN + 8);
	assert_int_equal(sr[PTL_SR_DROP_COUNT], (long)HLEN - 1);
	assert_int_equal(nposted, 2);
	assert_int_equal(posted[0].type, PTL_EVENT_PUT_START);
	assert_int_equal(posted[1].type, PTL_EVENT_PUT_END);
	assert_int_equal(posted[1].initiator.pid, SENDER);
	assert_int_equal(posted[1].rlength, 8);
	assert_int_equal(posted[1].mlength, 8);
	assert_int_equal(posted[1].match_bits, BITS);
	assert_int_equal(posted[1].hdr_data, 9);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal((unsigned char)buf[i], 0xa0 + i);
	assert_int_equal(buf[8], '.');
	assert_int_equal(nsent, 0);
}

/* A header alone is a put of 0 bytes: it lands, with its events. */
static void test_short_put_empty(void **state)
{
	(void)state;
	char buf[4] = "....";
	post(buf, sizeof buf, 0);
	arrive(0, HLEN);
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 0);
	assert_int_equal(nposted, 2);
	assert_int_equal(posted[1].type, PTL_EVENT_PUT_END);
	assert_int_equal(posted[1].rlength, 0);
	assert_int_equal(posted[1].mlength, 0);
	assert_memory_equal(buf, "....", 4);
}

/* 12 bytes for an MD of 4 (of an 8-byte buffer): with PTL_MD_TRUNCATE
 * the first 4 land (mlength 4, rlength 12) and nothing past them. */
static void test_short_put_truncate(void **state)
{
	(void)state;
	char buf[8];
	memset(buf, '.', sizeof buf);
	post(buf, 4, PTL_MD_TRUNCATE);
	arrive(12, HLEN + 12);
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 0);
	assert_int_equal(nposted, 2);
	assert_int_equal(posted[1].type, PTL_EVENT_PUT_END);
	assert_int_equal(posted[1].rlength, 12);
	assert_int_equal(posted[1].mlength, 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal((unsigned char)buf[i], 0xa0 + i);
	for (size_t i = 4; i < sizeof buf; i++)
		assert_int_equal(buf[i], '.');
	assert_int_equal(nsent, 0);
}

/* The same without PTL_MD_TRUNCATE: the MD does not accept it, nothing
 * else matches: dropped and counted, no event, no answer (a PUT_SHORT's
 * initiator waits for none), the buffer untouched. */
static void test_short_put_too_long(void **state)
{
	(void)state;
	char buf[8];
	memset(buf, '.', sizeof buf);
	post(buf, 4, 0);
	arrive(12, HLEN + 12);
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 1);
	assert_int_equal(nposted, 0);
	assert_int_equal(nsent, 0);
	for (size_t i = 0; i < sizeof buf; i++)
		assert_int_equal(buf[i], '.');
}

/* What PUT_END reports of a PUT_SHORT, every field, out of the 40-byte
 * header (ptl_recv_put_inline hands ptl_target its fields, no rebuilt
 * struct ptl_hdr): the initiator from the NAL's rank, uid, jid, portal,
 * bits and header data from the header (a PUT_TINY's uid and jid: ours), lengths and offset from the MD,
 * the MD as the put left it. A second put lands after the first. */
static void test_short_put_event_fields(void **state)
{
	(void)state;
	char buf[16];
	memset(buf, '.', sizeof buf);
	post(buf, sizeof buf, 0);
	struct ptl_md *md = the_ni.mds.objs ? ptl_htab_at(&the_ni.mds, 0) : NULL;
	assert_non_null(md);
	md->md.user_ptr = &the_ni;
	md->md.threshold = 5;
	arrive(8, HLEN + 8);
	arrive(8, HLEN + 8);
	assert_int_equal(nposted, 4);
	for (int k = 0; k < 2; k++) {
		const ptl_event_t *e = &posted[2 * k + 1];
		assert_int_equal(e->type, PTL_EVENT_PUT_END);
		assert_int_equal(e->initiator.nid, 77);
		assert_int_equal(e->initiator.pid, SENDER);
		assert_int_equal(e->uid, SENDER_UID);
		assert_int_equal(e->jid, SENDER_JID);
		assert_int_equal(e->pt_index, PT);
		assert_int_equal(e->match_bits, BITS);
		assert_int_equal(e->rlength, 8);
		assert_int_equal(e->mlength, 8);
		assert_int_equal(e->offset, 8 * k);
		assert_int_equal(e->md_handle, md->handle);
		assert_ptr_equal(e->md.start, buf);
		assert_int_equal(e->md.length, sizeof buf);
		assert_int_equal(e->md.threshold, 4 - k);
		assert_ptr_equal(e->md.user_ptr, &the_ni);
		assert_int_equal(e->md.eq_handle, eqh);
		assert_int_equal(e->hdr_data, 9);
		assert_int_equal(e->link, 0);
		assert_int_equal(e->ni_fail_type, PTL_NI_OK);
	}
	for (size_t i = 0; i < 16; i++)
		assert_int_equal((unsigned char)buf[i], 0xa0 + i % 8);
}

/* A full-header request of type t (flags fl) to PT, BITS from SENDER
 * with plen bytes of data. */
static void arrive_full(uint8_t t, uint8_t fl, ptl_pt_index_t pt, size_t plen)
{
	unsigned char m[sizeof(struct ptl_hdr) + 16];
	struct ptl_hdr h = { .type = t, .flags = fl, .pt_index = pt, .uid = 3, .jid = 4,
			     .match_bits = BITS, .rlength = plen, .cookie = 42 };
	assert_true(plen <= 16);
	memcpy(m, &h, sizeof h);
	memset(m + sizeof h, 0xa5, plen);
	ptl_recv(NULL, SENDER, m, sizeof h + plen);
}

/* A dropped request answers its initiator only if that one waits for an
 * answer (PTL_HF_ANSWER): the test is inline in ptl_target, the answer
 * out of line. Dropped for no match, for a portal past the last, for a
 * malformed length: each counted, each answered when asked. */
static void test_drop_answers_only_when_asked(void **state)
{
	(void)state;
	char buf[8];
	post(buf, sizeof buf, 0);
	arrive_full(PTL_MSG_PUT, 0, PT + 1, 4);       /* no ME there */
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 1);
	assert_int_equal(nsent, 0);
	arrive_full(PTL_MSG_PUT, PTL_HF_ANSWER, PT + 1, 4);
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 2);
	assert_int_equal(nsent, 1);
	arrive_full(PTL_MSG_PUT, PTL_HF_ANSWER, 100, 4); /* past max_pt_index */
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 3);
	assert_int_equal(nsent, 2);
	arrive_full(PTL_MSG_GET, PTL_HF_ANSWER, PT, 4); /* a get carries no data */
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 4);
	assert_int_equal(nsent, 3);
	arrive_full(PTL_MSG_PUT, 0, 100, 4);
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 5);
	assert_int_equal(nsent, 3);
	assert_int_equal(nposted, 0);
	/* And one that matches lands, answered as asked (an ACK). */
	arrive_full(PTL_MSG_PUT, PTL_HF_ANSWER | PTL_HF_ACK_REQ, PT, 4);
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 5);
	assert_int_equal(nsent, 4);
	assert_int_equal(nposted, 2);
	assert_int_equal(posted[1].type, PTL_EVENT_PUT_END);
	assert_int_equal(posted[1].mlength, 4);
}

/* Access control (ptl_ac_set, ptl_ac_admits): a PUT_SHORT from SENDER
 * (nid 77), uid 3, jid 4 (a PUT_TINY: 13, 14, ours), to PT through entry 1 lands when the entry
 * admits each of those, by value or wildcard, and is refused and counted
 * when any one field differs, when the entry is not in use, and when
 * there is no such entry. */
static void test_short_put_access_control(void **state)
{
	(void)state;
	char buf[16];
	post(buf, sizeof buf, PTL_MD_MANAGE_REMOTE);
	const ptl_process_id_t me = { 77, SENDER }, any = { PTL_NID_ANY, PTL_PID_ANY };
	const ptl_uid_t U = SENDER_UID;
	const ptl_jid_t J = SENDER_JID;
	struct {
		ptl_process_id_t id;
		ptl_uid_t uid;
		ptl_jid_t jid;
		ptl_pt_index_t pt;
		bool admits;
	} cases[] = {
		{ me, U, J, PT, true },
		{ any, PTL_UID_ANY, PTL_JID_ANY, PTL_PT_INDEX_ANY, true },
		{ { 77, PTL_PID_ANY }, PTL_UID_ANY, J, PTL_PT_INDEX_ANY, true },
		{ { PTL_NID_ANY, SENDER }, U, PTL_JID_ANY, PT, true },
		{ { 78, SENDER }, U, J, PT, false },
		{ { 77, 0 }, U, J, PT, false },
		{ { PTL_NID_ANY, 0 }, PTL_UID_ANY, PTL_JID_ANY, PTL_PT_INDEX_ANY, false },
		{ me, U + 2, J, PT, false },
		{ any, PTL_UID_ANY, J + 1, PTL_PT_INDEX_ANY, false },
		{ any, J, U, PTL_PT_INDEX_ANY, false }, /* uid and jid swapped */
		{ any, PTL_UID_ANY, PTL_JID_ANY, PT + 1, false },
	};
	long denied = 0;
	int landed = 0;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		ptl_ac_set(&the_acs[1], cases[k].id, cases[k].uid, cases[k].jid, cases[k].pt);
		arrive_ac(1, 8, HLEN + 8);
		if (cases[k].admits)
			landed++;
		else
			denied++;
		assert_int_equal(sr[PTL_SR_PERMISSIONS_VIOLATIONS], denied);
		assert_int_equal(nposted, 2 * landed);
	}
	the_acs[1].in_use = false; /* as ptl_ni's calloc leaves the others */
	arrive_ac(1, 8, HLEN + 8);
	arrive_ac(2, 8, HLEN + 8);
	arrive_ac(4, 8, HLEN + 8); /* past max_ac_index */
	assert_int_equal(sr[PTL_SR_PERMISSIONS_VIOLATIONS], denied + 3);
	assert_int_equal(nposted, 2 * landed);
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 0);
}

/* A PUT_TINY from a peer that published another uid or jid claims ours
 * against what it said: dropped and counted, nothing lands, no event; a
 * PUT_SHORT from it (its own uid and jid in the header) lands. */
static void test_tiny_from_other_user(void **state)
{
	(void)state;
	char buf[16];
	memset(buf, '.', sizeof buf);
	post(buf, sizeof buf, PTL_MD_MANAGE_REMOTE);
	the_peers[SENDER].cred_same = false;
	arrive(8, HLEN + 8);
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 1);
	assert_int_equal(nposted, 0);
	for (size_t i = 0; i < sizeof buf; i++)
		assert_int_equal(buf[i], '.');
	tiny = false;
	arrive(8, HLEN + 8);
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 1);
	assert_int_equal(nposted, 2);
	assert_int_equal(posted[1].uid, 3);
}

/* Every payload length from 0 to 160 lands whole and alone
 * (nal_copy: three single bytes, then pairs of 4-, 8-, 16-, 32- and
 * 64-byte moves that may overlap, nal_copy_big past 128): each byte in place,
 * nothing after it touched. */
static void test_short_put_lengths(void **state)
{
	(void)state;
	char buf[176];
	post(buf, sizeof buf, PTL_MD_MANAGE_REMOTE); /* every put at offset 0 */
	for (size_t n = 0; n <= 160; n++) {
		memset(buf, '.', sizeof buf);
		nposted = 0;
		arrive(n, HLEN + n);
		assert_int_equal(nposted, 2);
		assert_int_equal(posted[1].mlength, n);
		for (size_t i = 0; i < n; i++)
			assert_int_equal((unsigned char)buf[i], (unsigned char)(0xa0 + i));
		for (size_t i = n; i < sizeof buf; i++)
			assert_int_equal(buf[i], '.');
	}
	assert_int_equal(sr[PTL_SR_DROP_COUNT], 0);
}

/* Which inline puts an initiator sends with the tiny header (when uid,
 * jid and the fields fit): the sizes whose shm record it keeps a line
 * shorter, up to 32 bytes (one line) and from 81 to 96 (two), not the 33
 * to 80 that take two lines behind either header, nor more. */
static void test_tiny_lengths(void **state)
{
	(void)state;
	static const size_t yes[] = { 0, 1, 32, 81, 88, 96 }, no[] = { 33, 64, 80, 97, 128, 1024 };
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		if (!ptl_tiny_len(yes[i]))
			fail_msg("%zu bytes: not the tiny header", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof *no; i++)
		if (ptl_tiny_len(no[i]))
			fail_msg("%zu bytes: the tiny header", no[i]);
}

/* ------------------------------------------------------------ answers */

/* What we answer carries our uid and jid (13, 14), not the request's
 * (3, 4): an answer swaps initiator and target, and its event names us.
 * An ACK'd put's ACK, a get's REPLY, a get-put's REPLY, and the REPLY to
 * a get dropped for want of a match. */
static void test_answers_carry_our_uid(void **state)
{
	(void)state;
	char buf[16];
	the_ni.limits.max_getput_md = sizeof buf;
	post(buf, sizeof buf, PTL_MD_OP_GET);
	static const struct {
		uint8_t type, flags, answer;
		ptl_pt_index_t pt;
		size_t plen;
	} req[] = {
		{ PTL_MSG_PUT, PTL_HF_ANSWER | PTL_HF_ACK_REQ, PTL_MSG_ACK, PT, 4 },
		{ PTL_MSG_GET, PTL_HF_ANSWER, PTL_MSG_REPLY, PT, 0 },
		{ PTL_MSG_GETPUT, PTL_HF_ANSWER, PTL_MSG_REPLY, PT, 4 },
		{ PTL_MSG_GET, PTL_HF_ANSWER, PTL_MSG_REPLY, PT + 1, 0 },
	};
	for (int k = 0; k < (int)(sizeof req / sizeof req[0]); k++) {
		arrive_full(req[k].type, req[k].flags, req[k].pt, req[k].plen);
		assert_int_equal(nsent, k + 1);
		assert_int_equal(last_sent.type, req[k].answer);
		assert_int_equal(last_sent.ni_fail, req[k].pt == PT ? PTL_NI_OK : PTL_NI_DROPPED);
		assert_int_equal(last_sent.uid, ptl_uid());
		assert_int_equal(last_sent.jid, ptl_jid());
	}
}

/* The target's uid and jid, as it puts them in its answers (another user
 * than ours, 13 and 14, and than its requests' 3 and 4). */
#define TARGET_UID ((ptl_uid_t)23)
#define TARGET_JID ((ptl_jid_t)24)

/* An MD of len bytes of buf bound for our own operations, logging every
 * kind to the EQ. */
static struct ptl_md *bind(char *buf, ptl_size_t len)
{
	ptl_handle_md_t mdh;
	struct ptl_md *md = ptl_htab_alloc(&the_ni.mds, &mdh);
	assert_non_null(md);
	md->handle = mdh;
	ptl_md_t u = { .start = buf, .length = len, .threshold = PTL_MD_THRESH_INF, .eq_handle = eqh };
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	md->unlink_op = PTL_RETAIN;
	return md;
}

/* An operation of ours to SENDER of len bytes from md, waiting for its
 * answer, as ptl_move.c leaves it: on the peer's list, the MD held. */
static struct ptl_op *in_flight(enum ptl_op_kind kind, struct ptl_md *md, ptl_size_t len, bool ack, bool bulk)
{
	uint64_t cookie;
	struct ptl_op *op = ptl_htab_alloc(&the_ni.ops, &cookie);
	assert_non_null(op);
	op->cookie = cookie;
	op->kind = kind;
	op->peer = SENDER;
	op->md_handle = md->handle;
	op->length = len;
	op->match_bits = BITS;
	op->pt_index = PT;
	op->ack_req = ack;
	op->bulk = bulk;
	ptl_list_add_before(&op->link, &the_peers[SENDER].ops);
	md->pending++;
	return op;
}

/* Checks that e is of type, failed as fail says, and names us (ours: SEND
 * events) or the target SENDER (answers) with that side's uid and jid. */
static void check_side(const ptl_event_t *e, ptl_event_kind_t type, bool ours, ptl_ni_fail_t fail)
{
	assert_int_equal(e->type, type);
	assert_int_equal(e->initiator.nid, 77);
	assert_int_equal(e->initiator.pid, ours ? 0 : SENDER);
	assert_int_equal(e->uid, ours ? ptl_uid() : TARGET_UID);
	assert_int_equal(e->jid, ours ? ptl_jid() : TARGET_JID);
	assert_int_equal(e->ni_fail_type, fail);
}

/* A bulk put's answer logs its SEND_END (the buffer is free only once the
 * target has read it) as well as its ACK: SEND_END is our own event, its
 * initiator and uid and jid ours, while the ACK's are the target's (the
 * answer swaps initiator and target). With an ACK and without one. */
static void test_bulk_put_send_end_is_ours(void **state)
{
	(void)state;
	char buf[64];
	struct ptl_md *md = bind(buf, sizeof buf);
	for (int ack = 1; ack >= 0; ack--) {
		nposted = 0;
		struct ptl_op *op = in_flight(PTL_OP_PUT, md, sizeof buf, ack, true);
		struct ptl_hdr a = { .type = PTL_MSG_ACK, .uid = TARGET_UID, .jid = TARGET_JID,
				     .mlength = sizeof buf, .cookie = op->cookie };
		ptl_recv(NULL, SENDER, &a, sizeof a);
		assert_int_equal(nposted, 1 + ack);
		check_side(&posted[0], PTL_EVENT_SEND_END, true, PTL_NI_OK);
		assert_int_equal(posted[0].mlength, sizeof buf);
		if (ack)
			check_side(&posted[1], PTL_EVENT_ACK, false, PTL_NI_OK);
		assert_int_equal(md->pending, 0);
		assert_true(ptl_list_empty(&the_peers[SENDER].ops));
	}
	assert_int_equal(sr[PTL_SR_ACK_DROP_COUNT], 0);
}

/* SENDER dies with four of our operations in flight to it: an ACK'd put,
 * a get, a get-put and an ACK'd bulk put. ptl_peer_fail answers each in
 * its stead, with PTL_NI_FAIL and nothing received: the ACKs and REPLYs
 * name SENDER with the uid and jid it published (what its own answers
 * would have carried), the bulk put's SEND_END us with ours. */
static void test_dead_peer_answers(void **state)
{
	(void)state;
	char buf[64];
	struct ptl_md *md = bind(buf, sizeof buf);
	the_peers[SENDER].uid = TARGET_UID;
	the_peers[SENDER].jid = TARGET_JID;
	the_peers[SENDER].cred_same = false;
	in_flight(PTL_OP_PUT, md, 8, true, false);
	in_flight(PTL_OP_GET, md, 8, false, false);
	in_flight(PTL_OP_GETPUT, md, 8, false, false);
	in_flight(PTL_OP_PUT, md, sizeof buf, true, true);
	ptl_peer_fail(SENDER, NAL_EPEER);
	static const struct {
		ptl_event_kind_t type;
		bool ours;
	} want[] = {
		{ PTL_EVENT_ACK, false },         { PTL_EVENT_REPLY_START, false }, { PTL_EVENT_REPLY_END, false },
		{ PTL_EVENT_REPLY_START, false }, { PTL_EVENT_REPLY_END, false },   { PTL_EVENT_SEND_END, true },
		{ PTL_EVENT_ACK, false },
	};
	assert_int_equal(nposted, sizeof want / sizeof want[0]);
	for (int k = 0; k < nposted; k++) {
		check_side(&posted[k], want[k].type, want[k].ours, PTL_NI_FAIL);
		assert_int_equal(posted[k].mlength, want[k].ours ? sizeof buf : 0);
	}
	assert_int_equal(md->pending, 0);
	assert_true(ptl_list_empty(&the_peers[SENDER].ops));
	assert_true(the_peers[SENDER].failed);
	assert_int_equal(sr[PTL_SR_PEER_FAILURES], 1);
}

/* A test's run with PUT_TINY, named apart from its PUT_SHORT run. */
#define TINY(f) { #f "_tiny", f, setup_tiny, teardown, NULL }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_short_put_truncated_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_put_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_put_truncate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_put_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_put_event_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drop_answers_only_when_asked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_put_access_control, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_put_lengths, setup, teardown),
		cmocka_unit_test(test_tiny_lengths),
		cmocka_unit_test_setup_teardown(test_answers_carry_our_uid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bulk_put_send_end_is_ours, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_peer_answers, setup, teardown),
		TINY(test_short_put_truncated_header),
		TINY(test_short_put_empty),
		TINY(test_short_put_truncate),
		TINY(test_short_put_too_long),
		TINY(test_short_put_event_fields),
		TINY(test_short_put_access_control),
		TINY(test_short_put_lengths),
		TINY(test_tiny_from_other_user),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
