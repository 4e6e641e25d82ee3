/*
 * tests/ptl/unit/test_match.c - the match engine (lib/ptl/ptl_match.c) on
 * its own: PORTALS33.md "Address translation" steps 2 and 3. Which MEs
 * match an initiator and match bits, which MDs accept an operation and
 * where and how much, and the first-accepting walk over a match list.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ptl/ptl_internal.h"

/* ptl_match.c only reads the objects; these are built by hand. */
static ptl_process_id_t pid_of(ptl_nid_t nid, ptl_pid_t pid)
{
	ptl_process_id_t p = { .nid = nid, .pid = pid };
	return p;
}

static struct ptl_me mk_me(ptl_nid_t nid, ptl_pid_t pid, ptl_match_bits_t bits, ptl_match_bits_t ign)
{
	struct ptl_me me;
	memset(&me, 0, sizeof me);
	ptl_list_init(&me.link);
	ptl_me_set_match(&me, pid_of(nid, pid), bits, ign);
	return me;
}

static struct ptl_md mk_md(ptl_size_t total, int threshold, unsigned opts)
{
	struct ptl_md md;
	memset(&md, 0, sizeof md);
	md.md.length = total;
	md.md.threshold = threshold;
	md.md.options = opts;
	md.total = total;
	return md;
}

/* ------------------------------------------------------------ ptl_me_matches */

static void test_me_match_id(void **state)
{
	(void)state;
	ptl_process_id_t src = pid_of(7, 3);
	struct ptl_me me = mk_me(7, 3, 0, 0);
	assert_true(ptl_me_matches(&me, src, 0));
	assert_false(ptl_me_matches(&me, pid_of(8, 3), 0));
	assert_false(ptl_me_matches(&me, pid_of(7, 4), 0));
	assert_false(ptl_me_matches(&me, pid_of(3, 7), 0));

	me = mk_me(PTL_NID_ANY, 3, 0, 0);
	assert_true(ptl_me_matches(&me, src, 0));
	assert_true(ptl_me_matches(&me, pid_of(12345, 3), 0));
	assert_false(ptl_me_matches(&me, pid_of(7, 4), 0));

	me = mk_me(7, PTL_PID_ANY, 0, 0);
	assert_true(ptl_me_matches(&me, src, 0));
	assert_true(ptl_me_matches(&me, pid_of(7, 0), 0));
	assert_false(ptl_me_matches(&me, pid_of(6, 3), 0));

	me = mk_me(PTL_NID_ANY, PTL_PID_ANY, 0, 0);
	assert_true(ptl_me_matches(&me, src, 0));
	assert_true(ptl_me_matches(&me, pid_of(0, 0), 0));
	/* The wildcard admits everybody, still under the bits test. */
	assert_false(ptl_me_matches(&me, src, 1));
}

/* The walk compares nid and pid as one word under a mask (ptl_id_key):
 * each field against its own value only, at the ends of both fields, and
 * a wildcard field's bits in the key, the id or the bits never count. */
