/*
 * tests/ptl/unit/test_lock.c - the library lock (ptl_lock/ptl_unlock in
 * lib/ptl/ptl_internal.h): the holder may take it again (EQ handlers call
 * the API under it) and must let go as often; other threads wait, also
 * when they find it held and go to sleep on its futex; it is free and
 * ownerless afterwards, so the next taker does not mistake it for its own.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "ptl/ptl_internal.h"

struct ptl_lib ptl_lib = { 0 };

#define THREADS 4
#define ROUNDS 20000

static long counter;       /* changed only under the lock */
static int inside;         /* threads between lock and unlock: never above 1 */
static int most_inside;

static void *hammer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		ptl_lock();
		ptl_lock(); /* re-entry, as an EQ handler calling the API */
		int n = ++inside;
		if (n > most_inside)
			most_inside = n;
		long c = counter;
		if (i % 512 == 0) /* hold it across a reschedule: others sleep on it */
			sched_yield();
		counter = c + 1;
		inside--;
		ptl_unlock();
		ptl_unlock();
	}
	return NULL;
}

static void test_lock_excludes_and_nests(void **state)
{
	(void)state;
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer, NULL), 0);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(counter, (long)THREADS * ROUNDS);
	assert_int_equal(most_inside, 1);
	assert_int_equal(atomic_load(&ptl_lib.lock.word), 0);
	assert_int_equal(ptl_lib.lock.depth, 0);
	assert_true(atomic_load(&ptl_lib.lock.owner) == 0);
}

static void *take_once(void *arg)
{
	ptl_lock();
	*(int *)arg = 1;
	ptl_unlock();
	return NULL;
}

/* Held by this thread three deep: another thread gets it only after the
 * third unlock. */
static void test_lock_released_after_last_unlock(void **state)
{
	(void)state;
	int got = 0;
	pthread_t t;
	ptl_lock();
	ptl_lock();
	ptl_lock();
	assert_int_equal(pthread_create(&t, NULL, take_once, &got), 0);
	ptl_unlock();
	ptl_unlock();
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	assert_int_equal(__atomic_load_n(&got, __ATOMIC_ACQUIRE), 0);
	ptl_unlock();
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(got, 1);
	assert_int_equal(atomic_load(&ptl_lib.lock.word), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_excludes_and_nests),
		cmocka_unit_test(test_lock_released_after_last_unlock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
