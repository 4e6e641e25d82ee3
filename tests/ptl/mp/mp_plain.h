/*
 * For the tests/ptl/mp programs that run without cmocka (a rank that dies
 * on purpose, a process watched from outside: mp_common.h's per-test
 * teardown would end the job): a check that names the rank and the line
 * and makes the caller return 1, and a monotonic clock in seconds. The
 * program sets me, its rank, for the messages.
 */
#ifndef MP_PLAIN_H
#define MP_PLAIN_H

#include <stdio.h>
#include <time.h>

static int me;

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", me, \
	__FILE__, __LINE__, #c); return 1; } } while (0)

static inline double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
