/*
 * For the tests/ptl/mp programs that run without cmocka (a rank that dies
 * on purpose, a process watched from outside: mp_common.h's per-test
 * teardown would end the job): a check that names the rank and the line
 * and makes the caller return 1, a monotonic clock in seconds, and the
 * start every such program makes (mp_plain_init, which sets me, the rank
 * the messages name).
 */
#ifndef MP_PLAIN_H
#define MP_PLAIN_H

#include <portals3.h>
#include <ptl_runtime.h>
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

/* PtlInit and the default interface into *ni, me this rank; 1 (said) if
 * one fails or the job is not nranks ranks */
static inline int mp_plain_init(ptl_handle_ni_t *ni, int nranks)
{
	int maxif;
	CHECK(PtlInit(&maxif) == PTL_OK);
	CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, ni) == PTL_OK);
	me = PtlRtRank();
	CHECK(PtlRtSize() == nranks);
	return 0;
}

#endif
