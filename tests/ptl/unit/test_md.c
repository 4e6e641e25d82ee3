/*
 * tests/ptl/unit/test_md.c - memory descriptors (lib/ptl/ptl_md.c) on their
 * own: ptl_md_set's validation, the byte walks over plain and IOVEC MDs
 * (ptl_md_copy_in/out, ptl_md_iovecs) with pieces crossing iovec
 * boundaries, event filtering, the threshold/max_size unlink logic and
 * PtlMDUpdate's conditional update.
 *
 * ptl_md.c and ptl_handle.c are compiled in; the few functions of other
 * modules ptl_md.c calls are stand-ins below (an NI built by hand, EQ
 * posting recorded in an array, ME destruction recorded).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ptl/ptl_internal.h"
#include "ut_ni.h"

/* ------------------------------------------------------------ stand-ins */
struct ptl_lib ptl_lib = { 0 };

static struct ptl_ni the_ni;
static struct ptl_pt the_pts[8]; /* attach() puts its entries on 5 */

#define MAX_POSTED 32
static ptl_event_t posted[MAX_POSTED];
static struct ptl_eq *posted_eq[MAX_POSTED];
static int nposted;
static struct ptl_me *destroyed_me;

struct ptl_ni *ptl_ni_lookup(ptl_handle_ni_t h)
{
	return ptl_lib.ni && h == ptl_lib.ni->handle ? ptl_lib.ni : NULL;
}

void ptl_eq_post(struct ptl_eq *eq, ptl_event_t *ev)
{
	assert_true(nposted < MAX_POSTED);
	ev->sequence = eq->ring->write_seq++;
	posted_eq[nposted] = eq;
	posted[nposted++] = *ev;
}

/* An event filled in its slot (ptl_eq_slot) and committed: recorded as
 * ptl_eq_post's. The EQs here have a handler, so every commit calls. */
void ptl_eq_notify(struct ptl_eq *eq, ptl_event_t *slot)
{
	assert_true(nposted < MAX_POSTED);
	posted_eq[nposted] = eq;
	posted[nposted++] = *slot;
}

static void never_called(ptl_event_t *ev)
{
	(void)ev;
	fail_msg("the EQ handler ran outside ptl_eq_notify");
}

/* As ptl_me.c's: takes the MD with it (no portal table here). */
void ptl_me_destroy(struct ptl_ni *ni, struct ptl_me *me)
{
	if (me->md) {
		struct ptl_md *md = me->md;
		me->md = NULL;
		md->me = NULL;
		ptl_md_destroy(ni, md);
	}
	destroyed_me = me;
	ptl_htab_free(&ni->mes, me);
}

/* ------------------------------------------------------------ fixture */
#define MAX_IOV 4
#define MAX_MDS 4

static struct ptl_view_eq *rings[2];
static ptl_handle_eq_t eqh[2];

static int setup(void **state)
{
	(void)state;
	if (ut_ni_init(&the_ni, the_pts, 8, MAX_MDS, MAX_IOV, 2, 2))
		return -1;
	for (int i = 0; i < 2; i++)
		if (!ut_eq_new(&the_ni, &eqh[i], &rings[i], never_called))
			return -1;
	nposted = 0;
	destroyed_me = NULL;
	ptl_lib.uid = 0; /* a test may set them */
	ptl_lib.jid = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ut_ni_fini(&the_ni);
	for (int i = 0; i < 2; i++) {
		free(rings[i]);
		rings[i] = NULL;
	}
	return 0;
}

/* Frees the EQ of handle h as ptl_eq_destroy does: its handle cleared
 * (what an MD's pointer to it is checked against), its slot freed. */
static void free_eq(ptl_handle_eq_t h)
{
	struct ptl_eq *eq = ptl_eq_lookup(&the_ni, h);
	assert_non_null(eq);
	eq->handle = 0;
	ptl_htab_free(&the_ni.eqs, eq);
}

static struct ptl_md *new_md(ptl_handle_md_t *h)
{
	struct ptl_md *md = ptl_htab_alloc(&the_ni.mds, h);
	assert_non_null(md);
	md->handle = *h;
	return md;
}

static ptl_md_t umd_plain(void *start, ptl_size_t len, unsigned opts)
{
	ptl_md_t u = { .start = start, .length = len, .threshold = PTL_MD_THRESH_INF,
		       .options = opts, .eq_handle = PTL_EQ_NONE };
	return u;
}

/* ------------------------------------------------------------ ptl_md_set */

