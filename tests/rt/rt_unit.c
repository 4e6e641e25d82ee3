/*
 * rt_unit: cmocka tests of lib/rt without ptlrun. The rank side of the
 * ptlrun protocol is driven by a fake ptlrun on a socketpair, so the error
 * paths (ptlrun gone, never answering, refusing the fence, bad environment)
 * are checked with their messages.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rt.h"
#include "rt_proto.h"

/* ---- stderr capture */

static FILE *cap_file;
static int cap_saved = -1;
static char cap_buf[8192];

static void cap_begin(void)
{
	fflush(stderr);
	cap_file = tmpfile();
	assert_non_null(cap_file);
	cap_saved = dup(2);
	dup2(fileno(cap_file), 2);
}

static const char *cap_end(void)
{
	size_t n;

	fflush(stderr);
	dup2(cap_saved, 2);
	close(cap_saved);
	rewind(cap_file);
	n = fread(cap_buf, 1, sizeof(cap_buf) - 1, cap_file);
	cap_buf[n] = '\0';
	fclose(cap_file);
	return cap_buf;
}

/* ---- helpers */

static void test_hex(void **state)
{
	uint8_t in[] = { 0x00, 0x01, 0xab, 0xff, 0x7f }, out[8];
	char hex[16];
	size_t n;

	(void)state;
	rt_hex_encode(hex, in, sizeof(in));
	assert_string_equal(hex, "0001abff7f");
	assert_int_equal(rt_hex_decode(out, sizeof(out), hex, strlen(hex), &n), 0);
	assert_int_equal(n, sizeof(in));
	assert_memory_equal(out, in, sizeof(in));
	assert_int_equal(rt_hex_decode(out, sizeof(out), "abc", 3, &n), -1);
	assert_int_equal(rt_hex_decode(out, sizeof(out), "zz", 2, &n), -1);
	assert_int_equal(rt_hex_decode(out, 1, "0001", 4, &n), -1);
	assert_int_equal(rt_hex_decode(out, 0, "", 0, &n), 0);
	assert_int_equal(n, 0);
}

static void test_shm_name(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(rt_shm_name(buf, sizeof(buf), 0x1234abcdULL, "seg"), 25);
	assert_string_equal(buf, "/ptl.000000001234abcd.seg");
	assert_int_equal(rt_shm_name(buf, sizeof(buf), UINT64_MAX, NULL), 21);
	assert_string_equal(buf, "/ptl.ffffffffffffffff");
	assert_int_equal(rt_shm_name(buf, 10, 1, "seg"), -1);
	assert_int_equal(rt_shm_view_name(buf, sizeof(buf), 4242, NULL), 14);
	assert_string_equal(buf, "/ptl.view.4242");
	assert_int_equal(rt_shm_view_name(buf, sizeof(buf), 4242, "eq"), 17);
	assert_string_equal(buf, "/ptl.view.4242.eq");
}

/* A name that is not a view object's: 0, and *rest left alone. A macro,
 * so that a failure names the line of the case. */
#define assert_not_view(name)                                           \
	do {                                                            \
		const char *rest_ = "untouched";                        \
		assert_int_equal(rt_shm_view_parse((name), &rest_), 0); \
		assert_string_equal(rest_, "untouched");                \
	} while (0)

/* The names of views in /dev/shm, as libptl's sweep, ptltool and ptlrun
 * read them: a wrong pid there would unlink or show another process's. */
static void test_shm_view_parse(void **state)
{
	char buf[64];
	const char *rest = NULL;

	(void)state;
	assert_int_equal(rt_shm_view_eq_name(buf, sizeof(buf), 4242, 7), 18);
	assert_string_equal(buf, "/ptl.view.4242.eq7");
	/* What the writer spells (without the slash: readdir's names), the
	 * reader takes back. */
	assert_int_equal(rt_shm_view_parse(buf + 1, &rest), 4242);
	assert_string_equal(rest, "eq7");
	assert_int_equal(rt_shm_view_eq_name(buf, 18, 4242, 7), -1);
	assert_int_equal(rt_shm_view_parse("ptl.view.4242", &rest), 4242);
	assert_string_equal(rest, "");
	assert_int_equal(rt_shm_view_parse("ptl.view.4242", NULL), 4242);
	assert_int_equal(rt_shm_view_parse("ptl.view.2147483647", &rest), 2147483647);
	assert_int_equal(rt_shm_view_parse("ptl.view.10.eq0", &rest), 10);
	assert_string_equal(rest, "eq0");
	/* No pid, pid 0, a leading zero (a second name for pid 7), junk after
	 * the pid, a dot with nothing after it, a sign or a space (strtol
	 * takes both), a pid past INT32_MAX and one past 2^64, the slash,
	 * other objects of /dev/shm. */
	assert_not_view("ptl.view.");
	assert_not_view("ptl.view.0");
	assert_not_view("ptl.view.07");
	assert_not_view("ptl.view.12a");
	assert_not_view("ptl.view.123.");
	assert_not_view("ptl.view.+7");
	assert_not_view("ptl.view. 7");
	assert_not_view("ptl.view.2147483648");
	assert_not_view("ptl.view.99999999999999999999999.eq0");
	assert_not_view("/ptl.view.4242");
	assert_not_view("ptl.1234.seg");
	assert_not_view("ptl.wiev.123");
}

