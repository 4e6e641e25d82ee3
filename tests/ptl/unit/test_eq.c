/*
 * tests/ptl/unit/test_eq.c - the event queue ring (lib/ptl/ptl_eq.c) on its
 * own: events posted with ptl_eq_post come out of PtlEQGet/Wait/Poll in
 * order with consecutive sequence numbers; an overrun overwrites the oldest
 * events and the next read returns PTL_EQ_DROPPED with the oldest event that
 * survived, counting the lost ones; handlers run on post; PtlEQPoll over
 * several EQs and its timeout; a poll of one EQ that holds events already
 * (no progress pass); an EQ freed while a poll spins on it, or while
 * PtlEQGet's progress pass runs; a spinning poll's hold of the library
 * lock; how long a wait polls before it sleeps; the dead-peer probe a
 * wait asks before it sleeps (an answer it fails ends the wait, a slice
 * never outlasts its period), and a poll loop (PtlEQGet, PtlEQPoll of
 * timeout 0) without a progress thread every 64 empty polls while
 * operations are in flight;
 * PtlEQAlloc/Free and their errors.
 *
 * ptl_eq.c and ptl_handle.c are compiled in; the NI, the view objects and
 * progress are stand-ins below (the ring is plain memory).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "ptl/ptl_internal.h"

/* ------------------------------------------------------------ stand-ins */
struct ptl_lib ptl_lib = { .wait_yield_every = 64 };

static struct ptl_ni the_ni;
static struct ptl_view_proc the_view;
static int progress_calls;
/* What "arrives" when the caller drives progress. */
static struct ptl_eq *arrive_eq;
static int arrive_left;
static int arrive_skip; /* progress calls that bring nothing first */

struct ptl_ni *ptl_ni_lookup(ptl_handle_ni_t h)
{
	return ptl_lib.ni && h == ptl_lib.ni->handle ? ptl_lib.ni : NULL;
}

/* An EQ an "event handler" frees during the next progress pass. */
static ptl_handle_eq_t free_in_progress;

/* The library lock between a poll's passes (test_poll_keeps_lock): from
 * pass lock_probe_from on, each pass records whether the poll let the lock
 * go since the pass before (ptl_lock wrote its owner again over the mark
 * left there) and leaves the mark again; on the passes in lock_contend a
 * thread "waits" for the lock: the word says contended, as ptl_lock
 * leaves it before it sleeps. */
#define LOCK_MARK 0x5a5a5a5aul
static int lock_probe_from; /* 0: off */
static unsigned long lock_contend; /* bit p: contended after pass p */
static unsigned long lock_let_go;  /* bit p: the lock was let go before pass p */

static void lock_probe(void)
{
	struct ptl_rlock *l = &ptl_lib.lock;
	int p = progress_calls;
	if (!lock_probe_from || p < lock_probe_from || p >= 64)
		return;
	assert_int_not_equal(atomic_load(&l->word), 0); /* a pass runs locked */
	if (p > lock_probe_from && atomic_load(&l->owner) != LOCK_MARK)
		lock_let_go |= 1ul << p;
	atomic_store(&l->owner, LOCK_MARK);
	if (lock_contend & (1ul << p))
		atomic_store(&l->word, 2);
}

void ptl_progress_app(void)
{
	progress_calls++;
	lock_probe();
	if (free_in_progress != PTL_EQ_NONE) {
		assert_int_equal(PtlEQFree(free_in_progress), PTL_OK);
		free_in_progress = PTL_EQ_NONE;
	}
	if (arrive_skip > 0) {
		arrive_skip--;
		return;
	}
	if (arrive_eq && arrive_left > 0) {
		arrive_left--;
		ptl_event_t ev = { .type = PTL_EVENT_PUT_END, .hdr_data = 0xa11 };
		ptl_eq_post(arrive_eq, &ev);
	}
}

/* When a wait first went to sleep: the passes it had made by then (-1:
 * not yet), and the time (now_s); with sleep_post_eq an event lands there
 * as it does, so that the wait ends at once, whatever its timeout. */
static int sleep_after_calls;
static double sleep_at;
static struct ptl_eq *sleep_post_eq;
static double now_s(void);

void ptl_progress_app_sleeping(void)
{
	if (sleep_after_calls < 0) {
		sleep_after_calls = progress_calls;
		sleep_at = now_s();
	}
	if (sleep_post_eq) {
		ptl_event_t ev = { .type = PTL_EVENT_PUT_END, .hdr_data = 0x51ee };
		ptl_eq_post(sleep_post_eq, &ev);
	}
}

/* No progress thread here: PtlEQPoll sleeps "in the NAL" through this;
 * the longest sleep asked for is kept. */
static int nal_wait_max;

void ptl_progress_nal_wait(int timeout_ms)
{
	if (timeout_ms > nal_wait_max)
		nal_wait_max = timeout_ms;
	if (timeout_ms > 0)
		nanosleep(&(struct timespec){ timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L }, NULL);
}

/* The dead-peer probe (ptl_progress.c's ptl_peers_probe): the sleep it
 * allows (probe_next_ms, -1: nothing awaited), and with probe_dead_eq a
 * peer it finds dead: the failed ACK lands there, as ptl_peer_fail posts
 * it, after a "handler" freed probe_free_eq if set. */
static int probe_calls, probe_next_ms;
static struct ptl_eq *probe_dead_eq;
static ptl_handle_eq_t probe_free_eq;

