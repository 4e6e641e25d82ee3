/* Schedule shapes against seed 002's verification tables V1 (ring_bidir),
 * V2 (halving-doubling) and V3.2 (one-port regressions), plus per-rank
 * expansion. */
#include <time.h>

#include "coll_test_util.h"

/* V1.1: steps and link slots (2N per step, counting slots that carry
 * nothing), and the transfers that carry data. */
static void test_v1_1_counts(void **state)
{
	(void)state;
	struct {
		enum coll_op op;
		int n;
		uint32_t steps;
		uint64_t slots, commands;
	} rows[] = {
		{ COLL_OP_ALLREDUCE, 4, 4, 32, 24 },
		{ COLL_OP_ALLREDUCE, 8, 8, 128, 112 },
		{ COLL_OP_REDUCE_SCATTER, 4, 2, 16, 12 },
		{ COLL_OP_ALLGATHER, 4, 2, 16, 12 },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		/* "ring" with 2 ports is the bidirectional ring (R3.3) */
		struct coll_req r = mkreq(rows[i].op, COLL_ALGO_RING, rows[i].n, 1 << 20, 1, 2);
		struct coll_sched *s = expand_ok(&r);
		assert_int_equal(s->info.algo, COLL_ALGO_RING_BIDIR);
		assert_int_equal(s->info.steps, rows[i].steps);
		assert_int_equal(s->info.link_slots, rows[i].slots);
		assert_int_equal(s->info.commands, rows[i].commands);
		assert_int_equal(s->info.ndirs, 2);
		coll_free(s);
	}
}

/* Odd N: N-1 steps (seed: N+1), link slots 2N per step. */
static void test_bidir_odd_steps(void **state)
{
	(void)state;
	for (int n = 3; n <= 33; n += 2) {
		struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, n, (size_t)n * 64, 1, 2);
		struct coll_sched *s = expand_ok(&r);
		assert_int_equal(s->info.steps, (uint32_t)(n - 1));
		assert_int_equal(s->info.link_slots, (uint64_t)(n - 1) * 2 * (uint64_t)n);
		/* odd N uses every slot */
		assert_int_equal(s->info.commands, s->info.link_slots);
		coll_free(s);
	}
	for (int n = 2; n <= 32; n += 2) {
		struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, n, (size_t)n * 64, 1, 2);
		struct coll_sched *s = expand_ok(&r);
		assert_int_equal(s->info.steps, (uint32_t)n);
		coll_free(s);
	}
}

/* The seed's cmd_id example (N=4, num_chunks=2): ids by (step, direction,
 * chunk), four per slot (one per rank). */
static void test_v1_ids_seed_example(void **state)
{
	(void)state;
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, 4, 4096, 2, 2);
	struct coll_sched *s = expand_ok(&r);
	for (int rank = 0; rank < 4; rank++) {
		size_t n;
		const struct coll_cmd *c = coll_rank_cmds(s, rank, &n);
		for (size_t i = 0; i < n; i++) {
			if (c[i].kind != COLL_SEND)
				continue;
			uint64_t slot = c[i].id / s->info.id_stride;
			uint64_t want = ((uint64_t)(c[i].step * 2 + c[i].dir) * 2 + c[i].chunk) * 4
			                + (uint64_t)rank;
			assert_int_equal(slot, want);
		}
	}
	/* step 0: CW chunk0 0..3, CW chunk1 4..7, CCW chunk0 8..11, CCW chunk1 12..15;
	 * step 1: CW chunk0 16..19 */
	const struct coll_cmd *c = coll_find(s, 2, (uint64_t)(8 + 2) * s->info.id_stride + 1);
	assert_non_null(c);
	assert_int_equal(c->kind, COLL_SEND);
	assert_int_equal(c->dir, 1);
	assert_int_equal(c->chunk, 0);
	assert_int_equal(c->step, 0);
	c = coll_find(s, 1, (uint64_t)(20 + 1) * s->info.id_stride + 1);
	assert_non_null(c);
	assert_int_equal(c->dir, 0);
	assert_int_equal(c->chunk, 1);
	assert_int_equal(c->step, 1);
	coll_free(s);
}

static const struct coll_cmd *dep_cmd(const struct coll_sched *s, int rank, uint64_t id)
{
	const struct coll_cmd *d = coll_find(s, rank, id);
	assert_non_null(d);
	return d;
}

