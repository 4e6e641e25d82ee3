/*
 * When the progress thread wakes (driven by idle.sh, 2 ranks, with the
 * progress thread), counted as its voluntary context switches (each a
 * sleep it went into; /proc/self/task/<tid>/status):
 *
 *  - idle, nothing in flight, it sleeps until a peer or the application
 *    wakes it: no switch at all over IDLE_S on either rank, counted from
 *    when it was seen asleep (the dead-peer probe, ptl_peers_probe, gives
 *    no periodic wake-up to a process that awaits nothing);
 *  - with a get of rank 0 in flight to rank 1, which lives but does not
 *    answer (stopped by SIGSTOP), while rank 0 waits in PtlEQPoll, its
 *    thread wakes about once a second to look whether rank 1 died:
 *    counted by a thread of the test from SETTLE_S into the wait (the
 *    wait's start wakes the thread a few times: a kick, its leases) for
 *    SPAN_S, at least once and at most MAX_WAKES (a 100 ms period would
 *    make 20);
 *  - a stopped peer is not dead: nothing comes for rank 0's get while
 *    rank 1 is stopped, and once it continues (SIGCONT) its REPLY comes,
 *    PTL_NI_OK, with its data.
 */
#include <dirent.h>
#include <portals3.h>
#include <pthread.h>
#include <ptl_runtime.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mp_plain.h"

#define PT 7
#define IDLE_S 3      /* the idle count's span */
#define SETTLE_S 0.5  /* with the get in flight: the count starts this far into the wait */
#define SPAN_S 2.0    /* and spans this long (the wait: both and a second more) */
#define MAX_WAKES 5   /* at most this many sleeps in SPAN_S: a look once a second makes 2 */
#define WORD 0x1d1e5eedull

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* The state letter of process pid ('T': stopped), or of thread tid of
 * ours when pid is 0; '?' when unknown. */
static char proc_state(long pid, long tid)
{
	char path[64], buf[256], *s;
	if (pid)
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	else
		snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
	FILE *f = fopen(path, "r");
	char c = '?';
	if (f) {
		if (fgets(buf, sizeof buf, f) && (s = strrchr(buf, ')')) && s[1] == ' ')
			c = s[2];
		fclose(f);
	}
	return c;
}

/* Voluntary context switches of this process's threads but the main one
 * and the test's counter (tid `also`): libptl's progress thread. -1 when
 * /proc does not say; with asleep, -2 when one of them is not asleep
 * (state S) now. */
static long others_sleeps_if(long also, bool asleep)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	long sum = 0, self = (long)getpid();
	int seen = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		long tid = atol(e->d_name);
		if (tid <= 0 || tid == self || tid == also)
			continue;
		if (asleep && proc_state(0, tid) != 'S') {
			closedir(d);
			return -2;
		}
		char path[64], line[128];
		snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof line, f))
			if (!strncmp(line, "voluntary_ctxt_switches:", 24)) {
				sum += atol(line + 24);
				seen++;
			}
		fclose(f);
	}
	closedir(d);
	return seen ? sum : -1;
}

static long others_sleeps(long also)
{
	return others_sleeps_if(also, false);
}

/* The count during rank 0's wait, by a thread of its own: from SETTLE_S
 * after `start` for SPAN_S. */
struct counter {
	double start;
	long sleeps; /* -1: not known */
};

static void *count_wait(void *arg)
{
	struct counter *c = arg;
	long tid = (long)syscall(SYS_gettid);
	sleep_s(c->start + SETTLE_S - now_s());
	long c0 = others_sleeps(tid);
	sleep_s(SPAN_S);
	long c1 = others_sleeps(tid);
	c->sleeps = c0 < 0 || c1 < 0 ? -1 : c1 - c0;
	return NULL;
}

