/*
 * Large messages through the shm NAL's bulk path (above its inline limit):
 * puts and gets of 64 KiB, 1 MiB and 16 MiB with data verified, a
 * truncated bulk put, and IOVEC MDs at both ends. Before them, the
 * largest that go inline: a 16 KiB put, and the 16 KiB replies of a
 * 32 KiB put's two gets (nal.h's NAL_HDR_ROOM; bulk_report.sh asserts
 * that shm moved nothing below 32 KiB). bulk_cma.sh runs it with
 * PTL_SHM_CMA=1 (CMA copies), bulk_nocma.sh with PTL_SHM_CMA=0 (the
 * pipelined copy through shared buffers, the default way).
 */
#include "mp_common.h"

#define I 0
#define T 1
#define INF PTL_MD_THRESH_INF

/* Two operations of len bytes at offsets off0 and off1, each with its
 * START (kind) and END (kind + 1) event; the moves run concurrently, so
 * their events may interleave, but each START precedes its END and the
 * sequence numbers run on. */
static void expect_pairs(ptl_handle_eq_t eq, ptl_event_kind_t kind, int initiator, ptl_size_t len,
			 ptl_size_t off0, ptl_size_t off1, const char *what)
{
	int state[2] = { 0, 0 };
	for (int k = 0; k < 4; k++) {
		ptl_event_t ev;
		MP_WAIT(eq, &ev, what);
		int which = ev.offset == off0 ? 0 : ev.offset == off1 ? 1 : -1;
		int end = ev.type == kind + 1;
		if (which < 0 || (ev.type != kind && !end) || state[which] != end ||
		    ev.initiator.pid != mp_id(initiator).pid || ev.rlength != len || ev.mlength != len ||
		    ev.ni_fail_type != PTL_NI_OK || ev.match_bits != 1)
			MP_FAIL("rank %d: %s: unexpected %s offset %llu rlength %llu mlength %llu fail %d", mp_rank,
				what, PtlEventKindStr(ev.type), (unsigned long long)ev.offset,
				(unsigned long long)ev.rlength, (unsigned long long)ev.mlength, ev.ni_fail_type);
		state[which]++;
		mp_eq_set_seq(eq, ev.sequence + 1);
	}
}

/* Two gets of len bytes at local offsets 0 and len: each must log SEND_START,
 * SEND_END, REPLY_START, REPLY_END in that order, but the first reply may
 * come before the second get's SEND events (it does when ranks are slow,
 * e.g. under valgrind). */
static void expect_get_chains(ptl_handle_eq_t eq, ptl_size_t len, const char *what)
{
	static const ptl_event_kind_t order[4] = { PTL_EVENT_SEND_START, PTL_EVENT_SEND_END,
						   PTL_EVENT_REPLY_START, PTL_EVENT_REPLY_END };
	int state[2] = { 0, 0 };
	for (int k = 0; k < 8; k++) {
		ptl_event_t ev;
		MP_WAIT(eq, &ev, what);
		int which = ev.offset == 0 ? 0 : ev.offset == len ? 1 : -1;
		int want_from = which >= 0 && state[which] >= 2 ? T : I;
		if (which < 0 || state[which] > 3 || ev.type != order[state[which]] ||
		    ev.initiator.pid != mp_id(want_from).pid || ev.rlength != len || ev.mlength != len ||
		    ev.ni_fail_type != PTL_NI_OK || ev.match_bits != 1)
			MP_FAIL("rank %d: %s: unexpected %s offset %llu rlength %llu mlength %llu initiator %u fail %d",
				mp_rank, what, PtlEventKindStr(ev.type), (unsigned long long)ev.offset,
				(unsigned long long)ev.rlength, (unsigned long long)ev.mlength, ev.initiator.pid,
				ev.ni_fail_type);
		state[which]++;
		mp_eq_set_seq(eq, ev.sequence + 1);
	}
}