/* V1.2: chains. Within a direction and chunk a command depends on the
 * chain's previous step; no dependency crosses chunks; the only ones that
 * cross directions are at the owner, where the two partial sums of its block
 * meet (and the first all-gather commands wait for that meeting). The first
 * all-gather command of a direction depends on that direction's last
 * reduce-scatter command. */
static void test_v1_2_chains(void **state)
{
	(void)state;
	int ns[] = { 4, 5, 8, 9 };
	for (size_t t = 0; t < 4; t++) {
		int n = ns[t], C = 2;
		struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, n,
		                          (size_t)n * (size_t)C * 8, C, 2);
		struct coll_sched *s = expand_ok(&r);
		uint32_t rs_steps = (uint32_t)(n / 2);
		for (int rank = 0; rank < n; rank++) {
			size_t cnt;
			const struct coll_cmd *c = coll_rank_cmds(s, rank, &cnt);
			size_t boff, blen;
			coll_block(r.bytes, 1, (size_t)n, (size_t)rank, &boff, &blen);
			int cross = 0;
			bool ag_first_seen[2] = { false, false };
			for (size_t i = 0; i < cnt; i++) {
				bool first_ag = c[i].step >= rs_steps && !ag_first_seen[c[i].dir]
				                && c[i].kind == COLL_SEND;
				bool has_prev_rs_dep = false;
				for (unsigned k = 0; k < c[i].ndeps; k++) {
					const struct coll_cmd *d = dep_cmd(s, rank, c[i].deps[k]);
					assert_int_equal(d->chunk, c[i].chunk);
					if (d->dir != c[i].dir) {
						/* the meeting: a reduce into this rank's own block */
						cross++;
						assert_int_equal(d->kind, COLL_REDUCE);
						assert_true(d->off >= boff && d->off < boff + blen);
						continue;
					}
					if (c[i].peer < 0) {  /* a local add after its receive */
						assert_int_equal(d->step, c[i].step);
						continue;
					}
					assert_true(d->step < c[i].step);
					if (c[i].step < rs_steps || c[i].step > rs_steps)
						assert_int_equal(d->step, c[i].step - 1);
					if (d->step < rs_steps)
						has_prev_rs_dep = true;
				}
				if (first_ag && c[i].chunk == 0) {
					ag_first_seen[c[i].dir] = true;
					/* the first all-gather send follows its direction's last
					 * reduce-scatter command */
					assert_true(has_prev_rs_dep);
				}
				if (c[i].step > 0 && c[i].kind == COLL_SEND)
					assert_true(c[i].ndeps > 0);
			}
			/* per chunk: one reduce waits for the other, and the first
			 * all-gather commands of the earlier direction wait for it */
			assert_true(cross >= C && cross <= 3 * C);
		}
		coll_free(s);
	}
}

/* V1.3 and V1.4: every transfer moves M/(N*C), the total equals the one-way
 * ring's, CW goes to i+1 and CCW to i-1. */
static void test_v1_3_v1_4_volume_direction(void **state)
{
	(void)state;
	for (int n = 2; n <= 12; n++)
		for (int C = 1; C <= 4; C++) {
			size_t M = (size_t)n * (size_t)C * 256;
			struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, n, M, C, 2);
			struct coll_sched *b = expand_ok(&r);
			r.algo = COLL_ALGO_RING;
			r.ports = 1;
			struct coll_sched *o = expand_ok(&r);
			assert_int_equal(o->info.algo, COLL_ALGO_RING);
			assert_int_equal(b->info.total_bytes, o->info.total_bytes);
			assert_int_equal(b->info.total_bytes, 2 * (uint64_t)(n - 1) * M);
			assert_int_equal(b->info.min_transfer, M / (size_t)(n * C));
			assert_int_equal(b->info.max_transfer, M / (size_t)(n * C));
			for (int rank = 0; rank < n; rank++) {
				size_t cnt;
				const struct coll_cmd *c = coll_rank_cmds(b, rank, &cnt);
				for (size_t i = 0; i < cnt; i++) {
					if (c[i].kind != COLL_SEND)
						continue;
					int want = c[i].dir == 0 ? (rank + 1) % n : (rank - 1 + n) % n;
					assert_int_equal(c[i].peer, want);
				}
			}
			coll_free(b);
			coll_free(o);
		}
}