int ptl_peers_probe(int *next_ms)
{
	probe_calls++;
	*next_ms = probe_next_ms;
	if (!probe_dead_eq)
		return 0;
	if (probe_free_eq != PTL_EQ_NONE) {
		assert_int_equal(PtlEQFree(probe_free_eq), PTL_OK);
		probe_free_eq = PTL_EQ_NONE;
	}
	ptl_event_t ev = { .type = PTL_EVENT_ACK, .ni_fail_type = PTL_NI_FAIL, .hdr_data = 0xdead };
	ptl_eq_post(probe_dead_eq, &ev);
	probe_dead_eq = NULL;
	return 1;
}

int ptl_view_eq_create(struct ptl_eq *eq, uint64_t count)
{
	struct ptl_view_eq *r = calloc(1, sizeof *r + count * sizeof(ptl_event_t));
	if (!r)
		return -1;
	r->count = count;
	r->handle = eq->handle;
	eq->ring = r;
	return 0;
}

void ptl_view_eq_destroy(struct ptl_eq *eq)
{
	free(eq->ring);
	eq->ring = NULL;
}

/* ------------------------------------------------------------ fixture */
#define MAX_EQS 4

static int setup(void **state)
{
	(void)state;
	memset(&the_ni, 0, sizeof the_ni);
	the_ni.handle = ptl_handle_make(PTL_HK_NI, 0, 1, 0);
	the_ni.limits.max_eqs = MAX_EQS;
	if (ptl_htab_init(&the_ni.eqs, PTL_HK_EQ, 0, MAX_EQS, sizeof(struct ptl_eq)))
		return -1;
	ptl_lib.ni = &the_ni;
	ptl_lib.view = &the_view;
	ptl_lib.init_count = 1;
	progress_calls = 0;
	arrive_eq = NULL;
	arrive_left = 0;
	arrive_skip = 0;
	free_in_progress = PTL_EQ_NONE;
	lock_probe_from = 0;
	lock_contend = 0;
	lock_let_go = 0;
	sleep_after_calls = -1;
	sleep_post_eq = NULL;
	nal_wait_max = 0;
	probe_calls = 0;
	probe_next_ms = -1;
	probe_dead_eq = NULL;
	probe_free_eq = PTL_EQ_NONE;
	ptl_lib.thread_running = false;
	ptl_lib.wait_yield_every = 64;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (uint32_t i = 0; i < the_ni.eqs.cap; i++) {
		struct ptl_eq *eq = ptl_htab_at(&the_ni.eqs, i);
		if (eq)
			ptl_eq_destroy(&the_ni, eq);
	}
	ptl_htab_fini(&the_ni.eqs);
	ptl_lib.ni = NULL;
	ptl_lib.view = NULL;
	return 0;
}

static ptl_handle_eq_t alloc_eq(ptl_size_t count, ptl_eq_handler_t handler)
{
	ptl_handle_eq_t h = 0;
	assert_int_equal(PtlEQAlloc(the_ni.handle, count, handler, &h), PTL_OK);
	assert_int_not_equal(h, PTL_EQ_NONE);
	return h;
}

static struct ptl_eq *eq_of(ptl_handle_eq_t h)
{
	struct ptl_eq *eq = ptl_eq_lookup(&the_ni, h);
	assert_non_null(eq);
	return eq;
}

/* Posts an event tagged with n (in hdr_data and mlength). */
static void post(ptl_handle_eq_t h, uint64_t n)
{
	ptl_event_t ev;
	memset(&ev, 0, sizeof ev);
	ev.type = PTL_EVENT_PUT_END;
	ev.hdr_data = n;
	ev.mlength = n * 3;
	ev.match_bits = ~n;
	ev.sequence = 12345; /* the EQ assigns it */
	ptl_eq_post(eq_of(h), &ev);
}

static void expect(ptl_handle_eq_t h, int rc, uint64_t n, uint64_t seq)
{
	ptl_event_t ev;
	memset(&ev, 0xee, sizeof ev);
	int got = PtlEQGet(h, &ev);
	if (got != rc)
		fail_msg("PtlEQGet: %d (%s), expected %d (%s), for event %llu", got,
			 PtlErrorStr((unsigned)got), rc, PtlErrorStr((unsigned)rc),
			 (unsigned long long)n);
	assert_int_equal(ev.type, PTL_EVENT_PUT_END);
	assert_int_equal(ev.hdr_data, n);
	assert_int_equal(ev.mlength, n * 3);
	assert_int_equal(ev.match_bits, ~n);
	assert_int_equal(ev.sequence, seq);
}

static void expect_empty(ptl_handle_eq_t h)
{
	ptl_event_t ev;
	assert_int_equal(PtlEQGet(h, &ev), PTL_EQ_EMPTY);
}

/* ------------------------------------------------------------ tests */

static void test_alloc_errors(void **state)
{
	(void)state;
	ptl_handle_eq_t h = 0x77;
	assert_int_equal(PtlEQAlloc(the_ni.handle, 4, NULL, NULL), PTL_SEGV);
	assert_int_equal(PtlEQAlloc(the_ni.handle + 1, 4, NULL, &h), PTL_NI_INVALID);
	assert_int_equal(PtlEQAlloc(PTL_EQ_NONE, 4, NULL, &h), PTL_NI_INVALID);
	int rc = PtlEQAlloc(the_ni.handle, 0, NULL, &h);
	assert_int_not_equal(rc, PTL_OK);
	assert_int_equal(rc, PTL_NO_SPACE);
	assert_int_equal(h, 0x77);
	assert_int_equal(PtlEQAlloc(the_ni.handle, (ptl_size_t)1 << 40, NULL, &h), PTL_NO_SPACE);
	assert_int_equal(the_ni.eqs.used, 0);
	/* Table full. */
	ptl_handle_eq_t hs[MAX_EQS];
	for (int i = 0; i < MAX_EQS; i++)
		hs[i] = alloc_eq(1, NULL);
	assert_int_equal(PtlEQAlloc(the_ni.handle, 1, NULL, &h), PTL_NO_SPACE);
	assert_int_equal(h, 0x77);
	assert_int_equal(PtlEQFree(hs[2]), PTL_OK);
	assert_int_equal(PtlEQFree(hs[2]), PTL_EQ_INVALID);
	assert_int_equal(PtlEQAlloc(the_ni.handle, 1, NULL, &h), PTL_OK);
	assert_int_not_equal(h, hs[2]); /* same slot, new handle */
	ptl_event_t ev;
	assert_int_equal(PtlEQGet(hs[2], &ev), PTL_EQ_INVALID);
	assert_int_equal(PtlEQGet(h, &ev), PTL_EQ_EMPTY);

	ptl_lib.init_count = 0;
	assert_int_equal(PtlEQAlloc(the_ni.handle, 4, NULL, &h), PTL_NO_INIT);
	assert_int_equal(PtlEQFree(h), PTL_NO_INIT);
	assert_int_equal(PtlEQGet(h, &ev), PTL_NO_INIT);
	int which;
	assert_int_equal(PtlEQPoll(&h, 1, 0, &ev, &which), PTL_NO_INIT);
	assert_int_equal(PtlEQWait(h, &ev), PTL_NO_INIT);
}

