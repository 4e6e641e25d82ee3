/*
 * tests/nal/test_self.c - the self NAL on its own: messages delivered by
 * progress() in order, never inside send(); what it refuses (another
 * peer, a message over max_inline, a full queue, and room again once
 * delivered); bulk moves; and sleeping: a timeout, queued work, a kick from
 * another thread, and a kick that came before the sleep, which must end it
 * at once (lost, it left a 1-rank job's progress thread asleep with no
 * timeout while the rank's messages to itself waited).
 */
#include "config.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "nal/nal.h"


static int got, got_len[64];
static unsigned char got_first[64];

static void up_recv(void *arg, int peer, const void *msg, size_t len)
{
	(void)arg;
	assert_int_equal(peer, 3);
	if (got < 64) {
		got_len[got] = (int)len;
		got_first[got] = len ? *(const unsigned char *)msg : 0;
	}
	got++;
}

static struct nal *open_self(void)
{
	struct nal_open_args a = { .rank = 3, .size = 4, .local_rank = 0, .local_size = 1,
				   .up = { .recv = up_recv } };
	struct nal *n = NULL;
	assert_int_equal(nal_self_ops.open(&a, &n), 0);
	assert_non_null(n);
	got = 0;
	return n;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_send_progress(void **state)
{
	(void)state;
	struct nal *n = open_self();
	struct nal_props p;
	nal_self_ops.props(n, &p);
	assert_string_equal(p.name, "self");
	assert_true(nal_self_ops.reaches(n, 3));
	assert_false(nal_self_ops.reaches(n, 2));
	assert_int_equal(nal_self_ops.connect(n, 2, NULL, 0), NAL_EINVAL);
	unsigned char hdr[8] = { 0 }, pay[100];
	memset(pay, 0xab, sizeof pay);
	for (int i = 0; i < 10; i++) {
		hdr[0] = (unsigned char)i;
		assert_int_equal(nal_self_ops.send(n, 3, hdr, sizeof hdr, pay, (size_t)i * 10), 0);
	}
	assert_int_equal(got, 0); /* not inside send() */
	assert_int_equal(nal_self_ops.progress(n), 10);
	assert_int_equal(got, 10);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(got_first[i], i);
		assert_int_equal(got_len[i], 8 + i * 10);
	}
	assert_int_equal(nal_self_ops.progress(n), 0);
	/* Refused: another peer, more than max_inline. */
	assert_int_equal(nal_self_ops.send(n, 2, hdr, sizeof hdr, NULL, 0), NAL_EINVAL);
	static unsigned char big[64 * 1024];
	assert_int_equal(nal_self_ops.send(n, 3, hdr, sizeof hdr, big, p.max_inline - sizeof hdr + 1), NAL_EINVAL);
	/* A full queue says so, loses nothing, and has room once delivered. */
	int sent = 0;
	while (nal_self_ops.send(n, 3, hdr, sizeof hdr, big, p.max_inline - sizeof hdr) == 0)
		sent++;
	assert_true(sent > 1);
	assert_int_equal(nal_self_ops.send(n, 3, hdr, sizeof hdr, big, p.max_inline - sizeof hdr), NAL_EAGAIN);
	got = 0;
	assert_int_equal(nal_self_ops.progress(n), sent);
	assert_int_equal(got, sent);
	assert_int_equal(nal_self_ops.send(n, 3, hdr, sizeof hdr, big, p.max_inline - sizeof hdr), 0);
	assert_int_equal(nal_self_ops.progress(n), 1);
	nal_self_ops.close(n);
}

static void test_bulk(void **state)
{
	(void)state;
	struct nal *n = open_self();
	char remote[64], a[16], b[48];
	memset(remote, 'r', sizeof remote);
	memset(a, 'a', sizeof a);
	memset(b, 'b', sizeof b);
	struct nal_mr mr;
	assert_int_equal(nal_self_ops.mem_reg(n, remote, sizeof remote, &mr), 0);
	struct iovec iov[2] = { { a, sizeof a }, { b, sizeof b } };
	/* A write of 40 bytes: all of a, 24 of b. */
	assert_int_equal(nal_self_ops.bulk(n, 3, NAL_BULK_WRITE, iov, 2, mr.addr, mr.key, 40, NULL), 0);
	for (int i = 0; i < 64; i++)
		assert_int_equal(remote[i], i < 16 ? 'a' : i < 40 ? 'b' : 'r');
	memset(a, 0, sizeof a);
	assert_int_equal(nal_self_ops.bulk(n, 3, NAL_BULK_READ, iov, 1, mr.addr + 10, mr.key, 16, NULL), 0);
	assert_memory_equal(a, "aaaaaabbbbbbbbbb", 16);
	assert_int_equal(nal_self_ops.bulk(n, 2, NAL_BULK_READ, iov, 1, mr.addr, mr.key, 16, NULL), NAL_EINVAL);
	nal_self_ops.mem_dereg(n, &mr);
	nal_self_ops.close(n);
}

