/* mpi_coll.c: collectives.
 *
 * Barrier, Bcast, Reduce, Allreduce, Allgather, Alltoall and
 * Reduce_scatter(_block) run a collectives/ schedule (coll_expand_rank) on
 * coll_engine, whose send/recv callbacks are our point-to-point layer on
 * the communicator's collective context (ctx + 1) with the schedule's
 * match id as the tag. The algorithm is coll_choose's, from the group size
 * and the port count (1 on shm; PTL_COLL_PORTS overrides), unless
 * PTL_COLL_ALGO names one ("ring", or per operation "allreduce=tree,
 * bcast=binomial"); a communicator's hints ptl_coll_algo and
 * ptl_coll_ports (MPI_Comm_set_info) say the same for it alone.
 * Reductions combine in the schedule's fixed order, so every run gives the
 * same bits; a non-commutative user op goes through the owner-ordered
 * reduce to rank 0. Gather(v), Scatter(v), Scan and Exscan
 * run collectives/ schedules too (binomial or linear trees, recursive
 * doubling or chain prefixes); so do Allgatherv (recursive doubling,
 * bruck or the ring) and Alltoallv (pairwise or linear over the pair
 * sizes).
 * Every call's tags carry its sequence number on the communicator, so
 * calls outstanding together (the nonblocking ones of mpi_icoll.c, which
 * share this file's transfers and passes through mpi_coll_int.h) never
 * match each other's messages.
 *
 * Every wait has a deadline (PTL_COLL_TIMEOUT seconds, default 300): when it
 * passes, the error names the collective, the communicator, the step and the
 * ranks whose parts did not arrive. PTL_TEST_STALL_RANK=r makes world rank r
 * post no collective sends at all, to test exactly that. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nal/nal_copy.h"
#include "coll.h"
#include "mpi_coll_int.h"
#include "mpi_impl.h"

#define CACHE_SLOTS 8
/* Schedule receives up to this size post no ME (mpi_irecv_lazy): there the
 * copy out of the unexpected buffer costs less than the ME's four calls;
 * above it the copy (out of unexpected memory that is seldom in cache)
 * costs more. 128 B from 2026-11-30 (2-rank allreduce, best of 6: 8 B 1.01
 * vs 1.09 us, 64 B 1.09 vs 1.13, 128 B even, 256 B 1.28 vs 1.19, 4 KiB 2.9
 * vs 2.2); 1 KiB since 2026-12-07 (Zen 4 guest, interleaved launches,
 * medians, 128 B vs 1 KiB): 2-rank ring allreduce 512 B 0.767 vs 0.730 us,
 * 2 KiB 0.904 vs 0.871; 4 ranks on 2 cores, ring 2 KiB 11.4 vs 10.4, 4 KiB
 * 12.6 vs 11.9, halving-doubling 1 KiB 10.9 vs 10.3; bench/mpi_colls of
 * 256 B - 1 KiB blocks 0.90x - 1.00x on 2 ranks. Not higher: with 8 KiB,
 * receives of 2 KiB and more went lazy too, and the 4-rank
 * halving-doubling of 4 KiB took 15.4 us against 12.2, the 2-rank ring of
 * 16 KiB 3.61 against 3.43 (doc/bench-notes.md). */
#define COLL_LAZY_MAX 1024

/* Temporaries of a call (a packed image of a non-contiguous buffer,
 * Alltoall's MPI_IN_PLACE input (a copy of recvbuf), Reduce's input on a
 * rank that is not the root, a non-commutative combination's copy, ...)
 * come from a few buffers kept per communicator, grown as needed and
 * freed with it (Comm_free, Finalize): a large malloc is an mmap, its
 * pages faulted in and zeroed on every call, and a munmap at its free. At
 * most TMP_KEEP bytes stay cached; a temporary that would pass that is
 * malloc'd and freed as before. TMP_SLOTS covers the deepest nesting (a
 * reduction's input, its scratch and a combination's copy). */
#define TMP_SLOTS 4
#define TMP_KEEP (64u << 20)
struct tmpbuf {
	void *p;
	size_t cap;
	bool busy;
};
struct mpi_coll_cache {
	struct mpi_kept e[CACHE_SLOTS];
	unsigned long clock; /* lookups so far */
	void *scratch;
	size_t scratch_cap;
	struct tmpbuf tmp[TMP_SLOTS];
	bool host_known, one_host; /* one_host(): every member on this host */
};

/* Which algorithm each operation takes: PTL_COLL_ALGO's and PTL_COLL_PORTS'
 * (env_choice), or on a communicator with hints of its own (ptl_coll_algo,
 * ptl_coll_ports: MPI_Comm_set_info, MPI_Comm_dup_with_info, kept by
 * MPI_Comm_dup) its own: the environment's with the hint's names over
 * them. */
struct mpi_coll_choice {
	struct mpi_coll_pick pick;
	char spec[MPI_MAX_INFO_VAL + 1]; /* ptl_coll_algo as given ("": not given) */
	bool ports_hint;                 /* ptl_coll_ports given */
};
static struct mpi_coll_choice env_choice;

static inline const struct mpi_coll_choice *choice_of(const struct mpi_comm *c)
{
	return c->choice ? c->choice : &env_choice;
}

/* Small allreduces may take allreduce_rd_direct where allreduce is left to
 * coll_choose or named recursive doubling, and allreduce_xall only where it
 * is left to the choice (a named algorithm runs as named). Blocking calls
 * alone take them: c's hints now are the call's. */
static inline bool rd_direct_algo(const struct mpi_comm *c)
{
	enum coll_algo a = choice_of(c)->pick.algo[COLL_OP_ALLREDUCE];
	return a == COLL_ALGO_AUTO || a == COLL_ALGO_RECURSIVE_DOUBLING;
}

static inline bool xall_algo(const struct mpi_comm *c)
{
	return choice_of(c)->pick.algo[COLL_OP_ALLREDUCE] == COLL_ALGO_AUTO;
}

/* Whether the ranks of this host outnumber its cores (set at init): then
 * they take turns on the cores, and a wait hands the core to another. */
static bool cores_shared;

/* spec ("NAME" for every operation, or "OP=NAME,...", both at once: NAME
 * for those no OP= names) over algo[]. A token it cannot take: with warn,
 * a warning (world rank 0) and the rest taken; without, its text in bad and
 * -1 (algo[] then half written: the caller's copy). */
static int choice_parse(const char *spec, enum coll_algo *algo, bool warn, char *bad, size_t badlen)
{
	char buf[MPI_MAX_INFO_VAL + 1];
	bool named[COLL_OP_COUNT] = { false };
	snprintf(buf, sizeof buf, "%s", spec);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		enum coll_algo a;
		enum coll_op op = COLL_OP_COUNT;
		bool ok;
		if (eq) {
			*eq = 0;
			ok = !coll_op_parse(tok, &op) && !coll_algo_parse(eq + 1, &a);
			*eq = '=';
		} else {
			ok = !coll_algo_parse(tok, &a);
		}
		if (!ok) {
			if (!warn) {
				snprintf(bad, badlen, "%s", tok);
				return -1;
			}
			if (mpi_g.wrank == 0)
				fprintf(stderr, "ptl-mpi: PTL_COLL_ALGO: ignoring '%s' (unknown operation or algorithm)\n", tok);
			continue;
		}
		if (eq) {
			algo[op] = a;
			named[op] = true;
		} else {
			for (int o = 0; o < COLL_OP_COUNT; o++)
				if (!named[o])
					algo[o] = a;
		}
	}
	return 0;
}

void mpi_coll_init(void)
{
	char bad[1];
	choice_parse(mpi_g.coll_algo, env_choice.pick.algo, true, bad, sizeof bad);
	env_choice.pick.ports = mpi_g.coll_ports > 0 ? mpi_g.coll_ports : 1;
	/* Ranks on this host against its cores (PTL_COLL_CORES: as if it
	 * had that many, for tests). */
	int here = 0;
	for (int w = 0; w < mpi_g.wsize; w++)
		here += mpi_g.ids[w].nid == mpi_g.ids[mpi_g.wrank].nid;
	const char *e = getenv("PTL_COLL_CORES");
	long cores = e && *e ? atol(e) : sysconf(_SC_NPROCESSORS_ONLN);
	cores_shared = cores > 0 && here > cores;
}

int mpi_coll_hints_make(const struct mpi_comm *base, MPI_Comm comm, const char *algo, const char *ports,
			const char *fn, struct mpi_coll_choice **out)
{
	struct mpi_coll_choice ch = base ? *choice_of(base) : env_choice;
	*out = NULL;
	if (algo) {
		/* over the environment's, not over an earlier hint's */
		memcpy(ch.pick.algo, env_choice.pick.algo, sizeof ch.pick.algo);
		char bad[64];
		if (strlen(algo) >= sizeof ch.spec || choice_parse(algo, ch.pick.algo, false, bad, sizeof bad))
			return mpi_err(comm, MPI_ERR_INFO_VALUE, fn,
				       "ptl_coll_algo '%s': '%s' is no operation=algorithm or algorithm (ptl-mpi(7))",
				       algo, bad);
		snprintf(ch.spec, sizeof ch.spec, "%s", algo);
	}
	if (ports && !*ports) {
		ch.pick.ports = env_choice.pick.ports;
		ch.ports_hint = false;
	} else if (ports) {
		char *end;
		long p = strtol(ports, &end, 10);
		if (*end || p < 1 || p > COLL_MAX_PORTS)
			return mpi_err(comm, MPI_ERR_INFO_VALUE, fn, "ptl_coll_ports '%s': not a port count 1-%d", ports,
				       COLL_MAX_PORTS);
		ch.pick.ports = (int)p;
		ch.ports_hint = true;
	}
	if (!ch.spec[0] && !ch.ports_hint)
		return MPI_SUCCESS;
	if (!(*out = malloc(sizeof **out)))
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	**out = ch;
	return MPI_SUCCESS;
}

void mpi_coll_hints_put(struct mpi_comm *c, struct mpi_coll_choice *ch)
{
	free(c->choice);
	c->choice = ch;
}

void mpi_coll_hints_get(const struct mpi_comm *c, const char **algo, int *ports)
{
	const struct mpi_coll_choice *ch = choice_of(c);
	*algo = ch->spec[0] ? ch->spec : NULL;
	*ports = ch->ports_hint ? ch->pick.ports : 0;
}

struct mpi_coll_pick mpi_coll_pick_now(const struct mpi_comm *c)
{
	return choice_of(c)->pick;
}

void mpi_coll_comm_free(struct mpi_comm *c)
{
	free(c->choice);
	c->choice = NULL;
	if (!c->cache)
		return;
	mpi_kept_free(c->cache->e, CACHE_SLOTS);
	free(c->cache->scratch);
	for (int i = 0; i < TMP_SLOTS; i++)
		free(c->cache->tmp[i].p);
	free(c->cache);
	c->cache = NULL;
}

static struct mpi_coll_cache *cache_of(struct mpi_comm *c)
{
	if (!c->cache)
		c->cache = calloc(1, sizeof *c->cache);
	return c->cache;
}

/* A temporary of len bytes (contents undefined) from the pool of n
 * buffers t: the free buffer that fits best, else the largest free one,
 * grown while the pool keeps at most TMP_KEEP bytes; else malloc'd. NULL
 * when out of memory. Give it back with pool_put. */
static void *pool_get(struct tmpbuf *t, int n, size_t len)
{
	if (!len)
		len = 1;
	struct tmpbuf *fit = NULL, *big = NULL;
	size_t kept = 0;
	for (int i = 0; i < n; i++) {
		struct tmpbuf *b = &t[i];
		kept += b->cap;
		if (b->busy)
			continue;
		if (b->cap >= len && (!fit || b->cap < fit->cap))
			fit = b;
		if (!big || b->cap > big->cap)
			big = b;
	}
	if (!fit && big && kept - big->cap + len <= TMP_KEEP) {
		/* grow: free first, the old bytes are of no use */
		free(big->p);
		big->cap = 0;
		big->p = malloc(len);
		if (big->p)
			big->cap = len;
		fit = big->p ? big : NULL;
	}
	if (!fit)
		return malloc(len);
	fit->busy = true;
	return fit->p;
}

/* The busy slot of t[0..n) that holds p, or NULL (p was malloc'd). */
static struct tmpbuf *pool_slot(struct tmpbuf *t, int n, const void *p)
{
	for (int i = 0; p && i < n; i++)
		if (t[i].busy && t[i].p == p)
			return &t[i];
	return NULL;
}

static void pool_put(struct tmpbuf *t, int n, void *p)
{
	struct tmpbuf *b = pool_slot(t, n, p);
	if (b)
		b->busy = false;
	else
		free(p);
}

/* A temporary from c's cache when it can be (pool_get). */
static void *tmp_get(struct mpi_comm *c, size_t len)
{
	struct mpi_coll_cache *cc = cache_of(c);
	return cc ? pool_get(cc->tmp, TMP_SLOTS, len) : malloc(len ? len : 1);
}

static void tmp_put(struct mpi_comm *c, void *p)
{
	if (c->cache)
		pool_put(c->cache->tmp, TMP_SLOTS, p);
	else
		free(p);
}

/* The nonblocking collectives' temporaries: a request may outlive its
 * communicator (MPI_Comm_free with the call under way) and several may be
 * under way at once, so they come from one pool of the process rather
 * than a communicator's, held until the request ends. A malloc'd
 * temporary per call could fault its pages in every time (whether glibc's
 * heap kept them after the last free depends on what else was allocated):
 * MPI_Ialltoallv of 256 KiB blocks laid out backwards, 2 ranks, 43 or
 * 405 us a call by launch, 38-41 us from this pool; 4 ranks on 2 cores
 * 1932 -> 195 us, 1 MiB blocks 8485 -> 1731 us. */
#define IC_POOL_SLOTS 6 /* two calls' IC_OWN (mpi_icoll.c) at once */
/* Smaller ones (the calls' count arrays, a small reduction's scratch)
 * come from slots of their own, each IC_POOL_MIN bytes: in the large
 * pool they could hold a large buffer for as long as their call lasts,
 * and malloc'd they were an allocation or two a call (tests/mpi/
 * mpi_noalloc). IC_SMALL_SLOTS covers IC_KEEP calls' two each under way
 * at once; past them, malloc. */