static void test_set_validation(void **state)
{
	(void)state;
	ptl_handle_md_t h;
	struct ptl_md *md = new_md(&h);
	char buf[16];
	ptl_md_iovec_t iov[MAX_IOV + 1];
	for (int i = 0; i <= MAX_IOV; i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = 2;
	}

	ptl_md_t u = umd_plain(buf, sizeof buf, PTL_MD_OP_PUT);
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	assert_int_equal(md->total, 16);
	assert_null(md->iov);

	u.options = PTL_MD_OP_PUT | (1u << 20);
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_MD_ILLEGAL);
	u.options = 0x80000000u;
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_MD_ILLEGAL);
	u.options = PTL_MD_OP_PUT;
	u.threshold = -2;
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_MD_ILLEGAL);
	u.threshold = 0; /* legal: an MD that accepts nothing yet */
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	u.threshold = 1;

	/* NULL start: fine for zero bytes, PTL_SEGV otherwise. */
	u = umd_plain(NULL, 1, PTL_MD_OP_PUT);
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_SEGV);
	u = umd_plain(NULL, 0, PTL_MD_OP_PUT);
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	assert_int_equal(md->total, 0);

	/* IOVEC: too many iovecs, NULL array, NULL base with bytes. */
	u = umd_plain(iov, MAX_IOV + 1, PTL_MD_OP_PUT | PTL_MD_IOVEC);
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_MD_ILLEGAL);
	u.length = MAX_IOV;
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	assert_int_equal(md->total, 2 * MAX_IOV);
	assert_int_equal(md->niov, MAX_IOV);
	u = umd_plain(NULL, 2, PTL_MD_OP_PUT | PTL_MD_IOVEC);
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_SEGV);
	u = umd_plain(NULL, 0, PTL_MD_OP_PUT | PTL_MD_IOVEC);
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	assert_int_equal(md->total, 0);
	iov[1].iov_base = NULL;
	u = umd_plain(iov, 3, PTL_MD_OP_PUT | PTL_MD_IOVEC);
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_SEGV);
	iov[1].iov_len = 0; /* NULL with no bytes is fine */
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	assert_int_equal(md->total, 4);

	/* EQ handles: none, live, forged, freed. */
	u = umd_plain(buf, 4, PTL_MD_OP_PUT);
	u.eq_handle = eqh[1];
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	u.eq_handle = eqh[1] + 1;
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_EQ_INVALID);
	u.eq_handle = h; /* an MD handle is not an EQ handle */
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_EQ_INVALID);
	ptl_htab_free(&the_ni.eqs, ptl_eq_lookup(&the_ni, eqh[1]));
	u.eq_handle = eqh[1];
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_EQ_INVALID);
}

static void test_set_copies_iovecs_and_resets_offset(void **state)
{
	(void)state;
	ptl_handle_md_t h;
	struct ptl_md *md = new_md(&h);
	char a[4], b[8];
	ptl_md_iovec_t iov[2] = { { a, sizeof a }, { b, sizeof b } };
	ptl_md_t u = umd_plain(iov, 2, PTL_MD_OP_PUT | PTL_MD_IOVEC);
	md->local_offset = 5;
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	assert_int_equal(md->local_offset, 0);
	assert_int_equal(md->total, 12);
	/* The caller may reuse its array at once. */
	memset(iov, 0, sizeof iov);
	assert_non_null(md->iov);
	assert_ptr_equal(md->iov[0].iov_base, a);
	assert_int_equal(md->iov[1].iov_len, 8);

	/* Each MD has its own iovec slot. */
	ptl_handle_md_t h2;
	struct ptl_md *md2 = new_md(&h2);
	ptl_md_iovec_t iov2[1] = { { b, 3 } };
	u = umd_plain(iov2, 1, PTL_MD_OP_PUT | PTL_MD_IOVEC);
	assert_int_equal(ptl_md_set(&the_ni, md2, &u), PTL_OK);
	assert_ptr_equal(md->iov[0].iov_base, a);
	assert_int_equal(md->iov[0].iov_len, 4);
	assert_int_equal(md2->iov[0].iov_len, 3);
}

/* ------------------------------------------------------------ byte walks */

/* iovecs of 3, 0, 5 and 8 bytes: 16 in all, an empty piece in the middle */
struct iov_md {
	char b0[3], b1[1], b2[5], b3[8];
	ptl_md_iovec_t iov[4];
	struct ptl_md *md;
};

static void mk_iov_md(struct iov_md *m)
{
	memset(m->b0, '.', sizeof m->b0);
	memset(m->b1, '#', sizeof m->b1);
	memset(m->b2, '.', sizeof m->b2);
	memset(m->b3, '.', sizeof m->b3);
	m->iov[0] = (ptl_md_iovec_t){ m->b0, 3 };
	m->iov[1] = (ptl_md_iovec_t){ m->b1, 0 };
	m->iov[2] = (ptl_md_iovec_t){ m->b2, 5 };
	m->iov[3] = (ptl_md_iovec_t){ m->b3, 8 };
	ptl_handle_md_t h;
	m->md = new_md(&h);
	ptl_md_t u = umd_plain(m->iov, 4, PTL_MD_OP_PUT | PTL_MD_IOVEC);
	assert_int_equal(ptl_md_set(&the_ni, m->md, &u), PTL_OK);
	assert_int_equal(m->md->total, 16);
}

static void test_copy_iovec(void **state)
{
	(void)state;
	struct iov_md m;
	mk_iov_md(&m);
	/* [2, 12): last byte of b0, all of b2, first 4 of b3. */
	ptl_md_copy_in(m.md, 2, "ABCDEFGHIJ", 10);
	assert_memory_equal(m.b0, "..A", 3);
	assert_memory_equal(m.b1, "#", 1);
	assert_memory_equal(m.b2, "BCDEF", 5);
	assert_memory_equal(m.b3, "GHIJ....", 8);

	char out[17] = { 0 };
	ptl_md_copy_out(m.md, 0, out, 16);
	assert_string_equal(out, "..ABCDEFGHIJ....");
	/* Starting exactly on a boundary (past the empty piece). */
	memset(out, 0, sizeof out);
	ptl_md_copy_out(m.md, 3, out, 5);
	assert_string_equal(out, "BCDEF");
	memset(out, 0, sizeof out);
	ptl_md_copy_out(m.md, 8, out, 8);
	assert_string_equal(out, "GHIJ....");
	/* Up to the very end. */
	ptl_md_copy_in(m.md, 15, "Z", 1);
	assert_int_equal(m.b3[7], 'Z');
	/* Zero bytes, anywhere including the end: nothing is touched. */
	memset(out, 'x', sizeof out);
	ptl_md_copy_out(m.md, 16, out, 0);
	ptl_md_copy_out(m.md, 4, out, 0);
	ptl_md_copy_in(m.md, 16, "Q", 0);
	assert_int_equal(out[0], 'x');
	memset(out, 0, sizeof out);
	ptl_md_copy_out(m.md, 0, out, 16);
	assert_string_equal(out, "..ABCDEFGHIJ...Z");
	assert_memory_equal(m.b1, "#", 1);
}