static void test_parse_and_keys(void **state)
{
	long v;

	(void)state;
	assert_int_equal(rt_parse_int("12", 0, 20, &v), 0);
	assert_int_equal(v, 12);
	assert_int_equal(rt_parse_int("21", 0, 20, &v), -1);
	assert_int_equal(rt_parse_int("", 0, 20, &v), -1);
	assert_int_equal(rt_parse_int(" 1", 0, 20, &v), -1);
	assert_int_equal(rt_parse_int("1x", 0, 20, &v), -1);
	assert_int_equal(rt_parse_int(NULL, 0, 20, &v), -1);
	assert_true(rt_key_valid("addr.shm"));
	assert_false(rt_key_valid(""));
	assert_false(rt_key_valid("a b"));
	assert_false(rt_key_valid("a\n"));
	char longkey[RT_KEY_MAX + 1];
	memset(longkey, 'k', RT_KEY_MAX);
	longkey[RT_KEY_MAX] = '\0';
	assert_false(rt_key_valid(longkey));
	longkey[RT_KEY_MAX - 1] = '\0';
	assert_true(rt_key_valid(longkey));
	assert_int_not_equal(rt_host_nid(), 0);
	assert_int_equal(rt_host_nid(), rt_host_nid());
}

static void test_kv_table(void **state)
{
	char key[16], val[16];
	size_t len;

	(void)state;
	/* Enough entries to grow the table several times. */
	for (int r = 0; r < 300; r++)
		for (int k = 0; k < 3; k++) {
			snprintf(key, sizeof(key), "k%d", k);
			snprintf(val, sizeof(val), "%d/%d", r, k);
			assert_int_equal(rt_kv_set(r, key, val, strlen(val)), 0);
		}
	assert_int_equal(rt_kv_set(7, "k1", "new", 3), 0);
	for (int r = 0; r < 300; r++)
		for (int k = 0; k < 3; k++) {
			char want[16];

			snprintf(key, sizeof(key), "k%d", k);
			if (r == 7 && k == 1)
				strcpy(want, "new");
			else
				snprintf(want, sizeof(want), "%d/%d", r, k);
			len = sizeof(val);
			assert_int_equal(rt_kv_get(r, key, val, &len), 0);
			assert_int_equal(len, strlen(want));
			assert_memory_equal(val, want, len);
		}
	len = sizeof(val);
	assert_int_equal(rt_kv_get(300, "k0", val, &len), -1);
	len = 2;
	assert_int_equal(rt_kv_get(299, "k0", val, &len), -2);
	assert_int_equal(len, 5);
	rt_kv_clear();
	len = sizeof(val);
	assert_int_equal(rt_kv_get(0, "k0", val, &len), -1);
}

/* ---- singleton */

