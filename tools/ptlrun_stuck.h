/* ptlrun_stuck.h: ptlrun's report on the ranks a timeout finds running. */
#ifndef PTLRUN_STUCK_H
#define PTLRUN_STUCK_H

#include <sys/types.h>

/* Says on stderr what each of the n ranks (ranks[i], process pids[i])
 * was doing: its threads' states, system calls, wchan and CPU use over a
 * short sample, then their stacks (eu-stack or gdb, unless PTLRUN_STACKS
 * is 0). Blocks for a fraction of a second, plus the stack tool's time. */
void ptlrun_stuck_report(const int *ranks, const pid_t *pids, int n);

/* ptlrun.c: CLOCK_MONOTONIC in milliseconds. */
long long ptlrun_now_ms(void);

#endif
