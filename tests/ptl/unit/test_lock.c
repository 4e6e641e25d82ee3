/*
 * tests/ptl/unit/test_lock.c - the library lock (ptl_lock/ptl_unlock in
 * lib/ptl/ptl_internal.h): the holder may take it again (EQ handlers call
 * the API under it) and must let go as often; other threads wait, also
 * when they find it held and go to sleep on its futex; it is free and
 * ownerless afterwards, so the next taker does not mistake it for its own.
 * The same with a bias thread (the biased path, taken without atomics):
 * it alone takes it by that path; another thread's take shuts the path
 * and waits for the bias thread to leave it; the bias thread sees that
 * it is wanted; the path opens again after PTL_LOCK_REOPEN quiet takes,
 * also through hundreds of turns with a thread that takes it now and
 * then; turning the bias off waits for a holder by the path, and only the
 * thread biased before is biased again; a forked child that finds the lock
 * held by a thread it does not have says so and aborts; PTL_LOCK_BIAS=0
 * turns it off.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ptl/ptl_internal.h"

struct ptl_lib ptl_lib = { 0 };
bool ptl_atfork_ok; /* main registers the lock's child handler, as PtlInit does the library's */

#define THREADS 4
#define ROUNDS 20000

static long counter;       /* changed only under the lock */
static int inside;         /* threads between lock and unlock: never above 1 */
static int most_inside;

/* The holder's part: counter read and written back apart, inside counted;
 * spin loops in between make a window for a second holder to show, yield
 * holds the lock across a reschedule (others sleep on it). */
static void bump(bool yield, int spin)
{
	int n = ++inside;
	if (n > most_inside)
		most_inside = n;
	long c = counter;
	if (yield)
		sched_yield();
	for (volatile int k = 0; k < spin; k++)
		;
	counter = c + 1;
	inside--;
}

static void *hammer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		ptl_lock();
		ptl_lock(); /* re-entry, as an EQ handler calling the API */
		bump(i % 512 == 0, 20);
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

/* The calling thread becomes the bias thread, as PtlInit's caller does
 * (ptl_lock_bias_init, under the lock); false: the kernel has no private
 * expedited membarrier here. */
static bool bias_me(void)
{
	ptl_lock();
	ptl_lock_bias_init();
	ptl_unlock();
	return atomic_load(&ptl_lib.lock.bias) == ptl_thread_id();
}

static void assert_lock_free(void)
{
	struct ptl_rlock *l = &ptl_lib.lock;
	assert_int_equal(atomic_load(&l->word), 0);
	assert_int_equal(atomic_load(&l->fast_in), 0);
	assert_int_equal(l->depth, 0);
	assert_true(atomic_load(&l->owner) == 0);
}

/* Takes it n times alone: how many of them by the biased path. */
static int fast_takes(int n)
{
	int fast = 0;
	for (int i = 0; i < n; i++) {
		ptl_lock();
		ptl_lock();
		fast += ptl_lib.lock.fast;
		ptl_unlock();
		ptl_unlock();
	}
	return fast;
}

/* The bias thread (this one) hammers alongside THREADS - 1 others: one
 * holder at a time, every increment kept, whichever path each take went
 * by; alone before and after, it takes the biased path (once it has
 * opened again: PTL_LOCK_REOPEN takes of its own by the mutex). */
static void test_biased_excludes(void **state)
{
	(void)state;
	if (!bias_me())
		skip();
	counter = 0;
	most_inside = 0;
	assert_int_equal(fast_takes(100), 100);
	assert_lock_free();
	pthread_t t[THREADS - 1];
	for (int i = 0; i < THREADS - 1; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer, NULL), 0);
	hammer(NULL);
	for (int i = 0; i < THREADS - 1; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(counter, (long)THREADS * ROUNDS);
	assert_int_equal(most_inside, 1);
	assert_lock_free();
	assert_true(ptl_lib.lock.others > 0); /* the others did revoke it */
	/* Open again at the latest after PTL_LOCK_REOPEN + 1 takes of its own
	 * (the first counts the others' last takes as seen). */
	assert_true(fast_takes(PTL_LOCK_REOPEN + 10) >= 9);
	assert_int_equal(fast_takes(10), 10);
	assert_int_equal(atomic_load(&ptl_lib.lock.revoked), 0);
	ptl_lock_bias_fini();
	assert_true(atomic_load(&ptl_lib.lock.bias) == 0);
	assert_lock_free();
}