static void test_singleton(void **state)
{
	struct rt_info a, b;
	char val[8];
	size_t len = sizeof(val);

	(void)state;
	unsetenv(RT_ENV_FD);
	assert_null(rt_self());
	cap_begin();
	assert_int_equal(rt_fence(), -1);
	assert_string_equal(cap_end(), "ptl: rt_fence called before rt_init\n");
	assert_int_equal(rt_init(&a), 0);
	assert_int_equal(a.rank, 0);
	assert_int_equal(a.size, 1);
	assert_int_equal(a.local_rank, 0);
	assert_int_equal(a.local_size, 1);
	assert_string_equal(a.backend, "singleton");
	assert_int_not_equal(a.jobid, 0);
	assert_int_equal(a.nid, rt_host_nid());
	assert_int_equal(rt_put("addr", "xyz", 3), 0);
	assert_int_equal(rt_get(0, "addr", val, &len), 0); /* fence not needed */
	assert_int_equal(len, 3);
	assert_int_equal(rt_fence(), 0);
	assert_int_equal(rt_barrier(), 0);
	len = sizeof(val);
	assert_int_equal(rt_get(1, "addr", val, &len), -1);
	/* Nested init shares the job. */
	assert_int_equal(rt_init(&b), 0);
	assert_int_equal(b.jobid, a.jobid);
	rt_fini();
	assert_non_null(rt_self());
	rt_fini();
	assert_null(rt_self());
	/* A new job of one gets a new id. */
	assert_int_equal(rt_init(&b), 0);
	assert_int_not_equal(b.jobid, a.jobid);
	assert_memory_not_equal(b.job_key, a.job_key, RT_JOB_KEY_LEN);
	rt_fini();
}

/* ---- ptlrun backend against a fake ptlrun */

static int srv = -1; /* the fake ptlrun's end */

static void fake_env(int rank, int size, int fd)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", rank);
	setenv(RT_ENV_RANK, buf, 1);
	snprintf(buf, sizeof(buf), "%d", size);
	setenv(RT_ENV_SIZE, buf, 1);
	setenv(RT_ENV_LOCAL_SIZE, buf, 1);
	snprintf(buf, sizeof(buf), "%d", rank);
	setenv(RT_ENV_LOCAL_RANK, buf, 1);
	setenv(RT_ENV_JOBID, "00000000cafef00d", 1);
	setenv(RT_ENV_NID, "77", 1);
	setenv(RT_ENV_JOB_KEY, "000102030405060708090a0b0c0d0e0f", 1);
	snprintf(buf, sizeof(buf), "%d", fd);
	setenv(RT_ENV_FD, buf, 1);
}

static int setup_ptlrun(void **state)
{
	int sv[2];
	struct rt_info info;

	(void)state;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return -1;
	srv = sv[0];
	fake_env(1, 3, sv[1]);
	if (rt_init(&info) != 0 || strcmp(info.backend, "ptlrun") != 0 ||
	    info.rank != 1 || info.size != 3 || info.nid != 77 ||
	    info.jobid != 0xcafef00dULL || info.job_key[15] != 15)
		return -1;
	return 0;
}

static int teardown_ptlrun(void **state)
{
	(void)state;
	rt_fini();
	if (srv >= 0)
		close(srv);
	srv = -1;
	unsetenv(RT_ENV_FD);
	unsetenv(RT_ENV_TIMEOUT);
	return 0;
}

/* Reads what the rank sent so far (it never waits: the rank is blocked). */
static const char *srv_read(void)
{
	static char buf[8192];
	ssize_t n = recv(srv, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_ptlrun_fence(void **state)
{
	static const char reply[] =
		"KV 0 addr 6869\nKV 1 addr 6d65\nKV 2 addr \nFENCE_DONE\n";
	char val[8];
	size_t len = sizeof(val);

	(void)state;
	assert_int_equal(rt_put("addr", "me", 2), 0);
	assert_string_equal(srv_read(), "PUT addr 6d65\n");
	/* The reply may be queued before the rank asks. */
	assert_int_equal(write(srv, reply, strlen(reply)), (ssize_t)strlen(reply));
	assert_int_equal(rt_fence(), 0);
	assert_string_equal(srv_read(), "FENCE\n");
	assert_int_equal(rt_get(0, "addr", val, &len), 0);
	assert_int_equal(len, 2);
	assert_memory_equal(val, "hi", 2);
	len = sizeof(val);
	assert_int_equal(rt_get(2, "addr", val, &len), 0);
	assert_int_equal(len, 0);
	len = sizeof(val);
	assert_int_equal(rt_get(3, "addr", val, &len), -1);
	assert_int_equal(write(srv, "BARRIER_DONE\n", 13), 13);
	assert_int_equal(rt_barrier(), 0);
	assert_string_equal(srv_read(), "BARRIER\n");
}

static void test_ptlrun_err(void **state)
{
	static const char err[] =
		"ERR rank 2 (pid 9) exited before reaching the fence\n";

	(void)state;
	assert_int_equal(write(srv, err, strlen(err)), (ssize_t)strlen(err));
	cap_begin();
	assert_int_equal(rt_fence(), -1);
	assert_string_equal(cap_end(), "ptl: rank 1: the fence failed: rank 2 "
			    "(pid 9) exited before reaching the fence\n");
	assert_int_equal(write(srv, "HELLO\n", 6), 6);
	cap_begin();
	assert_int_equal(rt_barrier(), -1);
	assert_string_equal(cap_end(), "ptl: rank 1: unexpected reply from "
			    "ptlrun during the barrier: 'HELLO'\n");
}

static void *close_after(void *arg)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };

	(void)arg;
	nanosleep(&ts, NULL);
	shutdown(srv, SHUT_RDWR);
	return NULL;
}