/* V2.1 pairing, V2.2 volumes, V2.4 send/receive pairs with the receive first */
static void test_v2_halving_doubling(void **state)
{
	(void)state;
	int ns[] = { 2, 4, 8, 16, 64 };
	for (size_t t = 0; t < 5; t++) {
		int n = ns[t], L = 0;
		while ((1 << L) < n)
			L++;
		size_t M = (size_t)1 << 20;
		struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, n, M, 1, 1);
		struct coll_sched *s = expand_ok(&r);
		assert_int_equal(s->info.algo, COLL_ALGO_HALVING_DOUBLING);
		assert_int_equal(s->info.steps, (uint32_t)(2 * L));
		assert_int_equal(s->info.total_bytes, 2 * (uint64_t)M * (uint64_t)(n - 1));
		for (int rank = 0; rank < n; rank++) {
			for (int st = 0; st < 2 * L; st++) {
				int k = st < L ? st : 2 * L - 1 - st;
				assert_int_equal(count_kind(s, rank, COLL_SEND, st, -1), 1);
				assert_int_equal(count_kind(s, rank, st < L ? COLL_REDUCE : COLL_RECV, st, -1), 1);
				size_t cnt;
				const struct coll_cmd *c = coll_rank_cmds(s, rank, &cnt), *snd = NULL, *rcv = NULL;
				for (size_t i = 0; i < cnt; i++)
					if (c[i].step == (uint32_t)st)
						*(c[i].kind == COLL_SEND ? &snd : &rcv) = &c[i];
				assert_int_equal(snd->peer, rank ^ (1 << k));
				assert_int_equal(rcv->peer, rank ^ (1 << k));
				assert_int_equal(snd->len, M >> (k + 1));
				assert_int_equal(rcv->len, M >> (k + 1));
				assert_true(rcv->id < snd->id);              /* receive first */
				for (unsigned d = 0; d < snd->ndeps; d++)     /* and not waited for */
					assert_int_not_equal(snd->deps[d], rcv->id);
				const struct coll_cmd *ps = coll_find(s, rank ^ (1 << k), rcv->match);
				assert_non_null(ps);
				assert_int_equal(ps->kind, COLL_SEND);
				assert_int_equal(ps->peer, rank);
			}
		}
		coll_free(s);
	}
	/* V2.1's table, literally */
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 8, 1 << 10, 1, 1);
	struct coll_sched *s = expand_ok(&r);
	int pairs[3][8] = { { 1, 0, 3, 2, 5, 4, 7, 6 }, { 2, 3, 0, 1, 6, 7, 4, 5 },
	                    { 4, 5, 6, 7, 0, 1, 2, 3 } };
	for (int st = 0; st < 3; st++)
		for (int rank = 0; rank < 8; rank++) {
			size_t cnt;
			const struct coll_cmd *c = coll_rank_cmds(s, rank, &cnt);
			for (size_t i = 0; i < cnt; i++)
				if (c[i].step == (uint32_t)st)
					assert_int_equal(c[i].peer, pairs[st][rank]);
		}
	coll_free(s);
}

/* Pairing is over logical ids; commands carry the physical rank. */
static void test_participants_mapping(void **state)
{
	(void)state;
	int parts[4] = { 10, 3, 7, 42 };
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 4, 64, 1, 1);
	r.participants = parts;
	struct coll_sched *s = expand_ok(&r);
	for (int rank = 0; rank < 4; rank++) {
		size_t cnt;
		const struct coll_cmd *c = coll_rank_cmds(s, rank, &cnt);
		for (size_t i = 0; i < cnt; i++)
			assert_int_equal(c[i].peer_rank, parts[c[i].peer]);
	}
	coll_free(s);
	int bad[2] = { 0, -1 };
	r.nranks = 2;
	r.participants = bad;
	char msg[128];
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
}

/* V2.3: N not a power of two falls back to the ring (with a warning). */
static void test_v2_3_fallback(void **state)
{
	(void)state;
	int ns[] = { 3, 5, 6, 7 };
	for (size_t i = 0; i < 4; i++) {
		struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, ns[i], 4096, 1, 1);
		struct coll_sched *s = expand_ok(&r);
		assert_int_equal(s->info.algo, COLL_ALGO_RING);
		assert_non_null(strstr(s->choice.warning, "power-of-two"));
		assert_int_equal(s->info.steps, (uint32_t)(2 * (ns[i] - 1)));
		coll_free(s);
	}
}