#define IC_POOL_MIN 4096
#define IC_SMALL_SLOTS 16
static struct tmpbuf ic_pool[IC_POOL_SLOTS];
static struct tmpbuf ic_small[IC_SMALL_SLOTS];

void *mpi_coll_req_tmp_get(size_t len)
{
	if (len >= IC_POOL_MIN)
		return pool_get(ic_pool, IC_POOL_SLOTS, len);
	for (int i = 0; i < IC_SMALL_SLOTS; i++) {
		struct tmpbuf *b = &ic_small[i];
		if (b->busy)
			continue;
		if (!b->p && !(b->p = malloc(IC_POOL_MIN)))
			break;
		b->cap = IC_POOL_MIN;
		b->busy = true;
		return b->p;
	}
	return malloc(len ? len : 1);
}

/* The slot of the pools that holds p, busy, or NULL (malloc'd). */
static struct tmpbuf *req_tmp_slot(void *p)
{
	struct tmpbuf *b = pool_slot(ic_small, IC_SMALL_SLOTS, p);
	return b ? b : pool_slot(ic_pool, IC_POOL_SLOTS, p);
}

void mpi_coll_req_tmp_put(void *p)
{
	struct tmpbuf *b = req_tmp_slot(p);
	if (b)
		b->busy = false;
	else
		free(p);
}

/* A buffer still busy belongs to a request not yet completed: left
 * alone. */
static void req_tmp_pool_fini(struct tmpbuf *t, int n)
{
	for (int i = 0; i < n; i++)
		if (!t[i].busy) {
			free(t[i].p);
			t[i] = (struct tmpbuf){ 0 };
		}
}

void mpi_coll_req_tmp_fini(void)
{
	req_tmp_pool_fini(ic_pool, IC_POOL_SLOTS);
	req_tmp_pool_fini(ic_small, IC_SMALL_SLOTS);
}

int mpi_cx_fail(struct cx *x, int cls, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->msg, sizeof x->msg, fmt, ap);
	va_end(ap);
	x->err = cls;
	return cls;
}

/* Lists transfer r of x's (NULL: a stalled rank's send, listed to say
 * whom we waited for). -ENOMEM: the list cannot grow, and r is given
 * back (a receive abandoned: nothing lands in the caller's buffers once
 * the call has failed). */
static int add_pend(struct cx *x, size_t idx, struct mpi_req *r, int peer, bool recv)
{
	if (x->np == x->cap) {
		/* Reported transfers are over: make room by dropping them
		 * before growing the list, so a schedule with more transfers
		 * than fit (a ring on more than 3 ranks) mallocs nothing. A
		 * pass that is going over the list starts again (relisted). */
		size_t k = 0;
		for (size_t i = 0; i < x->np; i++)
			if (!x->p[i].reported)
				x->p[k++] = x->p[i];
		x->relisted |= k < x->np;
		x->np = k;
	}
	if (x->np == x->cap) {
		size_t nc = x->cap * 2;
		struct pend *p = realloc(x->p == x->few ? NULL : x->p, nc * sizeof *p);
		if (!p) {
			if (r)
				mpi_req_give_up(r);
			return -ENOMEM;
		}
		if (x->p == x->few)
			memcpy(p, x->few, sizeof x->few);
		x->p = p;
		x->cap = nc;
	}
	x->p[x->np++] = (struct pend){ idx, r, peer, recv, false };
	return 0;
}

/* A schedule's sends above the eager limit stay eager up to this many
 * times it, as a blocking MPI_Send's do (mpi_pt2pt.c's
 * MPI_BLOCKING_EAGER, which MPI_MODE_BLOCKING gives): the receiver's CPU
 * reads the data on arrival, with no get request first and no copy on the
 * sender's. bench/mpi_bench.sh's model reads this line. Interleaved,
 * us: 2 ranks 32 KiB 11.8-12.2 against 15.5 (median; Open MPI 15.5,
 * best 11.8); 4 ranks on 2 cores 32 KiB 49.6 against 60.6 (Open MPI
 * 61.5). */
#define COLL_EAGER_TIMES 8

size_t mpi_coll_eager_max(void)
{
	return mpi_g.eager_limit * COLL_EAGER_TIMES;
}

static bool one_host(struct mpi_comm *c);

/* A 2-rank allreduce on one host exchanges: both ranks send and receive
 * at once, so a long send goes eagerly further (MPI_MODE_PULL: mpi_pt2pt.c's
 * MPI_PULL_EAGER), its move asked for by the receiver as soon as the
 * header lands, without the rendezvous's extra hop (its get). One-way
 * transfers (Bcast, Reduce, ...) keep the rendezvous. (With PTL_SHM_CMA=1
 * the receiver reads into its own buffer, instead of a get that the sender
 * serves and splits with the receiver, whose core is busy with its own.) */
void mpi_coll_pull(struct cx *x, enum coll_op op)
{
	x->pull = op == COLL_OP_ALLREDUCE && x->c->size == 2 && one_host(x->c);
}

/* A schedule's transfer that could not start, for the engine: -ENOMEM
 * for no room (mpi_cx_engine_fail says why), else x's error set to the
 * class it failed with */
static int xfer_failed(struct cx *x, int rc)
{
	if (rc == MPI_ERR_NO_MEM)
		return -ENOMEM;
	mpi_cx_fail(x, rc, "%s on %s: a transfer of the schedule failed", x->name, x->c->name);
	return -EIO;
}

static int cb_send(void *ctx, int rank, size_t idx, const struct coll_cmd *cmd, const void *buf, size_t len)
{
	(void)rank;
	struct cx *x = ctx;
	if (x->stall)
		return add_pend(x, idx, NULL, cmd->peer_rank, false);
	/* A short send goes out at once with no request where it can
	 * (mpi_send_bytes: inline, ACK-free credits at hand, nothing queued
	 * to that rank before it), over when the call returns, as a direct
	 * recursive doubling round's does; the engine takes it as done (1). */
	if (mpi_send_bytes(buf, len, cmd->peer_rank, mpi_coll_tag(x, cmd->match), x->c, x->c->ctx + 1))
		return 1;
	struct mpi_req *r;
	/* Above the eager limit as a blocking MPI_Send goes (COLL_EAGER_TIMES),
	 * from our buffer (NB: done on the ACK); up to the limit copied (to a
	 * slot, or within PTL_MPI_SEND_COPY_MEM) and done at once, as before. */
	int mode = len > mpi_g.eager_limit ? MPI_MODE_STD | MPI_MODE_NB | MPI_MODE_BLOCKING : MPI_MODE_STD;
	if (x->pull && len > mpi_coll_eager_max())
		mode |= MPI_MODE_PULL;
	int n;
	MPI_Datatype bt;
	int rc = mpi_bytes(len, &n, &bt);
	if (!rc)
		rc = mpi_isend(buf, n, bt, cmd->peer_rank, mpi_coll_tag(x, cmd->match), x->c, x->c->ctx + 1, mode, &r);
	mpi_bytes_free(&bt);
	if (rc)
		return xfer_failed(x, rc);
	return add_pend(x, idx, r, cmd->peer_rank, false);
}

static int cb_recv(void *ctx, int rank, size_t idx, const struct coll_cmd *cmd, void *buf, size_t len)
{
	(void)rank;
	struct cx *x = ctx;
	struct mpi_req *r;
	/* A schedule's receives name their source and a tag of their own,
	 * one collective at a time: small ones may wait as unexpected
	 * messages instead of posting an ME each. */
	int rc, n;
	MPI_Datatype bt = MPI_BYTE;
	if (len <= COLL_LAZY_MAX && !x->nb)
		rc = mpi_irecv_lazy(buf, len, cmd->peer_rank, mpi_coll_tag(x, cmd->match), x->c, x->c->ctx + 1, &r);
	else if (!(rc = mpi_bytes(len, &n, &bt)))
		rc = mpi_irecv(buf, n, bt, cmd->peer_rank, mpi_coll_tag(x, cmd->match), x->c, x->c->ctx + 1, &r);
	mpi_bytes_free(&bt);
	if (rc)
		return xfer_failed(x, rc);
	return add_pend(x, idx, r, cmd->peer_rank, true);
}

/* out = in OP io, in one pass, for MPI_SUM of MPI_DOUBLE (the common
 * reduction) with mpi_op.c's expression, so the same bits; false for
 * every other op and type. Four elements at a time, all read before any
 * is written: out may be either operand, and the compiler makes the four
 * adds two 16-byte vector ones, each with its NaN test and blend (-O2).
 * The direct rounds' combination (mpi_op_apply's lookups and dispatch and
 * the copy before it were about 150 instructions of a 2-rank 8-byte
 * allreduce) and the schedules' (combine), below COMBINE_APPLY_MIN. */
static bool combine_fast(const struct cx *x, const void *in, const void *io, void *out, int count)
{
	enum { W = 4 };
	if (x->op != MPI_SUM || x->dt != MPI_DOUBLE)
		return false;
	size_t n = (size_t)count, i = 0;
	for (; i + W <= n; i += W) {
		double a[W], b[W];
		memcpy(a, (const char *)in + i * sizeof(double), sizeof a);
		memcpy(b, (const char *)io + i * sizeof(double), sizeof b);
		for (int k = 0; k < W; k++) {
			double r = a[k] + b[k];
			b[k] = MPI_OP_NAN_FIRST(a[k], r);
		}
		memcpy((char *)out + i * sizeof(double), b, sizeof b);
	}
	for (; i < n; i++) {
		double a, b;
		memcpy(&a, (const char *)in + i * sizeof a, sizeof a);
		memcpy(&b, (const char *)io + i * sizeof b, sizeof b);
		double r = a + b;
		b = MPI_OP_NAN_FIRST(a, r);
		memcpy((char *)out + i * sizeof b, &b, sizeof b);
	}
	return true;
}

/* From here mpi_op.c's loop (built vectorized, AVX2 where the CPU has
 * it; libmpiop.la), which MPI_Reduce_local runs too: past its dispatch
 * (about 18 ns) it adds four to five times as fast as combine_fast. Zen 3
 * guest, in L1, best of 5: 256 B combine_fast 15.0 ns, MPI_Reduce_local
 * 20.8; 512 B 29.9 against 24.1; 2 KiB 143 against 47.5; 4 KiB 291
 * against 87 (this was 4096, when mpi_op.c's loop was scalar: 2 KiB
 * halves made each 2-rank 4 KiB allreduce of the schedules about 0.1 us
 * longer than the model's gamma). */
#define COMBINE_APPLY_MIN 512

/* mpi_op_apply's failure (rc) on n elements as x's error. */
static int op_failed(struct cx *x, int rc, int n)
{
	if (rc == MPI_ERR_NO_MEM)
		return mpi_cx_fail(x, rc, "%s on %s: no memory to give user operation %d its %d elements of datatype %d "
				   "in the type's own layout", x->name, x->c->name, x->op, n, x->dt);
	return mpi_cx_fail(x, rc, "%s on %s: operation %d could not be applied to datatype %d", x->name, x->c->name,
			   x->op, x->dt);
}

/* dst = a OP b, in the schedule's order (a holds the lower ranks' part
 * where the order matters); a is dst, or apart from it (the input, or
 * the received part in scratch: src_first), and b is dst or apart from
 * both. Nonzero (x's error set) when it could not be computed. */
static int combine(struct cx *x, void *dst, const void *a, const void *b, size_t len)
{
	int n = (int)(len / x->esize), rc = MPI_SUCCESS;
	bool commute = mpi_op_commutative(x->op);
	if (commute && (b != dst || !mpi_op_user(x->op))) {
		/* b OP a, the bits the in-place form has always made: from
		 * COMBINE_APPLY_MIN bytes by mpi_op.c's loop, below it by
		 * combine_fast where it can. */
		if (len >= COMBINE_APPLY_MIN || !combine_fast(x, b, a, dst, n))
			rc = mpi_op_apply3(x->op, x->dt, b, a, dst, n);
		return rc ? op_failed(x, rc, n) : MPI_SUCCESS;
	}
	/* a user's op: its function writes its second operand. a OP b in
	 * order, with b dst and a apart (from_input, src_first), is that
	 * call on dst itself */
	if (!commute && b == dst) {
		rc = mpi_op_apply(x->op, x->dt, a, dst, n);
		return rc ? op_failed(x, rc, n) : MPI_SUCCESS;
	}
	/* else a copy of it (either operand may be dst): a OP b, or b OP a
	 * as above, which keeps a commutative op's bits where b is dst (a
	 * pass more than before src_first, on recursive doubling's upper
	 * ranks) */
	const void *in = commute ? b : a, *io = commute ? a : b;
	void *tmp = tmp_get(x->c, len);
	if (!tmp)
		return mpi_cx_fail(x, MPI_ERR_NO_MEM, "%s: no memory to combine %zu bytes", x->name, len);
	nal_copy(tmp, io, len);
	rc = mpi_op_apply(x->op, x->dt, in, tmp, n);
	if (!rc)
		nal_copy(dst, tmp, len);
	tmp_put(x->c, tmp);
	return rc ? op_failed(x, rc, n) : MPI_SUCCESS;
}

/* The engine stops the schedule on a nonzero return (coll_engine_done,
 * coll_engine_start); the error is x's. */
static int cb_reduce(void *ctx, void *dst, const void *a, const void *b, size_t len, enum coll_dtype dt,
		     enum coll_redop op)
{
	(void)dt;
	(void)op;
	return combine(ctx, dst, a, b, len) ? -EIO : 0;
}

/* A schedule's local copy (a ring's or an allgather's own block, a scan's
 * partial, one rank's input into place): nal_move, not the engine's
 * memmove (recursive doubling's lower rank, when it still copied its 32
 * KiB input between two malloc'd buffers, made a 2-rank MPI_Allreduce 16
 * us against 5). */
static void cb_copy(void *ctx, void *dst, const void *src, size_t len)
{
	(void)ctx;
	nal_move(dst, src, len);
}

