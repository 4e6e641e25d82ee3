/*
 * 8 threads per rank at once: each puts K messages (with ACK) to the
 * other rank and waits for its own events, while also draining the shared
 * target EQ with PtlEQGet. Totals must be exact: every put arrives once
 * (hdr_data seen once, data at its offset), every sequence number of the
 * target EQ is delivered once.
 */
#include "mp_common.h"

#include <pthread.h>
#include <stdatomic.h>

#define INF PTL_MD_THRESH_INF
#define NT 8

static int K;
static ptl_handle_eq_t teq;
static atomic_int seen_events;
static atomic_uchar *seen_hdr, *seen_seq;
static atomic_int errors;
static char errmsg[256];

static void terr(const char *msg, long a, long b)
{
	if (atomic_fetch_add(&errors, 1) == 0)
		snprintf(errmsg, sizeof errmsg, "%s (%ld, %ld)", msg, a, b);
}

static void drain_one(void)
{
	ptl_event_t ev;
	int rc = PtlEQGet(teq, &ev);
	if (rc == PTL_EQ_EMPTY)
		return;
	if (rc != PTL_OK) {
		terr("PtlEQGet on the target EQ failed", rc, 0);
		return;
	}
	if (ev.sequence >= (ptl_seq_t)(2 * NT * K) || atomic_exchange(&seen_seq[ev.sequence], 1))
		terr("target EQ sequence out of range or seen twice", ev.sequence, 0);
	if (ev.type == PTL_EVENT_PUT_END) {
		if (ev.hdr_data >= (uint64_t)(NT * K) || atomic_exchange(&seen_hdr[ev.hdr_data], 1))
			terr("put seen twice", (long)ev.hdr_data, 0);
		if (ev.mlength != 8 || ev.offset != ev.hdr_data * 8)
			terr("put with wrong length/offset", (long)ev.mlength, (long)ev.offset);
	} else if (ev.type != PTL_EVENT_PUT_START) {
		terr("unexpected event kind on the target EQ", ev.type, 0);
	}
	atomic_fetch_add(&seen_events, 1);
}

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	int peer = 1 - mp_rank;
	uint64_t val;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	if (PtlEQAlloc(mp_ni, 16, PTL_EQ_HANDLER_NONE, &eq) != PTL_OK ||
	    PtlMDBind(mp_ni, mp_md(&val, 8, INF, 0, eq), PTL_RETAIN, &md) != PTL_OK) {
		terr("thread setup failed", t, 0);
		return NULL;
	}
	for (int i = 0; i < K && !atomic_load(&errors); i++) {
		uint64_t idx = (uint64_t)t * (uint64_t)K + (uint64_t)i;
		val = ((uint64_t)mp_rank << 40) | idx;
		int rc = PtlPut(md, PTL_ACK_REQ, mp_id(peer), 50, 0, 1, idx * 8, idx);
		if (rc != PTL_OK) {
			terr("PtlPut failed", rc, (long)idx);
			break;
		}
		for (int got = 0; got < 3;) {
			ptl_event_t ev;
			int which;
			drain_one();
			rc = PtlEQPoll(&eq, 1, 1, &ev, &which);
			if (rc == PTL_EQ_EMPTY)
				continue; /* bounded: the job's timeout and the join below */
			if (rc != PTL_OK || ev.hdr_data != idx || ev.ni_fail_type != PTL_NI_OK) {
				terr("bad event on a thread's EQ", rc, (long)ev.hdr_data);
				break;
			}
			got++;
		}
	}
	int64_t t0 = mp_now_ms();
	while (atomic_load(&seen_events) < 2 * NT * K && !atomic_load(&errors)) {
		drain_one();
		if (mp_now_ms() - t0 > mp_timeout_ms) {
			terr("timed out waiting for the target events", atomic_load(&seen_events), 2 * NT * K);
			break;
		}
	}
	PtlMDUnlink(md);
	PtlEQFree(eq);
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	K = mp_small ? 20 : 100;
	uint64_t *buf = calloc((size_t)(NT * K), 8);
	seen_hdr = calloc((size_t)(NT * K), 1);
	seen_seq = calloc((size_t)(2 * NT * K), 1);
	teq = mp_eq((ptl_size_t)(2 * NT * K));
	ptl_handle_me_t me = mp_me_md(50, 1, 0, PTL_RETAIN,
				      mp_md(buf, (ptl_size_t)(NT * K) * 8, INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, teq),
				      PTL_RETAIN, NULL);
	mp_barrier();
	if (mp_rank < 2) {
		pthread_t th[NT];
		for (int t = 0; t < NT; t++)
			assert_int_equal(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);
		for (int t = 0; t < NT; t++)
			pthread_join(th[t], NULL);
		if (atomic_load(&errors))
			MP_FAIL("rank %d: %d error(s), first: %s", mp_rank, atomic_load(&errors), errmsg);
		assert_int_equal(atomic_load(&seen_events), 2 * NT * K);
		for (int k = 0; k < NT * K; k++)
			if (buf[k] != (((uint64_t)(1 - mp_rank) << 40) | (uint64_t)k))
				MP_FAIL("rank %d: put %d: wrong data 0x%llx", mp_rank, k, (unsigned long long)buf[k]);
		MP_EMPTY(teq, 0, "no extra event");
	}
	mp_barrier();
	MP_RC(PtlMEUnlink(me), PTL_OK);
	mp_eq_free(teq);
	free(buf);
	free((void *)seen_hdr);
	free((void *)seen_seq);
	mp_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = { MP_TEST(test_threads) };
	return mp_main("mp_threads", tests, sizeof tests / sizeof tests[0]);
}
