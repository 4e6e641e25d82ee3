/* Per-rank compression: loops fold on the fly, nest, respect the window;
 * neighbour operations fold into parameter lists; expansion is exact. */
#include "trc_test_util.h"

static size_t top_len(const struct trc_trace *t)
{
	return t->top.n;
}

static void test_simple_loop(void **state)
{
	(void)state;
	struct trc_trace t;
	trc_trace_init(&t, TRC_LEVEL_NODE, 0, 4, -1);
	for (int i = 0; i < 1000; i++) {
		struct trc_ev a = tu_send(TRC_OP_SEND, 1, 8, 0, 0xa, 0, 4);
		struct trc_ev b = tu_send(TRC_OP_RECV, 3, 8, 0, 0xb, 0, 4);
		trc_append(&t, &a);
		trc_append(&t, &b);
	}
	assert_int_equal(top_len(&t), 1);
	assert_true(t.top.head->is_loop);
	assert_int_equal(t.top.head->iters, 1000);
	assert_int_equal(t.top.head->body.n, 2);
	/* timings of all 1000 copies were kept in the body */
	assert_int_equal(t.top.head->body.head->ev.t.n, 1000);
	size_t n;
	free(tu_expand(&t, 0, &n));
	assert_int_equal(n, 2000);
	trc_trace_free(&t);
}

static void test_nested_loops_different_counts(void **state)
{
	(void)state;
	/* for i<5 { A; for j<3 { B }; for k<7 { C; D }; } E */
	struct trc_trace t;
	struct trc_ev seq[200];
	size_t ns = 0;
	trc_trace_init(&t, TRC_LEVEL_NODE, 2, 8, -1);
	for (int i = 0; i < 5; i++) {
		seq[ns++] = tu_barrier(0xa);
		for (int j = 0; j < 3; j++)
			seq[ns++] = tu_send(TRC_OP_SEND, 3, 1, j == 9, 0xb, 2, 8);
		for (int k = 0; k < 7; k++) {
			seq[ns++] = tu_send(TRC_OP_SEND, 1, 4, 5, 0xc, 2, 8);
			seq[ns++] = tu_send(TRC_OP_RECV, 3, 4, 5, 0xd, 2, 8);
		}
	}
	seq[ns++] = tu_barrier(0xe);
	for (size_t i = 0; i < ns; i++)
		assert_int_equal(trc_append(&t, &seq[i]), 0);
	/* loop 5 { A, loop 3 {B}, loop 7 {C D} } E */
	assert_int_equal(top_len(&t), 2);
	struct trc_node *outer = t.top.head;
	assert_true(outer->is_loop);
	assert_int_equal(outer->iters, 5);
	assert_int_equal(outer->body.n, 3);
	struct trc_node *l3 = outer->body.head->next, *l7 = l3->next;
	assert_true(l3->is_loop && l7->is_loop);
	assert_int_equal(l3->iters, 3);
	assert_int_equal(l7->iters, 7);
	assert_int_equal(l7->body.n, 2);
	char *want = tu_events_text(seq, ns, 2, 8), *got = tu_expand(&t, 2, NULL);
	assert_string_equal(got, want);
	free(want);
	free(got);
	trc_trace_free(&t);
}

static void test_window(void **state)
{
	(void)state;
	/* a body of 3 nodes cannot fold with a window of 2 */
	struct trc_trace t;
	trc_trace_init(&t, TRC_LEVEL_NODE, 0, 2, 2);
	for (int i = 0; i < 10; i++) {
		struct trc_ev a = tu_barrier(1), b = tu_barrier(2), c = tu_barrier(3);
		trc_append(&t, &a);
		trc_append(&t, &b);
		trc_append(&t, &c);
	}
	assert_int_equal(top_len(&t), 30);
	trc_trace_free(&t);
	/* ...and does with a window of 3 */
	trc_trace_init(&t, TRC_LEVEL_NODE, 0, 2, 3);
	for (int i = 0; i < 10; i++) {
		struct trc_ev a = tu_barrier(1), b = tu_barrier(2), c = tu_barrier(3);
		trc_append(&t, &a);
		trc_append(&t, &b);
		trc_append(&t, &c);
	}
	assert_int_equal(top_len(&t), 1);
	assert_int_equal(t.top.head->iters, 10);
	trc_trace_free(&t);
}

