/*
 * PtlRtRankFailed (driven by rankfail.sh, 3 ranks): its argument checks;
 * every rank alive at first; then rank 1 leaves without PtlFini (a crash
 * that exits 0, so ptlrun lets the job run on) and the survivors must see
 * it gone within 30 s (immediately on one host; the verbs keepalive takes
 * seconds), while the other survivor stays alive. Each rank first puts a
 * message to every other rank, so the transports have talked.
 */
#include <portals3.h>
#include <ptl_runtime.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "mp_plain.h"

#define PT 5

int main(void)
{
	const ptl_time_t wait_ms = 30000 * (ptl_time_t)mp_plain_slow();
	int failed = -1;
	CHECK(PtlRtRankFailed(0, &failed) == PTL_NO_INIT);
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	if (mp_plain_init(&ni, 3))
		return 1;
	CHECK(PtlEQAlloc(ni, 16, PTL_EQ_HANDLER_NONE, &eq) == PTL_OK);
	int size = PtlRtSize();
	CHECK(PtlRtRankFailed(-1, &failed) == PTL_PROCESS_INVALID);
	CHECK(PtlRtRankFailed(size, &failed) == PTL_PROCESS_INVALID);
	CHECK(PtlRtRankFailed(0, NULL) == PTL_SEGV);

	static char rbuf[64], sbuf[8] = "hello";
	ptl_process_id_t any = { PTL_NID_ANY, PTL_PID_ANY };
	ptl_handle_me_t mh;
	ptl_handle_md_t rmd, smd;
	ptl_md_t r = { .start = rbuf, .length = sizeof rbuf, .threshold = PTL_MD_THRESH_INF,
		       .options = PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, .eq_handle = eq };
	ptl_md_t s = { .start = sbuf, .length = sizeof sbuf, .threshold = PTL_MD_THRESH_INF,
		       .options = PTL_MD_EVENT_START_DISABLE, .eq_handle = PTL_EQ_NONE };
	CHECK(PtlMEAttach(ni, PT, any, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &mh) == PTL_OK);
	CHECK(PtlMDAttach(mh, r, PTL_RETAIN, &rmd) == PTL_OK);
	CHECK(PtlMDBind(ni, s, PTL_RETAIN, &smd) == PTL_OK);
	CHECK(PtlRtBarrier() == PTL_OK);
	for (int p = 0; p < size; p++) {
		ptl_process_id_t id;
		CHECK(PtlRtId(p, &id) == PTL_OK);
		if (p != me)
			CHECK(PtlPut(smd, PTL_NO_ACK_REQ, id, PT, 0, 0, 0, 0) == PTL_OK);
	}
	for (int got = 0; got < size - 1;) {
		ptl_event_t ev;
		int which;
		CHECK(PtlEQPoll(&eq, 1, wait_ms, &ev, &which) == PTL_OK);
		got += ev.type == PTL_EVENT_PUT_END;
	}
	for (int p = 0; p < size; p++) {
		CHECK(PtlRtRankFailed(p, &failed) == PTL_OK);
		CHECK(failed == 0);
	}
	CHECK(PtlRtBarrier() == PTL_OK);
	if (me == 1) {
		fflush(stdout);
		_exit(0); /* no PtlFini: gone as a crash would be */
	}
	double t0 = now_s();
	do {
		CHECK(PtlRtRankFailed(1, &failed) == PTL_OK);
		if (!failed)
			usleep(10000);
	} while (!failed && now_s() - t0 < wait_ms / 1000.0);
	CHECK(failed == 1);
	printf("rank %d: rank 1 seen gone after %.2f s\n", me, now_s() - t0);
	CHECK(PtlRtRankFailed(2 - me, &failed) == PTL_OK);
	CHECK(failed == 0);
	CHECK(PtlRtRankFailed(me, &failed) == PTL_OK);
	CHECK(failed == 0);
	/* Neither survivor leaves before the other has looked: each tells the
	 * other when it has, and waits to be told. */
	ptl_process_id_t other;
	CHECK(PtlRtId(2 - me, &other) == PTL_OK);
	CHECK(PtlPut(smd, PTL_NO_ACK_REQ, other, PT, 0, 0, 0, 0) == PTL_OK);
	ptl_event_t ev;
	int which;
	do
		CHECK(PtlEQPoll(&eq, 1, wait_ms, &ev, &which) == PTL_OK);
	while (ev.type != PTL_EVENT_PUT_END);
	PtlNIFini(ni);
	PtlFini();
	return 0;
}