const struct coll_engine_ops mpi_coll_engine_ops = { cb_send, cb_recv, cb_reduce, cb_copy };

/* The collective failed: the transfers still pending are no longer ours.
 * Each is abandoned first, so nothing lands in our buffers later (a pull
 * answered after the call returned had landed in its scratch, on its
 * stack in allreduce_rd_direct) and nothing is read from them (a peer
 * still in the call may yet get or pull a send's data, which the caller
 * may have changed or freed by then). */
void mpi_cx_drop_rest(struct cx *x)
{
	for (size_t i = 0; i < x->np; i++) {
		struct pend *p = &x->p[i];
		if (p->reported || !p->r)
			continue;
		mpi_req_give_up(p->r);
		p->reported = true;
	}
}

/* The deadline passed: say who did not arrive, and take our receives back. */
int mpi_cx_timed_out(struct cx *x, double waited)
{
	char who[256] = "";
	size_t n = 0;
	int step = x->step;
	if (x->e) {
		const struct coll_cmd *w = coll_engine_waiting(x->e);
		if (w)
			step = (int)w->step;
	}
	for (size_t i = 0; i < x->np; i++) {
		struct pend *p = &x->p[i];
		if (p->reported || !p->recv || (p->r && p->r->done))
			continue;
		bool dup = false;
		for (size_t j = 0; j < i; j++)
			dup |= x->p[j].recv && !x->p[j].reported && x->p[j].peer == p->peer && !(x->p[j].r && x->p[j].r->done);
		if (!dup)
			n += (size_t)snprintf(who + n, n < sizeof who ? sizeof who - n : 0, "%s%d", n ? ", " : "", p->peer);
		if (n >= sizeof who)
			n = sizeof who - 1;
	}
	char stepbuf[32] = "";
	if (step >= 0)
		snprintf(stepbuf, sizeof stepbuf, " at step %d", step);
	mpi_cx_fail(x, MPI_ERR_TIMEOUT,
	     "%s on %s (%d ranks%s%s, call %lu): rank %d gave up after %.1f s (PTL_COLL_TIMEOUT)%s "
	     "waiting for rank(s) %s: their parts did not arrive",
	     x->name, x->c->name, x->c->size, x->algo ? ", algorithm " : "", x->algo ? x->algo : "", x->c->ncoll,
	     x->c->rank, waited, stepbuf, who[0] ? who : "(none: our own sends did not finish)");
	mpi_cx_drop_rest(x);
	return x->err;
}

/* A member died: the collective cannot finish (every member takes part).
 * Say who, and take our receives back. */
int mpi_cx_peer_died(struct cx *x, int w)
{
	char m[200];
	mpi_dead_msg(m, sizeof m, x->c, w);
	mpi_cx_fail(x, MPI_ERR_PROC_FAILED, "%s on %s (%d ranks, call %lu): %s", x->name, x->c->name, x->c->size,
	     x->c->ncoll, m);
	mpi_cx_drop_rest(x);
	return x->err;
}

/* Nothing came for a while: is a rank we wait for dead, or, failing that,
 * any member (a survivor that gave up on a dead one sends us nothing
 * either)? Returns the dead world rank, or -1. */
int mpi_cx_look_for_dead(struct cx *x)
{
	for (size_t i = 0; i < x->np; i++) {
		struct pend *p = &x->p[i];
		if (!p->reported && p->r && !p->r->done)
			mpi_req_check(p->r);
		if (!p->reported && p->r && p->r->done && p->r->dead >= 0)
			return p->r->dead;
	}
	return mpi_comm_dead(x->c, true);
}

int mpi_cx_engine_fail(struct cx *x, int rc, const char *what)
{
	if (x->err)
		return x->err;
	if (rc == -ENOMEM)
		return mpi_cx_fail(x, MPI_ERR_NO_MEM,
				   "%s: cannot post a transfer of the schedule (no memory, or the library's own match "
				   "entries all in use)",
				   x->name);
	return mpi_cx_fail(x, MPI_ERR_INTERN, "%s: %s (%d)", x->name, what, rc);
}

int mpi_cx_pass(struct cx *x, bool *fin, bool *moved)
{
	bool all = true;
	*fin = *moved = false;
	for (size_t i = 0; i < x->np; i++) {
		struct pend *p = &x->p[i];
		if (p->reported)
			continue;
		if (p->r && p->r->lazy)
			mpi_recv_try(p->r);
		if (!p->r || !p->r->done) {
			all = false;
			continue;
		}
		p->reported = true;
		*moved = true;
		int err = p->r->err, dead = p->r->dead;
		mpi_req_drop(p->r);
		if (err && dead >= 0)
			return mpi_cx_peer_died(x, dead);
		if (err && err != MPI_ERR_TRUNCATE) {
			mpi_cx_fail(x, err, "%s on %s: a transfer with rank %d failed", x->name, x->c->name, p->peer);
			mpi_cx_drop_rest(x);
			return x->err;
		}
		x->relisted = false;
		int erc;
		if (x->e && (erc = coll_engine_done(x->e, p->idx))) {
			/* a combination failed (cb_reduce set x's error), a
			 * transfer the completion let go could not be posted, or
			 * the engine */
			mpi_cx_engine_fail(x, erc, "the schedule engine refused a completion");
			mpi_cx_drop_rest(x);
			return x->err;
		}
		if (x->relisted)
			i = (size_t)-1; /* the engine's new transfers moved the list: from the top */
		if (x->e)
			all = false; /* the engine may have posted more: look again */
	}
	if (all && x->e && !coll_engine_finished(x->e))
		return mpi_cx_fail(x, MPI_ERR_INTERN, "%s: the schedule stopped with nothing in flight", x->name);
	*fin = all;
	return MPI_SUCCESS;
}

/* Drives the pending transfers (and the engine, if any) to the end. */
static int drive(struct cx *x)
{
	/* The clock is read only after a wait that saw no event or every
	 * DRIVE_CLOCK_EVERY waits, and the deadline runs from the first read:
	 * a wait that brought events made progress, and reading the clock
	 * around every one cost a tenth of a small allreduce (the one read at
	 * the first wait, which most calls make, was 4% of a 2-rank 8-byte
	 * one). A wait lasts at most 100 ms, so the deadline is late by at
	 * most that (or 64 eventful waits). */
	enum { DRIVE_CLOCK_EVERY = 64 };
	double t0 = 0, deadline = 0;
	unsigned waits = 0;
	bool look = false;
	struct mpi_idle idle = { 0, 0 };
	int dead = mpi_g.ndead ? mpi_comm_dead(x->c, false) : -1;
	if (dead >= 0)
		return mpi_cx_peer_died(x, dead); /* known dead: at once */
	for (;;) {
		bool fin, moved;
		int rc = mpi_cx_pass(x, &fin, &moved);
		if (rc)
			return rc;
		if (fin)
			break;
		/* A completion went to the engine: it may have posted more, or
		 * finished. Look again before waiting for an event - the wait
		 * would otherwise sleep until some unrelated event or its
		 * 100 ms slice ends (105 ms allreduces on a loaded machine). */
		if (moved)
			continue;
		int ms = 100;
		if (mpi_g.coll_timeout > 0 && (look || ++waits % DRIVE_CLOCK_EVERY == 0)) {
			double now = mpi_now();
			if (t0 == 0) {
				t0 = now;
				deadline = now + mpi_g.coll_timeout;
			}
			double left = deadline - now;
			if (left <= 0)
				return mpi_cx_timed_out(x, now - t0);
			if (left < 0.1)
				ms = (int)(left * 1000) + 1;
		}
		bool ready = false;
		for (size_t i = 0; i < x->np && !ready; i++)
			ready = !x->p[i].reported && x->p[i].r && x->p[i].r->done;
		look = !ready && mpi_progress(ms) == 0;
		if (look && mpi_idle_due(&idle, true) && (dead = mpi_cx_look_for_dead(x)) >= 0)
			return mpi_cx_peer_died(x, dead);
	}
	x->np = 0;
	return MPI_SUCCESS;
}

int mpi_cx_wait(struct cx *x)
{
	return drive(x);
}

/* coll_expand_rank, and for an allreduce asked with the input apart
 * whose algorithm combines in place only, the schedule without it: its
 * req.input then tells the caller to copy the input into DATA first.
 * req is left as it was. */
static int expand_rank(struct coll_req *req, int rank, struct coll_sched **s, char *msg, size_t len)
{
	int rc = coll_expand_rank(req, rank, s, msg, len);
	if (rc == -ENOTSUP && req->input) {
		req->input = false;
		rc = coll_expand_rank(req, rank, s, msg, len);
		req->input = true;
	}
	return rc;
}

/* Whether every member of c runs on this host (their Portals ids share
 * one nid): worked out once per communicator and kept in its cache, and
 * worked out each time while there is no cache (out of memory), never
 * guessed: every member must make the same choices from it, and a rank
 * that guessed could run another schedule than its peers and leave them
 * waiting for it. */
static bool one_host(struct mpi_comm *c)
{
	struct mpi_coll_cache *cc = cache_of(c);
	if (cc && cc->host_known)
		return cc->one_host;
	ptl_nid_t nid = mpi_g.ids[c->world[0]].nid;
	bool all = true;
	for (int i = 1; i < c->size; i++)
		all &= mpi_g.ids[c->world[i]].nid == nid;
	if (cc) {
		cc->one_host = all;
		cc->host_known = true;
	}
	return all;
}

/* The algorithm req asks for (the call's pick: a nonblocking call's from
 * when it was made, else its communicator's hints', else PTL_COLL_ALGO's,
 * else COLL_ALGO_AUTO) and what coll_choose weighs besides: the ports,
 * and whether c is on one host. Blocking or not, the same, so the same
 * schedule and bits. */
static void algo_of(const struct cx *x, struct coll_req *req)
{
	struct mpi_comm *c = x->c;
	const struct mpi_coll_pick *p = x->pick ? x->pick : &choice_of(c)->pick;
	req->algo = p->algo[req->op];
	req->ports = p->ports;
	req->one_host = one_host(c);
	req->shared_cores = cores_shared;
}

/* How many sizes a v form's req.counts holds (coll.h): N, an alltoall's
 * whole matrix N*N unless recv_counts gives its column; 0 for the plain
 * forms. */
static size_t counts_len(const struct coll_req *req)
{
	if (!req->counts)
		return 0;
	return req->op == COLL_OP_ALLTOALL && !req->recv_counts ? (size_t)req->nranks * (size_t)req->nranks
								 : (size_t)req->nranks;
}

/* Whether a schedule expanded for prepared a serves prepared b: every
 * field expansion reads, a v form's sizes by value. */
static bool req_same(const struct coll_req *a, const struct coll_req *b)
{
	if (a->op != b->op || a->algo != b->algo || a->ports != b->ports || a->bytes != b->bytes ||
	    a->root != b->root || a->elem_size != b->elem_size || a->nranks != b->nranks || a->input != b->input ||
	    a->one_host != b->one_host || a->shared_cores != b->shared_cores || a->num_chunks != b->num_chunks ||
	    a->participants || b->participants || !a->counts != !b->counts || !a->recv_counts != !b->recv_counts)
		return false;
	size_t nc = counts_len(b), nr = b->recv_counts ? (size_t)b->nranks : 0;
	return (!nc || !memcmp(a->counts, b->counts, nc * sizeof *b->counts)) &&
	       (!nr || !memcmp(a->recv_counts, b->recv_counts, nr * sizeof *b->recv_counts));
}

void mpi_coll_req_prepare(struct cx *x, struct coll_req *req, enum coll_algo force)
{
	algo_of(x, req);
	if (force != COLL_ALGO_AUTO) {
		req->algo = force;
		if (force == COLL_ALGO_OWNER)
			req->ports = 1;
	}
}

/* A copy of req's sizes, which req then points to (NULL for a plain form;
 * *nomem when out of memory). */
static size_t *req_own(struct coll_req *req, bool *nomem)
{
	size_t nc = counts_len(req), nr = req->recv_counts ? (size_t)req->nranks : 0;
	size_t *own = nc ? malloc(sizeof *own * (nc + nr)) : NULL;
	*nomem = nc && !own;
	if (own) {
		memcpy(own, req->counts, sizeof *own * nc);
		if (nr)
			memcpy(own + nc, req->recv_counts, sizeof *own * nr);
		req->counts = own;
		req->recv_counts = nr ? own + nc : NULL;
	}
	return own;
}

int mpi_coll_req_expand(struct cx *x, struct coll_req *req, struct coll_sched **s)
{
	char msg[256];
	int rc = expand_rank(req, x->c->rank, s, msg, sizeof msg);
	if ((rc == -ENOTSUP || rc == -EINVAL) && req->algo != COLL_ALGO_AUTO) {
		/* PTL_COLL_ALGO named an algorithm this operation does not have */
		enum coll_algo asked = req->algo;
		req->algo = COLL_ALGO_AUTO;
		rc = expand_rank(req, x->c->rank, s, msg, sizeof msg);
		req->algo = asked;
	}
	if (rc)
		return mpi_cx_fail(x, rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_INTERN, "%s: no schedule: %s", x->name, msg);
	return MPI_SUCCESS;
}

struct mpi_kept *mpi_kept_get(struct cx *x, struct mpi_kept *k, int n, unsigned long *clock,
			      struct coll_req *req, bool pin, int *rc)
{
	struct mpi_kept *e = NULL;
	*rc = MPI_SUCCESS;
	/* The entry used last first: a loop of one collective finds its
	 * schedule with one comparison of the request instead of one per
	 * entry before it (a barrier's, say, then the bcast's). One that
	 * did not match is not compared again below (calls that alternate
	 * between shapes miss it every time). */
	unsigned long last = (*clock)++;
	int tried = -1;
	for (int i = 0; i < n; i++)
		if (k[i].s && k[i].used == last) {
			if (k[i].rank == x->c->rank && req_same(&k[i].req, req)) {
				k[i].pins += pin;
				k[i].used = *clock;
				return &k[i];
			}
			tried = i;
			break;
		}
	for (int i = 0; i < n; i++) {
		if (i != tried && k[i].s && k[i].rank == x->c->rank && req_same(&k[i].req, req)) {
			k[i].pins += pin;
			k[i].used = *clock;
			return &k[i];
		}
		/* room: an empty one, else the least recently used unpinned */
		if (!k[i].pins && (!e || (e->s && (!k[i].s || k[i].used < e->used))))
			e = &k[i];
	}
	if (!e)
		return NULL;
	struct coll_req r = *req;
	bool nomem;
	size_t *own = req_own(&r, &nomem);
	struct coll_sched *s = NULL;
	if (nomem) {
		*rc = mpi_cx_fail(x, MPI_ERR_NO_MEM, "%s: no memory for the schedule", x->name);
		return NULL;
	}
	if ((*rc = mpi_coll_req_expand(x, &r, &s))) {
		free(own);
		return NULL;
	}
	mpi_kept_free(e, 1);
	*e = (struct mpi_kept){ .req = r, .rank = x->c->rank, .counts = own, .s = s, .pins = pin, .used = *clock };
	return e;
}