static void test_bulk_sizes(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 30;
	size_t sizes[5] = { 16 << 10, 32 << 10, 64 << 10, 1 << 20, 16 << 20 };
	int nsizes = mp_small ? 4 : 5;
	size_t max = sizes[nsizes - 1];
	char *buf = malloc(max);
	ptl_handle_eq_t eq = mp_eq(64);
	for (int k = 0; k < nsizes; k++) {
		size_t n = sizes[k];
		unsigned seed = 200u + (unsigned)k;
		ptl_handle_me_t me = 0;
		ptl_handle_md_t md = 0;
		if (mp_rank == T) {
			memset(buf, 0, n);
			me = mp_me_md(pt, 1, 0, PTL_RETAIN,
				      mp_md(buf, n, INF, PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE, eq),
				      PTL_RETAIN, &md);
		}
		mp_barrier();
		if (mp_rank == I) {
			mp_fill(buf, n, seed);
			ptl_handle_md_t h = mp_bind(buf, n, INF, 0, eq);
			MP_RC(PtlPut(h, PTL_ACK_REQ, mp_id(T), pt, 0, 1, 0, n), PTL_OK);
			MP_EXPECT(eq, "bulk put", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = 1,
				  .rlength = n, .mlength = n, .hdr_data = n, .threshold = INF);
			MP_EXPECT(eq, "bulk put: SEND_END once the target has read the data",
				  .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = 1, .rlength = n,
				  .mlength = n, .hdr_data = n, .threshold = INF);
			MP_EXPECT(eq, "bulk put", .type = PTL_EVENT_ACK, .initiator = T, .match_bits = 1,
				  .rlength = n, .mlength = n, .hdr_data = n, .threshold = INF);
			memset(buf, 0, n);
			/* Get it back, with the target's second half first. */
			MP_RC(PtlGetRegion(h, 0, n / 2, mp_id(T), pt, 0, 1, n / 2), PTL_OK);
			MP_RC(PtlGetRegion(h, n / 2, n / 2, mp_id(T), pt, 0, 1, 0), PTL_OK);
			expect_get_chains(eq, n / 2, "bulk gets and replies");
			char *want = malloc(n);
			mp_fill(want, n, seed);
			if (memcmp(buf, want + n / 2, n / 2) || memcmp(buf + n / 2, want, n / 2))
				MP_FAIL("rank %d: data of the bulk gets (%zu bytes) differ", mp_rank, n);
			free(want);
			MP_RC(PtlMDUnlink(h), PTL_OK);
		}
		mp_barrier();
		if (mp_rank == T) {
			MP_EXPECT(eq, "bulk put", .type = PTL_EVENT_PUT_START, .initiator = I, .match_bits = 1,
				  .rlength = n, .mlength = n, .hdr_data = n, .threshold = INF, .md = md);
			MP_EXPECT(eq, "bulk put", .type = PTL_EVENT_PUT_END, .initiator = I, .match_bits = 1,
				  .rlength = n, .mlength = n, .hdr_data = n, .threshold = INF, .md = md);
			MP_CHECK(buf, n, seed, "bulk put data");
			expect_pairs(eq, PTL_EVENT_GET_START, I, n / 2, n / 2, 0, "bulk gets at the target");
			MP_RC(PtlMEUnlink(me), PTL_OK);
		}
	}
	free(buf);
	mp_eq_free(eq);
	mp_end();
}