static void test_copy_plain(void **state)
{
	(void)state;
	ptl_handle_md_t h;
	struct ptl_md *md = new_md(&h);
	char buf[10];
	memset(buf, '.', sizeof buf);
	ptl_md_t u = umd_plain(buf, sizeof buf, PTL_MD_OP_PUT);
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	ptl_md_copy_in(md, 7, "xyz", 3);
	assert_memory_equal(buf, ".......xyz", 10);
	char out[4] = { 0 };
	ptl_md_copy_out(md, 6, out, 3);
	assert_string_equal(out, ".xy");
	ptl_md_copy_in(md, 10, "q", 0);
	assert_memory_equal(buf, ".......xyz", 10);

	struct iovec v[2];
	assert_int_equal(ptl_md_iovecs(md, 4, 6, v, 2), 1);
	assert_ptr_equal(v[0].iov_base, buf + 4);
	assert_int_equal(v[0].iov_len, 6);
	assert_int_equal(ptl_md_iovecs(md, 10, 0, v, 2), 0);
	assert_int_equal(ptl_md_iovecs(md, 0, 1, v, 0), -1);
}

static void test_iovecs(void **state)
{
	(void)state;
	struct iov_md m;
	mk_iov_md(&m);
	struct iovec v[4];

	assert_int_equal(ptl_md_iovecs(m.md, 2, 10, v, 4), 3);
	assert_ptr_equal(v[0].iov_base, m.b0 + 2);
	assert_int_equal(v[0].iov_len, 1);
	assert_ptr_equal(v[1].iov_base, m.b2);
	assert_int_equal(v[1].iov_len, 5);
	assert_ptr_equal(v[2].iov_base, m.b3);
	assert_int_equal(v[2].iov_len, 4);

	/* The whole MD: three non-empty pieces, no empty iovec reported. */
	assert_int_equal(ptl_md_iovecs(m.md, 0, 16, v, 4), 3);
	assert_int_equal(v[0].iov_len + v[1].iov_len + v[2].iov_len, 16);
	for (int i = 0; i < 3; i++)
		assert_int_not_equal(v[i].iov_len, 0);
	/* Exactly as many slots as pieces, and one fewer. */
	assert_int_equal(ptl_md_iovecs(m.md, 0, 16, v, 3), 3);
	assert_int_equal(ptl_md_iovecs(m.md, 0, 16, v, 2), -1);
	assert_int_equal(ptl_md_iovecs(m.md, 2, 2, v, 1), -1);
	assert_int_equal(ptl_md_iovecs(m.md, 2, 1, v, 1), 1);

	/* Inside one piece. */
	assert_int_equal(ptl_md_iovecs(m.md, 9, 3, v, 1), 1);
	assert_ptr_equal(v[0].iov_base, m.b3 + 1);
	assert_int_equal(v[0].iov_len, 3);
	/* Starting on a boundary. */
	assert_int_equal(ptl_md_iovecs(m.md, 3, 5, v, 4), 1);
	assert_ptr_equal(v[0].iov_base, m.b2);
	assert_int_equal(ptl_md_iovecs(m.md, 8, 8, v, 4), 1);
	assert_ptr_equal(v[0].iov_base, m.b3);
	assert_int_equal(v[0].iov_len, 8);
	/* The last byte. */
	assert_int_equal(ptl_md_iovecs(m.md, 15, 1, v, 4), 1);
	assert_ptr_equal(v[0].iov_base, m.b3 + 7);
	assert_int_equal(v[0].iov_len, 1);
	/* Zero bytes: no pieces, even with no room for any. */
	assert_int_equal(ptl_md_iovecs(m.md, 16, 0, v, 4), 0);
	assert_int_equal(ptl_md_iovecs(m.md, 5, 0, v, 0), 0);
	assert_int_equal(ptl_md_iovecs(m.md, 0, 0, v, 0), 0);
}

/* ------------------------------------------------------------ events */