/* V3.2: with one port every algorithm keeps its one-port shape. */
static void test_v3_2_one_port_regression(void **state)
{
	(void)state;
	for (int n = 2; n <= 12; n++) {
		size_t M = (size_t)n * 1024;
		struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING, n, M, 1, 1);
		struct coll_sched *s = expand_ok(&r);
		assert_int_equal(s->info.algo, COLL_ALGO_RING);
		assert_int_equal(s->info.steps, (uint32_t)(2 * (n - 1)));
		assert_int_equal(s->info.ndirs, 1);
		assert_int_equal(s->info.commands, 2 * (uint64_t)(n - 1) * (uint64_t)n);
		assert_int_equal(s->info.link_slots, s->info.commands);
		for (int rank = 0; rank < n; rank++) {
			assert_int_equal(count_kind(s, rank, COLL_SEND, -1, 1), 0);
			for (int st = 0; st < 2 * (n - 1); st++)
				assert_int_equal(count_kind(s, rank, COLL_SEND, st, 0), 1);
		}
		coll_free(s);

		r.algo = COLL_ALGO_RING_SENDRECV;
		s = expand_ok(&r);
		assert_int_equal(s->info.algo, COLL_ALGO_RING_SENDRECV);
		assert_int_equal(s->info.steps, (uint32_t)(2 * (n - 1)));
		assert_int_equal(s->info.commands, 2 * (uint64_t)(n - 1) * (uint64_t)n);
		/* plain receives into scratch, then a local reduce or copy */
		assert_int_equal(count_kind(s, 0, COLL_REDUCE, -1, -1), n - 1);
		assert_int_equal(count_kind(s, 0, COLL_COPY, -1, -1), n - 1);
		coll_free(s);

		r.algo = COLL_ALGO_TREE;
		s = expand_ok(&r);
		int lg = 0;
		while ((2 << lg) <= n)
			lg++;
		assert_int_equal(s->info.steps, (uint32_t)(2 * lg));
		/* each half goes up N-1 edges and down N-1 edges */
		assert_int_equal(s->info.commands, 4 * (uint64_t)(n - 1));
		coll_free(s);

		r = mkreq(COLL_OP_ALLTOALL, COLL_ALGO_AUTO, n, 100, 1, 1);
		s = expand_ok(&r);
		assert_int_equal(s->info.algo, COLL_ALGO_PAIRWISE);
		assert_int_equal(s->info.steps, (uint32_t)(n - 1));
		assert_int_equal(s->info.total_bytes, (uint64_t)n * (uint64_t)(n - 1) * 100);
		coll_free(s);

		r = mkreq(COLL_OP_REDUCE_SCATTER, COLL_ALGO_RING, n, M, 1, 1);
		s = expand_ok(&r);
		assert_int_equal(s->info.steps, (uint32_t)(n - 1));
		coll_free(s);
		r.op = COLL_OP_ALLGATHER;
		s = expand_ok(&r);
		assert_int_equal(s->info.steps, (uint32_t)(n - 1));
		coll_free(s);
	}
}

/* Seed 003's tree picture for 8 threads. */
static void test_reduce_tree_rounds(void **state)
{
	(void)state;
	struct coll_req r = mkreq(COLL_OP_REDUCE, COLL_ALGO_TREE, 8, 64, 1, 1);
	struct coll_sched *s = expand_ok(&r);
	int want[3][8] = {
		{ -1, 0, -1, 2, -1, 4, -1, 6 },   /* round 0 senders -> receivers */
		{ -1, -1, 0, -1, -1, -1, 4, -1 }, /* round 1 */
		{ -1, -1, -1, -1, 0, -1, -1, -1 },
	};
	for (int rd = 0; rd < 3; rd++)
		for (int t = 0; t < 8; t++) {
			size_t cnt;
			const struct coll_cmd *c = coll_rank_cmds(s, t, &cnt);
			int to = -1;
			for (size_t i = 0; i < cnt; i++)
				if (c[i].kind == COLL_SEND && c[i].step == (uint32_t)rd)
					to = c[i].peer;
			assert_int_equal(to, want[rd][t]);
		}
	coll_free(s);
	/* by owner: root receives N-1 parts into separate slots, then adds them
	 * in rank order, each add after the previous */
	r.algo = COLL_ALGO_OWNER;
	s = expand_ok(&r);
	assert_int_equal(count_kind(s, 0, COLL_RECV, 0, 0), 7);
	size_t cnt;
	const struct coll_cmd *c = coll_rank_cmds(s, 0, &cnt);
	int k = 1;
	for (size_t i = 0; i < cnt; i++) {
		if (c[i].kind == COLL_RECV) {
			assert_int_equal(c[i].off, (size_t)(c[i].peer - 1) * 64);
			continue;
		}
		assert_int_equal(c[i].kind, COLL_REDUCE);
		assert_int_equal(c[i].src_off, (size_t)(k - 1) * 64);
		assert_int_equal(c[i].ndeps, k > 1 ? 2 : 1);
		k++;
	}
	assert_int_equal(k, 8);
	coll_free(s);
}