/* Moves past 128 bytes (nal_copy's vector loop where the two are apart),
 * and a move within one buffer whose two ranges overlap, which must come
 * out as memmove's. */
static void test_bulk_large_and_overlapping(void **state)
{
	(void)state;
	enum { L = 8193, OFF = 100 };
	static unsigned char src[L + 7], dst[L + 7], one[L + OFF], want[L];
	struct nal *n = open_self();
	for (int i = 0; i < L + 7; i++)
		src[i] = (unsigned char)(i * 7 + 3);
	memset(dst, 0, sizeof dst);
	struct nal_mr mr;
	assert_int_equal(nal_self_ops.mem_reg(n, src, sizeof src, &mr), 0);
	struct iovec iov = { dst + 3, L };
	assert_int_equal(nal_self_ops.bulk(n, 3, NAL_BULK_READ, &iov, 1, mr.addr + 5, mr.key, L, NULL), 0);
	assert_memory_equal(dst + 3, src + 5, L);
	assert_int_equal(dst[2], 0);
	assert_int_equal(dst[L + 3], 0);
	nal_self_ops.mem_dereg(n, &mr);
	/* read [0, L) into [OFF, OFF + L) of the same buffer */
	for (int i = 0; i < L + OFF; i++)
		one[i] = (unsigned char)(i * 13 + 1);
	memcpy(want, one, L);
	assert_int_equal(nal_self_ops.mem_reg(n, one, sizeof one, &mr), 0);
	iov = (struct iovec){ one + OFF, L };
	assert_int_equal(nal_self_ops.bulk(n, 3, NAL_BULK_READ, &iov, 1, mr.addr, mr.key, L, NULL), 0);
	assert_memory_equal(one + OFF, want, L);
	/* and back: write [OFF, OFF + L) onto [0, L) */
	memcpy(want, one + OFF, L);
	assert_int_equal(nal_self_ops.bulk(n, 3, NAL_BULK_WRITE, &iov, 1, mr.addr, mr.key, L, NULL), 0);
	assert_memory_equal(one, want, L);
	nal_self_ops.mem_dereg(n, &mr);
	nal_self_ops.close(n);
}

static void *kick_later(void *arg)
{
	usleep(50000);
	nal_self_ops.kick(arg);
	return NULL;
}

static void test_sleep_kick(void **state)
{
	(void)state;
	struct nal *n = open_self();
	/* A timeout alone ends a sleep. */
	int64_t t0 = now_ms();
	nal_self_ops.sleep(n, 100);
	int64_t ms = now_ms() - t0;
	assert_true(ms >= 90 && ms < 2000);
	/* Queued work: at once. */
	unsigned char hdr[8] = { 0 };
	assert_int_equal(nal_self_ops.send(n, 3, hdr, sizeof hdr, NULL, 0), 0);
	t0 = now_ms();
	nal_self_ops.sleep(n, 5000);
	assert_true(now_ms() - t0 < 1000);
	assert_int_equal(nal_self_ops.progress(n), 1);
	/* A kick from another thread ends a sleep with no timeout. */
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, kick_later, n), 0);
	t0 = now_ms();
	nal_self_ops.sleep(n, -1);
	ms = now_ms() - t0;
	pthread_join(th, NULL);
	assert_true(ms >= 30 && ms < 2000);
	/* A kick before the sleep is kept: the next sleep returns at once,
	 * and only that one. */
	nal_self_ops.kick(n);
	t0 = now_ms();
	nal_self_ops.sleep(n, 5000);
	assert_true(now_ms() - t0 < 1000);
	t0 = now_ms();
	nal_self_ops.sleep(n, 100);
	ms = now_ms() - t0;
	assert_true(ms >= 90 && ms < 2000);
	nal_self_ops.close(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_progress),
		cmocka_unit_test(test_bulk),
		cmocka_unit_test(test_bulk_large_and_overlapping),
		cmocka_unit_test(test_sleep_kick),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