static void test_event_filter(void **state)
{
	(void)state;
	ptl_handle_md_t h;
	struct ptl_md *md = new_md(&h);
	char buf[4];
	ptl_md_t u = umd_plain(buf, 4, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE);
	u.user_ptr = buf;
	u.eq_handle = eqh[0];
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	static const ptl_event_kind_t kinds[] = {
		PTL_EVENT_GET_START, PTL_EVENT_GET_END, PTL_EVENT_PUT_START, PTL_EVENT_PUT_END,
		PTL_EVENT_REPLY_START, PTL_EVENT_REPLY_END, PTL_EVENT_SEND_START,
		PTL_EVENT_SEND_END, PTL_EVENT_ACK, PTL_EVENT_UNLINK,
	};
	ptl_event_t ev = { .mlength = 3 };
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		ptl_md_event(md, kinds[i], &ev);
	assert_int_equal(nposted, 6);
	assert_int_equal(posted[0].type, PTL_EVENT_GET_END);
	assert_int_equal(posted[1].type, PTL_EVENT_PUT_END);
	assert_int_equal(posted[2].type, PTL_EVENT_REPLY_END);
	assert_int_equal(posted[3].type, PTL_EVENT_SEND_END);
	assert_int_equal(posted[4].type, PTL_EVENT_ACK);
	assert_int_equal(posted[5].type, PTL_EVENT_UNLINK);
	for (int i = 0; i < 6; i++) {
		assert_ptr_equal(posted_eq[i], ptl_eq_lookup(&the_ni, eqh[0]));
		assert_int_equal(posted[i].md_handle, h);
		assert_ptr_equal(posted[i].md.user_ptr, buf);
		assert_int_equal(posted[i].mlength, 3);
	}

	nposted = 0;
	md->md.options = PTL_MD_OP_PUT | PTL_MD_EVENT_END_DISABLE;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		ptl_md_event(md, kinds[i], &ev);
	assert_int_equal(nposted, 6);
	assert_int_equal(posted[0].type, PTL_EVENT_GET_START);
	assert_int_equal(posted[3].type, PTL_EVENT_SEND_START);
	assert_int_equal(posted[4].type, PTL_EVENT_ACK);

	/* No EQ, or an EQ freed since: no event, no crash. */
	nposted = 0;
	md->md.options = PTL_MD_OP_PUT;
	md->md.eq_handle = PTL_EQ_NONE;
	ptl_md_event(md, PTL_EVENT_PUT_END, &ev);
	md->md.eq_handle = eqh[0];
	free_eq(eqh[0]);
	ptl_md_event(md, PTL_EVENT_PUT_END, &ev);
	assert_int_equal(nposted, 0);
}

/* The EQ an MD logs to is found through the MD's pointer (md->eq), which
 * counts only while the EQ there has the MD's handle: set by every
 * ptl_md_set and update, dead once the EQ is freed and when a new EQ has
 * its slot. */
static void test_event_eq_pointer(void **state)
{
	(void)state;
	char buf[8];
	ptl_handle_md_t h;
	struct ptl_md *md = new_md(&h);
	ptl_md_t u = umd_plain(buf, sizeof buf, PTL_MD_OP_PUT);
	u.eq_handle = eqh[1];
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	ptl_event_t ev = { .mlength = 1 };
	ptl_md_event(md, PTL_EVENT_PUT_END, &ev);
	assert_int_equal(nposted, 1);
	assert_ptr_equal(posted_eq[0], ptl_eq_lookup(&the_ni, eqh[1]));
	/* Updated to the other EQ (looked up) and back (the one tested). */
	u.eq_handle = eqh[0];
	assert_int_equal(PtlMDUpdate(h, NULL, &u, PTL_EQ_NONE), PTL_OK);
	ptl_md_event(md, PTL_EVENT_PUT_END, &ev);
	assert_ptr_equal(posted_eq[1], ptl_eq_lookup(&the_ni, eqh[0]));
	u.eq_handle = eqh[1];
	ptl_eq_lookup(&the_ni, eqh[1])->rd = rings[1]->write_seq; /* read: no event waits */
	assert_int_equal(PtlMDUpdate(h, NULL, &u, eqh[1]), PTL_OK);
	ptl_md_event(md, PTL_EVENT_PUT_END, &ev);
	assert_ptr_equal(posted_eq[2], ptl_eq_lookup(&the_ni, eqh[1]));
	assert_int_equal(nposted, 3);

	/* Freed, then its slot taken by a new EQ: nothing logged to it. */
	struct ptl_eq *old = ptl_eq_lookup(&the_ni, eqh[1]);
	free_eq(eqh[1]);
	ptl_md_event(md, PTL_EVENT_PUT_END, &ev);
	assert_int_equal(nposted, 3);
	assert_int_equal(PtlMDUpdate(h, NULL, &u, eqh[1]), PTL_EQ_INVALID);
	ptl_handle_eq_t nh;
	struct ptl_eq *eq = ptl_htab_alloc(&the_ni.eqs, &nh);
	assert_ptr_equal(eq, old);
	assert_true(nh != eqh[1]);
	eq->handle = nh;
	eq->ring = rings[1];
	eq->count = 8;
	eq->handler = never_called;
	eq->rd = rings[1]->write_seq;
	ptl_md_event(md, PTL_EVENT_PUT_END, &ev);
	assert_int_equal(nposted, 3);
	assert_int_equal(PtlMDUpdate(h, NULL, &u, eqh[1]), PTL_EQ_INVALID);
	assert_int_equal(PtlMDUpdate(h, NULL, &u, PTL_EQ_NONE), PTL_EQ_INVALID);
	u.eq_handle = nh;
	assert_int_equal(PtlMDUpdate(h, NULL, &u, nh), PTL_OK);
	ptl_md_event(md, PTL_EVENT_PUT_END, &ev);
	assert_int_equal(nposted, 4);
	assert_ptr_equal(posted_eq[3], eq);
}

/* ------------------------------------------------------------ threshold and unlink */

static struct ptl_md *bound_md(ptl_handle_md_t *h, char *buf, ptl_size_t len, int thr,
			       unsigned opts, ptl_unlink_t unlink_op)
{
	struct ptl_md *md = new_md(h);
	ptl_md_t u = umd_plain(buf, len, opts);
	u.threshold = thr;
	u.eq_handle = eqh[0];
	assert_int_equal(ptl_md_set(&the_ni, md, &u), PTL_OK);
	md->unlink_op = unlink_op;
	return md;
}

