/*
 * A dead target's answer to a process that polls (driven by deadpoll.sh,
 * 2 ranks, without and with a progress thread): rank 0 puts to rank 1
 * with an ACK requested and then only polls, never waiting: with
 * "mp_deadpoll get" PtlEQGet after PtlEQGet, with "mp_deadpoll poll0"
 * PtlEQPoll of timeout 0 after PtlEQPoll, over an idle EQ and the put's
 * (the ACK must come out as the second's). Rank 1 dies in its EQ handler
 * at the put's PUT_START, DELAY_S after it (rank 0 polls by then), before
 * it acknowledges (_exit without PtlFini: ptlrun lets the job run on).
 *
 * The shm NAL sees a death only when it looks, and libptl looks once a
 * second while answers are due (ptl_peers_probe): in a wait, in the
 * progress thread, and - what this tests - in an empty poll when no
 * progress thread runs (PTL_PROGRESS_THREAD=0): PtlEQGet, which before
 * never looked, so the loop polled for the ACK forever, and PtlEQPoll of
 * timeout 0, which looked at every call and now, as PtlEQGet, every 64th.
 * The failed ACK, made by libptl in rank 1's stead, must come within
 * prompt_s of the poll's start; a watchdog ends a poll that hangs after
 * hang_s, saying what it polled for.
 */
#include <portals3.h>
#include <ptl_runtime.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mp_plain.h"

#define PT 5
#define BITS 0xdeadull
#define DELAY_S 0.3 /* rank 1 dies this long after the put's START */

/* Rank 1's EQ handler: its first event is the START of rank 0's put, and
 * it dies DELAY_S later, the ACK never sent. */
static void die(ptl_event_t *ev)
{
	(void)ev;
	mp_plain_die(DELAY_S);
}

/* One poll of rank 0's, as argv[1] says (poll0: PtlEQPoll of timeout 0
 * over eqs[0, 2), the put's eqs[1]; else PtlEQGet of eqs[1]); 1 (said) if
 * PtlEQPoll's event came from another EQ than the put's. */
static int poll_once(bool poll0, ptl_handle_eq_t *eqs, ptl_event_t *ev, int *rc)
{
	if (!poll0) {
		*rc = PtlEQGet(eqs[1], ev);
		return 0;
	}
	int which = -1;
	*rc = PtlEQPoll(eqs, 2, 0, ev, &which);
	if (*rc != PTL_EQ_EMPTY)
		CHECK(which == 1);
	return 0;
}

int main(int argc, char **argv)
{
	const bool poll0 = argc > 1 && !strcmp(argv[1], "poll0");
	if (argc > 1 && !poll0 && strcmp(argv[1], "get")) {
		fprintf(stderr, "usage: mp_deadpoll [get|poll0]\n");
		return 2;
	}
	const char *call = poll0 ? "PtlEQPoll (timeout 0)" : "PtlEQGet";
	ptl_handle_ni_t ni;
	if (mp_plain_init(&ni, 2))
		return 1;
	static char buf[64];
	const ptl_process_id_t any = { PTL_NID_ANY, PTL_PID_ANY };
	ptl_handle_eq_t eq;
	if (me == 1) {
		ptl_handle_me_t mh;
		ptl_handle_md_t md;
		ptl_md_t t = { .start = buf, .length = sizeof buf, .threshold = PTL_MD_THRESH_INF,
			       .options = PTL_MD_OP_PUT };
		CHECK(PtlEQAlloc(ni, 8, die, &eq) == PTL_OK);
		t.eq_handle = eq;
		CHECK(PtlMEAttach(ni, PT, any, BITS, 0, PTL_RETAIN, PTL_INS_AFTER, &mh) == PTL_OK);
		CHECK(PtlMDAttach(mh, t, PTL_RETAIN, &md) == PTL_OK);
		return mp_plain_await_death(eq, "put");
	}

	ptl_process_id_t target;
	CHECK(PtlRtId(1, &target) == PTL_OK);
	ptl_handle_eq_t eqs[2]; /* an idle one, the put's */
	CHECK(PtlEQAlloc(ni, 8, PTL_EQ_HANDLER_NONE, &eqs[0]) == PTL_OK);
	CHECK(PtlEQAlloc(ni, 8, PTL_EQ_HANDLER_NONE, &eq) == PTL_OK);
	eqs[1] = eq;
	ptl_md_t m = { .start = buf, .length = 8, .threshold = PTL_MD_THRESH_INF,
		       .options = PTL_MD_EVENT_START_DISABLE, .eq_handle = eq };
	ptl_handle_md_t md;
	CHECK(PtlMDBind(ni, m, PTL_RETAIN, &md) == PTL_OK);
	const char *pt = getenv("PTL_PROGRESS_THREAD");
	const struct mp_dead_limits lim = mp_dead_limits();
	CHECK(PtlRtBarrier() == PTL_OK);
	CHECK(PtlPut(md, PTL_ACK_REQ, target, PT, 0, BITS, 0, 0) == PTL_OK);

	/* Only polls: the put's SEND_END (8 bytes go inline: logged by the
	 * call), then the ACK libptl makes for the dead target. */
	mp_watch(lim.hang_s,
		 "rank 0: still polling with %s after %u s for the ACK of its put to rank 1 "
		 "(PTL_PROGRESS_THREAD=%s): libptl did not notice that rank 1 died\n",
		 call, lim.hang_s, pt ? pt : "unset");
	const double t0 = now_s();
	long polls = 0;
	ptl_event_t ev[2];
	for (int k = 0; k < 2; k++) {
		int rc;
		for (;;) {
			if (poll_once(poll0, eqs, &ev[k], &rc))
				return 1;
			if (rc != PTL_EQ_EMPTY)
				break;
			polls++;
		}
		CHECK(rc == PTL_OK);
	}
	mp_unwatch();
	const double took = now_s() - t0;
	printf("rank 0: the failed ACK came %.2f s into the poll, after %ld empty %s calls\n", took, polls, call);
	CHECK(ev[0].type == PTL_EVENT_SEND_END);
	CHECK(ev[0].ni_fail_type == PTL_NI_OK);
	CHECK(ev[1].type == PTL_EVENT_ACK);
	CHECK(ev[1].ni_fail_type == PTL_NI_FAIL);
	CHECK(ev[1].mlength == 0);
	CHECK(ev[1].initiator.nid == target.nid && ev[1].initiator.pid == target.pid);
	if (took > lim.prompt_s) {
		fprintf(stderr, "rank 0: the failed ACK came %.2f s into the poll, more than %.0f s\n", took,
			lim.prompt_s);
		return 1;
	}
	ptl_event_t extra;
	CHECK(PtlEQGet(eq, &extra) == PTL_EQ_EMPTY);
	CHECK(PtlPut(md, PTL_ACK_REQ, target, PT, 0, BITS, 0, 0) == PTL_FAIL); /* it is known dead */
	CHECK(PtlMDUnlink(md) == PTL_OK);
	CHECK(PtlEQFree(eq) == PTL_OK);
	CHECK(PtlEQFree(eqs[0]) == PTL_OK);
	PtlNIFini(ni);
	PtlFini();
	return 0;
}
