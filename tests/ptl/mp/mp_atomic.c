/*
 * PtlGetPut: the atomic swap, its events, and many ranks swapping on one
 * location: the (old, new) pairs every rank gets back must form one chain
 * from the initial value to the final one, each value swapped out exactly
 * once, each rank's swaps in the order it issued them.
 */
#include "mp_common.h"

#define INF PTL_MD_THRESH_INF

static void test_getput(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 40;
	const int T = 1;
	uint64_t loc = 0x1111111111111111ull, mine = 0x2222222222222222ull, old = 0;
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me = 0;
	ptl_handle_md_t md = 0;
	if (mp_rank == T)
		me = mp_me_md(pt, 4, 0, PTL_RETAIN,
			      mp_md(&loc, 8, INF, PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE, eq),
			      PTL_RETAIN, &md);
	mp_barrier();
	if (mp_rank == 0) {
		ptl_handle_md_t g = mp_bind(&old, 8, INF, 0, eq), p = mp_bind(&mine, 8, INF, 0, eq);
		MP_RC(PtlGetPut(g, p, mp_id(T), pt, 0, 4, 0, 0x77), PTL_OK);
		MP_EXPECT(eq, "getput", .type = PTL_EVENT_SEND_START, .initiator = 0, .match_bits = 4, .rlength = 8,
			  .mlength = 8, .hdr_data = 0x77, .threshold = INF, .md = p);
		MP_EXPECT(eq, "getput", .type = PTL_EVENT_SEND_END, .initiator = 0, .match_bits = 4, .rlength = 8,
			  .mlength = 8, .hdr_data = 0x77, .threshold = INF, .md = p);
		MP_EXPECT(eq, "getput: old value back", .type = PTL_EVENT_REPLY_START, .initiator = T,
			  .match_bits = 4, .rlength = 8, .mlength = 8, .hdr_data = 0x77, .threshold = INF, .md = g);
		MP_EXPECT(eq, "getput: old value back", .type = PTL_EVENT_REPLY_END, .initiator = T,
			  .match_bits = 4, .rlength = 8, .mlength = 8, .hdr_data = 0x77, .threshold = INF, .md = g);
		assert_true(old == 0x1111111111111111ull);
		/* A getput nobody matches: the reply reports the drop. */
		MP_RC(PtlGetPut(g, p, mp_id(T), pt, 0, 5, 0, 0), PTL_OK);
		MP_EXPECT(eq, "dropped getput", .type = PTL_EVENT_SEND_START, .initiator = 0, .match_bits = 5,
			  .rlength = 8, .mlength = 8, .threshold = INF, .md = p);
		MP_EXPECT(eq, "dropped getput", .type = PTL_EVENT_SEND_END, .initiator = 0, .match_bits = 5,
			  .rlength = 8, .mlength = 8, .threshold = INF, .md = p);
		MP_EXPECT(eq, "dropped getput", .type = PTL_EVENT_REPLY_START, .initiator = T, .match_bits = 5,
			  .rlength = 8, .fail = PTL_NI_DROPPED, .threshold = INF, .md = g);
		MP_EXPECT(eq, "dropped getput", .type = PTL_EVENT_REPLY_END, .initiator = T, .match_bits = 5,
			  .rlength = 8, .fail = PTL_NI_DROPPED, .threshold = INF, .md = g);
		assert_true(old == 0x1111111111111111ull);
		MP_RC(PtlMDUnlink(g), PTL_OK);
		MP_RC(PtlMDUnlink(p), PTL_OK);
	}
	mp_barrier();
	if (mp_rank == T) {
		MP_EXPECT(eq, "getput at the target", .type = PTL_EVENT_PUT_START, .initiator = 0, .match_bits = 4,
			  .rlength = 8, .mlength = 8, .hdr_data = 0x77, .threshold = INF, .md = md);
		MP_EXPECT(eq, "getput at the target", .type = PTL_EVENT_PUT_END, .initiator = 0, .match_bits = 4,
			  .rlength = 8, .mlength = 8, .hdr_data = 0x77, .threshold = INF, .md = md);
		assert_true(loc == 0x2222222222222222ull);
		MP_RC(PtlMEUnlink(me), PTL_OK);
	}
	mp_eq_free(eq);
	mp_end();
}

struct pair {
	uint64_t old, new;
};

static int by_old(const void *a, const void *b)
{
	uint64_t x = ((const struct pair *)a)->old, y = ((const struct pair *)b)->old;
	return x < y ? -1 : x > y;
}

