/* Participant lists, request offsets and the cross-rank merge. */
#include "trc_test_util.h"

/* ---- participant lists ---- */

static void test_rset_algebra(void **state)
{
	(void)state;
	struct trc_rset a, b;
	trc_rset_init(&a);
	trc_rset_init(&b);
	for (int r = 0; r < 10; r += 2)
		trc_rset_add(&a, r);
	for (int r = 1; r < 10; r += 2)
		trc_rset_add(&b, r);
	trc_rset_add(&a, 4);	/* duplicates are ignored */
	assert_int_equal(a.n, 5);
	assert_true(trc_rset_has(&a, 8));
	assert_false(trc_rset_has(&a, 7));
	trc_rset_union(&a, &b);
	assert_int_equal(a.n, 10);
	for (int r = 0; r < 10; r++)
		assert_int_equal(a.r[r], r);
	char s[64];
	trc_rset_format(&a, s, sizeof s);
	assert_string_equal(s, "0-9");
	trc_rset_format(&b, s, sizeof s);
	assert_string_equal(s, "1[5x+2]");
	trc_rset_free(&a);
	trc_rset_free(&b);
}

static void test_rset_compact(void **state)
{
	(void)state;
	/* all ranks costs a few bytes at any job size */
	for (int n = 2; n <= 1 << 20; n *= 8) {
		struct trc_rset s;
		trc_rset_init(&s);
		for (int r = 0; r < n; r++)
			trc_rset_add(&s, r);
		assert_true(trc_rset_encoded_size(&s) <= 8);
		trc_rset_free(&s);
	}
	/* the interior of a 32x32 grid is one two-level block */
	struct trc_rset s;
	trc_rset_init(&s);
	for (int y = 1; y < 31; y++)
		for (int x = 1; x < 31; x++)
			trc_rset_add(&s, y * 32 + x);
	assert_true(trc_rset_encoded_size(&s) <= 10);
	char f[64];
	trc_rset_format(&s, f, sizeof f);
	assert_string_equal(f, "33[30x+1][30x+32]");
	trc_rset_free(&s);
}

/* ---- request offsets ---- */

static void test_reqtab_offsets(void **state)
{
	(void)state;
	struct trc_reqtab rt;
	uint64_t seq;
	assert_int_equal(trc_reqtab_init(&rt, 8), 0);
	trc_reqtab_add(&rt, 100);
	trc_reqtab_add(&rt, 200);
	trc_reqtab_add(&rt, 300);
	assert_int_equal(trc_reqtab_lookup(&rt, 100, &seq), 3);
	trc_reqtab_retire(&rt, seq);
	assert_int_equal(trc_reqtab_lookup(&rt, 300, &seq), 1);
	trc_reqtab_retire(&rt, seq);
	assert_int_equal(trc_reqtab_lookup(&rt, 999, &seq), TRC_REQ_NULL);
	/* a Test that did not complete leaves the request outstanding */
	assert_int_equal(trc_reqtab_lookup(&rt, 200, &seq), 2);
	trc_reqtab_unclaim(&rt, seq);
	assert_int_equal(trc_reqtab_lookup(&rt, 200, &seq), 2);
	trc_reqtab_retire(&rt, seq);
	trc_reqtab_free(&rt);
}