static void test_autounlink_threshold(void **state)
{
	(void)state;
	char buf[8];
	ptl_handle_md_t h;
	struct ptl_md *md = bound_md(&h, buf, 8, 1, PTL_MD_OP_PUT, PTL_UNLINK);
	assert_false(ptl_md_maybe_autounlink(&the_ni, md));
	md->md.threshold = PTL_MD_THRESH_INF;
	assert_false(ptl_md_maybe_autounlink(&the_ni, md));
	assert_int_equal(nposted, 0);
	md->md.threshold = 0;
	assert_true(ptl_md_maybe_autounlink(&the_ni, md));
	assert_null(ptl_md_lookup(&the_ni, h));
	assert_int_equal(nposted, 1);
	assert_int_equal(posted[0].type, PTL_EVENT_UNLINK);
	assert_int_equal(posted[0].md_handle, h);
	assert_int_not_equal(posted[0].link, 0);
	assert_int_equal(posted[0].ni_fail_type, PTL_NI_OK);

	/* PTL_RETAIN: used up, still there. */
	nposted = 0;
	md = bound_md(&h, buf, 8, 0, PTL_MD_OP_PUT, PTL_RETAIN);
	assert_false(ptl_md_maybe_autounlink(&the_ni, md));
	assert_ptr_equal(ptl_md_lookup(&the_ni, h), md);
	assert_int_equal(nposted, 0);
}

static void test_autounlink_max_size(void **state)
{
	(void)state;
	char buf[100];
	ptl_handle_md_t h;
	struct ptl_md *md = bound_md(&h, buf, 100, PTL_MD_THRESH_INF,
				     PTL_MD_OP_PUT | PTL_MD_MAX_SIZE, PTL_UNLINK);
	md->md.max_size = 30;
	md->local_offset = 70; /* 30 free: not less than max_size */
	assert_false(ptl_md_maybe_autounlink(&the_ni, md));
	md->local_offset = 71;
	assert_true(ptl_md_maybe_autounlink(&the_ni, md));
	assert_null(ptl_md_lookup(&the_ni, h));
	assert_int_equal(nposted, 1);
	assert_int_equal(posted[0].type, PTL_EVENT_UNLINK);

	/* Without PTL_MD_MAX_SIZE, max_size means nothing. */
	md = bound_md(&h, buf, 100, PTL_MD_THRESH_INF, PTL_MD_OP_PUT, PTL_UNLINK);
	md->md.max_size = 30;
	md->local_offset = 100;
	assert_false(ptl_md_maybe_autounlink(&the_ni, md));
	/* With PTL_RETAIN it stays. */
	md = bound_md(&h, buf, 100, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MAX_SIZE, PTL_RETAIN);
	md->md.max_size = 30;
	md->local_offset = 100;
	assert_false(ptl_md_maybe_autounlink(&the_ni, md));
}

static void test_autounlink_pending_dooms(void **state)
{
	(void)state;
	char buf[8];
	ptl_handle_md_t h;
	struct ptl_md *md = bound_md(&h, buf, 8, 0, PTL_MD_OP_PUT, PTL_UNLINK);
	md->pending = 1;
	assert_false(ptl_md_maybe_autounlink(&the_ni, md));
	assert_true(md->doomed);
	assert_ptr_equal(ptl_md_lookup(&the_ni, h), md);
	assert_int_equal(nposted, 0);
	/* A doomed MD accepts nothing new. */
	ptl_size_t off, mlen;
	md->md.threshold = PTL_MD_THRESH_INF;
	assert_false(ptl_md_accepts(md, PTL_MATCH_PUT, 0, 1, &off, &mlen));
	/* Last answer in: it goes, whatever the threshold says now. */
	md->pending = 0;
	assert_true(ptl_md_maybe_autounlink(&the_ni, md));
	assert_null(ptl_md_lookup(&the_ni, h));
	assert_int_equal(nposted, 1);
	assert_int_equal(posted[0].type, PTL_EVENT_UNLINK);
}

static struct ptl_me *attach(ptl_handle_me_t *meh, struct ptl_md *md, ptl_unlink_t me_unlink)
{
	struct ptl_me *me = ptl_htab_alloc(&the_ni.mes, meh);
	assert_non_null(me);
	me->handle = *meh;
	ptl_list_init(&me->link);
	me->pt_index = 5;
	me->match_bits = 0xfeed;
	me->unlink_op = me_unlink;
	me->md = md;
	md->me = me;
	return me;
}

static void test_autounlink_takes_me(void **state)
{
	(void)state;
	char buf[8];
	ptl_handle_md_t h;
	ptl_handle_me_t meh;
	struct ptl_md *md = bound_md(&h, buf, 8, 0, PTL_MD_OP_PUT, PTL_UNLINK);
	struct ptl_me *me = attach(&meh, md, PTL_UNLINK);
	assert_true(ptl_md_maybe_autounlink(&the_ni, md));
	assert_ptr_equal(destroyed_me, me);
	assert_null(ptl_me_lookup(&the_ni, meh));
	assert_null(ptl_md_lookup(&the_ni, h));
	assert_int_equal(nposted, 1);
	assert_int_equal(posted[0].pt_index, 5);
	assert_int_equal(posted[0].match_bits, 0xfeed);

	/* An ME attached with PTL_RETAIN stays, without its MD. */
	destroyed_me = NULL;
	md = bound_md(&h, buf, 8, 0, PTL_MD_OP_PUT, PTL_UNLINK);
	me = attach(&meh, md, PTL_RETAIN);
	assert_true(ptl_md_maybe_autounlink(&the_ni, md));
	assert_null(destroyed_me);
	assert_ptr_equal(ptl_me_lookup(&the_ni, meh), me);
	assert_null(me->md);
	assert_null(ptl_md_lookup(&the_ni, h));
}

