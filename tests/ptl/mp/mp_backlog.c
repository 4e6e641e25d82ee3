/*
 * Sends that wait for ring space (backlog.sh: no progress thread, so a
 * rank out of the library reads nothing, and at most 8 requests queued,
 * PTL_TEST_TX_REQ_MAX):
 *  - requests past the bound are refused with PTL_NO_SPACE and nothing of
 *    them arrives; everything accepted arrives once, in order; once the
 *    target reads again, puts are taken again;
 *  - answers are not refused: a target whose ring back to the initiator
 *    is full (its own puts fill it) queues an ACK for every put it takes,
 *    far more than the requests' bound, and the initiator gets them all;
 *  - with PTL_TEST_TX_MAX (backlog_drop.sh: 4 slots of max_inline bytes)
 *    only the last case runs: a REPLY carrying data that finds no slot is
 *    dropped and counted (backlog_drop.sh checks its message), and its
 *    initiator's get is never answered.
 */
#include <unistd.h>

#include "mp_common.h"

#define I 0
#define T 1
#define LEN 1024        /* a quarter of a KiB-record ring per put: it fills fast */
#define MAX_PUTS 5000   /* a refusal must come well before this (a ring and 8) */
#define MARK (1ull << 62)
#define WORD_BITS 4     /* quiet_begins' match bits (the puts' are 1, the gets' 2) */

/* Puts from src to rank `to` until libptl refuses one; returns how many
 * it took. hdr_data numbers them from 0. */
static int put_until_refused(ptl_handle_md_t src, int to, ptl_pt_index_t pt, ptl_ack_req_t ack)
{
	for (int k = 0; k < MAX_PUTS; k++) {
		int rc = PtlPutRegion(src, 0, LEN, ack, mp_id(to), pt, 0, 1, 0, (ptl_hdr_data_t)k);
		if (rc == PTL_NO_SPACE)
			return k;
		MP_RC(rc, PTL_OK);
	}
	MP_FAIL("rank %d: %d puts to rank %d taken while it reads nothing: never PTL_NO_SPACE", mp_rank, MAX_PUTS,
		to);
	return -1;
}

/* The marker put (hdr_data MARK | n), made again until it is taken: each
 * refusal followed by a pass of progress (PtlEQGet on an empty queue). */
static void put_marker(ptl_handle_md_t src, ptl_handle_eq_t idle, int to, ptl_pt_index_t pt, int n)
{
	int64_t t0 = mp_now_ms();
	for (;;) {
		int rc = PtlPutRegion(src, 0, LEN, PTL_NO_ACK_REQ, mp_id(to), pt, 0, 1, 0, MARK | (ptl_hdr_data_t)n);
		if (rc == PTL_OK)
			return;
		MP_RC(rc, PTL_NO_SPACE);
		ptl_event_t ev;
		MP_RC(PtlEQGet(idle, &ev), PTL_EQ_EMPTY);
		if (mp_now_ms() - t0 > mp_timeout_ms)
			MP_FAIL("rank %d: a put to rank %d still refused after %d ms", mp_rank, to, mp_timeout_ms);
		usleep(1000);
	}
}

/* The PUT_ENDs of n puts numbered 0..n-1, then the marker saying n. */
static void expect_puts(ptl_handle_eq_t eq, int from, const char *what)
{
	for (ptl_hdr_data_t k = 0;; k++) {
		ptl_event_t ev;
		MP_WAIT(eq, &ev, what);
		if (ev.type != PTL_EVENT_PUT_END || ev.ni_fail_type != PTL_NI_OK || ev.mlength != LEN)
			MP_FAIL("rank %d: %s: %s (fail %d, %llu bytes) after %llu puts", mp_rank, what,
				PtlEventKindStr(ev.type), ev.ni_fail_type, (unsigned long long)ev.mlength,
				(unsigned long long)k);
		if (ev.hdr_data & MARK) {
			if ((ev.hdr_data & ~MARK) != k)
				MP_FAIL("rank %d: %s: %llu puts arrived, rank %d had %llu taken", mp_rank, what,
					(unsigned long long)k, from, (unsigned long long)(ev.hdr_data & ~MARK));
			return;
		}
		if (ev.hdr_data != k)
			MP_FAIL("rank %d: %s: put %llu arrived where %llu was due (a refused one, or out of order)",
				mp_rank, what, (unsigned long long)ev.hdr_data, (unsigned long long)k);
	}
}

struct side {
	char *buf;
	ptl_handle_eq_t eq, src_eq, idle, told_eq;
	ptl_handle_me_t me, told_me;
	ptl_handle_md_t src, tell;
};