static void test_reqtab_repeated_handles(void **state)
{
	(void)state;
	/* MPICH hands one handle value to several sends that completed at
	 * once; a Waitall over them must map each to its own creation */
	struct trc_reqtab rt;
	uint64_t s1, s2, s3, s4;
	trc_reqtab_init(&rt, 16);
	trc_reqtab_add(&rt, 0x2c000000);	/* Irecv */
	trc_reqtab_add(&rt, 0x2c000001);	/* Irecv */
	trc_reqtab_add(&rt, 0xac000000);	/* Isend, done at once */
	trc_reqtab_add(&rt, 0xac000000);	/* Isend, done at once: same handle */
	assert_int_equal(trc_reqtab_lookup(&rt, 0x2c000000, &s1), 4);
	assert_int_equal(trc_reqtab_lookup(&rt, 0x2c000001, &s2), 3);
	assert_int_equal(trc_reqtab_lookup(&rt, 0xac000000, &s3), 2);
	assert_int_equal(trc_reqtab_lookup(&rt, 0xac000000, &s4), 1);
	trc_reqtab_retire(&rt, s1);
	trc_reqtab_retire(&rt, s2);
	trc_reqtab_retire(&rt, s3);
	trc_reqtab_retire(&rt, s4);
	/* next iteration: same offsets */
	trc_reqtab_add(&rt, 0x2c000003);
	trc_reqtab_add(&rt, 0xac000000);
	trc_reqtab_add(&rt, 0xac000000);
	assert_int_equal(trc_reqtab_lookup(&rt, 0x2c000003, &s1), 3);
	assert_int_equal(trc_reqtab_lookup(&rt, 0xac000000, &s2), 2);
	assert_int_equal(trc_reqtab_lookup(&rt, 0xac000000, &s3), 1);
	trc_reqtab_free(&rt);
}