static void test_ptlrun_gone(void **state)
{
	pthread_t t;
	time_t t0 = time(NULL);

	(void)state;
	/* ptlrun vanishes while the rank waits: fail at once, say why. */
	assert_int_equal(pthread_create(&t, NULL, close_after, NULL), 0);
	cap_begin();
	assert_int_equal(rt_barrier(), -1);
	assert_string_equal(cap_end(), "ptl: rank 1: lost contact with ptlrun "
			    "while waiting for the barrier (ptlrun exited or "
			    "was killed)\n");
	pthread_join(t, NULL);
	assert_true(time(NULL) - t0 < 5);
	/* ... and the next call fails too, on the send. */
	cap_begin();
	assert_int_equal(rt_fence(), -1);
	assert_non_null(strstr(cap_end(), "ptl: rank 1: lost contact with "
				"ptlrun sending the fence: "));
}

static void test_ptlrun_timeout(void **state)
{
	time_t t0 = time(NULL);

	(void)state;
	setenv(RT_ENV_TIMEOUT, "1", 1);
	cap_begin();
	assert_int_equal(rt_fence(), -1);
	assert_string_equal(cap_end(), "ptl: rank 1: timed out after 1 s "
			    "waiting for ptlrun to complete the fence (the "
			    "other ranks did not all arrive; PTL_RT_TIMEOUT "
			    "sets the limit)\n");
	assert_true(time(NULL) - t0 <= 3);
}

static void test_ptlrun_bad_env(void **state)
{
	struct rt_info info;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fake_env(3, 3, sv[1]);
	cap_begin();
	assert_int_equal(rt_init(&info), -1);
	assert_string_equal(cap_end(), "ptl: PTL_RT_RANK='3' is not a number "
			    "in 0..2\n");
	fake_env(0, 3, sv[1]);
	setenv(RT_ENV_JOBID, "xyz", 1);
	cap_begin();
	assert_int_equal(rt_init(&info), -1);
	assert_string_equal(cap_end(), "ptl: PTL_RT_JOBID='xyz' is not 16 hex "
			    "digits\n");
	fake_env(0, 3, sv[1]);
	unsetenv(RT_ENV_JOB_KEY);
	cap_begin();
	assert_int_equal(rt_init(&info), -1);
	assert_string_equal(cap_end(), "ptl: PTL_RT_FD is set but "
			    "PTL_RT_JOB_KEY is not: the PTL_RT_* environment "
			    "comes from ptlrun; unset PTL_RT_FD to run as a "
			    "job of one\n");
	/* An fd that is not a socket (a rank's child inherited the env). */
	fake_env(0, 3, 0);
	cap_begin();
	assert_int_equal(rt_init(&info), -1);
	assert_string_equal(cap_end(), "ptl: PTL_RT_FD=0 is not ptlrun's socket "
			    "(a child of a rank inherited the environment? "
			    "unset PTL_RT_FD to run as a job of one)\n");
	assert_null(rt_self());
	close(sv[0]);
	close(sv[1]);
	unsetenv(RT_ENV_FD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_shm_name),
		cmocka_unit_test(test_shm_view_parse),
		cmocka_unit_test(test_parse_and_keys),
		cmocka_unit_test(test_kv_table),
		cmocka_unit_test(test_singleton),
		cmocka_unit_test_setup_teardown(test_ptlrun_fence,
						setup_ptlrun, teardown_ptlrun),
		cmocka_unit_test_setup_teardown(test_ptlrun_err,
						setup_ptlrun, teardown_ptlrun),
		cmocka_unit_test_setup_teardown(test_ptlrun_gone,
						setup_ptlrun, teardown_ptlrun),
		cmocka_unit_test_setup_teardown(test_ptlrun_timeout,
						setup_ptlrun, teardown_ptlrun),
		cmocka_unit_test(test_ptlrun_bad_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