static void test_swap_chain(void **state)
{
	(void)state;
	const ptl_pt_index_t pt = 41, gpt = 42;
	const int n = mp_small ? 10 : 200;
	const size_t total = (size_t)mp_size * (size_t)n;
	uint64_t loc = 0;
	struct pair *all = calloc(total, sizeof *all), *mine = calloc((size_t)n, sizeof *mine);
	ptl_handle_eq_t eq = mp_eq(64);
	ptl_handle_me_t me = 0, gme = 0;
	if (mp_rank == 0) {
		me = mp_me_md(pt, 0, 0, PTL_RETAIN,
			      mp_md(&loc, 8, INF, PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE, PTL_EQ_NONE),
			      PTL_RETAIN, NULL);
		gme = mp_me_md(gpt, 0, 0, PTL_RETAIN,
			       mp_md(all, total * sizeof *all, INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, PTL_EQ_NONE),
			       PTL_RETAIN, NULL);
	}
	mp_barrier();
	uint64_t val = 0, old = 0;
	ptl_handle_md_t g = mp_bind(&old, 8, INF, 0, eq), p = mp_bind(&val, 8, INF, 0, eq);
	for (int i = 0; i < n; i++) {
		val = ((uint64_t)(mp_rank + 1) << 32) | (uint64_t)(i + 1);
		MP_RC(PtlGetPut(g, p, mp_id(0), pt, 0, 0, 0, 0), PTL_OK);
		ptl_event_t ev;
		for (int k = 0; k < 4; k++)
			MP_WAIT(eq, &ev, "the events of one getput");
		if (ev.type != PTL_EVENT_REPLY_END || ev.ni_fail_type != PTL_NI_OK || ev.mlength != 8)
			MP_FAIL("rank %d: swap %d ended with %s, fail %d, mlength %llu", mp_rank, i,
				PtlEventKindStr(ev.type), ev.ni_fail_type, (unsigned long long)ev.mlength);
		mine[i] = (struct pair){ old, val };
	}
	mp_eq_set_seq(eq, (ptl_seq_t)(4 * n));
	ptl_handle_md_t h = mp_bind(mine, (size_t)n * sizeof *mine, INF, 0, eq);
	mp_put_acked(h, eq, 0, gpt, 0, 0, (size_t)n * sizeof *mine, (size_t)mp_rank * (size_t)n * sizeof *mine,
		     0, (size_t)n * sizeof *mine, (size_t)mp_rank * (size_t)n * sizeof *mine, PTL_NI_OK,
		     "sending my swaps to rank 0");
	MP_RC(PtlMDUnlink(h), PTL_OK);
	MP_RC(PtlMDUnlink(g), PTL_OK);
	MP_RC(PtlMDUnlink(p), PTL_OK);
	mp_barrier();
	if (mp_rank == 0) {
		qsort(all, total, sizeof *all, by_old);
		uint64_t cur = 0;
		int *last = calloc((size_t)mp_size, sizeof *last);
		for (size_t step = 0; step < total; step++) {
			struct pair key = { cur, 0 };
			struct pair *e = bsearch(&key, all, total, sizeof *all, by_old);
			if (!e)
				MP_FAIL("swap chain broken after %zu of %zu swaps: nobody got 0x%llx back", step, total,
					(unsigned long long)cur);
			if ((e > all && e[-1].old == cur) || (e + 1 < all + total && e[1].old == cur))
				MP_FAIL("value 0x%llx was swapped out twice", (unsigned long long)cur);
			int r = (int)(e->new >> 32) - 1, i = (int)(uint32_t)e->new;
			if (r < 0 || r >= mp_size || i != last[r] + 1)
				MP_FAIL("swap 0x%llx out of its rank's order", (unsigned long long)e->new);
			last[r] = i;
			cur = e->new;
		}
		if (cur != loc)
			MP_FAIL("chain ends at 0x%llx, location holds 0x%llx", (unsigned long long)cur,
				(unsigned long long)loc);
		free(last);
		MP_RC(PtlMEUnlink(me), PTL_OK);
		MP_RC(PtlMEUnlink(gme), PTL_OK);
	}
	free(all);
	free(mine);
	mp_eq_free(eq);
	mp_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MP_TEST(test_getput),
		MP_TEST(test_swap_chain),
	};
	return mp_main("mp_atomic", tests, sizeof tests / sizeof tests[0]);
}