/* Held by the bias thread by the biased path: another thread's take shuts
 * the path, the holder sees the lock wanted (as PtlEQWait's passes look),
 * and the other gets it only once the holder lets go. */
static void test_biased_hold_waits(void **state)
{
	(void)state;
	if (!bias_me())
		skip();
	int got = 0;
	pthread_t t;
	ptl_lock();
	assert_true(ptl_lib.lock.fast);
	assert_false(ptl_lock_wanted());
	assert_int_equal(pthread_create(&t, NULL, take_once, &got), 0);
	struct timespec ts = { 0, 1000 * 1000 };
	for (int i = 0; i < 5000 && !ptl_lock_wanted(); i++)
		nanosleep(&ts, NULL);
	assert_true(ptl_lock_wanted());
	nanosleep(&ts, NULL);
	assert_int_equal(__atomic_load_n(&got, __ATOMIC_ACQUIRE), 0);
	ptl_unlock();
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(got, 1);
	assert_lock_free();
	/* Shut now: this thread's next take goes by the mutex. */
	assert_int_equal(fast_takes(1), 0);
	ptl_lock_bias_fini();
}

/* A thread that takes the lock now and then (as the progress thread's
 * probe) while the bias thread takes it all the time: each of its takes
 * shuts the path and waits the bias thread out, which opens it again
 * after PTL_LOCK_REOPEN quiet takes; one holder at a time through
 * hundreds of such turns, with takes by both paths. */
static atomic_bool stop_now;
static void *now_and_then(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 20 * 1000 };
	while (!atomic_load(&stop_now)) {
		ptl_lock();
		bump(false, 20);
		ptl_unlock();
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void test_biased_turns(void **state)
{
	(void)state;
	if (!bias_me())
		skip();
	counter = 0;
	most_inside = 0;
	ptl_lib.lock.others = 0;
	atomic_store(&stop_now, false);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, now_and_then, NULL), 0);
	long mine = 0, fast = 0, reopened = 0;
	bool was_fast = true;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++, mine++) {
			ptl_lock();
			bump(false, 0);
			fast += ptl_lib.lock.fast;
			reopened += ptl_lib.lock.fast && !was_fast;
			was_fast = ptl_lib.lock.fast;
			ptl_unlock();
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 300);
	atomic_store(&stop_now, true);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(counter, mine + (long)ptl_lib.lock.others);
	assert_int_equal(most_inside, 1);
	assert_true(ptl_lib.lock.others >= 50);
	assert_true(reopened >= 20);
	assert_true(fast > mine / 2);
	assert_lock_free();
	ptl_lock_bias_fini();
}