/* An UNLINK is written straight into its EQ slot: every field is its own,
 * none is what the slot held from the last lap round the ring. It names
 * this process, the one that unlinked: its id, uid and jid (as a SEND
 * event does), not uid 0 and jid 0, which read as root's, job 0's. */
static void test_autounlink_event_fields(void **state)
{
	(void)state;
	char buf[8];
	ptl_handle_md_t h;
	ptl_handle_me_t meh;
	the_ni.id = (ptl_process_id_t){ 7, 3 };
	ptl_lib.uid = 1234;
	ptl_lib.jid = 56;
	memset(PTL_VIEW_EQ_EVENTS(rings[0]), 0xa5, 8 * sizeof(ptl_event_t));
	struct ptl_md *md = bound_md(&h, buf, 8, 0, PTL_MD_OP_PUT, PTL_UNLINK);
	md->md.user_ptr = buf;
	attach(&meh, md, PTL_UNLINK);
	rings[0]->write_seq = 5; /* the slot of sequence 5 */
	ptl_eq_lookup(&the_ni, eqh[0])->wr_slot = 5;
	assert_true(ptl_md_maybe_autounlink(&the_ni, md));
	assert_int_equal(nposted, 1);
	const ptl_event_t *e = &posted[0];
	assert_int_equal(e->type, PTL_EVENT_UNLINK);
	assert_int_equal(e->initiator.nid, 7);
	assert_int_equal(e->initiator.pid, 3);
	assert_int_equal(e->uid, 1234);
	assert_int_equal(e->jid, 56);
	assert_int_equal(e->pt_index, 5);
	assert_int_equal(e->match_bits, 0xfeed);
	assert_int_equal(e->rlength, 0);
	assert_int_equal(e->mlength, 0);
	assert_int_equal(e->offset, 0);
	assert_int_equal(e->md_handle, h);
	assert_ptr_equal(e->md.start, buf);
	assert_ptr_equal(e->md.user_ptr, buf);
	assert_int_equal(e->md.length, 8);
	assert_int_equal(e->hdr_data, 0);
	assert_int_equal(e->link, 1);
	assert_int_equal(e->ni_fail_type, PTL_NI_OK);
	assert_int_equal(e->sequence, 5);
	/* It is the ring's slot 5 % 8 that holds it. */
	assert_memory_equal(&PTL_VIEW_EQ_EVENTS(rings[0])[5], e, sizeof *e);

	/* A bound MD (no ME): portal and bits 0, not the slot's bytes. */
	nposted = 0;
	md = bound_md(&h, buf, 8, 0, PTL_MD_OP_PUT, PTL_UNLINK);
	assert_true(ptl_md_maybe_autounlink(&the_ni, md));
	assert_int_equal(nposted, 1);
	assert_int_equal(posted[0].pt_index, 0);
	assert_int_equal(posted[0].match_bits, 0);
	assert_int_equal(posted[0].uid, 1234);
	assert_int_equal(posted[0].jid, 56);
	assert_int_equal(posted[0].sequence, 6);
}

/* MDs are made in slots that are not zeroed: a new MD must not inherit
 * what the slot's last MD left (doomed, answers pending, an ME, an
 * offset), or its first put would fail or its unlink be refused. */
static void test_new_md_on_used_slot(void **state)
{
	(void)state;
	char a[8], b[16];
	ptl_handle_md_t h, h2;
	ptl_md_t u = umd_plain(a, 8, PTL_MD_OP_PUT);
	assert_int_equal(PtlMDBind(the_ni.handle, u, PTL_RETAIN, &h), PTL_OK);
	struct ptl_md *md = ptl_md_lookup(&the_ni, h);
	md->doomed = true;
	md->pending = 3;
	md->me = (struct ptl_me *)md;
	md->local_offset = 5;
	md->unlink_op = PTL_UNLINK;
	ptl_htab_release(&the_ni.mds, h); /* as if unlinked that way */
	u = umd_plain(b, 16, PTL_MD_OP_PUT | PTL_MD_OP_GET);
	assert_int_equal(PtlMDBind(the_ni.handle, u, PTL_RETAIN, &h2), PTL_OK);
	assert_int_equal(ptl_handle_idx(h2), ptl_handle_idx(h)); /* the same slot */
	assert_int_not_equal(h2, h);
	assert_null(ptl_md_lookup(&the_ni, h));
	assert_ptr_equal(ptl_md_lookup(&the_ni, h2), md);
	assert_int_equal(md->handle, h2);
	assert_false(md->doomed);
	assert_int_equal(md->pending, 0);
	assert_null(md->me);
	assert_int_equal(md->local_offset, 0);
	assert_int_equal(md->unlink_op, PTL_RETAIN);
	assert_null(md->iov);
	assert_int_equal(md->total, 16);
	ptl_size_t off, mlen;
	assert_true(ptl_md_accepts(md, PTL_MATCH_GET, 0, 16, &off, &mlen));
	assert_int_equal(PtlMDUnlink(h2), PTL_OK);

	/* A refused bind gives its slot back: the next one takes it. */
	u.options |= 1u << 25;
	assert_int_equal(PtlMDBind(the_ni.handle, u, PTL_RETAIN, &h), PTL_MD_ILLEGAL);
	assert_int_equal(the_ni.mds.used, 0);
}

/* A refused update of an IOVEC MD leaves its own copy of the iovecs and
 * everything else as they were (nothing is saved to restore: the checks
 * come before any write). */