static void test_get_errors(void **state)
{
	(void)state;
	ptl_handle_eq_t h = alloc_eq(4, NULL);
	ptl_event_t ev;
	int which;
	assert_int_equal(PtlEQGet(h, NULL), PTL_SEGV);
	assert_int_equal(PtlEQGet(PTL_EQ_NONE, &ev), PTL_EQ_INVALID);
	assert_int_equal(PtlEQGet(h + 1, &ev), PTL_EQ_INVALID);
	assert_int_equal(PtlEQGet(the_ni.handle, &ev), PTL_EQ_INVALID);
	assert_int_equal(PtlEQWait(h + (1ull << 32), &ev), PTL_EQ_INVALID);
	assert_int_equal(PtlEQFree(h + 1), PTL_EQ_INVALID);
	assert_int_equal(PtlEQPoll(NULL, 1, 0, &ev, &which), PTL_SEGV);
	assert_int_equal(PtlEQPoll(&h, 1, 0, NULL, &which), PTL_SEGV);
	assert_int_equal(PtlEQPoll(&h, 1, 0, &ev, NULL), PTL_SEGV);
	ptl_handle_eq_t two[2] = { h, h + 1 };
	assert_int_equal(PtlEQPoll(two, 2, 0, &ev, &which), PTL_EQ_INVALID);
	/* A thread blocked on it: PtlEQFree refuses. */
	atomic_store(&eq_of(h)->waiters, 1);
	assert_int_not_equal(PtlEQFree(h), PTL_OK);
	atomic_store(&eq_of(h)->waiters, 0);
	assert_int_equal(PtlEQFree(h), PTL_OK);
}

static void test_order_and_sequence(void **state)
{
	(void)state;
	ptl_handle_eq_t h = alloc_eq(4, NULL);
	expect_empty(h);
	for (uint64_t i = 0; i < 3; i++)
		post(h, i);
	for (uint64_t i = 0; i < 3; i++)
		expect(h, PTL_OK, i, i);
	expect_empty(h);
	/* Around the ring several times, reading as we go, sometimes two
	 * at once: the sequence keeps counting, nothing is dropped. */
	uint64_t seq = 3;
	for (uint64_t i = 3; i < 40; i++) {
		post(h, i);
		if (i % 3 == 0) {
			post(h, 1000 + i);
			expect(h, PTL_OK, i, seq++);
			expect(h, PTL_OK, 1000 + i, seq++);
		} else {
			expect(h, PTL_OK, i, seq++);
		}
	}
	expect_empty(h);
	assert_int_equal(eq_of(h)->ring->write_seq, seq);
	assert_int_equal(eq_of(h)->ring->dropped, 0);
}

/* An EQ whose size is no power of two: slots are counted round as the
 * sequence advances (no division), and every event still lands in and
 * comes out of the slot of its sequence, across laps, overruns (the read
 * side jumps) and reads of several at once. */
static void test_odd_size_laps(void **state)
{
	(void)state;
	ptl_handle_eq_t h = alloc_eq(3, NULL);
	struct ptl_eq *eq = eq_of(h);
	uint64_t seq = 0;
	for (int lap = 0; lap < 5; lap++) {
		for (int k = 0; k < 2; k++)
			post(h, seq + (uint64_t)k);
		for (int k = 0; k < 2; k++, seq++)
			expect(h, PTL_OK, seq, seq);
		assert_int_equal(eq->wr_slot, seq % 3);
		assert_int_equal(eq->rd_slot, seq % 3);
		/* The event of sequence s sits in slot s % 3. */
		assert_int_equal(PTL_VIEW_EQ_EVENTS(eq->ring)[(seq - 1) % 3].hdr_data, seq - 1);
	}
	/* Overrun by 4 after a lap: the oldest survivor comes out, from the
	 * slot of its sequence. */
	for (uint64_t k = 0; k < 7; k++)
		post(h, seq + k);
	expect(h, PTL_EQ_DROPPED, seq + 4, seq + 4);
	expect(h, PTL_OK, seq + 5, seq + 5);
	expect(h, PTL_OK, seq + 6, seq + 6);
	expect_empty(h);
	seq += 7;
	assert_int_equal(eq->rd_slot, seq % 3);
	assert_int_equal(eq->wr_slot, seq % 3);
	post(h, seq);
	expect(h, PTL_OK, seq, seq);
}

