/*
 * PtlFini while other threads wait in PtlEQWait, then PtlInit again (2
 * ranks, refini.sh). The thread that called PtlInit takes the library
 * lock by the biased path (lib/ptl/ptl_internal.h, ptl_lock) once it has
 * taken it PTL_LOCK_REOPEN times alone; its PtlFini must turn that off
 * with nothing held, before teardown wakes the waiters: turned off inside
 * teardown, a waiter took the mutex beside PtlFini's biased hold, left
 * the path's flag set, and the next PtlInit's progress thread waited on
 * that flag for ever, holding the mutex, with every API call behind it.
 * Each waiter's PtlEQWait returns once its EQ is gone; after the second
 * PtlInit the ranks exchange a put and its ACK (the library works), and
 * the second PtlFini ends it. A watchdog names a hang.
 */
#include "mp_plain.h"

#include <pthread.h>

#define WAITERS 3
#define ROUNDS 2

static ptl_handle_eq_t weq;
static int wait_rc[WAITERS];

static void *waiter(void *arg)
{
	ptl_event_t ev;
	wait_rc[(intptr_t)arg] = PtlEQWait(weq, &ev);
	return NULL;
}

/* A put to the other rank and its ACK, with the other's put landing
 * here: 1 (said) if either fails. */
static int exchange(ptl_handle_ni_t ni, int round)
{
	static char buf[64], src[64];
	ptl_handle_eq_t eq;
	ptl_handle_me_t mh;
	ptl_handle_md_t md;
	CHECK(PtlEQAlloc(ni, 16, PTL_EQ_HANDLER_NONE, &eq) == PTL_OK);
	ptl_process_id_t any = { .nid = PTL_NID_ANY, .pid = PTL_PID_ANY };
	CHECK(PtlMEAttach(ni, 7, any, (ptl_match_bits_t)round, 0, PTL_UNLINK, PTL_INS_AFTER, &mh) == PTL_OK);
	ptl_md_t d = { .start = buf, .length = sizeof buf, .threshold = PTL_MD_THRESH_INF,
		       .options = PTL_MD_OP_PUT, .eq_handle = eq };
	CHECK(PtlMDAttach(mh, d, PTL_RETAIN, &md) == PTL_OK);
	CHECK(PtlRtBarrier() == PTL_OK);
	ptl_md_t s = { .start = src, .length = sizeof src, .threshold = PTL_MD_THRESH_INF, .eq_handle = eq };
	ptl_handle_md_t smd;
	CHECK(PtlMDBind(ni, s, PTL_RETAIN, &smd) == PTL_OK);
	ptl_process_id_t peer;
	CHECK(PtlRtId(1 - me, &peer) == PTL_OK);
	snprintf(src, sizeof src, "round %d from %d", round, me);
	CHECK(PtlPut(smd, PTL_ACK_REQ, peer, 7, 0, (ptl_match_bits_t)round, 0, 0) == PTL_OK);
	int put_end = 0, ack = 0;
	while (!put_end || !ack) {
		ptl_event_t ev;
		int which;
		CHECK(PtlEQPoll(&eq, 1, 10000, &ev, &which) == PTL_OK);
		put_end += ev.type == PTL_EVENT_PUT_END;
		ack += ev.type == PTL_EVENT_ACK;
	}
	char want[64];
	snprintf(want, sizeof want, "round %d from %d", round, 1 - me);
	CHECK(!strcmp(buf, want));
	CHECK(PtlRtBarrier() == PTL_OK);
	CHECK(PtlMDUnlink(smd) == PTL_OK);
	CHECK(PtlMEUnlink(mh) == PTL_OK);
	CHECK(PtlEQFree(eq) == PTL_OK);
	return 0;
}

int main(void)
{
	mp_watch(60 * mp_plain_slow(), "mp_refini: hung (PtlFini with waiters, or PtlInit after it)\n");
	for (int round = 0; round < ROUNDS; round++) {
		ptl_handle_ni_t ni;
		int maxif;
		CHECK(PtlInit(&maxif) == PTL_OK);
		/* The progress thread's first take of the lock before ours: it
		 * shuts the path and waits for this thread to be out of it. */
		usleep(100 * 1000);
		CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni) == PTL_OK);
		me = PtlRtRank();
		CHECK(PtlRtSize() == 2);
		if (exchange(ni, round))
			return 1;
		CHECK(PtlEQAlloc(ni, 16, PTL_EQ_HANDLER_NONE, &weq) == PTL_OK);
		pthread_t t[WAITERS];
		for (intptr_t i = 0; i < WAITERS; i++)
			CHECK(pthread_create(&t[i], NULL, waiter, (void *)i) == 0);
		usleep(100 * 1000); /* in their waits, past the spins */
		CHECK(PtlRtBarrier() == PTL_OK); /* its helper thread's takes shut the path */
		/* Takes of this thread alone: the biased path opens again. */
		ptl_process_id_t id;
		for (int i = 0; i < 1000; i++)
			CHECK(PtlGetId(ni, &id) == PTL_OK);
		PtlFini();
		for (int i = 0; i < WAITERS; i++) {
			CHECK(pthread_join(t[i], NULL) == 0);
			CHECK(wait_rc[i] != PTL_OK);
		}
	}
	mp_unwatch();
	printf("rank %d: %d rounds of PtlFini with %d threads in PtlEQWait, each followed by a working PtlInit\n",
	       me, ROUNDS, WAITERS);
	return 0;
}