static void test_me_match_id_packed(void **state)
{
	(void)state;
	struct ptl_me me = mk_me(0x80000001u, 0x80000000u, 5, 0);
	assert_true(ptl_me_matches(&me, pid_of(0x80000001u, 0x80000000u), 5));
	assert_false(ptl_me_matches(&me, pid_of(0x00000001u, 0x80000000u), 5)); /* nid's top bit */
	assert_false(ptl_me_matches(&me, pid_of(0x80000000u, 0x80000000u), 5)); /* nid's low bit */
	assert_false(ptl_me_matches(&me, pid_of(0x80000001u, 0x00000000u), 5)); /* pid's top bit */
	assert_false(ptl_me_matches(&me, pid_of(0x80000001u, 0x80000001u), 5)); /* pid's low bit */
	assert_false(ptl_me_matches(&me, pid_of(0x80000000u, 0x80000001u), 5)); /* fields swapped a bit */
	assert_false(ptl_me_matches(&me, pid_of(0x80000001u, 0x80000000u), 4)); /* id right, bits not */

	me = mk_me(PTL_NID_ANY, 0xfffffffeu, 0, 0);
	assert_true(ptl_me_matches(&me, pid_of(0, 0xfffffffeu), 0));
	assert_true(ptl_me_matches(&me, pid_of(0xfffffffeu, 0xfffffffeu), 0));
	assert_false(ptl_me_matches(&me, pid_of(0xfffffffeu, 0x7ffffffeu), 0));
	assert_false(ptl_me_matches(&me, pid_of(0xfffffffeu, 0xffffffffu), 0));

	me = mk_me(0xfffffffeu, PTL_PID_ANY, 0, 0);
	assert_true(ptl_me_matches(&me, pid_of(0xfffffffeu, 0), 0));
	assert_true(ptl_me_matches(&me, pid_of(0xfffffffeu, 0xffffffffu), 0));
	assert_false(ptl_me_matches(&me, pid_of(0x7ffffffeu, 0), 0));
	assert_false(ptl_me_matches(&me, pid_of(0xffffffffu, 0xfffffffeu), 0));

	/* Set again (as an ME slot is reused): nothing of the old id stays. */
	ptl_me_set_match(&me, pid_of(3, PTL_PID_ANY), 0, 0);
	assert_true(ptl_me_matches(&me, pid_of(3, 0xfffffffeu), 0));
	assert_false(ptl_me_matches(&me, pid_of(0xfffffffeu, 0), 0));
	ptl_me_set_match(&me, pid_of(PTL_NID_ANY, PTL_PID_ANY), 0, 0);
	assert_true(ptl_me_matches(&me, pid_of(0x12345678u, 0x9abcdef0u), 0));
}

static void test_me_match_bits(void **state)
{
	(void)state;
	ptl_process_id_t src = pid_of(1, 1);
	struct ptl_me me = mk_me(PTL_NID_ANY, PTL_PID_ANY, 0xabcd000000001234ull, 0);
	assert_true(ptl_me_matches(&me, src, 0xabcd000000001234ull));
	assert_false(ptl_me_matches(&me, src, 0xabcd000000001235ull));
	assert_false(ptl_me_matches(&me, src, 0x2bcd000000001234ull)); /* top bit */
	assert_false(ptl_me_matches(&me, src, 0));

	/* Ignored bits may differ either way; the others may not. */
	ptl_me_set_match(&me, pid_of(PTL_NID_ANY, PTL_PID_ANY), 0xabcd000000001234ull, 0xffull);
	assert_true(ptl_me_matches(&me, src, 0xabcd0000000012ffull));
	assert_true(ptl_me_matches(&me, src, 0xabcd000000001200ull));
	assert_false(ptl_me_matches(&me, src, 0xabcd0000000013ffull));

	/* Only the top bit matters. */
	me = mk_me(PTL_NID_ANY, PTL_PID_ANY, 1ull << 63, ~(1ull << 63));
	assert_true(ptl_me_matches(&me, src, (1ull << 63) | 0x1234));
	assert_false(ptl_me_matches(&me, src, 0x1234));

	/* Everything ignored: any bits match. */
	me = mk_me(PTL_NID_ANY, PTL_PID_ANY, 0x5555, ~0ull);
	assert_true(ptl_me_matches(&me, src, 0));
	assert_true(ptl_me_matches(&me, src, ~0ull));
	/* ME bits set inside the ignore mask do not have to be sent. */
	me = mk_me(PTL_NID_ANY, PTL_PID_ANY, 0xf0, 0xf0);
	assert_true(ptl_me_matches(&me, src, 0));
	assert_false(ptl_me_matches(&me, src, 0x0f));
}

/* ------------------------------------------------------------ ptl_md_accepts */