static void test_barrier_and_bcast_shapes(void **state)
{
	(void)state;
	for (int n = 1; n <= 17; n++) {
		struct coll_req r = mkreq(COLL_OP_BARRIER, COLL_ALGO_AUTO, n, 0, 1, 1);
		struct coll_sched *s = expand_ok(&r);
		int lg = 0;
		while ((1 << lg) < n)
			lg++;
		assert_int_equal(s->info.algo, COLL_ALGO_DISSEMINATION);
		assert_int_equal(s->info.steps, (uint32_t)lg);
		assert_int_equal(s->info.commands, (uint64_t)n * (uint64_t)lg);
		assert_int_equal(s->info.total_bytes, 0);
		coll_free(s);

		r = mkreq(COLL_OP_BCAST, COLL_ALGO_BINOMIAL, n, 1000, 1, 1);
		r.root = n - 1;
		s = expand_ok(&r);
		assert_int_equal(s->info.steps, (uint32_t)lg);
		assert_int_equal(s->info.commands, (uint64_t)(n - 1));
		assert_int_equal(count_kind(s, n - 1, COLL_RECV, -1, -1), 0);
		coll_free(s);
	}
}

/* One rank's part alone equals that rank's part of the whole schedule. */
static void test_expand_rank_matches(void **state)
{
	(void)state;
	struct {
		enum coll_op op;
		enum coll_algo algo;
		int ports;
	} cs[] = {
		{ COLL_OP_ALLREDUCE, COLL_ALGO_RING_BIDIR, 2 },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_RING_SENDRECV, 1 },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 1 },
		{ COLL_OP_ALLREDUCE, COLL_ALGO_TREE, 1 },
		{ COLL_OP_ALLTOALL, COLL_ALGO_PAIRWISE, 1 },
		{ COLL_OP_ALLTOALL, COLL_ALGO_LINEAR, 1 },
		{ COLL_OP_BCAST, COLL_ALGO_SCATTER_ALLGATHER, 1 },
		{ COLL_OP_REDUCE, COLL_ALGO_OWNER, 1 },
		{ COLL_OP_REDUCE, COLL_ALGO_TREE, 1 },
		{ COLL_OP_BARRIER, COLL_ALGO_AUTO, 1 },
	};
	for (size_t a = 0; a < sizeof cs / sizeof cs[0]; a++)
		for (int n = 1; n <= 16; n++) {
			struct coll_req r = mkreq(cs[a].op, cs[a].algo, n, (size_t)n * 40 + 3, 3, cs[a].ports);
			r.root = n / 3;
			struct coll_sched *all = expand_ok(&r);
			for (int rank = 0; rank < n; rank++) {
				struct coll_sched *one = NULL;
				char msg[128];
				assert_int_equal(coll_expand_rank(&r, rank, &one, msg, sizeof msg), 0);
				assert_int_equal(one->nheld, 1);
				assert_int_equal(one->info.steps, all->info.steps);
				size_t n1, n2;
				const struct coll_cmd *c1 = coll_rank_cmds(one, rank, &n1);
				const struct coll_cmd *c2 = coll_rank_cmds(all, rank, &n2);
				assert_int_equal(n1, n2);
				if (n1)
					assert_memory_equal(c1, c2, n1 * sizeof *c1);
				/* iteration visits the same commands in order */
				struct coll_iter it;
				const struct coll_cmd *c;
				size_t k = 0;
				coll_iter_init(&it, one, rank);
				while ((c = coll_iter_next(&it)))
					assert_int_equal(c->id, c2[k++].id);
				assert_int_equal(k, n2);
				assert_int_equal(coll_check(one, msg, sizeof msg), 0);
				coll_free(one);
			}
			struct coll_info info;
			char msg[128];
			assert_int_equal(coll_summarize(&r, &info, NULL, msg, sizeof msg), 0);
			assert_int_equal(info.commands, all->info.commands);
			assert_int_equal(info.total_bytes, all->info.total_bytes);
			assert_int_equal(info.entries, all->info.entries);
			coll_free(all);
		}
}

