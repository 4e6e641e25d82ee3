/*
 * tests/ptl/unit/test_handle.c - the handle table (lib/ptl/ptl_handle.c) on
 * its own: allocation, lookup and free; a freed slot's generation changes so
 * its old handle fails, and a handle guessing its next one fails until the
 * slot is taken again; forged handles (wrong kind, NI, index, generation)
 * fail without touching memory; a full table says so; freed indexes come
 * back.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ptl/ptl_handle.h"

struct obj {
	uint64_t a, b;
};

static int setup(void **state)
{
	static struct ptl_htab t;
	if (ptl_htab_init(&t, PTL_HK_MD, 3, 8, sizeof(struct obj)) != 0)
		return -1;
	*state = &t;
	return 0;
}

static int teardown(void **state)
{
	ptl_htab_fini(*state);
	return 0;
}

static void test_handle_packing(void **state)
{
	(void)state;
	uint64_t h = ptl_handle_make(PTL_HK_ME, 0xab, 0x1234, 0xdeadbeefu);
	assert_int_equal(ptl_handle_kind(h), PTL_HK_ME);
	assert_int_equal(ptl_handle_ni(h), 0xab);
	assert_int_equal(ptl_handle_gen(h), 0x1234);
	assert_int_equal(ptl_handle_idx(h), 0xdeadbeefu);
	/* Fields do not bleed into each other. */
	h = ptl_handle_make(0x1ff, 0x1ff, 0x1ffff, 0xffffffffu);
	assert_int_equal(ptl_handle_kind(h), 0xff);
	assert_int_equal(ptl_handle_ni(h), 0xff);
	assert_int_equal(ptl_handle_gen(h), 0xffff);
}

static void test_alloc_lookup_free(void **state)
{
	struct ptl_htab *t = *state;
	uint64_t h1 = 0, h2 = 0;
	struct obj *o1 = ptl_htab_alloc(t, &h1);
	struct obj *o2 = ptl_htab_alloc(t, &h2);
	assert_non_null(o1);
	assert_non_null(o2);
	assert_ptr_not_equal(o1, o2);
	assert_int_not_equal(h1, 0);
	assert_int_not_equal(h1, h2);
	assert_int_equal(t->used, 2);
	assert_int_equal(ptl_handle_kind(h1), PTL_HK_MD);
	assert_int_equal(ptl_handle_ni(h1), 3);
	assert_int_not_equal(ptl_handle_gen(h1), 0);
	/* Slots come out in ascending index order. */
	assert_int_equal(ptl_handle_idx(h1), 0);
	assert_int_equal(ptl_handle_idx(h2), 1);
	assert_int_equal(ptl_htab_index(t, o1), 0);
	assert_int_equal(ptl_htab_index(t, o2), 1);

	/* Slots come zeroed and are distinct memory. */
	assert_int_equal(o1->a, 0);
	assert_int_equal(o1->b, 0);
	o1->a = 11;
	o2->a = 22;
	assert_ptr_equal(ptl_htab_lookup(t, h1), o1);
	assert_ptr_equal(ptl_htab_lookup(t, h2), o2);
	assert_int_equal(((struct obj *)ptl_htab_lookup(t, h1))->a, 11);
	assert_ptr_equal(ptl_htab_at(t, 0), o1);
	assert_ptr_equal(ptl_htab_at(t, 1), o2);
	assert_null(ptl_htab_at(t, 2));
	assert_null(ptl_htab_at(t, 8));

	ptl_htab_free(t, o1);
	assert_int_equal(t->used, 1);
	assert_null(ptl_htab_lookup(t, h1));
	assert_null(ptl_htab_at(t, 0));
	assert_ptr_equal(ptl_htab_lookup(t, h2), o2);
	/* A double free is ignored, not a corruption of the free list. */
	ptl_htab_free(t, o1);
	assert_int_equal(t->used, 1);
	assert_int_equal(t->nfree, 1);
	ptl_htab_free(t, o2);
	assert_int_equal(t->used, 0);
	assert_int_equal(t->nfree, 2);
	assert_int_equal(t->fresh, 2); /* slots 2..7 never used yet */
}

static void test_stale_handle_after_reuse(void **state)
{
	struct ptl_htab *t = *state;
	uint64_t h1, h2;
	struct obj *o1 = ptl_htab_alloc(t, &h1);
	assert_non_null(o1);
	o1->a = 5;
	ptl_htab_free(t, o1);
	/* The freed index is the next one handed out, with a new generation. */
	struct obj *o2 = ptl_htab_alloc(t, &h2);
	assert_ptr_equal(o2, o1);
	assert_int_equal(ptl_handle_idx(h2), ptl_handle_idx(h1));
	assert_int_not_equal(ptl_handle_gen(h2), ptl_handle_gen(h1));
	assert_int_not_equal(h2, h1);
	assert_int_equal(o2->a, 0); /* zeroed again */
	assert_null(ptl_htab_lookup(t, h1));
	assert_ptr_equal(ptl_htab_lookup(t, h2), o2);
	ptl_htab_free(t, o2);
}