static void side_open(struct side *s, ptl_pt_index_t pt)
{
	s->buf = calloc(1, LEN);
	s->eq = mp_eq(4 * MAX_PUTS);
	s->src_eq = mp_eq(4 * MAX_PUTS);
	s->idle = mp_eq(4);
	/* every put lands at offset 0; only PUT_END is logged */
	s->me = mp_me_md(pt, 1, 0, PTL_RETAIN,
			 mp_md(s->buf, LEN, PTL_MD_THRESH_INF,
			       PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE, s->eq),
			 PTL_RETAIN, NULL);
	s->src = mp_bind(s->buf, LEN, PTL_MD_THRESH_INF, PTL_MD_EVENT_START_DISABLE, s->src_eq);
	/* quiet_begins' word: its own bits and queue, no events at the sender */
	s->told_eq = mp_eq(4);
	s->told_me = mp_me_md(pt, WORD_BITS, 0, PTL_RETAIN,
			      mp_md(s->buf, LEN, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE,
				    s->told_eq),
			      PTL_RETAIN, NULL);
	s->tell = mp_bind(s->buf, LEN, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE);
}

/* The rank that is to read nothing says so before the other floods it.
 * Leaving the barrier together is not enough: PtlRtBarrier reads the
 * rings (a helper thread) until its own return, so a rank still in it read
 * a flood begun as the peer's barrier returned (CI, 2026-12-05: "5000
 * puts taken while it reads nothing"). The word is sent after the barrier's
 * return; the flooder waits for it. */
static void quiet_begins(struct side *s, int quiet, int flooder, ptl_pt_index_t pt)
{
	if (mp_rank == quiet) {
		MP_RC(PtlPutRegion(s->tell, 0, 0, PTL_NO_ACK_REQ, mp_id(flooder), pt, 0, WORD_BITS, 0, 0), PTL_OK);
	} else if (mp_rank == flooder) {
		ptl_event_t ev;
		MP_WAIT(s->told_eq, &ev, "the peer's word that it reads no more");
		if (ev.type != PTL_EVENT_PUT_END)
			MP_FAIL("rank %d: %s where the peer's word was due", mp_rank, PtlEventKindStr(ev.type));
	}
}

static void side_close(struct side *s)
{
	MP_RC(PtlMDUnlink(s->src), PTL_OK);
	MP_RC(PtlMEUnlink(s->me), PTL_OK);
	MP_RC(PtlMDUnlink(s->tell), PTL_OK);
	MP_RC(PtlMEUnlink(s->told_me), PTL_OK);
	mp_eq_free(s->told_eq);
	mp_eq_free(s->eq);
	mp_eq_free(s->src_eq);
	mp_eq_free(s->idle);
	free(s->buf);
}

static void test_requests_refused(void **state)
{
	(void)state;
	struct side s;
	side_open(&s, 33);
	mp_barrier();
	quiet_begins(&s, T, I, 33);
	if (mp_rank == I) {
		long before = mp_sr(PTL_SR_REFUSED_COUNT);
		int n = put_until_refused(s.src, T, 33, PTL_NO_ACK_REQ);
		/* nobody has read since: still refused, and nothing went */
		MP_RC(PtlPutRegion(s.src, 0, LEN, PTL_NO_ACK_REQ, mp_id(T), 33, 0, 1, 0, MARK), PTL_NO_SPACE);
		if (mp_sr(PTL_SR_REFUSED_COUNT) != before + 2)
			MP_FAIL("rank %d: PTL_SR_REFUSED_COUNT went from %ld to %ld over 2 refusals", mp_rank, before,
				mp_sr(PTL_SR_REFUSED_COUNT));
		printf("rank %d: %d puts taken before PTL_NO_SPACE\n", mp_rank, n);
		put_marker(s.src, s.idle, T, 33, n);
	} else if (mp_rank == T) {
		usleep(600 * 1000); /* out of the library: the ring fills */
		expect_puts(s.eq, I, "the puts taken before the refusal, then the marker");
	}
	mp_barrier();
	side_close(&s);
	mp_end();
}

/* Drains eq's SEND_END and ACK events of n acknowledged puts. */
static void expect_acks(ptl_handle_eq_t eq, int n)
{
	int acks = 0, ends = 0;
	while (acks < n || ends < n) {
		ptl_event_t ev;
		MP_WAIT(eq, &ev, "the ACKs of the puts the target took");
		if (ev.ni_fail_type != PTL_NI_OK || (ev.type != PTL_EVENT_ACK && ev.type != PTL_EVENT_SEND_END))
			MP_FAIL("rank %d: %s (fail %d) after %d ACKs of %d", mp_rank, PtlEventKindStr(ev.type),
				ev.ni_fail_type, acks, n);
		if (ev.type == PTL_EVENT_ACK && ev.hdr_data != (ptl_hdr_data_t)acks)
			MP_FAIL("rank %d: ACK %d names put %llu", mp_rank, acks, (unsigned long long)ev.hdr_data);
		acks += ev.type == PTL_EVENT_ACK;
		ends += ev.type == PTL_EVENT_SEND_END;
	}
}