static void test_reqtab_overflow(void **state)
{
	(void)state;
	struct trc_reqtab rt;
	uint64_t s;
	trc_reqtab_init(&rt, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(trc_reqtab_add(&rt, (uint64_t)i), 0);
	assert_int_equal(trc_reqtab_add(&rt, 9), -1);
	assert_true(rt.overflow);
	/* retiring the oldest makes room again */
	trc_reqtab_lookup(&rt, 0, &s);
	trc_reqtab_retire(&rt, s);
	assert_int_equal(trc_reqtab_add(&rt, 9), 0);
	trc_reqtab_free(&rt);
}

/* ---- merge ---- */

/* A ring step on rank r of n: Send to r+1, Recv from r-1, 10 times,
 * then Barrier; rank 0 adds an extra Bcast-like barrier of its own. */
static void ring_trace(struct trc_trace *t, int32_t r, int32_t n, struct trc_ev *seq, size_t *ns)
{
	trc_trace_init(t, TRC_LEVEL_NODE, r, n, -1);
	*ns = 0;
	for (int i = 0; i < 10; i++) {
		seq[(*ns)++] = tu_send(TRC_OP_SEND, (r + 1) % n, 16, 1, 0x40, r, n);
		seq[(*ns)++] = tu_send(TRC_OP_RECV, (r + n - 1) % n, 16, 1, 0x41, r, n);
	}
	if (r == 0)
		seq[(*ns)++] = tu_barrier(0x99);
	seq[(*ns)++] = tu_barrier(0x42);
	for (size_t i = 0; i < *ns; i++)
		trc_append(t, &seq[i]);
}

/* Merge n ranks along the same balanced binary tree as MPI_Finalize. */
static void merge_tree(struct trc_trace *t, int32_t n, int32_t r)
{
	for (int32_t k = 2 * r + 1; k <= 2 * r + 2 && k < n; k++) {
		merge_tree(t, n, k);
		assert_int_equal(trc_merge(&t[r], &t[k]), 0);
	}
}

static void test_merge_ring(void **state)
{
	(void)state;
	enum { N = 13 };
	struct trc_trace t[N];
	static struct trc_ev seq[N][32];
	size_t ns[N];
	for (int r = 0; r < N; r++)
		ring_trace(&t[r], r, N, seq[r], &ns[r]);
	merge_tree(t, N, 0);
	struct trc_trace *m = &t[0];
	assert_int_equal(m->all.n, N);
	assert_int_equal(m->rank, -1);
	/* loop over all ranks, rank 0's own barrier, the common barrier */
	assert_int_equal(m->top.n, 3);
	struct trc_node *loop = m->top.head;
	assert_null(loop->ranks);	/* all ranks: same as the trace */
	assert_int_equal(loop->iters, 10);
	/* peers became offsets: +1 / -1 on every rank, wrap-around included */
	assert_int_equal(loop->body.head->ev.f[0].pf, TRC_PF_REL);
	assert_int_equal(loop->body.head->ev.f[0].rel, 1);
	assert_int_equal(loop->body.head->next->ev.f[0].rel, -1);
	assert_non_null(loop->next->ranks);
	assert_int_equal(loop->next->ranks->n, 1);
	for (int r = 0; r < N; r++) {
		char *want = tu_events_text(seq[r], ns[r], r, N), *got = tu_expand(m, r, NULL);
		assert_string_equal(got, want);
		free(want);
		free(got);
	}
	/* the merged size does not depend on the job size */
	struct trc_buf b = { 0 };
	trc_serialize(m, &b);
	assert_true(b.len < 120);
	trc_buf_free(&b);
	trc_trace_free(m);
}

static void test_merge_different_loops_and_abs_peers(void **state)
{
	(void)state;
	/* master-worker: rank 0 receives from any source, workers loop a
	 * rank-dependent number of times */
	enum { N = 5 };
	struct trc_trace t[N];
	static struct trc_ev seq[N][64];
	size_t ns[N];
	for (int r = 0; r < N; r++) {
		trc_trace_init(&t[r], TRC_LEVEL_NODE, r, N, -1);
		ns[r] = 0;
		int trips = r == 0 ? 12 : 2 + r % 2;
		for (int i = 0; i < trips; i++)
			seq[r][ns[r]++] = r == 0 ? tu_send(TRC_OP_RECV, TRC_ANY_SOURCE, 1, 1, 0x50, r, N)
						 : tu_send(TRC_OP_SEND, 0, 1, 1, 0x51, r, N);
		seq[r][ns[r]++] = tu_barrier(0x52);
		for (size_t i = 0; i < ns[r]; i++)
			trc_append(&t[r], &seq[r][i]);
	}
	merge_tree(t, N, 0);
	for (int r = 0; r < N; r++) {
		char *want = tu_events_text(seq[r], ns[r], r, N), *got = tu_expand(&t[0], r, NULL);
		assert_string_equal(got, want);
		free(want);
		free(got);
	}
	/* workers' sends to rank 0 merged on the absolute rank */
	int found = 0;
	for (struct trc_node *n = t[0].top.head; n; n = n->next)
		if (n->is_loop && n->body.head->ev.op == TRC_OP_SEND) {
			assert_int_equal(n->body.head->ev.f[0].pf, TRC_PF_ABS);
			found++;
		}
	assert_int_equal(found, 2);	/* 2 and 3 iterations: two loops */
	trc_trace_free(&t[0]);
}

static void test_histogram_merge(void **state)
{
	(void)state;
	/* counts 100 and 104 merge within 5%, into a histogram; lossy */
	struct trc_trace a, b;
	trc_trace_init(&a, TRC_LEVEL_NODE, 0, 2, -1);
	trc_trace_init(&b, TRC_LEVEL_NODE, 1, 2, -1);
	a.histo = b.histo = 5;
	struct trc_ev e0 = tu_send(TRC_OP_SEND, 1, 100, 0, 1, 0, 2), e1 = tu_send(TRC_OP_SEND, 0, 104, 0, 1, 1, 2);
	trc_append(&a, &e0);
	trc_append(&b, &e1);
	assert_int_equal(trc_merge(&a, &b), 0);
	assert_int_equal(a.top.n, 1);
	assert_true(a.flags & TRC_FL_LOSSY);
	assert_non_null(a.top.head->ev.h);
	assert_int_equal(a.top.head->ev.h[1].nb, 2);
	trc_trace_free(&a);
	/* without histograms they stay apart */
	trc_trace_init(&a, TRC_LEVEL_NODE, 0, 2, -1);
	trc_trace_init(&b, TRC_LEVEL_NODE, 1, 2, -1);
	trc_append(&a, &e0);
	trc_append(&b, &e1);
	trc_merge(&a, &b);
	assert_int_equal(a.top.n, 2);
	assert_false(a.flags & TRC_FL_LOSSY);
	trc_trace_free(&a);
}

/* 2-D stencil on a px x py grid, MPI_PROC_NULL at the edges (as
 * MPI_Cart_shift gives): Irecv x4, Isend x4, Waitall, Allreduce. */
static void stencil_rank(struct trc_trace *t, int px, int py, int r, struct trc_ev *seq, size_t *ns, int iters)
{
	int n = px * py, x = r % px, y = r / px;
	int nb[4] = { x > 0 ? r - 1 : TRC_PROC_NULL, x < px - 1 ? r + 1 : TRC_PROC_NULL,
		      y > 0 ? r - px : TRC_PROC_NULL, y < py - 1 ? r + px : TRC_PROC_NULL };
	static int64_t offs[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };
	trc_trace_init(t, TRC_LEVEL_NODE, r, n, -1);
	*ns = 0;
	for (int it = 0; it < iters; it++) {
		for (int k = 0; k < 4; k++)
			seq[(*ns)++] = tu_send(TRC_OP_IRECV, nb[k], 64, 7, 0x60, r, n);
		for (int k = 0; k < 4; k++)
			seq[(*ns)++] = tu_send(TRC_OP_ISEND, nb[k], 64, 7, 0x61, r, n);
		struct trc_ev w;
		memset(&w, 0, sizeof w);
		w.op = TRC_OP_WAITALL;
		w.sig = 0x62;
		w.f[0].v = 8;
		w.narr = 8;
		w.arr = offs;
		seq[(*ns)++] = w;
		seq[(*ns)++] = tu_barrier(0x63);
	}
	for (size_t i = 0; i < *ns; i++)
		trc_append(t, &seq[i]);
}

static size_t stencil_merged(int px, int py, int iters)
{
	int n = px * py;
	struct trc_trace *t = calloc((size_t)n, sizeof *t);
	struct trc_ev *seq = calloc((size_t)n * 10 * (size_t)iters, sizeof *seq);
	size_t *ns = calloc((size_t)n, sizeof *ns);
	for (int r = 0; r < n; r++)
		stencil_rank(&t[r], px, py, r, seq + (size_t)r * 10 * (size_t)iters, &ns[r], iters);
	merge_tree(t, n, 0);
	for (int r = 0; r < n; r++) {
		char *want = tu_events_text(seq + (size_t)r * 10 * (size_t)iters, ns[r], r, n);
		char *got = tu_expand(&t[0], r, NULL);
		assert_string_equal(got, want);
		free(want);
		free(got);
	}
	/* one loop of four nodes: boundary ranks share the interior's nodes */
	assert_int_equal(t[0].top.n, 1);
	assert_int_equal(t[0].top.head->body.n, 4);
	struct trc_buf b = { 0 };
	trc_serialize(&t[0], &b);
	size_t len = b.len;
	trc_buf_free(&b);
	trc_trace_free(&t[0]);
	free(t);
	free(seq);
	free(ns);
	return len;
}

static void test_merge_stencil_constant_size(void **state)
{
	(void)state;
	size_t s16 = stencil_merged(4, 4, 20), s32 = stencil_merged(8, 4, 20), s64 = stencil_merged(8, 8, 20);
	size_t s64long = stencil_merged(8, 8, 200);
	assert_true(s32 * 100 <= s16 * 105 && s16 * 100 <= s32 * 105);
	assert_true(s64 * 100 <= s16 * 105);
	assert_true(s64long <= s64 + 2);	/* iterations: only the loop count grows */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rset_algebra),
		cmocka_unit_test(test_rset_compact),
		cmocka_unit_test(test_reqtab_offsets),
		cmocka_unit_test(test_reqtab_repeated_handles),
		cmocka_unit_test(test_reqtab_overflow),
		cmocka_unit_test(test_merge_ring),
		cmocka_unit_test(test_merge_different_loops_and_abs_peers),
		cmocka_unit_test(test_histogram_merge),
		cmocka_unit_test(test_merge_stencil_constant_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