static void test_dump_level_does_not_fold(void **state)
{
	(void)state;
	struct trc_trace t;
	trc_trace_init(&t, TRC_LEVEL_DUMP, 0, 2, -1);
	for (int i = 0; i < 10; i++) {
		struct trc_ev a = tu_barrier(1);
		trc_append(&t, &a);
	}
	assert_int_equal(top_len(&t), 10);
	trc_trace_free(&t);
}

static void test_param_list_stencil(void **state)
{
	(void)state;
	/* rank 5 of a 4x4 grid: Irecv from -1,+1,-4,+4 then Isend, Waitall */
	struct trc_trace t;
	struct trc_ev seq[400];
	size_t ns = 0;
	int nb[4] = { 4, 6, 1, 9 };
	trc_trace_init(&t, TRC_LEVEL_NODE, 5, 16, -1);
	for (int it = 0; it < 20; it++) {
		for (int k = 0; k < 4; k++)
			seq[ns++] = tu_send(TRC_OP_IRECV, nb[k], 64, 7, 0x10, 5, 16);
		for (int k = 0; k < 4; k++)
			seq[ns++] = tu_send(TRC_OP_ISEND, nb[k], 64, 7, 0x11, 5, 16);
		seq[ns++] = tu_barrier(0x12);
	}
	for (size_t i = 0; i < ns; i++)
		trc_append(&t, &seq[i]);
	assert_int_equal(top_len(&t), 1);
	struct trc_node *l = t.top.head;
	assert_int_equal(l->iters, 20);
	assert_int_equal(l->body.n, 3);
	const struct trc_ev *irecv = &l->body.head->ev;
	assert_int_equal(irecv->npl, 4);
	assert_int_equal(irecv->pl[0].rel, -1);
	assert_int_equal(irecv->pl[1].rel, 1);
	assert_int_equal(irecv->pl[2].rel, -4);
	assert_int_equal(irecv->pl[3].rel, 4);
	char *want = tu_events_text(seq, ns, 5, 16), *got = tu_expand(&t, 5, NULL);
	assert_string_equal(got, want);
	free(want);
	free(got);
	trc_trace_free(&t);
}

static void test_param_list_does_not_swallow_loops(void **state)
{
	(void)state;
	/* Send(+1), Send(-1) repeated: a loop of one two-peer node, not a
	 * parameter list growing with the iterations */
	struct trc_trace t;
	trc_trace_init(&t, TRC_LEVEL_NODE, 3, 8, -1);
	for (int i = 0; i < 50; i++) {
		struct trc_ev a = tu_send(TRC_OP_SEND, 4, 1, 0, 1, 3, 8), b = tu_send(TRC_OP_SEND, 2, 1, 0, 1, 3, 8);
		trc_append(&t, &a);
		trc_append(&t, &b);
	}
	assert_int_equal(top_len(&t), 1);
	assert_int_equal(t.top.head->iters, 50);
	assert_int_equal(t.top.head->body.head->ev.npl, 2);
	trc_trace_free(&t);
}

/* Property: any sequence over a small alphabet expands back to itself. */
static void test_random_sequences_roundtrip(void **state)
{
	(void)state;
	unsigned seed = 12345;
	for (int trial = 0; trial < 200; trial++) {
		struct trc_trace t;
		struct trc_ev seq[300];
		int window = trial % 3 == 0 ? -1 : trial % 7 + 1;
		size_t ns = (size_t)(rand_r(&seed) % 300);
		trc_trace_init(&t, TRC_LEVEL_NODE, 1, 4, window);
		for (size_t i = 0; i < ns; i++) {
			/* mostly a repeating pattern, with random breaks */
			unsigned r = rand_r(&seed) % 10;
			unsigned k = r < 7 ? (unsigned)(i % 3) : r;
			if (k % 2)
				seq[i] = tu_send(TRC_OP_ISEND, (int64_t)(k % 4), 8, (int)k, 0x20 + (k % 2), 1, 4);
			else
				seq[i] = tu_barrier(0x30 + k);
			assert_int_equal(trc_append(&t, &seq[i]), 0);
		}
		char *want = tu_events_text(seq, ns, 1, 4), *got = tu_expand(&t, 1, NULL);
		assert_string_equal(got, want);
		free(want);
		free(got);
		trc_trace_free(&t);
	}
}

