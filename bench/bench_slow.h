/*
 * bench/bench_slow.h - run a trial again when a rank's core ran slow
 * around it (bench_speed.h says why), for the MPI benchmarks built against
 * every implementation alike (bench/mpi_pingpong.c, bench/mpi_allreduce.c).
 * One program includes it once: the state is the program's.
 *
 * A trial with a probe right before or right after it over PTL_BENCH_SLOW
 * (default BENCH_SPEED_SLOW) times the process's fastest, on any rank, is
 * run again, up to SLOW_RETRIES times (then kept, and counted) and
 * SLOW_BUDGET times in a launch, so that a core slow for seconds costs a
 * launch a bounded time. Only a trial's edges are probed: a stretch that
 * starts and ends within one goes unseen. Before it runs again every rank
 * probes until all cores read fast (a stretch lasts 1 - 100 ms and more,
 * a short trial well under 1 ms: run again at once, it fell into the same
 * stretch), for at most SLOW_WAIT_NS. PTL_BENCH_SLOW=off: no probes,
 * every trial kept. Nor are there any where ranks outnumber the online
 * CPUs (slow_init's caller says): a probe then times the core shared with
 * another rank, which is no sign of the host.
 *
 *   slow_init(oversubscribed);
 *   for (t = 0; t < trials; t++) {
 *           int slow = trial_begin();
 *           ... the trial, ending with every rank past it ...
 *           if (trial_again(slow))
 *                   t--;
 *   }
 *   slow_report(rank, "slow");  "<name> <run again> <kept slow> <trials>"
 *
 * trial_again and slow_wait are collective over MPI_COMM_WORLD.
 */
#ifndef BENCH_SLOW_H
#define BENCH_SLOW_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "bench_speed.h"

#define SLOW_RETRIES 4
#define SLOW_BUDGET 100
#define SLOW_WAIT_NS 50e6
static struct bench_speed speed;
static double slow_ratio = BENCH_SPEED_SLOW;
static int slow_off, slow_tries, slow_again, slow_kept, slow_trials;

/* Every rank must probe or none (trial_again's MPI_Allreduce): where
 * their settings differ (environment, CPU count), none does. */
static void slow_init(int oversubscribed)
{
	const char *e = getenv("PTL_BENCH_SLOW");
	if (oversubscribed || (e && strcmp(e, "off") == 0))
		slow_off = 1;
	else if (e)
		slow_ratio = atof(e);
	MPI_Allreduce(MPI_IN_PLACE, &slow_off, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (!slow_off)
		bench_speed_seed(&speed);
}

/* Whether a probe now finds this rank's core slow. */
static int probe_slow(void)
{
	return bench_speed_probe(&speed) > slow_ratio * speed.low;
}

/* Before a trial: whether this rank's core is slow now. */
static int trial_begin(void)
{
	return slow_off ? 0 : probe_slow();
}

/* Until every core reads fast, or any rank has waited SLOW_WAIT_NS:
 * decided together, so that every rank makes as many MPI_Allreduce calls. */
static void slow_wait(void)
{
	double t0 = bench_now_ns();
	for (int f[2] = { 1, 0 }; f[0] && !f[1];) {
		f[0] = probe_slow();
		f[1] = bench_now_ns() - t0 > SLOW_WAIT_NS;
		MPI_Allreduce(MPI_IN_PLACE, f, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	}
}

/* After it: whether to run it again (every rank gets the same answer). */
static int trial_again(int slow)
{
	if (!slow_off) {
		slow |= probe_slow();
		MPI_Allreduce(MPI_IN_PLACE, &slow, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	}
	if (slow && slow_tries < SLOW_RETRIES && slow_again < SLOW_BUDGET) {
		slow_tries++;
		slow_again++;
		slow_wait();
		return 1;
	}
	slow_kept += slow;
	slow_trials++;
	slow_tries = 0;
	return 0;
}

/* Rank 0 prints the counts (without probes: every trial kept, none slow). */
static void slow_report(int rank, const char *name)
{
	if (rank == 0)
		printf("%s %d %d %d\n", name, slow_again, slow_kept, slow_trials);
}

#endif