static void test_generation_wraps_skipping_zero(void **state)
{
	struct ptl_htab *t = *state;
	uint64_t h, first;
	struct obj *o = ptl_htab_alloc(t, &first);
	ptl_htab_free(t, o);
	/* 65535 generations later the slot is back to its first generation;
	 * generation 0 is never handed out on the way. */
	for (unsigned i = 0; i < 65534; i++) {
		o = ptl_htab_alloc(t, &h);
		assert_non_null(o);
		if (ptl_handle_gen(h) == 0)
			fail_msg("generation 0 handed out after %u reuses", i);
		if (h == first)
			fail_msg("handle repeated after only %u reuses", i + 1);
		ptl_htab_free(t, o);
	}
	o = ptl_htab_alloc(t, &h);
	assert_int_equal(h, first);
	ptl_htab_free(t, o);
}

static void test_forged_handles(void **state)
{
	struct ptl_htab *t = *state;
	uint64_t h;
	struct obj *o = ptl_htab_alloc(t, &h);
	assert_non_null(o);
	unsigned gen = ptl_handle_gen(h);
	uint32_t idx = ptl_handle_idx(h);

	assert_ptr_equal(ptl_htab_lookup(t, ptl_handle_make(PTL_HK_MD, 3, gen, idx)), o);
	/* Wrong kind. */
	assert_null(ptl_htab_lookup(t, ptl_handle_make(PTL_HK_ME, 3, gen, idx)));
	assert_null(ptl_htab_lookup(t, ptl_handle_make(PTL_HK_EQ, 3, gen, idx)));
	assert_null(ptl_htab_lookup(t, ptl_handle_make(0, 3, gen, idx)));
	/* Wrong NI. */
	assert_null(ptl_htab_lookup(t, ptl_handle_make(PTL_HK_MD, 0, gen, idx)));
	assert_null(ptl_htab_lookup(t, ptl_handle_make(PTL_HK_MD, 4, gen, idx)));
	/* Wrong generation, including 0 and the all-ones one. */
	assert_null(ptl_htab_lookup(t, ptl_handle_make(PTL_HK_MD, 3, gen + 1, idx)));
	assert_null(ptl_htab_lookup(t, ptl_handle_make(PTL_HK_MD, 3, 0, idx)));
	assert_null(ptl_htab_lookup(t, ptl_handle_make(PTL_HK_MD, 3, 0xffff, idx)));
	/* Index of a slot never allocated, and indexes out of range: the
	 * lookup must not read past the table (valgrind would see it). */
	assert_null(ptl_htab_lookup(t, ptl_handle_make(PTL_HK_MD, 3, gen, idx + 1)));
	assert_null(ptl_htab_lookup(t, ptl_handle_make(PTL_HK_MD, 3, gen, 8)));
	assert_null(ptl_htab_lookup(t, ptl_handle_make(PTL_HK_MD, 3, gen, 0x7fffffffu)));
	assert_null(ptl_htab_lookup(t, ptl_handle_make(PTL_HK_MD, 3, gen, 0xffffffffu)));
	/* The invalid handle and all ones. */
	assert_null(ptl_htab_lookup(t, 0));
	assert_null(ptl_htab_lookup(t, UINT64_MAX));
	ptl_htab_free(t, o);
	assert_null(ptl_htab_lookup(t, h));
}

/* A free slot keeps the generation its next handle will carry, marked not
 * live: a handle guessing that generation fails until the slot is taken,
 * and works only once it is. */
static void test_free_slot_next_generation(void **state)
{
	struct ptl_htab *t = *state;
	uint64_t h, h2;
	struct obj *o = ptl_htab_alloc(t, &h);
	assert_non_null(o);
	ptl_htab_free(t, o);
	uint64_t guess = ptl_handle_make(PTL_HK_MD, 3, ptl_handle_gen(h) + 1, ptl_handle_idx(h));
	assert_null(ptl_htab_lookup(t, guess));
	assert_null(ptl_htab_at(t, ptl_handle_idx(h)));
	assert_ptr_equal(ptl_htab_alloc(t, &h2), o);
	assert_int_equal(h2, guess);
	assert_ptr_equal(ptl_htab_lookup(t, guess), o);
	ptl_htab_free(t, o);
}