int mpi_kept_engine(struct cx *x, struct mpi_kept *e, const struct coll_sched *s, const struct coll_bufs *bufs)
{
	x->e = NULL;
	for (int i = 0; e && !x->e && i < MPI_KEPT_ENGINES; i++) {
		x->e = e->e[i];
		e->e[i] = NULL;
	}
	if (x->e && coll_engine_reset(x->e, bufs, x) == 0)
		return 0;
	coll_engine_free(x->e);
	x->e = NULL;
	struct coll_engine_conf conf = { COLL_INT32, COLL_SUM, 0, mpi_coll_eager_max() };
	return coll_engine_new(s, x->c->rank, bufs, &conf, &mpi_coll_engine_ops, x, &x->e);
}

void mpi_kept_keep(struct mpi_kept *e, struct coll_engine *eng, bool ok)
{
	for (int i = 0; ok && eng && i < MPI_KEPT_ENGINES; i++)
		if (!e->e[i]) {
			e->e[i] = eng;
			return;
		}
	coll_engine_free(eng);
}

void mpi_kept_free(struct mpi_kept *k, int n)
{
	for (int i = 0; i < n; i++) {
		if (k[i].pins)
			continue;
		for (int j = 0; j < MPI_KEPT_ENGINES; j++)
			coll_engine_free(k[i].e[j]);
		coll_free(k[i].s);
		free(k[i].counts);
		k[i] = (struct mpi_kept){ 0 };
	}
}

/* The communicator's kept schedule for req, expanded on first use: a v
 * form's by its sizes too. force, unless COLL_ALGO_AUTO, is the algorithm
 * the call must take whatever the choice says: linear for the v forms of
 * gather and scatter (every rank expands knowing its own size only,
 * coll.h), owner for a non-commutative reduction. A loop of calls of one
 * shape expands once: per call, expanding and freeing a schedule and its
 * engine took 11-14 allocations, half a 64 B MPI_Gather's time. The least
 * recently used entry makes room, so a v form whose sizes change from call
 * to call does not push out the shapes a loop keeps using. Blocking calls
 * do not pin: one runs at a time on a communicator. NULL: x's error set. */
static struct mpi_kept *sched_for(struct cx *x, struct coll_req *req, enum coll_algo force)
{
	struct mpi_comm *c = x->c;
	struct mpi_kept *e = NULL;
	if (cache_of(c)) {
		mpi_coll_req_prepare(x, req, force);
		int rc;
		e = mpi_kept_get(x, c->cache->e, CACHE_SLOTS, &c->cache->clock, req, false, &rc);
	}
	if (!e && !x->err)
		mpi_cx_fail(x, MPI_ERR_NO_MEM, "%s: no memory for the schedule", x->name);
	return e;
}

/* Runs the cached schedule ent over data/input. An allreduce asked with
 * the input apart (ent->req.input) whose algorithm cannot take it starts
 * from the input copied into data. */
static int run_ent(struct cx *x, struct mpi_kept *ent, void *data, const void *input)
{
	const struct coll_req *req = &ent->req;
	struct coll_sched *s = ent->s;
	if (req->input && !s->req.input) {
		nal_copy(data, input, req->bytes);
		input = NULL;
	}
	x->algo = coll_algo_name(s->info.algo);
	struct mpi_coll_cache *cc = x->c->cache;
	if (s->info.scratch_bytes > cc->scratch_cap) {
		void *p = realloc(cc->scratch, s->info.scratch_bytes);
		if (!p)
			return mpi_cx_fail(x, MPI_ERR_NO_MEM, "%s: no memory for %zu bytes of scratch", x->name, s->info.scratch_bytes);
		cc->scratch = p;
		cc->scratch_cap = s->info.scratch_bytes;
	}
	struct coll_bufs bufs = { data, input, cc->scratch };
	/* The engine (its dependency graph) is built once per schedule and
	 * reset for each call; one that failed may have transfers in flight
	 * into the last call's buffers, so it is dropped instead (keep). */
	int rc = mpi_kept_engine(x, ent, s, &bufs);
	if (rc)
		return mpi_cx_fail(x, MPI_ERR_INTERN, "%s: cannot start the schedule (%d)", x->name, rc);
	mpi_coll_pull(x, req->op);
	rc = coll_engine_start(x->e);
	if (rc) { /* x's error if a combination failed (cb_reduce); what it posted goes */
		rc = mpi_cx_engine_fail(x, rc, "posting the schedule failed");
		mpi_cx_drop_rest(x);
	} else {
		rc = drive(x);
	}
	mpi_kept_keep(ent, x->e, rc == MPI_SUCCESS);
	x->e = NULL;
	return rc;
}

/* run_ent for a schedule of this rank alone (a gather's, a v form's),
 * where a rank may have no part: it returns at once. */
static int run_part(struct cx *x, struct mpi_kept *ent, void *data, const void *input)
{
	size_t n;
	coll_rank_cmds(ent->s, x->c->rank, &n);
	return n ? run_ent(x, ent, data, input) : MPI_SUCCESS;
}

/* The schedule for req (cached per communicator), run over data/input. */
static int run_sched(struct cx *x, struct coll_req *req, void *data, const void *input)
{
	req->nranks = x->c->size;
	if (!req->elem_size)
		req->elem_size = 1;
	struct mpi_kept *ent = sched_for(x, req, COLL_ALGO_AUTO);
	return ent ? run_ent(x, ent, data, input) : x->err;
}

/* A direct transfer outside any schedule (Gather, Scan, ...). */
int mpi_cx_send(struct cx *x, const void *buf, int count, MPI_Datatype dt, int peer, int tag)
{
	if (x->stall)
		return add_pend(x, 0, NULL, peer, false) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
	struct mpi_req *r;
	int rc = mpi_isend(buf, count, dt, peer, mpi_coll_tag(x, (uint64_t)tag), x->c, x->c->ctx + 1, MPI_MODE_STD, &r);
	if (rc)
		return mpi_cx_fail(x, rc, "%s: cannot send to rank %d", x->name, peer);
	return add_pend(x, 0, r, peer, false) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
}

int mpi_cx_recv(struct cx *x, void *buf, int count, MPI_Datatype dt, int peer, int tag)
{
	struct mpi_req *r;
	int rc = mpi_irecv(buf, count, dt, peer, mpi_coll_tag(x, (uint64_t)tag), x->c, x->c->ctx + 1, &r);
	if (rc)
		return mpi_cx_fail(x, rc, "%s: cannot receive from rank %d", x->name, peer);
	return add_pend(x, 0, r, peer, true) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
}

/* ---------------------------------------------------------------- helpers */

static int finish(struct cx *x, MPI_Comm comm, int rc)
{
	/* a call that failed before its wait (a transfer it could not post,
	 * no memory) leaves what it posted: taken back here */
	if (rc)
		mpi_cx_drop_rest(x);
	mpi_cx_done(x);
	if (!rc)
		return MPI_SUCCESS;
	return mpi_err(comm, rc, x->name, "%s", x->msg[0] ? x->msg : "failed");
}

int mpi_cx_end(struct cx *x, MPI_Comm comm, int rc)
{
	return finish(x, comm, rc);
}

int mpi_coll_check_buf(MPI_Comm comm, const char *fn, int count, MPI_Datatype dt)
{
	if (count < 0)
		return mpi_err(comm, MPI_ERR_COUNT, fn, "count %d < 0", count);
	if (mpi_dtype_check(dt, count))
		return mpi_err(comm, MPI_ERR_TYPE, fn, "invalid or uncommitted datatype %d", dt);
	return MPI_SUCCESS;
}

/* The contiguous image of (buf, count, dt): buf itself or a packed copy. */
static void *image(struct mpi_comm *c, const void *buf, int count, MPI_Datatype dt, bool fill, bool *tmp)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	size_t len = t->size * (size_t)count;
	if (t->contig) {
		*tmp = false;
		return (char *)buf + t->true_lb;
	}
	*tmp = true;
	void *p = tmp_get(c, len);
	if (p && fill)
		mpi_pack(t, buf, count, p);
	return p;
}

static void image_done(struct mpi_comm *c, void *img, void *buf, int count, MPI_Datatype dt, bool tmp,
		       bool unpack)
{
	if (!tmp)
		return;
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (unpack)
		mpi_unpack(t, buf, count, img, t->size * (size_t)count);
	tmp_put(c, img);
}

/* ---------------------------------------------------------------- barrier, bcast */

static int barrier(struct cx *x)
{
	struct coll_req req = { .op = COLL_OP_BARRIER };
	char dummy[8];
	return run_sched(x, &req, dummy, NULL);
}

int PMPI_Barrier(MPI_Comm comm)
{
	COLL_ENTER_ANY("MPI_Barrier", comm, c);
	if (c->inter)
		return mpi_inter_barrier(c, comm);
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Barrier");
	return finish(&x, comm, c->size > 1 ? barrier(&x) : 0);
}

static int bcast(struct cx *x, void *buf, size_t bytes, int root)
{
	if (x->c->size == 1 || bytes == 0)
		return MPI_SUCCESS;
	struct coll_req req = { .op = COLL_OP_BCAST, .root = root, .bytes = bytes, .elem_size = 1 };
	return run_sched(x, &req, buf, NULL);
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
	COLL_ENTER_ANY("MPI_Bcast", comm, c);
	int rc = mpi_coll_check_buf(comm, "MPI_Bcast", count, dt);
	if (rc)
		return rc;
	if (c->inter)
		return mpi_inter_bcast(c, comm, buf, count, dt, root);
	if (root < 0 || root >= c->size)
		return mpi_err(comm, MPI_ERR_ROOT, "MPI_Bcast", "root %d not in %s (size %d)", root, c->name, c->size);
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Bcast");
	bool tmp;
	void *img = image(c, buf, count, dt, c->rank == root, &tmp);
	if (tmp && !img)
		return mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Bcast", "out of memory");
	rc = bcast(&x, img, mpi_dtype_get(dt)->size * (size_t)count, root);
	image_done(c, img, buf, count, dt, tmp, c->rank != root && !rc);
	return finish(&x, comm, rc);
}

/* ---------------------------------------------------------------- reductions */

/* The last pair of a predefined operation and a predefined datatype that
 * mpi_op_check accepted. Neither can be freed, so the answer for the pair
 * never changes; a program reduces the same kind over and over, and the
 * check was a twentieth of a 2-rank 8-byte allreduce's instructions. */
static MPI_Op ok_op = -1;          /* (no pair yet: no handle is -1) */
static MPI_Datatype ok_dt = -1;
/* ok_dt's type (a predefined one is never freed) and whether ok_op
 * commutes: MPI_Allreduce asks neither again for the pair. */
static struct mpi_dtype *ok_t;
static bool ok_commute;

int mpi_coll_check_op(MPI_Comm comm, const char *fn, MPI_Op op, MPI_Datatype dt)
{
	if (op == ok_op && dt == ok_dt)
		return MPI_SUCCESS;
	/* MPI-3.1 11.3.4: these two are the one-sided accumulates' only */
	if (op == MPI_REPLACE || op == MPI_NO_OP)
		return mpi_err(comm, MPI_ERR_OP, fn, "%s is for one-sided accumulates, not collective reductions",
			       op == MPI_REPLACE ? "MPI_REPLACE" : "MPI_NO_OP");
	int rc = mpi_op_check(op, dt);
	if (rc)
		return mpi_op_refused(comm, fn, op, dt, rc);
	if (op < MPI_REPLACE && dt < PTL_MPI_NUM_PREDEFINED && (ok_t = mpi_dtype_get(dt))) {
		ok_op = op;
		ok_dt = dt;
		ok_commute = mpi_op_commutative(op);
	}
	return MPI_SUCCESS;
}

/* sendbuf the very buffer recvbuf is (not MPI_IN_PLACE, which says so),
 * where either holds data: erroneous (MPI-3.1 2.6.5), the one buffer read
 * and written at once. */
int mpi_coll_aliased(MPI_Comm comm, const char *fn, const void *sendbuf, const void *recvbuf, bool data)
{
	if (sendbuf != recvbuf || !data)
		return MPI_SUCCESS;
	return mpi_err(comm, MPI_ERR_BUFFER, fn, "sendbuf is recvbuf (MPI_IN_PLACE is how to give one buffer)");
}

/* Reduce the contiguous image data (count elements) to root; data is
 * overwritten on every rank (the schedule reduces in place). With input
 * (not NULL) data's starting bytes are there instead, read where they
 * are (coll_req.input). */
static int reduce_img(struct cx *x, void *data, const void *input, int count, MPI_Datatype dt, MPI_Op op, int root)
{
	if (x->c->size == 1 || count == 0)
		return MPI_SUCCESS;
	x->op = op;
	x->dt = dt;
	x->esize = mpi_dtype_get(dt)->size;
	size_t bytes = x->esize * (size_t)count;
	bool commute = mpi_op_commutative(op);
	int sroot = commute ? root : 0;
	struct coll_req req = { .op = COLL_OP_REDUCE, .root = sroot, .bytes = bytes, .elem_size = x->esize,
				.input = input != NULL, .nranks = x->c->size };
	int rc;
	if (!commute) {
		/* The owner form adds parts in rank order at rank 0 (cached as
		 * every other schedule). */
		struct mpi_kept *ent = sched_for(x, &req, COLL_ALGO_OWNER);
		if (!ent)
			return x->err;
		rc = run_ent(x, ent, data, input);
		if (!rc && root != 0) {
			int n;
			MPI_Datatype bt;
			rc = mpi_bytes(bytes, &n, &bt);
			if (!rc && x->c->rank == 0)
				rc = mpi_cx_send(x, data, n, bt, root, 1);
			else if (!rc && x->c->rank == root)
				rc = mpi_cx_recv(x, data, n, bt, 0, 1);
			mpi_bytes_free(&bt);
			if (!rc)
				rc = drive(x);
		}
		return rc;
	}
	return run_sched(x, &req, data, input);
}

