/*
 * bench/bench_speed.h - whether this process's core ran at its full speed
 * around a trial, so that a trial run while the host slowed the core is
 * run again (bench_slow.h: bench/mpi_pingpong.c, bench/mpi_allreduce.c).
 *
 * Why: the host runs other tenants beside the guest's vCPUs, and a vCPU
 * slows by 1.3 - 1.6x for stretches of 1 - 100 ms and more, one core at a
 * time, whatever it runs. On the 2-vCPU Zen 3 guest (2026-12-06) a fixed
 * integer loop took 4.52 TSC cycles an iteration on a core at full speed
 * and 5.9 - 7.4 in such a stretch; sampled every 0.37 ms, each core spent
 * about a fifth of its time in them. A ping-pong launch that fell into
 * one ran every step of the slow rank's code 1.5 - 2x longer (rdtsc marks
 * in the MPI and shm layers: the other rank's steps unchanged), which
 * put 8-byte half round trips at 0.20 - 0.26 us against 0.15 - 0.16, and
 * decided the latency table by which implementation drew the stretch.
 * The probes of the host state (bench/core_rtt) do not see it: a line's
 * round trip between the cores stays near.
 *
 * The probe: BENCH_SPEED_ITERS iterations of a loop of independent
 * integer operations and L1 loads and stores (no branch but the loop's,
 * ~40 us at full speed), timed by CLOCK_MONOTONIC (the vDSO: no system
 * call). A probe over BENCH_SPEED_SLOW times the lowest this process has
 * taken is slow (the program may take another ratio). A core slow for
 * the whole run is not seen so: its lowest is slow too.
 */
#ifndef BENCH_SPEED_H
#define BENCH_SPEED_H

#include <stdint.h>

#include "bench_clock.h"

#define BENCH_SPEED_ITERS 20000
#define BENCH_SPEED_SLOW 1.15
/* Probes at start, to learn the lowest: ~2 ms, past a core's ramp from idle. */
#define BENCH_SPEED_SEED 50

struct bench_speed {
	double low; /* the lowest probe so far, ns (0: none) */
	uint32_t acc[1024];
};

/* One probe: ns for the loop; the lowest kept in s. */
static inline double bench_speed_probe(struct bench_speed *s)
{
	uint32_t x = 1, y = 2, z = 3, w = 4;
	double t0 = bench_now_ns(), ns;

	for (int i = 0; i < BENCH_SPEED_ITERS; i++) {
		x = x * 1103515245u + 12345u;
		y += s->acc[i & 1023] ^ (y >> 3);
		z += (z << 2) ^ s->acc[(i + 64) & 1023];
		w ^= w + (uint32_t)i;
		s->acc[(i + 128) & 1023] = y + z;
	}
	/* Keeps the loop: its results go to memory the next probe reads. */
	s->acc[0] ^= x ^ w;
	ns = bench_now_ns() - t0;
	if (s->low == 0 || ns < s->low)
		s->low = ns;
	return ns;
}

static inline void bench_speed_seed(struct bench_speed *s)
{
	for (int i = 0; i < BENCH_SPEED_SEED; i++)
		bench_speed_probe(s);
}

#endif