static void test_md_op_enable(void **state)
{
	(void)state;
	ptl_size_t off = 99, mlen = 99;
	struct ptl_md md = mk_md(64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT);
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 8, &off, &mlen));
	assert_false(ptl_md_accepts(&md, PTL_MATCH_GET, 0, 8, &off, &mlen));
	assert_false(ptl_md_accepts(&md, PTL_MATCH_GETPUT, 0, 8, &off, &mlen));

	md = mk_md(64, PTL_MD_THRESH_INF, PTL_MD_OP_GET);
	assert_false(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 8, &off, &mlen));
	assert_true(ptl_md_accepts(&md, PTL_MATCH_GET, 0, 8, &off, &mlen));
	assert_false(ptl_md_accepts(&md, PTL_MATCH_GETPUT, 0, 8, &off, &mlen));

	md = mk_md(64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_OP_GET);
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 8, &off, &mlen));
	assert_true(ptl_md_accepts(&md, PTL_MATCH_GET, 0, 8, &off, &mlen));
	assert_true(ptl_md_accepts(&md, PTL_MATCH_GETPUT, 0, 8, &off, &mlen));

	/* No operation enabled: nothing is accepted, other options or not. */
	md = mk_md(64, PTL_MD_THRESH_INF, PTL_MD_TRUNCATE | PTL_MD_MANAGE_REMOTE);
	assert_false(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 8, &off, &mlen));
	assert_false(ptl_md_accepts(&md, PTL_MATCH_GET, 0, 8, &off, &mlen));
}

static void test_md_threshold(void **state)
{
	(void)state;
	ptl_size_t off, mlen;
	struct ptl_md md = mk_md(64, 0, PTL_MD_OP_PUT | PTL_MD_OP_GET);
	assert_false(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 8, &off, &mlen));
	assert_false(ptl_md_accepts(&md, PTL_MATCH_GET, 0, 0, &off, &mlen));
	md.md.threshold = 1;
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 8, &off, &mlen));
	md.md.threshold = PTL_MD_THRESH_INF;
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 8, &off, &mlen));
	/* A doomed MD (unlink pending) takes nothing new. */
	md.doomed = true;
	assert_false(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 8, &off, &mlen));
	assert_false(ptl_md_accepts(&md, PTL_MATCH_GET, 0, 8, &off, &mlen));
}

static void test_md_fit_local_offset(void **state)
{
	(void)state;
	ptl_size_t off = 99, mlen = 99;
	struct ptl_md md = mk_md(100, PTL_MD_THRESH_INF, PTL_MD_OP_PUT);
	/* Exactly fits. */
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 100, &off, &mlen));
	assert_int_equal(off, 0);
	assert_int_equal(mlen, 100);
	/* One byte too many, no TRUNCATE: rejected, outputs untouched. */
	off = mlen = 77;
	assert_false(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 101, &off, &mlen));
	assert_int_equal(off, 77);
	assert_int_equal(mlen, 77);

	/* Local offset: the initiator's offset is ignored. */
	md.local_offset = 60;
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 40, &off, &mlen));
	assert_int_equal(off, 60);
	assert_int_equal(mlen, 40);
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 1000, 40, &off, &mlen));
	assert_int_equal(off, 60);
	assert_false(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 41, &off, &mlen));

	/* At the end: only zero-length requests fit. */
	md.local_offset = 100;
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 0, &off, &mlen));
	assert_int_equal(off, 100);
	assert_int_equal(mlen, 0);
	assert_false(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 1, &off, &mlen));

	/* A zero-length MD takes zero-length requests. */
	md = mk_md(0, PTL_MD_THRESH_INF, PTL_MD_OP_PUT);
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 0, &off, &mlen));
	assert_int_equal(mlen, 0);
	assert_false(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 1, &off, &mlen));
}

static void test_md_truncate(void **state)
{
	(void)state;
	ptl_size_t off, mlen;
	struct ptl_md md = mk_md(100, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_TRUNCATE);
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 1000, &off, &mlen));
	assert_int_equal(off, 0);
	assert_int_equal(mlen, 100);
	assert_true(ptl_md_accepts(&md, PTL_MATCH_GET, 0, 30, &off, &mlen));
	assert_int_equal(mlen, 30);
	md.local_offset = 90;
	assert_true(ptl_md_accepts(&md, PTL_MATCH_GET, 0, 30, &off, &mlen));
	assert_int_equal(off, 90);
	assert_int_equal(mlen, 10);
	/* Full MD with TRUNCATE: accepted, nothing manipulated. */
	md.local_offset = 100;
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 5, &off, &mlen));
	assert_int_equal(off, 100);
	assert_int_equal(mlen, 0);
	/* A very large request does not wrap around. */
	md.local_offset = 10;
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, UINT64_MAX, &off, &mlen));
	assert_int_equal(mlen, 90);
}