/* Vectors up to this size on 2^k ranks: recursive doubling posted here
 * directly, without a schedule or engine, reading the input where the
 * caller left it (no copy into recvbuf first). Each round is one send and
 * one receive, then the schedule's combination (coll_ard.c): f(in = the
 * upper half's partial, inout = the lower half's), so both partners and
 * every run get the same bits, also for a commutative user function that
 * is not exactly symmetric. What is left out (the schedule cache lookup,
 * the engine's reset, queue and completion reports) was about a fifth of a
 * 2-rank 8-byte allreduce; against the schedule, best of 7 interleaved
 * 2-rank runs: 512 B 0.49-0.52 vs 0.74-0.75 us, 4 KiB 1.45 vs 1.55.
 *
 * Up to the ACK-free limit (the eager limit, kept within 1 - 8 KiB and
 * the NAL's inline size) a round goes as a short MPI_Sendrecv does: a
 * receive, then the send with no request (mpi_send_bytes: inline, done
 * when the call returns); the wait is mpi_wait_req's, which hands the
 * arrival straight to the receive instead of listing it as unexpected
 * for the receive to find (wait_recv). The request, the slot copy, the
 * listing and drive()'s passes made a 2-rank 8-byte allreduce cost two
 * half round trips (0.39 us against 0.24 for the ping-pong; 0.27-0.29
 * without them, best of interleaved runs; 0.20-0.21 since the receive
 * comes first, below). A larger round whose send went inline waits for
 * its receive (an ME) the same way; a send short of credits or too large
 * to go inline waits in drive(). Both waits have the deadline and the
 * dead-peer checks. */
#define RD_DIRECT_MAX 4096
/* Receives up to this size post no ME (mpi_irecv_lazy): up to the MPI
 * layer's ACK-free limit a message lands in its reserve buffers anyway and
 * the copy out is cheaper than an ME's four calls (512 B: 0.52 vs 0.62 us).
 * It was 1 KiB while a lazily received 4 KiB message cost 2.4 us against
 * 1.45 with an ME; since wait_recv hands an arrival straight to the lazy
 * receive, 2-rank allreduce, 6 interleaved launches in the near host
 * state: 2 KiB 0.38-0.41 -> 0.32-0.34 us, 4 KiB 0.58-0.61 -> 0.53-0.56,
 * 1 KiB unchanged. */
#define RD_DIRECT_LAZY_MAX 4096

/* Waits for receive r, a round's one transfer (its send went inline,
 * done when it returned), through mpi_wait_req, which hands an arrival
 * straight to a lazy one (no listing as unexpected and finding it again),
 * and takes its outcome as mpi_cx_pass would, without x's transfer list:
 * listing it, drive()'s pass over the list and its report were about 300
 * instructions of a 2-rank 8-byte allreduce. Listed only to say whom we
 * waited for when the deadline passed. */
__attribute__((always_inline)) static inline int wait_recv(struct cx *x, struct mpi_req *r, int peer)
{
	if (!r->done && mpi_wait_req(r, mpi_g.coll_timeout) == MPI_ERR_TIMEOUT) {
		add_pend(x, 0, r, peer, true); /* (where it fails it gave r back) */
		return mpi_cx_timed_out(x, mpi_g.coll_timeout);
	}
	int err = r->err, dead = r->dead;
	mpi_req_drop(r);
	if (err && dead >= 0)
		return mpi_cx_peer_died(x, dead);
	if (err && err != MPI_ERR_TRUNCATE)
		return mpi_cx_fail(x, err, "%s on %s: a transfer with rank %d failed", x->name, x->c->name, peer);
	return MPI_SUCCESS;
}

/* in: this rank's input (sendbuf's image, or data itself for MPI_IN_PLACE);
 * data: where the result goes; len bytes, count elements of x->dt. */
static int allreduce_rd_direct(struct cx *x, const void *in, void *data, size_t len, int count)
{
	unsigned char scratch[RD_DIRECT_MAX];
	struct mpi_comm *c = x->c;
	const void *cur = in; /* our partial: the input until round 0 has combined */
	x->algo = "recursive_doubling";
	for (int mask = 1, round = 0; mask < c->size; mask <<= 1, round++) {
		int peer = c->rank ^ mask, rc = MPI_SUCCESS;
		bool upper = (c->rank & mask) != 0;
		/* Where the partner's part lands: straight into data while data
		 * is not what we send (the upper rank, round 0 out of place),
		 * else into scratch, from where the combination reads it (a
		 * user's op on the upper rank then copies its sum back). */
		void *land = upper && cur != data ? data : scratch;
		struct mpi_req *sr = NULL, *r;
		x->step = round;
		/* The receive first, then the send. A larger receive posts an
		 * ME, which must be up before the peer's message comes, else
		 * the message is unexpected and copied again (4 KiB: 2.6 us
		 * against 1.45). A lazy one posts nothing, and its send went
		 * first until the request made after it measured slower: 2
		 * ranks, 8 interleaved launches each way, near host state,
		 * 8 B 0.265 -> 0.207 us, 128 B 0.319 -> 0.275, 1 KiB 0.402 ->
		 * 0.353, 4 KiB 0.760 -> 0.726. Not in the request itself
		 * (about 10 ns either side of the send, rdtsc marks at 8 B):
		 * the partner's record was seen about 15 ns later after its
		 * store, and delivered about 10 ns later once seen. */
		bool lazy = len <= RD_DIRECT_LAZY_MAX;
		rc = lazy ? mpi_irecv_lazy(land, len, peer, mpi_coll_tag(x, round), c, c->ctx + 1, &r)
			  : mpi_irecv(land, (int)len, MPI_BYTE, peer, mpi_coll_tag(x, round), c, c->ctx + 1, &r);
		if (rc)
			return mpi_cx_fail(x, rc, "%s: cannot receive from rank %d", x->name, peer);
		bool sent = !x->stall && mpi_send_bytes(cur, len, peer, mpi_coll_tag(x, round), c, c->ctx + 1);
		if (sent) {
			rc = wait_recv(x, r, peer);
		} else {
			rc = add_pend(x, 0, r, peer, true); /* (where it fails it gave r back) */
			if (!rc && x->stall)
				rc = add_pend(x, 0, NULL, peer, false);
			else if (!rc && (rc = mpi_isend(cur, (int)len, MPI_BYTE, peer, mpi_coll_tag(x, round), c,
							c->ctx + 1, MPI_MODE_STD, &sr)))
				rc = mpi_cx_fail(x, rc, "%s: cannot send to rank %d", x->name, peer);
			/* A send of data must be done before the combination
			 * overwrites it; one of the input (never written) is
			 * waited for after it, so a send that waits for its ACK
			 * (above 1024 B) overlaps the combination. */
			if (!rc && sr && cur == data) {
				rc = add_pend(x, 0, sr, peer, false); /* (where it fails it gave sr back) */
				sr = NULL;
			}
			if (!rc)
				rc = drive(x);
		}
		if (rc) {
			if (sr)
				mpi_req_give_up(sr);
			/* its receive may land on this frame (scratch): taken back
			 * before it goes */
			mpi_cx_drop_rest(x);
			return x->err ? x->err : mpi_cx_fail(x, MPI_ERR_NO_MEM, "%s: out of memory", x->name);
		}
		/* combine_fast below COMBINE_APPLY_MIN, as combine(): faster there */
		bool fast = len < COMBINE_APPLY_MIN;
		if (upper && fast && combine_fast(x, cur, land, data, count)) {
			/* data = ours OP the lower partner's, done */
		} else if (upper && land != data && !mpi_op_user(x->op)) {
			/* the same in one pass (cur is data here): a copy back
			 * from scratch was a pass of its own */
			rc = mpi_op_apply3(x->op, x->dt, cur, land, data, count);
		} else if (upper) {
			rc = mpi_op_apply(x->op, x->dt, cur, land, count);
			if (!rc && land != data)
				nal_copy(data, land, len);
		} else if (fast && combine_fast(x, scratch, cur, data, count)) {
			/* data = the upper partner's OP ours, done */
		} else if (cur != data) {
			/* the same in one pass, ours read where it is: copied
			 * into data first, it was a pass of its own on the
			 * lower rank alone, whose call then ended last */
			rc = mpi_op_apply3(x->op, x->dt, scratch, cur, data, count);
		} else {
			rc = mpi_op_apply(x->op, x->dt, scratch, data, count);
		}
		if (rc) {
			if (sr)
				mpi_req_give_up(sr);
			return op_failed(x, rc, count);
		}
		if (sr) {
			if ((rc = add_pend(x, 0, sr, peer, false)))
				return mpi_cx_fail(x, MPI_ERR_NO_MEM, "%s: out of memory", x->name);
			if ((rc = drive(x)))
				return rc;
		}
		cur = data;
	}
	return MPI_SUCCESS;
}

/* Up to this many ranks and this size, on a host with more ranks than
 * cores, an allreduce that would take allreduce_rd_direct exchanges every
 * input with every rank instead (allreduce_xall). Its extra CPU tells
 * above a few cache lines: 4 ranks on 2 cores, 512 B, 9 interleaved runs
 * at load 6, median [best] 22.7 [12.5] us against recursive doubling's
 * 17.0 [11.8] (an earlier 7 at load 5: 9.85 [5.00] against 10.6 [5.01]). */
#define XALL_MAX_RANKS 4
#define XALL_MAX 128

/* Every rank sends its input to every other (inline, request-free, as a
 * direct round's send), receives theirs, and combines all of them itself in
 * recursive doubling's order: at each mask m the block of ranks [b, b + 2m)
 * takes f(in = [b + m, b + 2m)'s partial, inout = [b, b + m)'s), which is
 * what allreduce_rd_direct and the schedule compute, so the same bits on
 * every rank and in every run, blocking or not. With ranks taking turns on
 * the cores, each round of recursive doubling is a wait that hands the core
 * to a rank whose turn it may not be: one round instead of log2(n) is fewer
 * switches (4 ranks on 2 cores, 7 interleaved runs at load 5, median
 * [best], us: 8 B 6.46 [5.42] against 7.41 [5.40], 64 B 5.93 [4.61]
 * against 7.61 [4.72]; context switches per call 2.7-3.0 against 3.9-4.0
 * in the quietest runs; 11 runs at load 5-12: 8 B 26.9 [17.3] against
 * 34.3 [13.8], 64 B 24.2 [12.8] against 36.8 [13.3]). It costs CPU: three
 * sends and receives instead of two, about 5400 instructions a rank and
 * call outside the waits against 3460 (callgrind), so it is for shared
 * cores only. Receives posted as MEs first instead of lazy ones: about
 * the same instructions, nothing measurable at load 16-23. */
static int allreduce_xall(struct cx *x, const void *in, void *data, size_t len, int count)
{
	unsigned char scratch[XALL_MAX_RANKS * XALL_MAX];
	struct mpi_comm *c = x->c;
	int n = c->size, me = c->rank, tag = mpi_coll_tag(x, 0), rc = MPI_SUCCESS;
	x->algo = "exchange_all"; /* recursive doubling's combinations, one exchange */
	x->step = 0;
	/* Rank j's vector, then the partial of the block it heads: scratch,
	 * but rank 0's in data (where the final partial belongs) unless data
	 * is what we send (MPI_IN_PLACE): nothing lands in a buffer a send
	 * that did not go inline may still read. */
	bool direct0 = in != data;
#define XALL_SLOT(j) ((j) == 0 && direct0 ? data : (void *)(scratch + (size_t)(j) * len))
	for (int k = 1; k < n && !rc; k++) {
		int peer = me ^ k;
		struct mpi_req *sr;
		if (x->stall) {
			rc = add_pend(x, 0, NULL, peer, false);
		} else if (!mpi_send_bytes(in, len, peer, tag, c, c->ctx + 1)) {
			rc = mpi_isend(in, (int)len, MPI_BYTE, peer, tag, c, c->ctx + 1, MPI_MODE_STD, &sr);
			if (rc)
				return mpi_cx_fail(x, rc, "%s: cannot send to rank %d", x->name, peer);
			rc = add_pend(x, 0, sr, peer, false);
		}
	}
	if (rc)
		return mpi_cx_fail(x, MPI_ERR_NO_MEM, "%s: out of memory", x->name);
	nal_copy(XALL_SLOT(me), in, len);
	for (int k = 1; k < n; k++) {
		int peer = me ^ k;
		struct mpi_req *r;
		rc = mpi_irecv_lazy(XALL_SLOT(peer), len, peer, tag, c, c->ctx + 1, &r);
		if (rc)
			return mpi_cx_fail(x, rc, "%s: cannot receive from rank %d", x->name, peer);
		if ((rc = wait_recv(x, r, peer)))
			return rc;
	}
	if (x->np && (rc = drive(x))) /* sends that did not go inline */
		return rc;
	for (int m = 1; m < n; m <<= 1)
		for (int b = 0; b < n; b += 2 * m)
			if (!combine_fast(x, XALL_SLOT(b + m), XALL_SLOT(b), XALL_SLOT(b), count) &&
			    (rc = mpi_op_apply(x->op, x->dt, XALL_SLOT(b + m), XALL_SLOT(b), count)))
				return op_failed(x, rc, count);
	if (!direct0)
		nal_copy(data, XALL_SLOT(0), len);
#undef XALL_SLOT
	return MPI_SUCCESS;
}