static void *bias_off_once(void *arg)
{
	ptl_lock_bias_fini();
	__atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *try_bias(void *arg)
{
	ptl_lock();
	ptl_lock_bias_init();
	*(bool *)arg = atomic_load(&ptl_lib.lock.bias) == ptl_thread_id();
	ptl_unlock();
	return NULL;
}

/* The last PtlFini's turning the bias off, from another thread while the
 * bias thread holds the lock by the biased path: it returns only once the
 * holder has let go, and the holder's next take is by the mutex. A new
 * PtlInit biases only the thread biased before: another thread may still
 * be inside ptl_lock from before (ptl_lock.c). */
static void test_bias_off_waits_holder(void **state)
{
	(void)state;
	if (!bias_me())
		skip();
	int done = 0;
	pthread_t t;
	ptl_lock();
	assert_true(ptl_lib.lock.fast);
	assert_int_equal(pthread_create(&t, NULL, bias_off_once, &done), 0);
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	assert_int_equal(__atomic_load_n(&done, __ATOMIC_ACQUIRE), 0);
	ptl_unlock();
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(done, 1);
	assert_true(atomic_load(&ptl_lib.lock.bias) == 0);
	assert_int_equal(fast_takes(PTL_LOCK_REOPEN + 10), 0);
	assert_lock_free();
	bool other = true;
	assert_int_equal(pthread_create(&t, NULL, try_bias, &other), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_false(other);
	assert_true(bias_me());
	assert_int_equal(fast_takes(10), 10);
	ptl_lock_bias_fini();
}

/* What forks_and_takes saw of its child: how it ended, what it said. */
struct child_end {
	int status;
	char said[256];
};

/* Forks; the child (this thread alone) takes the lock, its stderr into a
 * pipe the parent reads. */
static void *forks_and_takes(void *arg)
{
	struct child_end *ce = arg;
	int fd[2];
	if (pipe(fd) != 0)
		return NULL;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 2);
		ptl_lock();
		_exit(0);
	}
	close(fd[1]);
	ssize_t n, got = 0;
	while ((n = read(fd[0], ce->said + got, sizeof ce->said - 1 - (size_t)got)) > 0)
		got += n;
	ce->said[got] = 0;
	close(fd[0]);
	waitpid(pid, &ce->status, 0);
	return NULL;
}

/* fork's child of a process whose bias thread held the lock by the biased
 * path, taking it from the forking thread: the lock it inherited is held
 * by a thread it does not have, and it says so and aborts rather than run
 * beside a half-done change of the library's state. */
static void test_overlap_said(void **state)
{
	(void)state;
	if (!bias_me())
		skip();
	struct child_end ce = { .status = -1 };
	pthread_t t;
	ptl_lock();
	assert_true(ptl_lib.lock.fast);
	assert_int_equal(pthread_create(&t, NULL, forks_and_takes, &ce), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	ptl_unlock();
	assert_true(WIFSIGNALED(ce.status) && WTERMSIG(ce.status) == SIGABRT);
	assert_non_null(strstr(ce.said, "ptl: the library lock is held by thread 0x"));
	assert_non_null(strstr(ce.said, " as another takes it"));
	assert_lock_free();
	ptl_lock_bias_fini();
}

/* PTL_LOCK_BIAS=0: no bias, every take by the mutex. */
static void test_bias_off(void **state)
{
	(void)state;
	setenv("PTL_LOCK_BIAS", "0", 1);
	bool biased = bias_me();
	unsetenv("PTL_LOCK_BIAS");
	assert_false(biased);
	assert_int_equal(fast_takes(10), 0);
}

/* No bias where the fork handler could not be registered: a child would
 * inherit a bias thread it has not, and take the lock by the path beside
 * nobody's mutex (test_overlap_said's child says so only because the
 * handler turned the bias off). */
static void test_bias_needs_atfork(void **state)
{
	(void)state;
	if (!bias_me()) /* the kernel has no bias for us at all */
		skip();
	ptl_lock_bias_fini();
	bool ok = ptl_atfork_ok;
	ptl_atfork_ok = false;
	bool biased = bias_me();
	ptl_atfork_ok = ok;
	assert_false(biased);
	assert_int_equal(fast_takes(10), 0);
}

int main(void)
{
	ptl_atfork_ok = pthread_atfork(NULL, NULL, ptl_lock_atfork_child) == 0;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_excludes_and_nests),
		cmocka_unit_test(test_lock_released_after_last_unlock),
		cmocka_unit_test(test_biased_excludes),
		cmocka_unit_test(test_biased_hold_waits),
		cmocka_unit_test(test_biased_turns),
		cmocka_unit_test(test_bias_off_waits_holder),
		cmocka_unit_test(test_overlap_said),
		cmocka_unit_test(test_bias_off),
		cmocka_unit_test(test_bias_needs_atfork),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