static void test_update_refused_iovec(void **state)
{
	(void)state;
	char a[16], b[16];
	ptl_md_iovec_t iov[2] = { { a, 8 }, { a + 8, 8 } };
	ptl_md_t u = umd_plain(iov, 2, PTL_MD_OP_PUT | PTL_MD_IOVEC);
	ptl_handle_md_t h;
	assert_int_equal(PtlMDBind(the_ni.handle, u, PTL_RETAIN, &h), PTL_OK);
	struct ptl_md *md = ptl_md_lookup(&the_ni, h);
	md->local_offset = 4;
	ptl_md_iovec_t bad[2] = { { b, 8 }, { NULL, 8 } };
	ptl_md_t nu = umd_plain(bad, 2, PTL_MD_OP_PUT | PTL_MD_IOVEC);
	assert_int_equal(PtlMDUpdate(h, NULL, &nu, PTL_EQ_NONE), PTL_SEGV);
	assert_int_equal(md->niov, 2);
	assert_ptr_equal(md->iov[0].iov_base, a);
	assert_ptr_equal(md->iov[1].iov_base, a + 8);
	assert_ptr_equal(md->md.start, iov);
	assert_int_equal(md->total, 16);
	assert_int_equal(md->local_offset, 4);
	assert_int_equal(md->handle, h);
	/* A good one replaces them. */
	bad[1].iov_base = b + 8;
	assert_int_equal(PtlMDUpdate(h, NULL, &nu, PTL_EQ_NONE), PTL_OK);
	assert_ptr_equal(md->iov[0].iov_base, b);
	assert_ptr_equal(md->iov[1].iov_base, b + 8);
	assert_int_equal(md->local_offset, 0);
	assert_int_equal(PtlMDUnlink(h), PTL_OK);
}

/* ------------------------------------------------------------ public MD calls */

static void test_update(void **state)
{
	(void)state;
	char a[8], b[16];
	ptl_handle_md_t h;
	ptl_handle_me_t meh;
	struct ptl_md *md = bound_md(&h, a, 8, 3, PTL_MD_OP_PUT, PTL_UNLINK);
	struct ptl_me *me = attach(&meh, md, PTL_RETAIN);
	md->local_offset = 6;
	ptl_md_t old, nu = umd_plain(b, 16, PTL_MD_OP_GET);
	nu.threshold = 2;
	nu.eq_handle = eqh[1];

	/* The EQ holds an event: no update, but old is filled in. */
	rings[0]->write_seq = 1;
	memset(&old, 0, sizeof old);
	assert_int_equal(PtlMDUpdate(h, &old, &nu, eqh[0]), PTL_MD_NO_UPDATE);
	assert_ptr_equal(old.start, a);
	assert_int_equal(old.threshold, 3);
	assert_ptr_equal(md->md.start, a);
	assert_int_equal(md->local_offset, 6);
	/* Read it: the update goes through. */
	ptl_eq_lookup(&the_ni, eqh[0])->rd = 1;
	assert_int_equal(PtlMDUpdate(h, &old, &nu, eqh[0]), PTL_OK);
	assert_ptr_equal(old.start, a);
	assert_ptr_equal(md->md.start, b);
	assert_int_equal(md->total, 16);
	assert_int_equal(md->md.threshold, 2);
	assert_int_equal(md->md.options, PTL_MD_OP_GET);
	assert_int_equal(md->local_offset, 0);
	/* What an update may not change. */
	assert_ptr_equal(md->me, me);
	assert_ptr_equal(me->md, md);
	assert_int_equal(md->handle, h);
	assert_int_equal(md->unlink_op, PTL_UNLINK);

	/* A bad new MD: its error, and nothing changes. */
	ptl_md_t bad = umd_plain(NULL, 4, PTL_MD_OP_PUT);
	assert_int_equal(PtlMDUpdate(h, NULL, &bad, PTL_EQ_NONE), PTL_SEGV);
	bad = umd_plain(a, 4, 1u << 30);
	assert_int_equal(PtlMDUpdate(h, NULL, &bad, PTL_EQ_NONE), PTL_MD_ILLEGAL);
	bad = umd_plain(a, 4, PTL_MD_OP_PUT);
	bad.eq_handle = eqh[0] + (1ull << 32); /* next generation */
	assert_int_equal(PtlMDUpdate(h, NULL, &bad, PTL_EQ_NONE), PTL_EQ_INVALID);
	assert_ptr_equal(md->md.start, b);
	assert_int_equal(md->total, 16);
	assert_ptr_equal(md->me, me);
	/* Just reading; a bad handle; a bad EQ to test against; in use. */
	assert_int_equal(PtlMDUpdate(h, &old, NULL, PTL_EQ_NONE), PTL_OK);
	assert_ptr_equal(old.start, b);
	assert_int_equal(PtlMDUpdate(h + 1, &old, &nu, PTL_EQ_NONE), PTL_MD_INVALID);
	assert_int_equal(PtlMDUpdate(h, &old, &nu, eqh[0] + (1ull << 32)), PTL_EQ_INVALID);
	/* The new MD logs to the EQ tested against (MPI's posted receive):
	 * that one is live, the update goes through. */
	nu.eq_handle = eqh[0];
	assert_int_equal(PtlMDUpdate(h, NULL, &nu, eqh[0]), PTL_OK);
	assert_int_equal(md->md.eq_handle, eqh[0]);
	/* In use: not updated, with the code 3.3 gives PtlMDUpdate for
	 * that, whether or not an EQ is tested (PTL_MD_IN_USE is
	 * PtlMDUnlink's); old is filled in. */
	md->pending = 1;
	nu.threshold = 5;
	memset(&old, 0, sizeof old);
	assert_int_equal(PtlMDUpdate(h, &old, &nu, PTL_EQ_NONE), PTL_MD_NO_UPDATE);
	assert_int_equal(PtlMDUpdate(h, &old, &nu, eqh[0]), PTL_MD_NO_UPDATE);
	assert_ptr_equal(old.start, b);
	assert_int_equal(md->md.threshold, 2);
	md->pending = 0;
	ptl_lib.init_count = 0;
	assert_int_equal(PtlMDUpdate(h, &old, &nu, PTL_EQ_NONE), PTL_NO_INIT);
}