/* allreduce_rd_direct, or on shared cores allreduce_xall where it fits; c
 * is on one host then (every member sees the same answer). Inline, as
 * wait_recv: both were frames on a small allreduce's path from the
 * arrival to the next call's send (2-rank 8 B, callgrind: 861 -> 831
 * instructions of libptlmpi per call). */
__attribute__((always_inline)) static inline int allreduce_direct(struct cx *x, const void *in, void *data,
								  size_t len, int count)
{
	struct mpi_comm *c = x->c;
	if (cores_shared && xall_algo(c) && c->size > 2 && c->size <= XALL_MAX_RANKS && len <= XALL_MAX && one_host(c))
		return allreduce_xall(x, in, data, len, count);
	return allreduce_rd_direct(x, in, data, len, count);
}

/* Whether an allreduce of bytes with an op that commutes or not takes
 * allreduce_rd_direct. */
static bool rd_direct_ok(const struct mpi_comm *c, size_t bytes, bool commute)
{
	return bytes <= RD_DIRECT_MAX && c->size > 1 && (c->size & (c->size - 1)) == 0 && rd_direct_algo(c) && commute;
}

static int allreduce_img(struct cx *x, void *data, int count, MPI_Datatype dt, MPI_Op op)
{
	if (x->c->size == 1 || count == 0)
		return MPI_SUCCESS;
	if (!mpi_op_commutative(op)) {
		int rc = reduce_img(x, data, NULL, count, dt, op, 0);
		return rc ? rc : bcast(x, data, mpi_dtype_get(dt)->size * (size_t)count, 0);
	}
	x->op = op;
	x->dt = dt;
	x->esize = mpi_dtype_get(dt)->size;
	size_t bytes = x->esize * (size_t)count;
	if (rd_direct_ok(x->c, bytes, true))
		return allreduce_direct(x, data, data, bytes, count);
	struct coll_req req = { .op = COLL_OP_ALLREDUCE, .bytes = bytes, .elem_size = x->esize };
	return run_sched(x, &req, data, NULL);
}

/* The working copy of a reduction's input: recvbuf's image (filled from
 * sendbuf unless MPI_IN_PLACE), or a temporary. */
static void *reduce_input(struct mpi_comm *c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
			  bool use_recv, bool *tmp)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	size_t len = t->size * (size_t)count;
	if (use_recv && t->contig) {
		*tmp = false;
		void *img = (char *)recvbuf + t->true_lb;
		if (sendbuf != MPI_IN_PLACE)
			mpi_pack(t, sendbuf, count, img);
		return img;
	}
	*tmp = true;
	void *p = tmp_get(c, len);
	if (p)
		mpi_pack(t, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, p);
	return p;
}

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm)
{
	COLL_ENTER_ANY("MPI_Reduce", comm, c);
	int rc = mpi_coll_check_buf(comm, "MPI_Reduce", count, dt);
	if (!rc)
		rc = mpi_coll_check_op(comm, "MPI_Reduce", op, dt);
	if (rc)
		return rc;
	if (c->inter)
		return mpi_inter_reduce(c, comm, sendbuf, recvbuf, count, dt, op, root);
	if (root < 0 || root >= c->size)
		return mpi_err(comm, MPI_ERR_ROOT, "MPI_Reduce", "root %d not in %s (size %d)", root, c->name, c->size);
	bool tmp;
	bool at_root = c->rank == root;
	if (!at_root && sendbuf == MPI_IN_PLACE)
		return mpi_err(comm, MPI_ERR_BUFFER, "MPI_Reduce", "MPI_IN_PLACE at rank %d: only the root (%d) may give it",
			       c->rank, root);
	if (at_root && (rc = mpi_coll_aliased(comm, "MPI_Reduce", sendbuf, recvbuf, count > 0)))
		return rc;
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Reduce");
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (mpi_coll_input_apart(t, sendbuf, count, c)) {
		/* The schedule reads sendbuf where it is (a leaf sends it, a
		 * rank's first add combines from it): the root's result goes
		 * straight into recvbuf, a partial sum elsewhere into a
		 * temporary, and nothing copies the input first. */
		void *data = at_root ? (char *)recvbuf + t->true_lb : tmp_get(c, t->size * (size_t)count);
		if (!data)
			return mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Reduce", "out of memory");
		rc = reduce_img(&x, data, (const char *)sendbuf + t->true_lb, count, dt, op, root);
		if (!at_root)
			tmp_put(c, data);
		return finish(&x, comm, rc);
	}
	void *img = reduce_input(c, sendbuf, recvbuf, count, dt, at_root, &tmp);
	if (tmp && !img)
		return mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Reduce", "out of memory");
	rc = reduce_img(&x, img, NULL, count, dt, op, root);
	if (tmp) {
		if (at_root && !rc)
			mpi_unpack(mpi_dtype_get(dt), recvbuf, count, img, mpi_dtype_get(dt)->size * (size_t)count);
		tmp_put(c, img);
	}
	return finish(&x, comm, rc);
}

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	COLL_ENTER_ANY("MPI_Allreduce", comm, c);
	/* The pair checked last (a program reduces the same kind again and
	 * again): its type and whether it commutes are known. Else
	 * mpi_coll_check_buf's test, asked here: its call and second lookup
	 * of the type only when it fails, to report it. */
	struct mpi_dtype *t;
	bool commute;
	int rc = MPI_SUCCESS;
	if (op == ok_op && dt == ok_dt && count >= 0) {
		t = ok_t;
		commute = ok_commute;
	} else {
		t = mpi_dtype_get(dt);
		rc = count >= 0 && t && t->committed ? MPI_SUCCESS : mpi_coll_check_buf(comm, "MPI_Allreduce", count, dt);
		if (!rc)
			rc = mpi_coll_check_op(comm, "MPI_Allreduce", op, dt);
		if (rc)
			return rc;
		commute = mpi_op_commutative(op);
	}
	if ((rc = mpi_coll_aliased(comm, "MPI_Allreduce", sendbuf, recvbuf, count > 0)))
		return rc;
	if (c->inter)
		return mpi_inter_allreduce(c, comm, sendbuf, recvbuf, count, dt, op);
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Allreduce");
	size_t bytes = t->size * (size_t)count;
	if (t->contig && count > 0 && rd_direct_ok(c, bytes, commute)) {
		/* Short vectors: the rounds read sendbuf itself, no copy first. */
		void *data = (char *)recvbuf + t->true_lb;
		x.op = op;
		x.dt = dt;
		x.esize = t->size;
		rc = allreduce_direct(&x, sendbuf == MPI_IN_PLACE ? data : (const char *)sendbuf + t->true_lb, data,
					 bytes, count);
		return finish(&x, comm, rc);
	}
	if (commute && mpi_coll_input_apart(t, sendbuf, count, c)) {
		/* The schedule reads sendbuf where it is (the rings' first
		 * sends and reductions), no copy into recvbuf first. */
		x.op = op;
		x.dt = dt;
		x.esize = t->size;
		struct coll_req req = { .op = COLL_OP_ALLREDUCE, .bytes = bytes, .elem_size = t->size, .input = true };
		rc = run_sched(&x, &req, (char *)recvbuf + t->true_lb, (const char *)sendbuf + t->true_lb);
		return finish(&x, comm, rc);
	}
	bool tmp;
	void *img = reduce_input(c, sendbuf, recvbuf, count, dt, true, &tmp);
	if (tmp && !img)
		return mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Allreduce", "out of memory");
	rc = allreduce_img(&x, img, count, dt, op);
	image_done(c, img, recvbuf, count, dt, tmp, !rc);
	return finish(&x, comm, rc);
}

int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype dt, MPI_Op op,
			      MPI_Comm comm)
{
	COLL_ENTER_ANY("MPI_Reduce_scatter_block", comm, c);
	int rc = mpi_coll_check_buf(comm, "MPI_Reduce_scatter_block", recvcount, dt);
	if (!rc)
		rc = mpi_coll_check_op(comm, "MPI_Reduce_scatter_block", op, dt);
	if (!rc)
		rc = mpi_coll_aliased(comm, "MPI_Reduce_scatter_block", sendbuf, recvbuf, recvcount > 0);
	if (rc)
		return rc;
	if (c->inter)
		return mpi_inter_reduce_scatter(c, comm, "MPI_Reduce_scatter_block", sendbuf, recvbuf, NULL, recvcount, dt,
						op);
	struct mpi_dtype *t = mpi_dtype_get(dt);
	int n = c->size;
	size_t blk = t->size * (size_t)recvcount;
	char *data = tmp_get(c, blk * (size_t)n);
	if (!data)
		return mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Reduce_scatter_block", "out of memory");
	/* A contiguous sendbuf is read where it is by the ring's first sends
	 * and reductions (coll_req.input): DATA only holds the partial sums,
	 * nothing packs the whole input into it first. */
	bool apart = mpi_op_commutative(op) && mpi_coll_input_apart(t, sendbuf, recvcount, c);
	if (!apart)
		mpi_pack(t, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvcount * n, data);
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Reduce_scatter_block");
	if (n > 1 && recvcount > 0) {
		if (mpi_op_commutative(op)) {
			x.op = op;
			x.dt = dt;
			x.esize = t->size;
			struct coll_req req = { .op = COLL_OP_REDUCE_SCATTER, .bytes = blk * (size_t)n, .elem_size = t->size,
						.input = apart };
			rc = run_sched(&x, &req, data, apart ? (const char *)sendbuf + t->true_lb : NULL);
		} else {
			rc = allreduce_img(&x, data, recvcount * n, dt, op);
		}
	}
	if (!rc) {
		size_t off = blk * (size_t)c->rank, len = blk;
		if (n > 1 && recvcount > 0 && mpi_op_commutative(op))
			coll_block(blk * (size_t)n, t->size, (size_t)n, (size_t)c->rank, &off, &len);
		mpi_unpack(t, recvbuf, recvcount, data + off, len);
	}
	tmp_put(c, data);
	return finish(&x, comm, rc);
}

/* The v forms' sizes in bytes (N of them, Alltoallv's 2N): in the caller's
 * STACK_COUNTS when they fit, so a call of up to 32 ranks' sizes
 * allocates nothing; else malloc'd. counts_done gives them back. */
#define STACK_COUNTS 64
static size_t *counts_get(size_t *stack, size_t k)
{
	return k <= STACK_COUNTS ? stack : malloc(sizeof *stack * k);
}

static void counts_done(size_t *p, const size_t *stack)
{
	if (p != stack)
		free(p);
}

static int v_run(struct cx *x, struct coll_req *req, void *data, const void *input);

/* A short vector on a power-of-two group goes as the allreduce's recursive
 * doubling, which needs no engine: the schedule with counts is expanded at
 * every call (2 ranks pinned, 16 B in all: 0.29 us against 0.96; 256 B
 * 0.36 against 1.67; at 32 KiB the schedule 9.8 against 13.9). Both forms
 * ask this, so blocking and not they give the same bits. */
bool mpi_rs_as_allreduce(const struct mpi_comm *c, size_t total)
{
	return total <= RD_DIRECT_MAX && (c->size & (c->size - 1)) == 0;
}

/* A commutative op: the reduce-scatter schedule with each rank's block of
 * its own size (coll_req.counts), reading a contiguous sendbuf where it is
 * as MPI_Reduce_scatter_block does; each rank moves about the vector once,
 * not the allreduce's twice. Otherwise, or short (mpi_rs_as_allreduce), the
 * vector allreduced, this rank's part kept. */
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype dt, MPI_Op op,
			MPI_Comm comm)
{
	static const char fn[] = "MPI_Reduce_scatter";
	COLL_ENTER_ANY(fn, comm, c);
	int rc = mpi_coll_check_buf(comm, fn, 0, dt);
	if (!rc)
		rc = mpi_coll_check_op(comm, fn, op, dt);
	if (rc)
		return rc;
	if (c->inter)
		return mpi_inter_reduce_scatter(c, comm, fn, sendbuf, recvbuf, recvcounts, 0, dt, op);
	struct mpi_dtype *t = mpi_dtype_get(dt);
	int n = c->size, me = c->rank;
	size_t total, mine = 0, stack[STACK_COUNTS], *counts = NULL;
	if ((rc = mpi_coll_v_bytes(comm, fn, "recvcounts", recvcounts, n, t->size, NULL, &total)) ||
	    (rc = mpi_coll_aliased(comm, fn, sendbuf, recvbuf, total > 0)))
		return rc;
	for (int j = 0; j < me; j++)
		mine += t->size * (size_t)recvcounts[j];
	long elems = t->size ? (long)(total / t->size) : 0;
	bool sched = n > 1 && total && mpi_op_commutative(op) && !mpi_rs_as_allreduce(c, total);
	bool apart = sched && mpi_coll_input_apart(t, sendbuf, elems > 0, c);
	/* the counts in bytes only for the schedule */
	if (sched && (counts = counts_get(stack, (size_t)n)))
		mpi_coll_v_bytes(comm, fn, "recvcounts", recvcounts, n, t->size, counts, &total);
	char *data = sched && !counts ? NULL : tmp_get(c, total);
	if (!data) {
		counts_done(counts, stack);
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	if (!apart)
		mpi_pack(t, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, (int)elems, data);
	struct cx x;
	mpi_cx_init(&x, c, fn);
	if (sched) {
		x.op = op;
		x.dt = dt;
		x.esize = t->size;
		struct coll_req req = { .op = COLL_OP_REDUCE_SCATTER, .nranks = n, .bytes = total, .counts = counts,
					.elem_size = t->size, .input = apart };
		rc = v_run(&x, &req, data, apart ? (const char *)sendbuf + t->true_lb : NULL);
	} else if (n > 1 && total) {
		rc = allreduce_img(&x, data, (int)elems, dt, op);
	}
	if (!rc)
		mpi_unpack(t, recvbuf, recvcounts[me], data + mine, t->size * (size_t)recvcounts[me]);
	tmp_put(c, data);
	counts_done(counts, stack);
	return finish(&x, comm, rc);
}

/* Scan/Exscan: a collectives/ prefix schedule (recursive doubling or the
 * chain), whose combinations go (lower ranks) OP (higher ranks) in an order
 * fixed by ranks: the same bits every run, and a non-commutative op is
 * right. Exscan's DATA is [input | result]; rank 0's recvbuf is untouched. */
static int scan(const char *fn, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
		MPI_Comm comm, bool ex)
{
	COLL_ENTER(fn, comm, c);
	int rc = mpi_coll_check_buf(comm, fn, count, dt);
	if (!rc)
		rc = mpi_coll_check_op(comm, fn, op, dt);
	if (!rc)
		rc = mpi_coll_aliased(comm, fn, sendbuf, recvbuf, count > 0);
	if (rc)
		return rc;
	struct mpi_dtype *t = mpi_dtype_get(dt);
	size_t len = t->size * (size_t)count;
	const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
	bool tmp = ex || !t->contig;
	char *data = tmp ? tmp_get(c, (ex ? 2 : 1) * len) : (char *)recvbuf + t->true_lb;
	if (tmp && !data)
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	if (tmp || sendbuf != MPI_IN_PLACE)
		mpi_pack(t, in, count, data);
	struct cx x;
	mpi_cx_init(&x, c, fn);
	x.op = op;
	x.dt = dt;
	x.esize = t->size ? t->size : 1;
	if (c->size > 1 && len) {
		struct coll_req req = { .op = ex ? COLL_OP_EXSCAN : COLL_OP_SCAN, .bytes = len,
					.elem_size = x.esize };
		rc = run_sched(&x, &req, data, NULL);
	}
	if (!rc && tmp && !(ex && c->rank == 0))
		mpi_unpack(t, recvbuf, count, data + (ex ? len : 0), len);
	if (tmp)
		tmp_put(c, data);
	return finish(&x, comm, rc);
}

int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	return scan("MPI_Scan", sendbuf, recvbuf, count, dt, op, comm, false);
}

