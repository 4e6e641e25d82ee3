/*
 * A window of large puts with no progress thread (window.sh sets
 * PTL_PROGRESS_THREAD=0), as bench/ptl_pingpong's bandwidth phase runs it:
 * the initiator sends 32 puts of 1 MiB without acks, the target waits for
 * all 32 PUT_ENDs and answers with puts of its own, then both meet in
 * PtlRtBarrier. The answers outnumber the messages a NAL takes before the
 * receiver returns credits (the verbs NAL grants 32), so some wait in
 * the sender's backlog when it enters the barrier: the barrier must send
 * them (nothing else runs the library while it waits), or the initiator,
 * which waits for them after the barrier, never gets them.
 */
#include "mp_common.h"

#define I 0
#define T 1
#define WINDOW 32
#define ANSWERS 64 /* more than any NAL takes before credits return */

static void wait_put_ends(ptl_handle_eq_t eq, int n, const char *what)
{
	for (int k = 0; k < n; k++) {
		ptl_event_t ev;
		MP_WAIT(eq, &ev, what);
		if (ev.type != PTL_EVENT_PUT_END || ev.ni_fail_type != PTL_NI_OK)
			MP_FAIL("rank %d: %s: %s (fail %d) after %d of %d PUT_ENDs", mp_rank, what,
				PtlEventKindStr(ev.type), ev.ni_fail_type, k, n);
	}
}

static void test_window_then_barrier(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 32;
	size_t n = mp_small ? 64u << 10 : 1u << 20;
	char *buf = calloc(1, n);
	ptl_handle_eq_t eq = mp_eq(2 * ANSWERS);
	ptl_handle_md_t md;
	/* Every put lands at offset 0; only PUT_END is logged. */
	ptl_handle_me_t me = mp_me_md(pt, 1, 0, PTL_RETAIN,
				      mp_md(buf, n, PTL_MD_THRESH_INF,
					    PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE, eq),
				      PTL_RETAIN, &md);
	ptl_handle_md_t src = mp_bind(buf, n, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE);
	mp_barrier();
	int64_t t0 = mp_now_ms();
	if (mp_rank == I) {
		for (int w = 0; w < WINDOW; w++)
			MP_RC(PtlPutRegion(src, 0, n, PTL_NO_ACK_REQ, mp_id(T), pt, 0, 1, 0, 0), PTL_OK);
		mp_barrier(); /* consumes nothing of the answers meanwhile */
		wait_put_ends(eq, ANSWERS, "the target's answers, sent before its barrier");
	} else if (mp_rank == T) {
		wait_put_ends(eq, WINDOW, "the window of large puts");
		for (int a = 0; a < ANSWERS; a++)
			MP_RC(PtlPutRegion(src, 0, 0, PTL_NO_ACK_REQ, mp_id(I), pt, 0, 1, 0, 0), PTL_OK);
		mp_barrier();
	} else {
		mp_barrier();
	}
	if (mp_rank == I)
		printf("rank %d: window of %d x %zu bytes and %d answers in %lld ms\n", mp_rank, WINDOW, n,
		       ANSWERS, (long long)(mp_now_ms() - t0));
	mp_barrier();
	MP_RC(PtlMDUnlink(src), PTL_OK);
	MP_RC(PtlMEUnlink(me), PTL_OK);
	mp_eq_free(eq);
	free(buf);
	mp_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MP_TEST(test_window_then_barrier),
	};
	return mp_main("mp_window", tests, sizeof tests / sizeof tests[0]);
}