static void test_answers_not_refused(void **state)
{
	(void)state;
	struct side s;
	side_open(&s, 34);
	mp_barrier();
	quiet_begins(&s, I, T, 34);
	/* Then the sleeps take turns, with room for a rank descheduled a
	 * while (make -j2 check on 2 cores): the two floods (neither reads),
	 * then T takes I's puts while I sleeps. */
	if (mp_rank == I) {
		int n = put_until_refused(s.src, T, 34, PTL_ACK_REQ);
		usleep(600 * 1000); /* T takes them; their ACKs wait at T, behind its puts */
		expect_puts(s.eq, T, "the target's own puts, which filled the ring back");
		expect_acks(s.src_eq, n);
		printf("rank %d: %d ACKs queued behind a full ring, all came\n", mp_rank, n);
		put_marker(s.src, s.idle, T, 34, n);
	} else if (mp_rank == T) {
		int n = put_until_refused(s.src, I, 34, PTL_NO_ACK_REQ);
		usleep(400 * 1000); /* I fills its ring to us */
		put_marker(s.src, s.idle, I, 34, n);
		expect_puts(s.eq, I, "the acknowledged puts, then the marker");
		if (mp_sr(PTL_SR_DROP_COUNT) != 0)
			MP_FAIL("rank %d: %ld answers dropped", mp_rank, mp_sr(PTL_SR_DROP_COUNT));
	}
	mp_barrier();
	side_close(&s);
	mp_end();
}

#define GETS 16

static void test_reply_dropped(void **state)
{
	(void)state;
	struct side s;
	side_open(&s, 35);
	char *data = calloc(1, LEN);
	ptl_handle_eq_t geq = mp_eq(4 * GETS);
	ptl_handle_md_t gmd = PTL_INVALID_HANDLE;
	ptl_handle_me_t gme = PTL_INVALID_HANDLE;
	/* gets of LEN bytes: their REPLYs carry the data inline, in slots
	 * of max_inline bytes. Their ME is there before the barrier: T's
	 * wait for the word may read the gets too. */
	if (mp_rank == T)
		gme = mp_me_md(35, 2, 0, PTL_RETAIN,
			       mp_md(data, LEN, PTL_MD_THRESH_INF,
				     PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE, geq),
			       PTL_RETAIN, &gmd);
	mp_barrier();
	quiet_begins(&s, I, T, 35);
	if (mp_rank == I) {
		usleep(200 * 1000); /* T fills our ring and its slots meanwhile: we read nothing */
		gmd = mp_bind(data, LEN, PTL_MD_THRESH_INF, PTL_MD_EVENT_START_DISABLE, geq);
		for (int g = 0; g < GETS; g++)
			MP_RC(PtlGetRegion(gmd, 0, LEN, mp_id(T), 35, 0, 2, 0), PTL_OK);
		usleep(800 * 1000); /* T answers them, into no room */
	} else if (mp_rank == T) {
		put_until_refused(s.src, I, 35, PTL_NO_ACK_REQ); /* the ring and the 4 slots full */
		usleep(400 * 1000);
		for (int g = 0; g < GETS; g++) {
			ptl_event_t ev;
			MP_WAIT(geq, &ev, "the initiator's gets");
			if (ev.type != PTL_EVENT_GET_END)
				MP_FAIL("rank %d: %s where a GET_END was due", mp_rank, PtlEventKindStr(ev.type));
		}
		/* (one may find a slot freed meanwhile) */
		if (mp_sr(PTL_SR_DROP_COUNT) < 1)
			MP_FAIL("rank %d: no answer dropped of %d with no room for them", mp_rank, GETS);
	}
	mp_barrier(); /* the ring drains: T's puts come, the REPLYs never */
	if (mp_rank == I) {
		/* the gets' own SEND_ENDs, logged when they went, and the REPLYs
		 * that were not dropped: fewer than the gets */
		int ends = 0, replies = 0, which;
		ptl_event_t ev;
		while (PtlEQPoll(&geq, 1, 300, &ev, &which) == PTL_OK) {
			if (ev.ni_fail_type != PTL_NI_OK ||
			    (ev.type != PTL_EVENT_SEND_END && ev.type != PTL_EVENT_REPLY_END))
				MP_FAIL("rank %d: %s (fail %d) from the gets", mp_rank, PtlEventKindStr(ev.type),
					ev.ni_fail_type);
			ends += ev.type == PTL_EVENT_SEND_END;
			replies += ev.type == PTL_EVENT_REPLY_END;
		}
		if (ends != GETS || replies >= GETS)
			MP_FAIL("rank %d: %d SEND_ENDs and %d REPLYs of %d gets, some of whose REPLYs were dropped",
				mp_rank, ends, replies, GETS);
		/* gmd stays: its gets wait for answers that will not come */
	} else if (mp_rank == T) {
		MP_RC(PtlMEUnlink(gme), PTL_OK);
	}
	mp_barrier();
	side_close(&s);
	free(data);
	mp_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MP_TEST(test_requests_refused),
		MP_TEST(test_answers_not_refused),
	};
	const struct CMUnitTest drop[] = {
		MP_TEST(test_reply_dropped),
	};
	if (getenv("PTL_TEST_TX_MAX"))
		return mp_main("mp_backlog", drop, 1);
	return mp_main("mp_backlog", tests, sizeof tests / sizeof tests[0]);
}