int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	return scan("MPI_Exscan", sendbuf, recvbuf, count, dt, op, comm, true);
}

/* ---------------------------------------------------------------- gathers and scatters
 * Gather(v) and Scatter(v) run a collectives/ gather or scatter schedule of
 * this rank alone, the communicator's cached one (the v-variants' by their
 * block sizes), looked up before the call lays DATA out: the rank must
 * know how much of DATA its subtree needs (coll_data_span). DATA holds
 * the blocks in relative-rank order (rank - root), starting at this rank's
 * own (coll.h). The v-variants use the linear form: their counts are
 * significant at the root only, and a linear rank needs its own size alone;
 * Gather/Scatter take coll_choose's (linear on one host of up to 8 ranks,
 * else binomial) or PTL_COLL_ALGO's. */

struct gs_call {
	bool gather;
	bool v;                  /* Gatherv/Scatterv: the arrays are the root's only */
	const void *sbuf;        /* gather: every rank's; scatter: the root's */
	int scount;
	const int *scounts, *sdispls; /* scatterv at the root */
	MPI_Datatype stype;
	void *rbuf;              /* scatter: every rank's; gather: the root's */
	int rcount;
	const int *rcounts, *rdispls; /* gatherv at the root */
	MPI_Datatype rtype;
	int root;
};

/* the root's side: count and displacement of rank j's block */
static int gs_count(const struct gs_call *g, int j)
{
	return g->gather ? (g->rcounts ? g->rcounts[j] : g->rcount) : (g->scounts ? g->scounts[j] : g->scount);
}

static MPI_Aint gs_displ(const struct gs_call *g, int j)
{
	const int *d = g->gather ? g->rdispls : g->sdispls;
	return d ? d[j] : (MPI_Aint)j * gs_count(g, j);
}

static bool gs_in_place(const struct gs_call *g)
{
	return g->gather ? g->sbuf == MPI_IN_PLACE : g->rbuf == MPI_IN_PLACE;
}

/* The root's buffer can be DATA itself when its type is contiguous and every
 * block already sits where the relative-order layout puts it. */
static bool gs_root_direct(const struct gs_call *g, int n, size_t esz)
{
	MPI_Datatype dt = g->gather ? g->rtype : g->stype;
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t->contig)
		return false;
	size_t off = 0;
	for (int u = 0; u < n; u++) {
		int j = (u + g->root) % n;
		if (gs_displ(g, j) * t->extent != (MPI_Aint)off)
			return false;
		off += esz * (size_t)gs_count(g, j);
	}
	return true;
}


/* The root: lay out every block, run, and put the blocks in place. */
static int gs_root(struct cx *x, const struct gs_call *g, struct mpi_kept *ent, size_t esz)
{
	const struct coll_sched *s = ent->s;
	int n = x->c->size;
	MPI_Datatype dt = g->gather ? g->rtype : g->stype;
	struct mpi_dtype *t = mpi_dtype_get(dt);
	MPI_Aint ext = t->extent;
	bool direct = gs_root_direct(g, n, esz), in_place = gs_in_place(g);
	char *base = g->gather ? (char *)g->rbuf : (char *)(uintptr_t)g->sbuf;
	/* direct: the root's own block is at displacement 0 (gs_root_direct) */
	char *data = direct ? base + t->true_lb : tmp_get(x->c, s->info.data_bytes);
	if (!direct && !data)
		return mpi_cx_fail(x, MPI_ERR_NO_MEM, "%s: no memory for %zu bytes", x->name, s->info.data_bytes);
	size_t own = esz * (size_t)gs_count(g, g->root);
	if (g->gather && !in_place) /* our own block goes at the front, like every rank's */
		mpi_pack(mpi_dtype_get(g->stype), g->sbuf, g->scount, data);
	size_t off = 0;
	for (int u = 0; u < n && !direct && !g->gather; u++) {
		int j = (u + g->root) % n;
		mpi_pack(t, base + gs_displ(g, j) * ext, gs_count(g, j), data + off);
		off += esz * (size_t)gs_count(g, j);
	}
	int rc = run_part(x, ent, data, NULL);
	if (!rc && !g->gather && !in_place)
		mpi_unpack(mpi_dtype_get(g->rtype), g->rbuf, g->rcount, data, own);
	off = 0;
	for (int u = 0; u < n && !rc && !direct && g->gather; u++) {
		int j = (u + g->root) % n;
		size_t len = esz * (size_t)gs_count(g, j);
		if (u || !in_place)
			mpi_unpack(t, base + gs_displ(g, j) * ext, gs_count(g, j), data + off, len);
		off += len;
	}
	if (!direct)
		tmp_put(x->c, data);
	return rc;
}

/* Any other rank: its own block at the front of DATA, room for its subtree. */
static int gs_leaf(struct cx *x, const struct gs_call *g, struct mpi_kept *ent, size_t own)
{
	const struct coll_sched *s = ent->s;
	MPI_Datatype dt = g->gather ? g->stype : g->rtype;
	int count = g->gather ? g->scount : g->rcount;
	struct mpi_dtype *t = mpi_dtype_get(dt);
	size_t span = coll_data_span(s, x->c->rank);
	char *buf = g->gather ? (char *)(uintptr_t)g->sbuf : g->rbuf;
	bool direct = t->contig && span <= own;
	char *data = direct ? buf + t->true_lb : tmp_get(x->c, span > own ? span : own);
	if (!direct && !data)
		return mpi_cx_fail(x, MPI_ERR_NO_MEM, "%s: no memory for %zu bytes", x->name, span);
	if (g->gather && !direct)
		mpi_pack(t, buf, count, data);
	int rc = run_part(x, ent, data, NULL);
	if (!rc && !g->gather && !direct)
		mpi_unpack(t, buf, count, data, own);
	if (!direct)
		tmp_put(x->c, data);
	return rc;
}

/* On an intercommunicator: the root's side has a block per remote rank. */
static int inter_gs(struct mpi_comm *c, MPI_Comm comm, const char *fn, const struct gs_call *g)
{
	struct mpi_xside s = { .buf = g->sbuf, .count = g->scount, .counts = g->scounts, .idispls = g->sdispls,
				 .type = g->stype },
			   r = { .buf = g->rbuf, .count = g->rcount, .counts = g->rcounts, .idispls = g->rdispls,
				 .type = g->rtype };
	return mpi_inter_exchange(c, comm, fn, g->gather ? MPI_IC_GATHER : MPI_IC_SCATTER, g->root, &s, &r);
}

static int gather_scatter(const char *fn, MPI_Comm comm, const struct gs_call *g)
{
	COLL_ENTER_ANY(fn, comm, c);
	if (c->inter)
		return inter_gs(c, comm, fn, g);
	int n = c->size;
	bool at_root = c->rank == g->root, v = g->v;
	if (g->root < 0 || g->root >= n)
		return mpi_err(comm, MPI_ERR_ROOT, fn, "root %d not in %s (size %d)", g->root, c->name, n);
	if (!at_root && (g->gather ? g->sbuf : g->rbuf) == MPI_IN_PLACE)
		return mpi_err(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE at rank %d: only the root (%d) may give it", c->rank,
			       g->root);
	if (at_root) {
		int rc = mpi_coll_aliased(comm, fn, g->sbuf, g->rbuf, (g->gather ? g->scount : g->rcount) > 0);
		if (rc)
			return rc;
	}
	/* what this rank sends or receives: its own datatype; the root's, the
	 * datatype of the whole buffer */
	MPI_Datatype own_t = g->gather ? g->stype : g->rtype, root_t = g->gather ? g->rtype : g->stype;
	int own_n = g->gather ? g->scount : g->rcount;
	if (!(at_root && gs_in_place(g))) {
		int rc = mpi_coll_check_buf(comm, fn, own_n, own_t);
		if (rc)
			return rc;
	}
	if (at_root) {
		if (mpi_dtype_check(root_t, 0))
			return mpi_err(comm, MPI_ERR_TYPE, fn, "invalid or uncommitted datatype %d", root_t);
		for (int j = 0; j < n; j++)
			if (gs_count(g, j) < 0)
				return mpi_err(comm, MPI_ERR_COUNT, fn, "count %d for rank %d < 0", gs_count(g, j), j);
	}
	size_t esz = mpi_dtype_get(at_root ? root_t : own_t)->size;
	size_t own = at_root ? esz * (size_t)gs_count(g, g->root) : esz * (size_t)own_n;
	size_t stack[STACK_COUNTS], *counts = NULL;
	struct coll_req req = { .op = g->gather ? COLL_OP_GATHER : COLL_OP_SCATTER, .root = g->root,
				.nranks = n, .elem_size = 1, .bytes = own };
	if (v) {
		/* the root knows every size; any other rank only its own, which
		 * is all a linear rank reads */
		counts = counts_get(stack, (size_t)n);
		if (!counts)
			return mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
		for (int j = 0; j < n; j++)
			counts[j] = at_root ? esz * (size_t)gs_count(g, j) : j == c->rank ? own : 0;
		req.counts = counts;
		req.bytes = 0;
	}
	struct cx x;
	mpi_cx_init(&x, c, fn);
	struct mpi_kept *ent = sched_for(&x, &req, v ? COLL_ALGO_LINEAR : COLL_ALGO_AUTO);
	int rc = x.err;
	if (ent) {
		x.algo = coll_algo_name(ent->s->info.algo);
		rc = at_root ? gs_root(&x, g, ent, esz) : gs_leaf(&x, g, ent, own);
	}
	counts_done(counts, stack);
	return finish(&x, comm, rc);
}

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct gs_call g = { .gather = true, .v = true, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			     .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype,
			     .root = root };
	return gather_scatter("MPI_Gatherv", comm, &g);
}

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct gs_call g = { .gather = true, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			     .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .root = root };
	return gather_scatter("MPI_Gather", comm, &g);
}

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
		  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct gs_call g = { .gather = false, .v = true, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs,
			     .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype,
			     .root = root };
	return gather_scatter("MPI_Scatterv", comm, &g);
}

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct gs_call g = { .gather = false, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
			     .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .root = root };
	return gather_scatter("MPI_Scatter", comm, &g);
}

/* The send side of a collective whose blocks are all blk bytes (Allgather,
 * Alltoall: sendcount of sendtype a block): a valid count and committed
 * type, and as many bytes a block as are received. */
int mpi_coll_check_send_blk(MPI_Comm comm, const char *fn, int count, MPI_Datatype type, size_t blk)
{
	int rc = mpi_coll_check_buf(comm, fn, count, type);
	if (!rc && mpi_dtype_get(type)->size * (size_t)count != blk)
		rc = mpi_err(comm, MPI_ERR_TRUNCATE, fn, "%zu bytes sent a block (sendcount %d) but %zu received",
			     mpi_dtype_get(type)->size * (size_t)count, count, blk);
	return rc;
}

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		   MPI_Datatype recvtype, MPI_Comm comm)
{
	COLL_ENTER_ANY("MPI_Allgather", comm, c);
	if (c->inter)
		return mpi_inter_exchange(c, comm, "MPI_Allgather", MPI_IC_ALL, 0,
					  &(struct mpi_xside){ .buf = sendbuf, .count = sendcount, .type = sendtype, .same = true },
					  &(struct mpi_xside){ .buf = recvbuf, .count = recvcount, .type = recvtype });
	int rc = mpi_coll_check_buf(comm, "MPI_Allgather", recvcount, recvtype);
	if (rc)
		return rc;
	struct mpi_dtype *rt = mpi_dtype_get(recvtype);
	size_t blk = rt->size * (size_t)recvcount;
	if (sendbuf != MPI_IN_PLACE && (rc = mpi_coll_check_send_blk(comm, "MPI_Allgather", sendcount, sendtype, blk)))
		return rc;
	if ((rc = mpi_coll_aliased(comm, "MPI_Allgather", sendbuf, recvbuf, blk > 0)))
		return rc;
	int n = c->size;
	bool tmp = !rt->contig;
	char *data = tmp ? tmp_get(c, blk * (size_t)n) : (char *)recvbuf + rt->true_lb;
	if (tmp && !data)
		return mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Allgather", "out of memory");
	if (sendbuf != MPI_IN_PLACE)
		mpi_pack(mpi_dtype_get(sendtype), sendbuf, sendcount, data + blk * (size_t)c->rank);
	else if (tmp)
		mpi_pack(rt, (char *)recvbuf + rt->extent * recvcount * c->rank, recvcount, data + blk * (size_t)c->rank);
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Allgather");
	if (n > 1 && blk > 0) {
		struct coll_req req = { .op = COLL_OP_ALLGATHER, .bytes = blk * (size_t)n, .elem_size = blk };
		rc = run_sched(&x, &req, data, NULL);
	}
	if (tmp) {
		if (!rc)
			mpi_unpack(rt, recvbuf, recvcount * n, data, blk * (size_t)n);
		tmp_put(c, data);
	}
	return finish(&x, comm, rc);
}