/* Slots never used are taken only when nothing freed waits, in ascending
 * order, each first with generation 1; a handle guessing one before it is
 * taken fails, and a walk finds nothing there. */
static void test_fresh_slots(void **state)
{
	struct ptl_htab *t = *state;
	uint64_t h0, h1, h2, h3;
	uint64_t guess = ptl_handle_make(PTL_HK_MD, 3, 1, 2);
	assert_null(ptl_htab_lookup(t, guess));
	for (uint32_t i = 0; i < t->cap; i++)
		assert_null(ptl_htab_at(t, i));
	struct obj *o0 = ptl_htab_alloc(t, &h0);
	struct obj *o1 = ptl_htab_alloc(t, &h1);
	assert_int_equal(ptl_handle_gen(h0), 1);
	ptl_htab_free(t, o0);
	/* The freed slot 0 before the fresh slot 2. */
	assert_ptr_equal(ptl_htab_alloc(t, &h2), o0);
	assert_int_equal(ptl_handle_idx(h2), 0);
	assert_int_equal(ptl_handle_gen(h2), 2);
	assert_null(ptl_htab_lookup(t, guess));
	struct obj *o3 = ptl_htab_alloc(t, &h3);
	assert_int_equal(h3, guess);
	assert_ptr_equal(ptl_htab_lookup(t, guess), o3);
	assert_null(ptl_htab_at(t, 3));
	ptl_htab_free(t, o0);
	ptl_htab_free(t, o1);
	ptl_htab_free(t, o3);
	assert_int_equal(t->used, 0);
}

static void test_full_table(void **state)
{
	struct ptl_htab *t = *state;
	struct obj *o[8];
	uint64_t h[8], hx = 0x1234;
	for (int i = 0; i < 8; i++) {
		o[i] = ptl_htab_alloc(t, &h[i]);
		assert_non_null(o[i]);
		assert_int_equal(ptl_handle_idx(h[i]), i);
	}
	assert_int_equal(t->used, 8);
	assert_null(ptl_htab_alloc(t, &hx));
	assert_int_equal(hx, 0x1234); /* untouched on failure */
	for (int i = 0; i < 8; i++)
		assert_ptr_equal(ptl_htab_lookup(t, h[i]), o[i]);

	/* Free one in the middle: that index is the one reused, the others
	 * stay valid, and the table is full again afterwards. */
	ptl_htab_free(t, o[5]);
	uint64_t h5;
	struct obj *n5 = ptl_htab_alloc(t, &h5);
	assert_ptr_equal(n5, o[5]);
	assert_int_equal(ptl_handle_idx(h5), 5);
	assert_null(ptl_htab_lookup(t, h[5]));
	assert_ptr_equal(ptl_htab_lookup(t, h5), n5);
	assert_null(ptl_htab_alloc(t, &hx));
	h[5] = h5;

	/* Free in some order: the most recently freed index comes back first. */
	ptl_htab_free(t, o[2]);
	ptl_htab_free(t, o[6]);
	uint64_t ha, hb;
	assert_ptr_equal(ptl_htab_alloc(t, &ha), o[6]);
	assert_ptr_equal(ptl_htab_alloc(t, &hb), o[2]);
	assert_int_equal(ptl_handle_idx(ha), 6);
	assert_int_equal(ptl_handle_idx(hb), 2);
	h[6] = ha;
	h[2] = hb;
	for (int i = 0; i < 8; i++) {
		assert_ptr_equal(ptl_htab_lookup(t, h[i]), o[i]);
		ptl_htab_free(t, o[i]);
		assert_null(ptl_htab_lookup(t, h[i]));
	}
	assert_int_equal(t->used, 0);
}

static void test_zero_capacity(void **state)
{
	(void)state;
	struct ptl_htab t;
	uint64_t h;
	assert_int_equal(ptl_htab_init(&t, PTL_HK_EQ, 0, 0, 16), 0);
	assert_null(ptl_htab_alloc(&t, &h));
	assert_null(ptl_htab_lookup(&t, ptl_handle_make(PTL_HK_EQ, 0, 1, 0)));
	assert_null(ptl_htab_at(&t, 0));
	ptl_htab_fini(&t);
	/* A finished table looks empty, it does not crash. */
	assert_null(ptl_htab_lookup(&t, ptl_handle_make(PTL_HK_EQ, 0, 1, 0)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handle_packing),
		cmocka_unit_test_setup_teardown(test_alloc_lookup_free, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_handle_after_reuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_generation_wraps_skipping_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_handles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fresh_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_slot_next_generation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_table, setup, teardown),
		cmocka_unit_test(test_zero_capacity),
	};
	return cmocka_run_group_tests_name("ptl_handle", tests, NULL, NULL);
}