/* A rank of a million-rank job expands its own part cheaply. */
static void test_expand_rank_million(void **state)
{
	(void)state;
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_HALVING_DOUBLING, 1 << 20,
	                          (size_t)64 << 20, 1, 1);
	r.elem_size = 4;
	char msg[128];
	struct coll_sched *s;
	clock_t t0 = clock();
	assert_int_equal(coll_expand_rank(&r, 777777, &s, msg, sizeof msg), 0);
	assert_int_equal(s->info.steps, 40);
	assert_int_equal(s->ranks[0].ncmds, 80);
	coll_free(s);
	r.algo = COLL_ALGO_TREE;
	assert_int_equal(coll_expand_rank(&r, 123456, &s, msg, sizeof msg), 0);
	assert_true(s->ranks[0].ncmds <= 12);
	coll_free(s);
	r.op = COLL_OP_BARRIER;
	r.algo = COLL_ALGO_AUTO;
	r.nranks = 1000000;
	assert_int_equal(coll_expand_rank(&r, 999999, &s, msg, sizeof msg), 0);
	assert_int_equal(s->ranks[0].ncmds, 40);
	coll_free(s);
	/* the ring's part is O(steps) = O(N): 2(N-1) steps, about two commands each */
	r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 1 << 16, (size_t)1 << 24, 1, 1);
	assert_int_equal(coll_expand_rank(&r, 5, &s, msg, sizeof msg), 0);
	assert_int_equal(s->ranks[0].ncmds, 4 * (size_t)((1 << 16) - 1));
	coll_free(s);
	double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	assert_true(secs < 5.0);
	/* out of range */
	assert_int_equal(coll_expand_rank(&r, 1 << 16, &s, msg, sizeof msg), -EINVAL);
	assert_null(s);
	assert_int_equal(coll_expand_rank(&r, -1, &s, msg, sizeof msg), -EINVAL);
}

static void test_bad_requests(void **state)
{
	(void)state;
	char msg[200];
	struct coll_sched *s;
	struct coll_req r = mkreq(COLL_OP_ALLREDUCE, COLL_ALGO_RING, 0, 8, 1, 1);
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "ranks"));
	r.nranks = 4;
	r.num_chunks = 65;
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "chunks"));
	r.num_chunks = 1;
	r.ports = -1;
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
	r = mkreq(COLL_OP_BCAST, COLL_ALGO_AUTO, 4, 8, 1, 1);
	r.root = 4;
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "root"));
	r = mkreq(COLL_OP_ALLGATHER, COLL_ALGO_TREE, 4, 8, 1, 1);
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -ENOTSUP);
	assert_non_null(strstr(msg, "tree"));
	r = mkreq(COLL_OP_ALLREDUCE, (enum coll_algo)99, 4, 8, 1, 1);
	assert_int_equal(coll_expand(&r, &s, msg, sizeof msg), -EINVAL);
	assert_null(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1_1_counts),
		cmocka_unit_test(test_bidir_odd_steps),
		cmocka_unit_test(test_v1_ids_seed_example),
		cmocka_unit_test(test_v1_2_chains),
		cmocka_unit_test(test_v1_3_v1_4_volume_direction),
		cmocka_unit_test(test_v2_halving_doubling),
		cmocka_unit_test(test_participants_mapping),
		cmocka_unit_test(test_v2_3_fallback),
		cmocka_unit_test(test_v3_2_one_port_regression),
		cmocka_unit_test(test_reduce_tree_rounds),
		cmocka_unit_test(test_barrier_and_bcast_shapes),
		cmocka_unit_test(test_expand_rank_matches),
		cmocka_unit_test(test_expand_rank_million),
		cmocka_unit_test(test_bad_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