static void test_bind_attach_unlink(void **state)
{
	(void)state;
	char a[8];
	ptl_md_t u = umd_plain(a, 8, PTL_MD_OP_PUT);
	ptl_handle_md_t h[MAX_MDS + 1];
	ptl_handle_ni_t nih = the_ni.handle;

	assert_int_equal(PtlMDBind(nih, u, PTL_UNLINK, NULL), PTL_SEGV);
	assert_int_equal(PtlMDBind(nih + 1, u, PTL_UNLINK, &h[0]), PTL_NI_INVALID);
	assert_int_equal(PtlMDBind(nih, u, (ptl_unlink_t)7, &h[0]), PTL_MD_ILLEGAL);
	u.options |= 1u << 25;
	assert_int_equal(PtlMDBind(nih, u, PTL_UNLINK, &h[0]), PTL_MD_ILLEGAL);
	/* Failed binds leave no slot behind. */
	assert_int_equal(the_ni.mds.used, 0);
	u.options = PTL_MD_OP_PUT;
	for (int i = 0; i < MAX_MDS; i++)
		assert_int_equal(PtlMDBind(nih, u, PTL_RETAIN, &h[i]), PTL_OK);
	assert_int_equal(PtlMDBind(nih, u, PTL_RETAIN, &h[MAX_MDS]), PTL_NO_SPACE);

	assert_int_equal(PtlMDUnlink(h[1]), PTL_OK);
	assert_int_equal(PtlMDUnlink(h[1]), PTL_MD_INVALID);
	ptl_md_lookup(&the_ni, h[2])->pending = 1;
	assert_int_equal(PtlMDUnlink(h[2]), PTL_MD_IN_USE);
	ptl_md_lookup(&the_ni, h[2])->pending = 0;

	/* Attach: to a live ME without an MD. */
	ptl_handle_me_t meh;
	struct ptl_me *me = ptl_htab_alloc(&the_ni.mes, &meh);
	me->handle = meh;
	me->unlink_op = PTL_RETAIN;
	ptl_list_init(&me->link);
	ptl_handle_md_t mdh;
	assert_int_equal(PtlMDAttach(meh, u, PTL_UNLINK, NULL), PTL_SEGV);
	assert_int_equal(PtlMDAttach(meh + 1, u, PTL_UNLINK, &mdh), PTL_ME_INVALID);
	assert_int_equal(PtlMDAttach(h[0], u, PTL_UNLINK, &mdh), PTL_ME_INVALID);
	assert_int_equal(PtlMDAttach(meh, u, PTL_UNLINK, &mdh), PTL_OK);
	assert_ptr_equal(me->md, ptl_md_lookup(&the_ni, mdh));
	assert_ptr_equal(me->md->me, me);
	assert_int_equal(PtlMDAttach(meh, u, PTL_UNLINK, &mdh), PTL_ME_IN_USE);
	/* Unlinking the MD detaches it; the ME (PTL_RETAIN) stays and can
	 * take another. */
	assert_int_equal(PtlMDUnlink(mdh), PTL_OK);
	assert_null(me->md);
	assert_null(destroyed_me);
	assert_int_equal(PtlMDAttach(meh, u, PTL_UNLINK, &mdh), PTL_OK);
	/* An ME attached with PTL_UNLINK goes with it. */
	me->unlink_op = PTL_UNLINK;
	assert_int_equal(PtlMDUnlink(mdh), PTL_OK);
	assert_ptr_equal(destroyed_me, me);
	assert_null(ptl_md_lookup(&the_ni, mdh));
	assert_null(ptl_me_lookup(&the_ni, meh));
	me = ptl_htab_alloc(&the_ni.mes, &meh);
	me->handle = meh;
	me->unlink_op = PTL_RETAIN;
	ptl_list_init(&me->link);
	assert_int_equal(PtlMDAttach(meh, u, PTL_UNLINK, &mdh), PTL_OK);

	ptl_lib.init_count = 0;
	assert_int_equal(PtlMDBind(nih, u, PTL_UNLINK, &h[0]), PTL_NO_INIT);
	assert_int_equal(PtlMDAttach(meh, u, PTL_UNLINK, &mdh), PTL_NO_INIT);
	assert_int_equal(PtlMDUnlink(mdh), PTL_NO_INIT);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_set_validation),
		T(test_set_copies_iovecs_and_resets_offset),
		T(test_copy_iovec),
		T(test_copy_plain),
		T(test_iovecs),
		T(test_event_filter),
		T(test_event_eq_pointer),
		T(test_autounlink_threshold),
		T(test_autounlink_max_size),
		T(test_autounlink_pending_dooms),
		T(test_autounlink_takes_me),
		T(test_autounlink_event_fields),
		T(test_new_md_on_used_slot),
		T(test_update_refused_iovec),
		T(test_update),
		T(test_bind_attach_unlink),
	};
	return cmocka_run_group_tests_name("ptl_md", tests, NULL, NULL);
}