int main(void)
{
	ptl_handle_ni_t ni;
	if (mp_plain_init(&ni, 2))
		return 1;
	ptl_process_id_t peer;
	CHECK(PtlRtId(1 - me, &peer) == PTL_OK);
	const ptl_process_id_t any = { PTL_NID_ANY, PTL_PID_ANY };
	ptl_handle_eq_t eq;
	ptl_handle_me_t mh;
	ptl_handle_md_t md, smd;
	static uint64_t word, got;
	word = me == 1 ? WORD : 0;
	/* Rank 1's word answers rank 0's get; rank 0's takes rank 1's put. */
	ptl_md_t t = { .start = &word, .length = sizeof word, .threshold = PTL_MD_THRESH_INF,
		       .options = PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_EVENT_START_DISABLE };
	CHECK(PtlEQAlloc(ni, 8, PTL_EQ_HANDLER_NONE, &eq) == PTL_OK);
	t.eq_handle = eq;
	CHECK(PtlMEAttach(ni, PT, any, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &mh) == PTL_OK);
	CHECK(PtlMDAttach(mh, t, PTL_RETAIN, &md) == PTL_OK);
	ptl_md_t s = { .start = &got, .length = sizeof got, .threshold = PTL_MD_THRESH_INF,
		       .options = PTL_MD_EVENT_START_DISABLE, .eq_handle = eq };
	CHECK(PtlMDBind(ni, s, PTL_RETAIN, &smd) == PTL_OK);
	CHECK(PtlRtBarrier() == PTL_OK);

	/* Idle: nothing in flight, the main thread out of the library. The
	 * thread's last pass may still be on its way to sleep (its spins
	 * yield the CPU, for long on a loaded host): counted from when it
	 * was seen asleep, and had not slept again, 0.3 s apart. */
	long c0 = others_sleeps_if(0, true), c1 = -2;
	for (int i = 0; i < 30 && c0 != -1; i++) {
		sleep_s(0.3);
		c1 = others_sleeps_if(0, true);
		if (c1 >= 0 && c1 == c0)
			break;
		c0 = c1;
	}
	sleep_s(IDLE_S);
	c1 = others_sleeps(0);
	if (c0 < 0 || c1 < 0) {
		printf("rank %d: /proc does not count the threads' context switches; not checked\n", me);
	} else {
		printf("rank %d: idle, the progress thread slept %ld times in %d s\n", me, c1 - c0, IDLE_S);
		if (c1 != c0) {
			fprintf(stderr, "rank %d: with nothing in flight the progress thread woke %ld times in %d s; "
					"it should sleep until something comes\n", me, c1 - c0, IDLE_S);
			return 1;
		}
	}
	CHECK(PtlRtBarrier() == PTL_OK);

	ptl_event_t ev;
	int which;
	if (me == 1) {
		/* Our pid to rank 0, then stop until it lets us go on. */
		CHECK(PtlPut(smd, PTL_NO_ACK_REQ, peer, PT, 0, 0, 0, (ptl_hdr_data_t)getpid()) == PTL_OK);
		raise(SIGSTOP);
		CHECK(PtlRtBarrier() == PTL_OK);
		PtlNIFini(ni);
		PtlFini();
		return 0;
	}
	do
		CHECK(PtlEQWait(eq, &ev) == PTL_OK);
	while (ev.type != PTL_EVENT_PUT_END);
	const long pid = (long)ev.hdr_data;
	const double t0 = now_s();
	while (proc_state(pid, 0) != 'T') {
		CHECK(now_s() - t0 < 10);
		sleep_s(0.01);
	}
	CHECK(PtlGet(smd, peer, PT, 0, 0, 0) == PTL_OK);
	CHECK(PtlEQGet(eq, &ev) == PTL_OK);
	CHECK(ev.type == PTL_EVENT_SEND_END);
	struct counter cnt = { now_s(), -1 };
	pthread_t counter;
	CHECK(pthread_create(&counter, NULL, count_wait, &cnt) == 0);
	const int wait_ms = (int)((SETTLE_S + SPAN_S + 1) * 1000);
	int rc = PtlEQPoll(&eq, 1, wait_ms, &ev, &which);
	pthread_join(counter, NULL);
	if (rc != PTL_EQ_EMPTY) {
		fprintf(stderr, "rank 0: %s (%s, fail %d) while rank 1 is stopped; nothing should come\n",
			PtlErrorStr((unsigned)rc), rc == PTL_OK ? PtlEventKindStr(ev.type) : "-",
			rc == PTL_OK ? (int)ev.ni_fail_type : -1);
		kill((pid_t)pid, SIGCONT);
		return 1;
	}
	if (cnt.sleeps >= 0) {
		printf("rank 0: a get in flight to a stopped peer, the progress thread slept %ld times in %.1f s\n",
		       cnt.sleeps, SPAN_S);
		if (cnt.sleeps < 1 || cnt.sleeps > MAX_WAKES) {
			fprintf(stderr, "rank 0: the progress thread slept %ld times in %.1f s with an answer due: "
					"expected 1 to %d (a look about once a second)\n", cnt.sleeps, SPAN_S,
				MAX_WAKES);
			kill((pid_t)pid, SIGCONT);
			return 1;
		}
	}
	CHECK(kill((pid_t)pid, SIGCONT) == 0);
	CHECK(PtlEQPoll(&eq, 1, 30000, &ev, &which) == PTL_OK);
	CHECK(ev.type == PTL_EVENT_REPLY_END);
	CHECK(ev.ni_fail_type == PTL_NI_OK);
	CHECK(got == WORD);
	int failed = -1;
	CHECK(PtlRtRankFailed(1, &failed) == PTL_OK);
	CHECK(failed == 0);
	printf("rank 0: the stopped peer answered once it went on\n");
	CHECK(PtlRtBarrier() == PTL_OK);
	PtlNIFini(ni);
	PtlFini();
	return 0;
}
