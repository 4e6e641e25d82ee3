/*
 * bench/bench_clock.h - the benchmarks' one clock: CLOCK_MONOTONIC in ns,
 * as a double (2^53 ns is 104 days since boot: no precision lost to the
 * conversion before then).
 * Read through the vDSO on Linux, so a trial pays no system call for it
 * (ptl_pingpong.c says where that fails: a TCG guest).
 */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H

#include <time.h>

static inline double bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#endif
