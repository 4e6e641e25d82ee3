/*
 * For the tests/ptl/mp programs that run without cmocka (a rank that dies
 * on purpose, a process watched from outside: mp_common.h's per-test
 * teardown would end the job): a check that names the rank and the line
 * and makes the caller return 1, a monotonic clock in seconds, the
 * start every such program makes (mp_plain_init, which sets me, the rank
 * the messages name), and for the dead-peer programs the death, the
 * limits of a wait for the answer the dead one owes (50 times longer
 * under valgrind: mp_plain_slow), and a watchdog.
 */
#ifndef MP_PLAIN_H
#define MP_PLAIN_H

#include <portals3.h>
#include <ptl_runtime.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* How many times longer a limit is: 50 where every rank runs under
 * valgrind memcheck (PTL_TEST_VALGRIND=1, tests/ptl/mp/valgrind.sh; 20 to
 * 50 times slower), else 1. */
static inline unsigned mp_plain_slow(void)
{
	const char *v = getenv("PTL_TEST_VALGRIND");
	return v && !strcmp(v, "1") ? 50 : 1;
}

/* A rank dying in its EQ handler: delay_s later, what it printed out,
 * _exit without PtlFini (ptlrun lets the job run on), its answers never
 * sent. */
static inline _Noreturn void mp_plain_die(double delay_s)
{
	if (delay_s > 0)
		nanosleep(&(struct timespec){ (time_t)delay_s, (long)((delay_s - (time_t)delay_s) * 1e9) }, NULL);
	fflush(stdout);
	_exit(0);
}

/* A target whose EQ handler dies (mp_plain_die) at rank 0's request:
 * past the barrier its wait ends only by that death; 1 (said) if the
 * request never came. */
static inline int mp_plain_await_death(ptl_handle_eq_t eq, const char *request)
{
	CHECK(PtlRtBarrier() == PTL_OK);
	ptl_event_t ev;
	int which;
	PtlEQPoll(&eq, 1, 30000 * (ptl_time_t)mp_plain_slow(), &ev, &which); /* the handler ends us first */
	fprintf(stderr, "rank %d: rank 0's %s never came\n", me, request);
	return 1;
}

/* A dead peer's answer (libptl's, in its stead) must come within prompt_s
 * of the wait's start: on shm the death's delay, a probe period (1 s) and
 * slack; the verbs NAL's keepalive and retries take seconds (tests/vm runs
 * the mp tests over PTL_NAL=verbs). A wait of hang_s hangs (mp_watch).
 * Both mp_plain_slow times that: under valgrind's job limit still (the
 * scripts' test_limit), so that the watchdog says what hung. */
struct mp_dead_limits {
	double prompt_s;
	unsigned hang_s;
};

static inline struct mp_dead_limits mp_dead_limits(void)
{
	const char *nal = getenv("PTL_NAL");
	const unsigned slow = mp_plain_slow();
	if (nal && *nal && strcmp(nal, "shm"))
		return (struct mp_dead_limits){ 30.0 * slow, 60 * slow };
	return (struct mp_dead_limits){ 6.0 * slow, 20 * slow };
}

/* The watchdog's message, made when it is armed: a signal handler formats
 * nothing. */
static char mp_watch_msg[400];

static inline void mp_watch_fire(int sig)
{
	(void)sig;
	if (write(2, mp_watch_msg, strlen(mp_watch_msg)) < 0)
		_exit(3);
	_exit(2);
}

/* Arms a watchdog: once secs pass, the message (printf's fmt and what
 * follows) goes to stderr and the process ends with status 2, naming what
 * it waited for instead of hanging. mp_unwatch disarms it. */
static inline __attribute__((format(printf, 2, 3))) void mp_watch(unsigned secs, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(mp_watch_msg, sizeof mp_watch_msg, fmt, ap);
	va_end(ap);
	signal(SIGALRM, mp_watch_fire);
	alarm(secs);
}

static inline void mp_unwatch(void)
{
	alarm(0);
}

#endif