static void test_bulk_truncate_iovec(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 31;
	const size_t n = 256 << 10;
	/* Uneven pieces at both ends. */
	static const size_t tl[4] = { 1000, 70000, 3, 100000 }; /* 171003: truncates */
	static const size_t il[3] = { 100001, 99999, 62144 };   /* 262144 */
	char *tp[4], *ip[3];
	ptl_md_iovec_t tv[4], iv[3];
	for (int k = 0; k < 4; k++) {
		tp[k] = calloc(1, tl[k]);
		tv[k] = (ptl_md_iovec_t){ tp[k], tl[k] };
	}
	char *flat = malloc(n);
	mp_fill(flat, n, 300);
	size_t o = 0;
	for (int k = 0; k < 3; k++) {
		ip[k] = malloc(il[k]);
		memcpy(ip[k], flat + o, il[k]);
		o += il[k];
		iv[k] = (ptl_md_iovec_t){ ip[k], il[k] };
	}
	const ptl_size_t fit = 171003;
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me = 0;
	ptl_handle_md_t md = 0;
	if (mp_rank == T)
		me = mp_me_md(pt, 1, 0, PTL_RETAIN,
			      mp_md(tv, 4, INF,
				    PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_IOVEC | PTL_MD_TRUNCATE | PTL_MD_MANAGE_REMOTE, eq),
			      PTL_RETAIN, &md);
	mp_barrier();
	if (mp_rank == I) {
		ptl_handle_md_t h = mp_bind(iv, 3, INF, PTL_MD_IOVEC, eq);
		MP_RC(PtlPut(h, PTL_ACK_REQ, mp_id(T), pt, 0, 1, 0, 0), PTL_OK);
		MP_EXPECT(eq, "bulk IOVEC put", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = 1,
			  .rlength = n, .mlength = n, .threshold = INF);
		MP_EXPECT(eq, "bulk IOVEC put", .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = 1,
			  .rlength = n, .mlength = n, .threshold = INF);
		MP_EXPECT(eq, "bulk IOVEC put: the ACK says what fit", .type = PTL_EVENT_ACK, .initiator = T,
			  .match_bits = 1, .rlength = n, .mlength = fit, .threshold = INF);
		for (int k = 0; k < 3; k++)
			memset(ip[k], 0, il[k]);
		/* Get the whole target MD back (it is shorter: truncated reply). */
		MP_RC(PtlGet(h, mp_id(T), pt, 0, 1, 0), PTL_OK);
		MP_EXPECT(eq, "bulk IOVEC get", .type = PTL_EVENT_SEND_START, .initiator = I, .match_bits = 1,
			  .rlength = n, .mlength = n, .threshold = INF);
		MP_EXPECT(eq, "bulk IOVEC get", .type = PTL_EVENT_SEND_END, .initiator = I, .match_bits = 1,
			  .rlength = n, .mlength = n, .threshold = INF);
		MP_EXPECT(eq, "bulk IOVEC get", .type = PTL_EVENT_REPLY_START, .initiator = T, .match_bits = 1,
			  .rlength = n, .mlength = fit, .threshold = INF);
		MP_EXPECT(eq, "bulk IOVEC get", .type = PTL_EVENT_REPLY_END, .initiator = T, .match_bits = 1,
			  .rlength = n, .mlength = fit, .threshold = INF);
		char *got = malloc(n);
		o = 0;
		for (int k = 0; k < 3; k++) {
			memcpy(got + o, ip[k], il[k]);
			o += il[k];
		}
		assert_memory_equal(got, flat, fit);
		free(got);
		MP_RC(PtlMDUnlink(h), PTL_OK);
	}
	mp_barrier();
	if (mp_rank == T) {
		MP_EXPECT(eq, "bulk IOVEC put", .type = PTL_EVENT_PUT_START, .initiator = I, .match_bits = 1,
			  .rlength = n, .mlength = fit, .threshold = INF, .md = md);
		MP_EXPECT(eq, "bulk IOVEC put", .type = PTL_EVENT_PUT_END, .initiator = I, .match_bits = 1,
			  .rlength = n, .mlength = fit, .threshold = INF, .md = md);
		MP_EXPECT(eq, "bulk IOVEC get", .type = PTL_EVENT_GET_START, .initiator = I, .match_bits = 1,
			  .rlength = n, .mlength = fit, .threshold = INF, .md = md);
		MP_EXPECT(eq, "bulk IOVEC get", .type = PTL_EVENT_GET_END, .initiator = I, .match_bits = 1,
			  .rlength = n, .mlength = fit, .threshold = INF, .md = md);
		o = 0;
		for (int k = 0; k < 4; k++) {
			if (memcmp(tp[k], flat + o, tl[k]))
				MP_FAIL("rank %d: IOVEC piece %d differs", mp_rank, k);
			o += tl[k];
		}
		MP_RC(PtlMEUnlink(me), PTL_OK);
	}
	for (int k = 0; k < 4; k++)
		free(tp[k]);
	for (int k = 0; k < 3; k++)
		free(ip[k]);
	free(flat);
	mp_eq_free(eq);
	mp_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MP_TEST(test_bulk_sizes),
		MP_TEST(test_bulk_truncate_iovec),
	};
	return mp_main(getenv("PTL_SHM_CMA") ? "mp_bulk (PTL_SHM_CMA set)" : "mp_bulk", tests,
		       sizeof tests / sizeof tests[0]);
}