/* ---------------------------------------------------------------- allgatherv, alltoallv
 * Like Gatherv, a schedule of this rank's alone, cached by its block
 * sizes. Allgatherv's ranks all
 * know every block size, so each expands its part of the same allgather
 * (recursive doubling or bruck up to 64 KiB in all, else the ring:
 * coll_choose, or PTL_COLL_ALGO). An Alltoallv rank knows its row of the
 * pair matrix (what it sends) and its column (what it receives), which is
 * all its part of the exchange (pairwise or linear) reads. DATA (and Alltoallv's
 * INPUT) hold the blocks back to back in rank order: the user's buffer
 * itself when it is laid out that way with a contiguous type. */

bool mpi_coll_v_packed(MPI_Datatype dt, const int counts[], const int displs[], int n)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!t->contig)
		return false;
	MPI_Aint off = 0;
	for (int j = 0; j < n; j++) {
		if ((MPI_Aint)displs[j] * t->extent != off)
			return false;
		off += (MPI_Aint)counts[j] * t->extent;
	}
	return true;
}

int mpi_coll_agv_own(MPI_Comm comm, const char *fn, int me, size_t sent, size_t own, const void *sendbuf,
		     const void *recvbuf, size_t total)
{
	if (sent != own)
		return mpi_err(comm, MPI_ERR_TRUNCATE, fn, "rank %d sends %zu bytes but recvcounts[%d] says %zu", me,
			       sent, me, own);
	return mpi_coll_aliased(comm, fn, sendbuf, recvbuf, total > 0);
}

int mpi_coll_a2av_sizes(MPI_Comm comm, const char *fn, int me, int n, const void *sendbuf, const int sendcounts[],
			size_t ssize, const void *recvbuf, const int recvcounts[], size_t rsize, size_t *row,
			size_t *stotal, size_t *rtotal)
{
	int rc = mpi_coll_v_bytes(comm, fn, "sendcounts", sendcounts, n, ssize, row, stotal);
	if (!rc)
		rc = mpi_coll_v_bytes(comm, fn, "recvcounts", recvcounts, n, rsize, row + n, rtotal);
	if (!rc && row[me] != row[n + me])
		rc = mpi_err(comm, MPI_ERR_TRUNCATE, fn, "rank %d sends itself %zu bytes but receives %zu", me, row[me],
			     row[n + me]);
	if (!rc)
		rc = mpi_coll_aliased(comm, fn, sendbuf, recvbuf, *stotal > 0 && *rtotal > 0);
	return rc;
}

/* Counts in bytes (esz each) into out[0..n) (none with out NULL: the sum
 * alone), refusing a negative one. */
int mpi_coll_v_bytes(MPI_Comm comm, const char *fn, const char *what, const int counts[], int n, size_t esz,
		   size_t *out, size_t *total)
{
	*total = 0;
	for (int j = 0; j < n; j++) {
		if (counts[j] < 0)
			return mpi_err(comm, MPI_ERR_COUNT, fn, "%s[%d] = %d < 0", what, j, counts[j]);
		if (out)
			out[j] = esz * (size_t)counts[j];
		*total += esz * (size_t)counts[j];
	}
	return MPI_SUCCESS;
}

/* Runs req's schedule (the v forms': by their sizes, cached like every
 * other) over data/input; a rank with no part returns at once. */
static int v_run(struct cx *x, struct coll_req *req, void *data, const void *input)
{
	struct mpi_kept *ent = sched_for(x, req, COLL_ALGO_AUTO);
	if (!ent)
		return x->err;
	x->algo = coll_algo_name(ent->s->info.algo);
	return run_part(x, ent, data, input);
}

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		    const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char fn[] = "MPI_Allgatherv";
	COLL_ENTER_ANY(fn, comm, c);
	if (c->inter)
		return mpi_inter_exchange(c, comm, fn, MPI_IC_ALL, 0,
					  &(struct mpi_xside){ .buf = sendbuf, .count = sendcount, .type = sendtype, .same = true },
					  &(struct mpi_xside){ .buf = recvbuf, .counts = recvcounts, .idispls = displs,
								 .type = recvtype });
	int n = c->size, me = c->rank;
	bool in_place = sendbuf == MPI_IN_PLACE;
	int rc = mpi_coll_check_buf(comm, fn, recvcounts[me], recvtype);
	if (!rc && !in_place)
		rc = mpi_coll_check_buf(comm, fn, sendcount, sendtype);
	if (rc)
		return rc;
	struct mpi_dtype *rt = mpi_dtype_get(recvtype);
	size_t stack[STACK_COUNTS], *counts = counts_get(stack, (size_t)n), total;
	if (!counts)
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	rc = mpi_coll_v_bytes(comm, fn, "recvcounts", recvcounts, n, rt->size, counts, &total);
	size_t own = counts[me], at = 0, sent = in_place ? own : mpi_dtype_get(sendtype)->size * (size_t)sendcount;
	for (int j = 0; j < me; j++)
		at += counts[j];
	if (!rc)
		rc = mpi_coll_agv_own(comm, fn, me, sent, own, sendbuf, recvbuf, total);
	bool direct = mpi_coll_v_packed(recvtype, recvcounts, displs, n);
	char *data = direct ? (char *)recvbuf + rt->true_lb : rc ? NULL : tmp_get(c, total);
	if (!rc && !direct && !data)
		rc = mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory for %zu bytes", total);
	if (rc) {
		counts_done(counts, stack);
		return rc;
	}
	/* our own block at its place in DATA, like every rank's */
	if (!in_place)
		mpi_pack(mpi_dtype_get(sendtype), sendbuf, sendcount, data + at);
	else if (!direct)
		mpi_pack(rt, (char *)recvbuf + (MPI_Aint)displs[me] * rt->extent, recvcounts[me], data + at);
	struct cx x;
	mpi_cx_init(&x, c, fn);
	if (n > 1 && total) {
		struct coll_req req = { .op = COLL_OP_ALLGATHER, .nranks = n, .counts = counts, .elem_size = 1 };
		rc = v_run(&x, &req, data, NULL);
	}
	size_t off = 0;
	for (int j = 0; j < n && !rc && !direct; j++) {
		if (j != me || !in_place)
			mpi_unpack(rt, (char *)recvbuf + (MPI_Aint)displs[j] * rt->extent, recvcounts[j], data + off,
				   counts[j]);
		off += counts[j];
	}
	if (!direct)
		tmp_put(c, data);
	counts_done(counts, stack);
	return finish(&x, comm, rc);
}

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		  MPI_Datatype recvtype, MPI_Comm comm)
{
	COLL_ENTER_ANY("MPI_Alltoall", comm, c);
	if (c->inter)
		return mpi_inter_exchange(c, comm, "MPI_Alltoall", MPI_IC_ALL, 0,
					  &(struct mpi_xside){ .buf = sendbuf, .count = sendcount, .type = sendtype },
					  &(struct mpi_xside){ .buf = recvbuf, .count = recvcount, .type = recvtype });
	int rc = mpi_coll_check_buf(comm, "MPI_Alltoall", recvcount, recvtype);
	if (rc)
		return rc;
	struct mpi_dtype *rt = mpi_dtype_get(recvtype);
	int n = c->size;
	size_t blk = rt->size * (size_t)recvcount;
	if (sendbuf != MPI_IN_PLACE && (rc = mpi_coll_check_send_blk(comm, "MPI_Alltoall", sendcount, sendtype, blk)))
		return rc;
	if ((rc = mpi_coll_aliased(comm, "MPI_Alltoall", sendbuf, recvbuf, blk > 0)))
		return rc;
	/* INPUT: a contiguous sendbuf where it is (the schedule only reads
	 * it), else a packed copy; in place always a copy, so nothing arriving
	 * overwrites a block not yet sent. The copy of a contiguous one had
	 * cost about as much as the exchange: 4 ranks on 2 cores, 1 MiB
	 * blocks, 1026 - 1174 us with it, 526 - 545 without (Open MPI 734 -
	 * 764) */
	bool in_tmp = true;
	char *in = sendbuf == MPI_IN_PLACE ? tmp_get(c, blk * (size_t)n)
					   : image(c, sendbuf, sendcount * n, sendtype, true, &in_tmp);
	bool tmp = !rt->contig;
	char *data = tmp ? tmp_get(c, blk * (size_t)n) : (char *)recvbuf + rt->true_lb;
	if ((in_tmp && !in) || (tmp && !data)) {
		if (in_tmp)
			tmp_put(c, in);
		if (tmp)
			tmp_put(c, data);
		return mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Alltoall", "out of memory");
	}
	if (sendbuf == MPI_IN_PLACE)
		mpi_pack(rt, recvbuf, recvcount * n, in);
	if (blk > 0)
		nal_copy(data + blk * (size_t)c->rank, in + blk * (size_t)c->rank, blk);
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Alltoall");
	if (n > 1 && blk > 0) {
		struct coll_req req = { .op = COLL_OP_ALLTOALL, .bytes = blk, .elem_size = 1 };
		rc = run_sched(&x, &req, data, in);
	}
	if (tmp) {
		if (!rc)
			mpi_unpack(rt, recvbuf, recvcount * n, data, blk * (size_t)n);
		tmp_put(c, data);
	}
	if (in_tmp)
		tmp_put(c, in);
	return finish(&x, comm, rc);
}

/* MPI_IN_PLACE (MPI-2.2): the send side is ignored; each block goes out
 * from recvbuf (recvcounts, rdispls, recvtype) and the block that comes
 * back replaces it. INPUT is then always a packed copy, so nothing
 * arriving can overwrite a block not yet sent. */
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
		   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char fn[] = "MPI_Alltoallv";
	COLL_ENTER_ANY(fn, comm, c);
	if (c->inter)
		return mpi_inter_exchange(c, comm, fn, MPI_IC_ALL, 0,
					  &(struct mpi_xside){ .buf = sendbuf, .counts = sendcounts, .idispls = sdispls,
								 .type = sendtype },
					  &(struct mpi_xside){ .buf = recvbuf, .counts = recvcounts, .idispls = rdispls,
								 .type = recvtype });
	int n = c->size;
	bool in_place = sendbuf == MPI_IN_PLACE;
	int rc = mpi_coll_check_buf(comm, fn, 0, recvtype);
	if (!rc && !in_place)
		rc = mpi_coll_check_buf(comm, fn, 0, sendtype);
	if (rc)
		return rc;
	if (in_place) {
		sendbuf = recvbuf;
		sendcounts = recvcounts;
		sdispls = rdispls;
		sendtype = recvtype;
	}
	struct mpi_dtype *st = mpi_dtype_get(sendtype), *rt = mpi_dtype_get(recvtype);
	/* this rank's row of the pair matrix, then its column */
	size_t stack[STACK_COUNTS], *row = counts_get(stack, 2 * (size_t)n), rtotal = 0, stotal = 0;
	if (!row)
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	rc = mpi_coll_a2av_sizes(comm, fn, c->rank, n, in_place ? MPI_IN_PLACE : sendbuf, sendcounts, st->size, recvbuf,
				 recvcounts, rt->size, row, &stotal, &rtotal);
	bool in_direct = !in_place && mpi_coll_v_packed(sendtype, sendcounts, sdispls, n);
	bool out_direct = mpi_coll_v_packed(recvtype, recvcounts, rdispls, n);
	char *in = in_direct ? (char *)(uintptr_t)sendbuf + st->true_lb : rc ? NULL : tmp_get(c, stotal);
	char *data = out_direct ? (char *)recvbuf + rt->true_lb : rc ? NULL : tmp_get(c, rtotal);
	if (!rc && ((!in_direct && !in) || (!out_direct && !data)))
		rc = mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory for %zu bytes", stotal + rtotal);
	if (rc) {
		if (!in_direct)
			tmp_put(c, in);
		if (!out_direct)
			tmp_put(c, data);
		counts_done(row, stack);
		return rc;
	}
	struct cx x;
	mpi_cx_init(&x, c, fn);
	size_t off = 0;
	for (int j = 0; j < n && !in_direct; j++) {
		mpi_pack(st, (const char *)sendbuf + (MPI_Aint)sdispls[j] * st->extent, sendcounts[j], in + off);
		off += row[j];
	}
	struct coll_req req = { .op = COLL_OP_ALLTOALL, .nranks = n, .counts = row, .recv_counts = row + n,
				.elem_size = 1 };
	rc = v_run(&x, &req, data, in);
	off = 0;
	for (int j = 0; j < n && !rc && !out_direct; j++) {
		mpi_unpack(rt, (char *)recvbuf + (MPI_Aint)rdispls[j] * rt->extent, recvcounts[j], data + off,
			   row[n + j]);
		off += row[n + j];
	}
	if (!in_direct)
		tmp_put(c, in);
	if (!out_direct)
		tmp_put(c, data);
	counts_done(row, stack);
	return finish(&x, comm, rc);
}

/* ---------------------------------------------------------------- for mpi_comm.c */

int mpi_allreduce_int_max(struct mpi_comm *c, int *v, int n)
{
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Allreduce (context id)");
	return finish(&x, mpi_comm_handle(c), allreduce_img(&x, v, n, MPI_INT, MPI_MAX));
}

int mpi_allgather_ints(struct mpi_comm *c, const int *mine, int n, int *all)
{
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Allgather (split)");
	size_t blk = sizeof(int) * (size_t)n;
	nal_copy((char *)all + blk * (size_t)c->rank, mine, blk);
	int rc = MPI_SUCCESS;
	if (c->size > 1) {
		struct coll_req req = { .op = COLL_OP_ALLGATHER, .bytes = blk * (size_t)c->size, .elem_size = blk };
		rc = run_sched(&x, &req, all, NULL);
	}
	return finish(&x, mpi_comm_handle(c), rc);
}
