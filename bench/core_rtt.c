/*
 * core_rtt: how long a cache line takes to go from one CPU to another and
 * back - the host state a shared-memory benchmark runs in.
 *
 *   bench/core_rtt [CPU_A CPU_B]      (default 0 1)
 *
 * Prints "core_rtt A B <median ns> [min-max]": one thread pinned to each
 * CPU, the two taking turns to bump a counter on one line, timed over
 * ROUNDS rounds of TURNS round trips. Exit 1 on bad arguments (not two
 * different CPU numbers), 2 where the two CPUs cannot both be had (fewer
 * CPUs, an affinity mask without them).
 *
 * Why: on a virtual machine the host decides where the guest's vCPUs run,
 * and moves them. On the 2-vCPU Zen 4 guest the round trip is 50-90 ns
 * for minutes (near: the vCPUs on cores that share a cache) and 320-460
 * ns for minutes (far), flipping between launches; everything that moves
 * lines between the ranks' cores follows it: 4 ranks on 2 cores,
 * MPI_Allreduce of 1 MiB, ptl 330-550 us near and 1.1-2.1 ms far, Open
 * MPI 450-790 us near and 1.7-2.0 ms far (launches tagged by a probe
 * before and after). bench/mpi_bench.sh probes around each launch it
 * compares, so that implementations are compared in the same state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_clock.h"

#define TURNS 20000 /* round trips a round: 1-9 ms */
#define ROUNDS 5

static _Alignas(64) atomic_uint core_rtt_line;

static int core_rtt_pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static int core_rtt_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct core_rtt_arg {
	int cpu;
	atomic_int pinned; /* 1 pinned, -1 refused */
};

/* The far side: pins itself, then answers each odd value with the next
 * even one. */
static void *core_rtt_far(void *p)
{
	struct core_rtt_arg *a = p;
	int ok = core_rtt_pin(a->cpu) == 0;
	atomic_store(&a->pinned, ok ? 1 : -1);
	for (unsigned i = 0; ok && i < ROUNDS * TURNS; i++) {
		while (atomic_load_explicit(&core_rtt_line, memory_order_acquire) != 2 * i + 1)
			;
		atomic_store_explicit(&core_rtt_line, 2 * i + 2, memory_order_release);
	}
	return NULL;
}

/* A CPU number from s, or -1 if s is not one. */
static int core_rtt_cpu(const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	return errno || end == s || *end || v < 0 || v >= CPU_SETSIZE ? -1 : (int)v;
}

int main(int argc, char **argv)
{
	int cpu_a = argc > 2 ? core_rtt_cpu(argv[1]) : 0, cpu_b = argc > 2 ? core_rtt_cpu(argv[2]) : 1;
	if (argc == 2 || argc > 3 || cpu_a < 0 || cpu_b < 0 || cpu_a == cpu_b) {
		fprintf(stderr, "usage: core_rtt [CPU_A CPU_B]   (two different CPUs; default 0 1)\n");
		return 1;
	}
	if (core_rtt_pin(cpu_a) != 0) {
		fprintf(stderr, "core_rtt: cannot run on CPU %d\n", cpu_a);
		return 2;
	}
	struct core_rtt_arg far = { .cpu = cpu_b };
	pthread_t t;
	if (pthread_create(&t, NULL, core_rtt_far, &far) != 0) {
		fprintf(stderr, "core_rtt: cannot start a thread\n");
		return 2;
	}
	while (!atomic_load(&far.pinned))
		sched_yield();
	if (atomic_load(&far.pinned) < 0) {
		pthread_join(t, NULL);
		fprintf(stderr, "core_rtt: cannot run on CPU %d\n", cpu_b);
		return 2;
	}
	double ns[ROUNDS];
	for (unsigned r = 0; r < ROUNDS; r++) {
		double t0 = bench_now_ns();
		for (unsigned i = r * TURNS; i < (r + 1) * TURNS; i++) {
			atomic_store_explicit(&core_rtt_line, 2 * i + 1, memory_order_release);
			while (atomic_load_explicit(&core_rtt_line, memory_order_acquire) != 2 * i + 2)
				;
		}
		ns[r] = (bench_now_ns() - t0) / TURNS;
	}
	pthread_join(t, NULL);
	qsort(ns, ROUNDS, sizeof(ns[0]), core_rtt_cmp);
	printf("core_rtt %d %d %.0f [%.0f-%.0f]\n", cpu_a, cpu_b, ns[ROUNDS / 2], ns[0], ns[ROUNDS - 1]);
	return 0;
}