static void test_full_without_overrun(void **state)
{
	(void)state;
	ptl_handle_eq_t h = alloc_eq(4, NULL);
	for (uint64_t i = 0; i < 4; i++)
		post(h, i);
	for (uint64_t i = 0; i < 4; i++)
		expect(h, PTL_OK, i, i);
	expect_empty(h);
	assert_int_equal(eq_of(h)->ring->dropped, 0);
	assert_int_equal(eq_of(h)->ring->read_seq, 4);
	assert_int_equal(eq_of(h)->ring->write_seq, 4);
}

static void test_overrun(void **state)
{
	(void)state;
	ptl_handle_eq_t h = alloc_eq(4, NULL);
	for (uint64_t i = 0; i < 10; i++)
		post(h, i);
	/* 0..5 were overwritten; 6 is the oldest left. */
	expect(h, PTL_EQ_DROPPED, 6, 6);
	assert_int_equal(eq_of(h)->ring->dropped, 6);
	expect(h, PTL_OK, 7, 7);
	expect(h, PTL_OK, 8, 8);
	expect(h, PTL_OK, 9, 9);
	expect_empty(h);
	/* Back to normal. */
	post(h, 10);
	post(h, 11);
	expect(h, PTL_OK, 10, 10);
	expect(h, PTL_OK, 11, 11);
	expect_empty(h);

	/* Overrun after a partial read: 12, 13 read; 14..19 posted, 14 and 15 lost. */
	for (uint64_t i = 12; i < 14; i++)
		post(h, i);
	expect(h, PTL_OK, 12, 12);
	expect(h, PTL_OK, 13, 13);
	for (uint64_t i = 14; i < 20; i++)
		post(h, i);
	expect(h, PTL_EQ_DROPPED, 16, 16);
	assert_int_equal(eq_of(h)->ring->dropped, 8);
	expect(h, PTL_OK, 17, 17);
	/* More overrun while partly read: 18, 19 left, 20..23 posted. */
	for (uint64_t i = 20; i < 24; i++)
		post(h, i);
	expect(h, PTL_EQ_DROPPED, 20, 20);
	assert_int_equal(eq_of(h)->ring->dropped, 10);
	expect(h, PTL_OK, 21, 21);
	expect(h, PTL_OK, 22, 22);
	expect(h, PTL_OK, 23, 23);
	expect_empty(h);
	assert_int_equal(eq_of(h)->ring->dropped, 10);
}

static void test_overrun_count_one(void **state)
{
	(void)state;
	ptl_handle_eq_t h = alloc_eq(1, NULL);
	post(h, 0);
	expect(h, PTL_OK, 0, 0);
	post(h, 1);
	post(h, 2);
	expect(h, PTL_EQ_DROPPED, 2, 2);
	assert_int_equal(eq_of(h)->ring->dropped, 1);
	expect_empty(h);
}

static void test_overrun_through_poll_and_wait(void **state)
{
	(void)state;
	ptl_handle_eq_t h[2] = { alloc_eq(2, NULL), alloc_eq(2, NULL) };
	ptl_event_t ev;
	int which = -1;
	for (uint64_t i = 0; i < 5; i++)
		post(h[1], i);
	assert_int_equal(PtlEQPoll(h, 2, 0, &ev, &which), PTL_EQ_DROPPED);
	assert_int_equal(which, 1);
	assert_int_equal(ev.hdr_data, 3);
	assert_int_equal(ev.sequence, 3);
	assert_int_equal(PtlEQWait(h[1], &ev), PTL_OK);
	assert_int_equal(ev.hdr_data, 4);
	for (uint64_t i = 5; i < 8; i++)
		post(h[1], i);
	assert_int_equal(PtlEQWait(h[1], &ev), PTL_EQ_DROPPED);
	assert_int_equal(ev.hdr_data, 6);
	assert_int_equal(eq_of(h[1])->ring->dropped, 4);
	assert_int_equal(eq_of(h[0])->ring->dropped, 0);
}

static ptl_event_t handled[8];
static int nhandled;

static void handler(ptl_event_t *ev)
{
	if (nhandled < 8)
		handled[nhandled] = *ev;
	nhandled++;
}

static void test_handler(void **state)
{
	(void)state;
	nhandled = 0;
	ptl_handle_eq_t h = alloc_eq(2, handler);
	post(h, 5);
	post(h, 6);
	post(h, 7);
	/* Called once per event, with its sequence, also for one that will
	 * be overwritten before it is read. */
	assert_int_equal(nhandled, 3);
	assert_int_equal(handled[0].hdr_data, 5);
	assert_int_equal(handled[0].sequence, 0);
	assert_int_equal(handled[2].hdr_data, 7);
	assert_int_equal(handled[2].sequence, 2);
	expect(h, PTL_EQ_DROPPED, 6, 1);
	expect(h, PTL_OK, 7, 2);
	assert_int_equal(nhandled, 3);
}