/* A convergence loop: the inner trip count and the message size wobble a
 * little from one outer step to the next. */
static void wobble(struct trc_trace *t)
{
	for (int i = 0; i < 12; i++) {
		struct trc_ev b = tu_barrier(0x70);
		trc_append(t, &b);
		for (int j = 0; j < 100 + i % 3; j++) {
			struct trc_ev s = tu_send(TRC_OP_SEND, 1, 1000 + 10 * (i % 2), 0, 0x71, 0, 2);
			trc_append(t, &s);
		}
	}
}

static void test_histogram_mode(void **state)
{
	(void)state;
	struct trc_trace t;
	/* lossless: the outer loop folds only by the period of the wobble
	 * (6 steps), never into one loop of 12 */
	trc_trace_init(&t, TRC_LEVEL_NODE, 0, 2, -1);
	wobble(&t);
	assert_false(t.top.n == 1 && t.top.head->iters == 12);
	assert_int_equal(t.top.head->iters, 2);
	assert_int_equal(t.top.head->body.n, 12);
	assert_false(t.flags & TRC_FL_LOSSY);
	trc_trace_free(&t);
	/* within 5%: Barrier, loop 11 { loop ~100 {Send}, Barrier }, loop
	 * {Send} (a loop at the tail folds only once the next call closes
	 * it, so the outer loop comes out rotated), with histograms of the
	 * trip counts and sizes */
	trc_trace_init(&t, TRC_LEVEL_NODE, 0, 2, -1);
	t.histo = 5;
	wobble(&t);
	assert_int_equal(t.top.n, 3);
	assert_true(t.flags & TRC_FL_LOSSY);
	struct trc_node *outer = t.top.head->next, *inner = outer->body.head;
	assert_int_equal(outer->iters, 11);
	assert_true(inner->is_loop);
	assert_non_null(inner->ih);
	assert_true(inner->ih->nb >= 2);
	assert_true(inner->iters >= 100 && inner->iters <= 102);
	const struct trc_ev *s = &inner->body.head->ev;
	assert_non_null(s->h);
	assert_int_equal(s->h[1].nb, 2);	/* counts 1000 and 1010 */
	/* the file keeps the histograms and says it is lossy */
	struct trc_buf b = { 0 };
	struct trc_trace back;
	char err[128];
	trc_serialize(&t, &b);
	assert_int_equal(trc_deserialize(&back, b.p, b.len, err, sizeof err), 0);
	assert_true(back.flags & TRC_FL_LOSSY);
	assert_non_null(back.top.head->next->body.head->ih);
	trc_buf_free(&b);
	trc_trace_free(&back);
	trc_trace_free(&t);
	/* a difference beyond the tolerance still breaks the fold */
	trc_trace_init(&t, TRC_LEVEL_NODE, 0, 2, -1);
	t.histo = 0.5;
	wobble(&t);
	assert_false(t.flags & TRC_FL_LOSSY);
	char *got = tu_expand(&t, 0, NULL);
	struct trc_trace exact;
	trc_trace_init(&exact, TRC_LEVEL_NODE, 0, 2, -1);
	wobble(&exact);
	char *want = tu_expand(&exact, 0, NULL);
	assert_string_equal(got, want);
	free(got);
	free(want);
	trc_trace_free(&exact);
	trc_trace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_loop),
		cmocka_unit_test(test_nested_loops_different_counts),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_dump_level_does_not_fold),
		cmocka_unit_test(test_param_list_stencil),
		cmocka_unit_test(test_param_list_does_not_swallow_loops),
		cmocka_unit_test(test_random_sequences_roundtrip),
		cmocka_unit_test(test_histogram_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