static void test_md_manage_remote(void **state)
{
	(void)state;
	ptl_size_t off, mlen;
	struct ptl_md md = mk_md(100, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE);
	/* The local offset is ignored; the initiator's is used. */
	md.local_offset = 50;
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 10, 90, &off, &mlen));
	assert_int_equal(off, 10);
	assert_int_equal(mlen, 90);
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 0, 100, &off, &mlen));
	assert_int_equal(off, 0);
	assert_int_equal(mlen, 100);
	assert_false(ptl_md_accepts(&md, PTL_MATCH_PUT, 10, 91, &off, &mlen));
	assert_false(ptl_md_accepts(&md, PTL_MATCH_PUT, 100, 1, &off, &mlen));
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 100, 0, &off, &mlen));
	assert_int_equal(mlen, 0);
	/* An offset past the end, and one whose sum with the length would
	 * wrap, are rejected rather than read out of bounds. */
	assert_false(ptl_md_accepts(&md, PTL_MATCH_PUT, 101, 0 + 1, &off, &mlen));
	assert_false(ptl_md_accepts(&md, PTL_MATCH_PUT, UINT64_MAX - 5, 10, &off, &mlen));

	md.md.options |= PTL_MD_TRUNCATE;
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, 95, 10, &off, &mlen));
	assert_int_equal(off, 95);
	assert_int_equal(mlen, 5);
	assert_true(ptl_md_accepts(&md, PTL_MATCH_PUT, UINT64_MAX - 5, 10, &off, &mlen));
	assert_int_equal(mlen, 0);
}

/* ------------------------------------------------------------ ptl_match */

struct list_fixture {
	struct ptl_list head;
	struct ptl_me me[6];
	struct ptl_md md[6];
};

static void add(struct list_fixture *f, int i)
{
	ptl_list_add_before(&f->me[i].link, &f->head); /* append */
}

