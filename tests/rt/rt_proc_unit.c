/*
 * rt_proc_unit: cmocka tests of lib/rt/rt_proc.c, who a process is by pid
 * and start time, against forked stand-ins: alive with its own start,
 * gone with another (the pid given again), alive with none known, gone as
 * a zombie and once reaped; its pidfd, refused for another start, readable
 * once it exited; and the /proc reader against the test's own reading.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc_stat_test.h"
#include "rt_proc.h"

/* The stand-in, killed and reaped by the teardown whatever became of the
 * test (it holds the test's stdout). */
static pid_t child = -1;

static int fork_child(void **state)
{
	(void)state;
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	return child > 0 ? 0 : -1;
}

static int reap_child(void **state)
{
	(void)state;
	proc_reap(&child);
	return 0;
}

/* rt_proc_stat reads what /proc says of a process, and says when there
 * is no such process. */
static void test_proc_stat(void **state)
{
	char st = 0, want_st = 0;
	uint64_t start = 0;
	pid_t gone;

	(void)state;
	assert_int_equal(rt_proc_stat(getpid(), &st, &start), 0);
	assert_int_equal(st, 'R');
	assert_true(start != 0);
	assert_true(start == proc_start(getpid(), &want_st));
	gone = fork();
	assert_true(gone >= 0);
	if (gone == 0)
		_exit(0);
	assert_int_equal(waitpid(gone, NULL, 0), gone);
	errno = 0;
	assert_int_equal(rt_proc_stat(gone, &st, &start), -1);
	assert_int_equal(errno, ENOENT);
}

/* A pid names the process only while it started when the caller knew it
 * (else the pid was given again since); a zombie and a reaped process are
 * gone; with no start known kill(0) alone decides. */
static void test_proc_is(void **state)
{
	uint64_t t;
	char st;
	pid_t c = child;

	(void)state;
	t = proc_start(c, &st);
	assert_true(t != 0);
	assert_int_equal(rt_proc_is(c, t), 1);
	assert_int_equal(rt_proc_is(c, t + 1), 0); /* its pid, another start */
	assert_int_equal(rt_proc_is(c, t - 1), 0);
	assert_int_equal(rt_proc_is(c, 0), 1);     /* no start known */
	assert_int_equal(rt_proc_is(0, 0), 0);
	assert_int_equal(rt_proc_is(-1, 0), 0);

	assert_int_equal(kill(c, SIGKILL), 0);
	assert_int_equal(proc_wait_state(c, 'Z'), 0);
	assert_int_equal(rt_proc_is(c, t), 0); /* a zombie: gone, whoever it is */
	assert_int_equal(rt_proc_is(c, 0), 0);

	assert_int_equal(waitpid(c, NULL, 0), c);
	child = -1;
	assert_int_equal(rt_proc_is(c, t), 0); /* reaped: no such process */
	assert_int_equal(rt_proc_is(c, 0), 0);
}

/* A pidfd is had only for the process that started at start, and says
 * when it has exited (a zombie has), reaped or not. */
static void test_proc_pidfd(void **state)
{
	uint64_t t;
	char st;
	pid_t c = child;
	int fd;

	(void)state;
	t = proc_start(c, &st);
	assert_true(t != 0);
	errno = 0;
	assert_int_equal(rt_proc_pidfd(c, t + 1), -1); /* its pid, another start: gone */
	assert_int_equal(errno, ESRCH);
	fd = rt_proc_pidfd(c, t);
	if (fd < 0) {
		assert_int_not_equal(errno, ESRCH);
		skip(); /* no pidfds here */
	}
	assert_int_equal(rt_proc_exited(fd), 0);
	assert_int_equal(rt_proc_exited(fd), 0);
	assert_int_equal(kill(c, SIGKILL), 0);
	assert_int_equal(proc_wait_state(c, 'Z'), 0);
	assert_int_equal(rt_proc_exited(fd), 1);
	errno = 0;
	assert_int_equal(rt_proc_pidfd(c, t), -1); /* a zombie: gone */
	assert_int_equal(errno, ESRCH);
	assert_int_equal(waitpid(c, NULL, 0), c);
	child = -1;
	assert_int_equal(rt_proc_exited(fd), 1);
	assert_int_equal(rt_proc_pidfd(c, t), -1); /* reaped */
	close(fd);
	assert_int_equal(rt_proc_pidfd(0, 0), -1);
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_stat),
		cmocka_unit_test_setup_teardown(test_proc_is, fork_child, reap_child),
		cmocka_unit_test_setup_teardown(test_proc_pidfd, fork_child, reap_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