static void test_poll_several(void **state)
{
	(void)state;
	ptl_handle_eq_t h[3] = { alloc_eq(4, NULL), alloc_eq(4, NULL), alloc_eq(4, NULL) };
	ptl_event_t ev;
	int which = -1;
	post(h[2], 1);
	post(h[1], 2);
	assert_int_equal(PtlEQPoll(h, 3, 0, &ev, &which), PTL_OK);
	assert_int_equal(which, 1);
	assert_int_equal(ev.hdr_data, 2);
	assert_int_equal(PtlEQPoll(h, 3, 0, &ev, &which), PTL_OK);
	assert_int_equal(which, 2);
	assert_int_equal(ev.hdr_data, 1);
	assert_int_equal(ev.sequence, 0);
	assert_int_equal(PtlEQPoll(h, 3, 0, &ev, &which), PTL_EQ_EMPTY);
	/* One EQ only. */
	post(h[0], 3);
	assert_int_equal(PtlEQPoll(&h[2], 1, 0, &ev, &which), PTL_EQ_EMPTY);
	assert_int_equal(PtlEQPoll(h, 1, 0, &ev, &which), PTL_OK);
	assert_int_equal(which, 0);
	assert_int_equal(ev.hdr_data, 3);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_poll_timeout(void **state)
{
	(void)state;
	ptl_handle_eq_t h[2] = { alloc_eq(4, NULL), alloc_eq(4, NULL) };
	ptl_event_t ev;
	int which;
	double t0 = now_s();
	for (int i = 0; i < 100; i++)
		assert_int_equal(PtlEQPoll(h, 2, 0, &ev, &which), PTL_EQ_EMPTY);
	double t1 = now_s();
	if (t1 - t0 > 0.5)
		fail_msg("100 PtlEQPoll(timeout 0) on empty EQs took %.3f s", t1 - t0);
	/* Progress was driven while polling: once per poll of timeout 0. */
	assert_int_equal(progress_calls, 100);

	assert_int_equal(PtlEQPoll(h, 2, 60, &ev, &which), PTL_EQ_EMPTY);
	double t2 = now_s();
	if (t2 - t1 < 0.060 || t2 - t1 > 2.0) /* never early */
		fail_msg("PtlEQPoll(timeout 60 ms) returned after %.3f s", t2 - t1);
	assert_int_equal(the_view.waiting, 0);
	assert_int_equal(atomic_load(&eq_of(h[0])->waiters), 0);
	assert_int_equal(atomic_load(&eq_of(h[1])->waiters), 0);
}

static void test_progress_delivers(void **state)
{
	(void)state;
	ptl_handle_eq_t h[2] = { alloc_eq(4, NULL), alloc_eq(4, NULL) };
	ptl_event_t ev;
	int which = -1;
	/* An event that arrives while PtlEQGet drives progress is returned
	 * by that same call. */
	arrive_eq = eq_of(h[0]);
	arrive_left = 1;
	assert_int_equal(PtlEQGet(h[0], &ev), PTL_OK);
	assert_int_equal(ev.hdr_data, 0xa11);
	assert_int_equal(ev.sequence, 0);
	/* Same for PtlEQPoll with a timeout of 0, on the second EQ. */
	arrive_eq = eq_of(h[1]);
	arrive_left = 1;
	assert_int_equal(PtlEQPoll(h, 2, 0, &ev, &which), PTL_OK);
	assert_int_equal(which, 1);
	assert_int_equal(ev.hdr_data, 0xa11);
	/* And for PtlEQWait, which would otherwise block. */
	arrive_eq = eq_of(h[0]);
	arrive_left = 1;
	assert_int_equal(PtlEQWait(h[0], &ev), PTL_OK);
	assert_int_equal(ev.sequence, 1);
}

/* A timed poll keeps polling through its clock checks and past its spins
 * (then it sleeps in slices and polls again) until the event comes, one
 * progress pass per poll, and neither gives up early nor misses it. */
static void test_poll_late_event(void **state)
{
	(void)state;
	ptl_handle_eq_t h[2] = { alloc_eq(4, NULL), alloc_eq(4, NULL) };
	ptl_event_t ev;
	int which = -1;
	for (int skip = 1; skip <= 3001; skip += 1500) {
		progress_calls = 0;
		arrive_eq = eq_of(h[1]);
		arrive_left = 1;
		arrive_skip = skip;
		assert_int_equal(PtlEQPoll(h, 2, 20000, &ev, &which), PTL_OK);
		assert_int_equal(which, 1);
		assert_int_equal(ev.hdr_data, 0xa11);
		assert_int_equal(progress_calls, skip + 1);
	}
	/* Forever, too. */
	progress_calls = 0;
	arrive_eq = eq_of(h[0]);
	arrive_left = 1;
	arrive_skip = 2500;
	assert_int_equal(PtlEQPoll(h, 2, PTL_TIME_FOREVER, &ev, &which), PTL_OK);
	assert_int_equal(which, 0);
	assert_int_equal(progress_calls, 2501);
	assert_int_equal(the_view.waiting, 0);
	assert_int_equal(atomic_load(&eq_of(h[0])->waiters), 0);
}

/* A poll looks its EQs up once; an EQ freed while it polls (by an event
 * handler that progress runs) makes it say PTL_EQ_INVALID, never read the
 * freed ring, and leaves the other EQ usable. */
static void test_poll_eq_freed_meanwhile(void **state)
{
	(void)state;
	ptl_handle_eq_t h[2] = { alloc_eq(4, NULL), alloc_eq(4, NULL) };
	ptl_event_t ev;
	int which = -1;
	free_in_progress = h[1];
	assert_int_equal(PtlEQPoll(h, 2, 50, &ev, &which), PTL_EQ_INVALID);
	assert_null(ptl_eq_lookup(&the_ni, h[1]));
	/* The same with an event arriving in the same pass on the live one. */
	h[1] = alloc_eq(4, NULL);
	free_in_progress = h[1];
	arrive_eq = eq_of(h[0]);
	arrive_left = 1;
	assert_int_equal(PtlEQPoll(h, 2, 50, &ev, &which), PTL_EQ_INVALID);
	assert_int_equal(PtlEQPoll(h, 1, 0, &ev, &which), PTL_OK);
	assert_int_equal(which, 0);
	assert_int_equal(ev.hdr_data, 0xa11);
}

/* PtlEQGet's progress pass may run an event handler that frees the EQ it
 * reads (PtlEQFree): the call says PTL_EQ_INVALID and never reads the
 * freed ring (it read it, and crashed); a handler that frees another EQ
 * leaves the call's own take as it was. */
static void test_get_eq_freed_meanwhile(void **state)
{
	(void)state;
	ptl_handle_eq_t h[2] = { alloc_eq(4, NULL), alloc_eq(4, NULL) };
	ptl_event_t ev;
	free_in_progress = h[0];
	assert_int_equal(PtlEQGet(h[0], &ev), PTL_EQ_INVALID);
	assert_null(ptl_eq_lookup(&the_ni, h[0]));
	assert_int_equal(PtlEQGet(h[0], &ev), PTL_EQ_INVALID);
	h[0] = alloc_eq(4, NULL);
	free_in_progress = h[0];
	arrive_eq = eq_of(h[1]);
	arrive_left = 1;
	assert_int_equal(PtlEQGet(h[1], &ev), PTL_OK);
	assert_int_equal(ev.hdr_data, 0xa11);
	assert_null(ptl_eq_lookup(&the_ni, h[0]));
	assert_int_equal(PtlEQGet(h[1], &ev), PTL_EQ_EMPTY);
	assert_int_equal(atomic_load(&ptl_lib.lock.word), 0);
}

/* A spinning poll keeps the library lock from one pass to the next (a
 * release and a re-take are two locked instructions per pass) unless
 * another thread waits for it, or it yields: then it lets it go at once,
 * before its next pass. */
static void test_poll_keeps_lock(void **state)
{
	(void)state;
	ptl_handle_eq_t h = alloc_eq(4, NULL);
	ptl_event_t ev;
	int which = -1;
	arrive_eq = eq_of(h);
	arrive_left = 1;
	arrive_skip = 40;
	lock_probe_from = 2;
	lock_contend = 1ul << 5 | 1ul << 6 | 1ul << 20;
	assert_int_equal(PtlEQPoll(&h, 1, 20000, &ev, &which), PTL_OK);
	assert_int_equal(ev.hdr_data, 0xa11);
	assert_int_equal(progress_calls, 41);
	/* Let go after each contended pass, and kept otherwise (no yield is
	 * due before pass 64: wait_yield_every). */
	assert_int_equal(lock_let_go, 1ul << 6 | 1ul << 7 | 1ul << 21);
	/* The mark was the poll's to clear: it let the lock go at the end. */
	assert_int_equal(atomic_load(&ptl_lib.lock.word), 0);
	assert_int_equal(atomic_load(&ptl_lib.lock.owner), 0);
}

/* A wait polls its PTL_WAIT_SPINS (2000) passes and then, where the ranks
 * do not outnumber the CPUs, on for PTL_WAIT_SPIN_NS (200 us) before it
 * sleeps (a peer busy with a long vector keeps it waiting longer than
 * those passes, and a sleep costs a wake-up on the way back); where they
 * do (a yield at every pass) it sleeps once its passes are out (checked
 * every 64: at 2048). Passes here cost well under 100 ns, 2000 of them
 * far less than 200 us. The event that comes as it sleeps ends each wait. */
static void test_poll_spins_then_sleeps(void **state)
{
	(void)state;
	ptl_handle_eq_t h = alloc_eq(4, NULL);
	ptl_event_t ev;
	int which;
	sleep_post_eq = eq_of(h);
	double t0 = now_s();
	assert_int_equal(PtlEQPoll(&h, 1, 60000, &ev, &which), PTL_OK);
	assert_int_equal(ev.hdr_data, 0x51ee);
	assert_true(sleep_after_calls >= 2000);
	if (sleep_at - t0 < 200e-6)
		fail_msg("the wait slept %.0f us in, after %d passes: not 200 us of polling", (sleep_at - t0) * 1e6,
			 sleep_after_calls);
	ptl_lib.wait_yield_every = 1;
	progress_calls = 0;
	sleep_after_calls = -1;
	assert_int_equal(PtlEQPoll(&h, 1, 60000, &ev, &which), PTL_OK);
	assert_int_equal(sleep_after_calls, 2048);
}

/* A poll of one EQ that holds events already (a waiting MPI receiver
 * behind its sender) takes them in order, sequence and overrun included,
 * with no progress pass and the lock let go; one that finds it empty makes
 * one pass and returns what the pass brought; a freed EQ's handle is
 * invalid either way. */
static void test_poll_one_queued(void **state)
{
	(void)state;
	ptl_handle_eq_t h = alloc_eq(4, NULL);
	ptl_event_t ev;
	int which;
	for (uint64_t i = 0; i < 3; i++)
		post(h, i);
	for (uint64_t i = 0; i < 3; i++) {
		which = -1;
		memset(&ev, 0xee, sizeof ev);
		assert_int_equal(PtlEQPoll(&h, 1, 20000, &ev, &which), PTL_OK);
		assert_int_equal(which, 0);
		assert_int_equal(ev.hdr_data, i);
		assert_int_equal(ev.mlength, i * 3);
		assert_int_equal(ev.sequence, i);
		assert_int_equal(atomic_load(&ptl_lib.lock.word), 0);
		assert_int_equal(atomic_load(&ptl_lib.lock.owner), 0);
	}
	assert_int_equal(progress_calls, 0);
	for (uint64_t i = 3; i < 9; i++)
		post(h, i);
	assert_int_equal(PtlEQPoll(&h, 1, 0, &ev, &which), PTL_EQ_DROPPED);
	assert_int_equal(ev.hdr_data, 5);
	assert_int_equal(ev.sequence, 5);
	assert_int_equal(eq_of(h)->ring->dropped, 2);
	for (uint64_t i = 6; i < 9; i++) {
		assert_int_equal(PtlEQPoll(&h, 1, 0, &ev, &which), PTL_OK);
		assert_int_equal(ev.hdr_data, i);
	}
	assert_int_equal(progress_calls, 0);
	/* Empty: one pass, and its arrival. */
	arrive_eq = eq_of(h);
	arrive_left = 1;
	assert_int_equal(PtlEQPoll(&h, 1, 0, &ev, &which), PTL_OK);
	assert_int_equal(ev.hdr_data, 0xa11);
	assert_int_equal(ev.sequence, 9);
	assert_int_equal(progress_calls, 1);
	assert_int_equal(PtlEQPoll(&h, 1, 0, &ev, &which), PTL_EQ_EMPTY);
	assert_int_equal(progress_calls, 2);
	post(h, 10);
	assert_int_equal(PtlEQFree(h), PTL_OK);
	assert_int_equal(PtlEQPoll(&h, 1, 0, &ev, &which), PTL_EQ_INVALID);
	assert_int_equal(atomic_load(&ptl_lib.lock.word), 0);
}

/* A wait asks the dead-peer probe before it sleeps, and without a
 * progress thread also every 64 polls (a wait that yields at every poll
 * may take long to reach its sleep on a loaded host): the failed answer
 * of a peer the probe finds dead ends the wait, before any sleep
 * (PtlEQWait, which no timeout would end). */
static void test_wait_ends_on_probe(void **state)
{
	(void)state;
	ptl_handle_eq_t h = alloc_eq(4, NULL);
	ptl_event_t ev;
	for (int thread = 1; thread >= 0; thread--) {
		ptl_lib.thread_running = thread;
		progress_calls = 0;
		probe_calls = 0;
		probe_dead_eq = eq_of(h);
		assert_int_equal(PtlEQWait(h, &ev), PTL_OK);
		assert_int_equal(ev.type, PTL_EVENT_ACK);
		assert_int_equal(ev.ni_fail_type, PTL_NI_FAIL);
		assert_int_equal(ev.hdr_data, 0xdead);
		assert_int_equal(probe_calls, 1);
		if (thread)
			assert_true(progress_calls >= 2000); /* once its polls were out */
		else
			assert_int_equal(progress_calls, 64);
		assert_int_equal(sleep_after_calls, -1); /* never went to sleep */
		assert_int_equal(the_view.waiting, 0);
		assert_int_equal(atomic_load(&eq_of(h)->waiters), 0);
		assert_int_equal(atomic_load(&ptl_lib.lock.word), 0);
	}
}

/* A probe whose failures ran a handler that freed one of the polled EQs
 * makes the poll look its EQs up again: PTL_EQ_INVALID, the freed ring
 * never read, the other EQ's event still there. */
static void test_wait_probe_frees_eq(void **state)
{
	(void)state;
	ptl_handle_eq_t h[2] = { alloc_eq(4, NULL), alloc_eq(4, NULL) };
	ptl_event_t ev;
	int which = -1;
	probe_dead_eq = eq_of(h[0]);
	probe_free_eq = h[1];
	assert_int_equal(PtlEQPoll(h, 2, 20000, &ev, &which), PTL_EQ_INVALID);
	assert_null(ptl_eq_lookup(&the_ni, h[1]));
	assert_int_equal(PtlEQPoll(h, 1, 0, &ev, &which), PTL_OK);
	assert_int_equal(ev.hdr_data, 0xdead);
}

/* Without a progress thread a thread that polls with PtlEQGet (it never
 * reaches a wait's sleep, nor its probe) asks the dead-peer probe itself:
 * never while nothing is in flight (the NI counts no operation), else
 * once every 64 empty polls, and the failed answer of a peer the probe
 * finds dead comes out of that same call (the poll loop waited for it
 * forever). With a progress thread, which probes for it, never. */
static void test_get_probes_when_due(void **state)
{
	(void)state;
	ptl_handle_eq_t h = alloc_eq(4, NULL);
	ptl_event_t ev;
	for (int i = 0; i < 200; i++)
		expect_empty(h);
	assert_int_equal(probe_calls, 0);
	the_ni.ops.used = 1;
	for (int round = 1; round <= 3; round++) {
		for (int i = 0; i < 64; i++)
			expect_empty(h);
		assert_int_equal(probe_calls, round);
	}
	probe_dead_eq = eq_of(h);
	int polls = 1, rc;
	while ((rc = PtlEQGet(h, &ev)) == PTL_EQ_EMPTY && polls < 1000)
		polls++;
	assert_int_equal(rc, PTL_OK);
	assert_true(polls <= 64);
	assert_int_equal(probe_calls, 4);
	assert_int_equal(ev.type, PTL_EVENT_ACK);
	assert_int_equal(ev.ni_fail_type, PTL_NI_FAIL);
	assert_int_equal(ev.hdr_data, 0xdead);
	assert_int_equal(progress_calls, 200 + 3 * 64 + polls); /* a pass at every empty poll */
	expect_empty(h);
	assert_int_equal(atomic_load(&ptl_lib.lock.word), 0);

	ptl_lib.thread_running = true;
	probe_calls = 0;
	for (int i = 0; i < 200; i++)
		expect_empty(h);
	assert_int_equal(probe_calls, 0);
}

/* A probe of PtlEQGet's whose failures ran a handler that freed the EQ it
 * reads: PTL_EQ_INVALID, the freed ring never read; the failed answer is
 * on the other EQ. */
static void test_get_probe_frees_eq(void **state)
{
	(void)state;
	ptl_handle_eq_t h[2] = { alloc_eq(4, NULL), alloc_eq(4, NULL) };
	ptl_event_t ev;
	the_ni.ops.used = 1;
	probe_dead_eq = eq_of(h[1]);
	probe_free_eq = h[0];
	int polls = 1, rc;
	while ((rc = PtlEQGet(h[0], &ev)) == PTL_EQ_EMPTY && polls < 1000)
		polls++;
	assert_int_equal(rc, PTL_EQ_INVALID);
	assert_true(polls <= 64);
	assert_null(ptl_eq_lookup(&the_ni, h[0]));
	assert_int_equal(PtlEQGet(h[1], &ev), PTL_OK);
	assert_int_equal(ev.hdr_data, 0xdead);
	assert_int_equal(atomic_load(&ptl_lib.lock.word), 0);
}

/* Without a progress thread a poll of timeout 0 (it never sleeps, so it
 * never reaches a wait's probe) asks the dead-peer probe as an empty
 * PtlEQGet does, on the same count: never while nothing is in flight,
 * else once every 64 empty polls of either call (it asked at every call:
 * a clock read per poll). The failed answer of a peer the probe finds
 * dead comes out of that same call, from whichever of its EQs holds it,
 * with the one progress pass of any empty poll. With a progress thread,
 * never. */
static void test_poll0_probes_when_due(void **state)
{
	(void)state;
	ptl_handle_eq_t h[2] = { alloc_eq(4, NULL), alloc_eq(4, NULL) };
	ptl_event_t ev;
	int which;
	for (int i = 0; i < 200; i++)
		assert_int_equal(PtlEQPoll(h, 1 + i % 2, 0, &ev, &which), PTL_EQ_EMPTY);
	assert_int_equal(probe_calls, 0);
	assert_int_equal(progress_calls, 200);
	the_ni.ops.used = 1;
	/* the count runs on from earlier tests' polls: up to its next probe */
	int polls = 0;
	while (probe_calls == 0 && polls < 1000) {
		assert_int_equal(PtlEQPoll(h, 1, 0, &ev, &which), PTL_EQ_EMPTY);
		polls++;
	}
	assert_true(polls >= 1 && polls <= 64);
	for (int round = 2; round <= 4; round++) {
		for (int i = 0; i < 63; i++)
			assert_int_equal(PtlEQPoll(h, 1 + i % 2, 0, &ev, &which), PTL_EQ_EMPTY);
		assert_int_equal(probe_calls, round - 1);
		assert_int_equal(PtlEQPoll(h, 2, 0, &ev, &which), PTL_EQ_EMPTY);
		assert_int_equal(probe_calls, round);
	}
	/* PtlEQGet's empty polls count towards the same probe */
	for (int i = 0; i < 32; i++)
		expect_empty(h[0]);
	for (int i = 0; i < 31; i++)
		assert_int_equal(PtlEQPoll(h, 2, 0, &ev, &which), PTL_EQ_EMPTY);
	assert_int_equal(probe_calls, 4);
	expect_empty(h[1]);
	assert_int_equal(probe_calls, 5);

	probe_dead_eq = eq_of(h[1]);
	progress_calls = 0;
	polls = 1;
	int rc;
	which = -1;
	while ((rc = PtlEQPoll(h, 2, 0, &ev, &which)) == PTL_EQ_EMPTY && polls < 1000)
		polls++;
	assert_int_equal(rc, PTL_OK);
	assert_int_equal(polls, 64);
	assert_int_equal(probe_calls, 6);
	assert_int_equal(which, 1);
	assert_int_equal(ev.type, PTL_EVENT_ACK);
	assert_int_equal(ev.ni_fail_type, PTL_NI_FAIL);
	assert_int_equal(ev.hdr_data, 0xdead);
	assert_int_equal(progress_calls, polls); /* a pass at every poll */
	assert_int_equal(PtlEQPoll(h, 2, 0, &ev, &which), PTL_EQ_EMPTY);
	assert_int_equal(atomic_load(&ptl_lib.lock.word), 0);

	ptl_lib.thread_running = true;
	probe_calls = 0;
	for (int i = 0; i < 200; i++)
		assert_int_equal(PtlEQPoll(h, 1 + i % 2, 0, &ev, &which), PTL_EQ_EMPTY);
	assert_int_equal(probe_calls, 0);
}

/* Without a progress thread a wait sleeps in the NAL in slices of 10 ms;
 * with answers due from peers the probe must look at, no slice outlasts
 * the time to the next look, and the wait asks again after each. */
static void test_wait_sleeps_until_probe(void **state)
{
	(void)state;
	ptl_handle_eq_t h = alloc_eq(4, NULL);
	ptl_event_t ev;
	int which;
	assert_int_equal(PtlEQPoll(&h, 1, 60, &ev, &which), PTL_EQ_EMPTY);
	assert_int_equal(nal_wait_max, 10); /* nothing awaited: slices as before */
	int calls = probe_calls;
	assert_true(calls >= 1);
	nal_wait_max = 0;
	probe_next_ms = 3;
	assert_int_equal(PtlEQPoll(&h, 1, 60, &ev, &which), PTL_EQ_EMPTY);
	assert_true(nal_wait_max >= 1 && nal_wait_max <= 3);
	assert_true(probe_calls - calls >= 2);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_alloc_errors),
		T(test_get_errors),
		T(test_order_and_sequence),
		T(test_full_without_overrun),
		T(test_overrun),
		T(test_overrun_count_one),
		T(test_overrun_through_poll_and_wait),
		T(test_handler),
		T(test_poll_several),
		T(test_poll_timeout),
		T(test_odd_size_laps),
		T(test_poll_late_event),
		T(test_progress_delivers),
		T(test_poll_eq_freed_meanwhile),
		T(test_get_eq_freed_meanwhile),
		T(test_poll_keeps_lock),
		T(test_poll_one_queued),
		T(test_poll_spins_then_sleeps),
		T(test_wait_ends_on_probe),
		T(test_wait_probe_frees_eq),
		T(test_wait_sleeps_until_probe),
		T(test_get_probes_when_due),
		T(test_get_probe_frees_eq),
		T(test_poll0_probes_when_due),
	};
	return cmocka_run_group_tests_name("ptl_eq", tests, NULL, NULL);
}