static void test_match_order(void **state)
{
	(void)state;
	struct list_fixture f;
	ptl_size_t off = 99, mlen = 99;
	ptl_process_id_t src = pid_of(4, 2);
	ptl_list_init(&f.head);
	assert_null(ptl_match(&f.head, src, 0x10, PTL_MATCH_PUT, 0, 8, &off, &mlen));

	/* 0: matches but has no MD. */
	f.me[0] = mk_me(PTL_NID_ANY, PTL_PID_ANY, 0x10, 0);
	/* 1: MD would accept, bits differ. */
	f.me[1] = mk_me(PTL_NID_ANY, PTL_PID_ANY, 0x11, 0);
	f.md[1] = mk_md(64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT);
	f.me[1].md = &f.md[1];
	/* 2: matches; MD used up. */
	f.me[2] = mk_me(4, 2, 0x10, 0);
	f.md[2] = mk_md(64, 0, PTL_MD_OP_PUT);
	f.me[2].md = &f.md[2];
	/* 3: matches; MD is too small, no TRUNCATE. */
	f.me[3] = mk_me(PTL_NID_ANY, 2, 0x10, 0);
	f.md[3] = mk_md(4, 1, PTL_MD_OP_PUT);
	f.me[3].md = &f.md[3];
	/* 4: matches and accepts (a get-only MD would not). */
	f.me[4] = mk_me(4, PTL_PID_ANY, 0x00, 0xff);
	f.md[4] = mk_md(64, 2, PTL_MD_OP_PUT);
	f.md[4].local_offset = 16;
	f.me[4].md = &f.md[4];
	/* 5: would accept too, but comes later. */
	f.me[5] = mk_me(PTL_NID_ANY, PTL_PID_ANY, 0x10, 0);
	f.md[5] = mk_md(64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_TRUNCATE);
	f.me[5].md = &f.md[5];
	for (int i = 0; i < 6; i++)
		add(&f, i);

	assert_ptr_equal(ptl_match(&f.head, src, 0x10, PTL_MATCH_PUT, 0, 8, &off, &mlen), &f.me[4]);
	assert_int_equal(off, 16);
	assert_int_equal(mlen, 8);
	/* A get passes over 4 (put only) to 5. */
	assert_ptr_equal(ptl_match(&f.head, src, 0x10, PTL_MATCH_GET, 0, 8, &off, &mlen), &f.me[5]);
	assert_int_equal(off, 0);
	/* Too long for 4 (48 left): 5 truncates. */
	assert_ptr_equal(ptl_match(&f.head, src, 0x10, PTL_MATCH_PUT, 0, 49, &off, &mlen), &f.me[5]);
	assert_int_equal(mlen, 49);
	assert_ptr_equal(ptl_match(&f.head, src, 0x10, PTL_MATCH_PUT, 0, 100, &off, &mlen), &f.me[5]);
	assert_int_equal(mlen, 64);
	/* Small enough for 3, and 2's threshold is back: 2 wins. */
	f.md[2].md.threshold = 1;
	assert_ptr_equal(ptl_match(&f.head, src, 0x10, PTL_MATCH_PUT, 0, 4, &off, &mlen), &f.me[2]);
	/* ...but not from another pid (2 and 3 want pid 2). */
	assert_ptr_equal(ptl_match(&f.head, pid_of(4, 9), 0x10, PTL_MATCH_PUT, 0, 4, &off, &mlen),
			 &f.me[4]);
	f.md[2].md.threshold = 0;
	assert_ptr_equal(ptl_match(&f.head, src, 0x10, PTL_MATCH_PUT, 0, 4, &off, &mlen), &f.me[3]);
	/* Bits 0x11 reach 1 first. */
	assert_ptr_equal(ptl_match(&f.head, src, 0x11, PTL_MATCH_PUT, 0, 4, &off, &mlen), &f.me[1]);
	/* Giving ME 0 an MD makes it first. */
	f.md[0] = mk_md(8, 1, PTL_MD_OP_PUT);
	f.me[0].md = &f.md[0];
	assert_ptr_equal(ptl_match(&f.head, src, 0x10, PTL_MATCH_PUT, 0, 4, &off, &mlen), &f.me[0]);
	/* Unlinking the winners exposes the next ones. */
	ptl_list_del(&f.me[0].link);
	ptl_list_del(&f.me[3].link);
	ptl_list_del(&f.me[4].link);
	assert_ptr_equal(ptl_match(&f.head, src, 0x10, PTL_MATCH_PUT, 0, 4, &off, &mlen), &f.me[5]);
	ptl_list_del(&f.me[5].link);
	off = mlen = 1234;
	assert_null(ptl_match(&f.head, src, 0x10, PTL_MATCH_PUT, 0, 4, &off, &mlen));
	/* Nobody matches bits 0x20 or a different nid. */
	assert_null(ptl_match(&f.head, src, 0x20, PTL_MATCH_PUT, 0, 4, &off, &mlen));
	assert_null(ptl_match(&f.head, pid_of(5, 2), 0x11 ^ 0x100, PTL_MATCH_PUT, 0, 4, &off, &mlen));
}

static void test_match_doomed_skipped(void **state)
{
	(void)state;
	struct list_fixture f;
	ptl_size_t off, mlen;
	ptl_process_id_t src = pid_of(0, 0);
	ptl_list_init(&f.head);
	for (int i = 0; i < 2; i++) {
		f.me[i] = mk_me(PTL_NID_ANY, PTL_PID_ANY, 7, 0);
		f.md[i] = mk_md(16, PTL_MD_THRESH_INF, PTL_MD_OP_PUT);
		f.me[i].md = &f.md[i];
		add(&f, i);
	}
	f.md[0].doomed = true;
	assert_ptr_equal(ptl_match(&f.head, src, 7, PTL_MATCH_PUT, 0, 16, &off, &mlen), &f.me[1]);
	f.md[1].doomed = true;
	assert_null(ptl_match(&f.head, src, 7, PTL_MATCH_PUT, 0, 16, &off, &mlen));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_me_match_id),
		cmocka_unit_test(test_me_match_id_packed),
		cmocka_unit_test(test_me_match_bits),
		cmocka_unit_test(test_md_op_enable),
		cmocka_unit_test(test_md_threshold),
		cmocka_unit_test(test_md_fit_local_offset),
		cmocka_unit_test(test_md_truncate),
		cmocka_unit_test(test_md_manage_remote),
		cmocka_unit_test(test_match_order),
		cmocka_unit_test(test_match_doomed_skipped),
	};
	return cmocka_run_group_tests_name("ptl_match", tests, NULL, NULL);
}
