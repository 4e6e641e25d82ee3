/*
 * lib/nal/shm/shm_nal.c - the shared-memory NAL: lifetime, the rings
 * (send and progress), dead-peer detection, and nal_shm_ops.
 *
 * The send and receive paths of a small message make no system call and no
 * allocation: a send is a bounds check, one or two copies into the ring
 * (non-temporal stores for a large payload to a consumer that is behind,
 * if measured faster with that peer: shm_nt_copy, struct shm_sc),
 * a zero terminator (unless stored ahead: ring_prezero), a release store
 * of the record word, a full fence (none where both sides registered for
 * the sleepers' membarrier: shm_wake.c) and one load of the receiver's
 * state word (shm_wake_peer).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "nal/nal_copy.h"
#include "rt/rt_proc.h"
#include "shm.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define SHM_ADDR_MAGIC 0x73686d61u /* "shma" */
#define SHM_RX_PREFETCH 2048u      /* bytes of a record asked for before its upcall */
/* Records up to this long, word included, are polled ahead (rings_ready). */
#define SHM_RX_POLL_AHEAD 320u
/* After a record past SHM_SMALL_REC and up to this long, outside a stream
 * (where the lines ahead are asked for instead: SHM_TX_STREAM_SENDS), the
 * producer stores the zero where a next record as long would end (struct
 * shm_tx's zone), after the word: a record that ends on a line (a payload
 * of 256 B or more starts on one) has its terminator in a line of its
 * own, which, stored before the word, made the word wait for the
 * consumer's copy of that line to go (ring_prezero says the same of
 * small records). The consumer stops after such a record (ring_drain).
 * 2 ranks, near state, 12 interleaved launch pairs of bench/mpi_pingpong's
 * rows: half round trip 256 B 0.230 -> 0.208 us, 512 B 0.259 -> 0.227,
 * 1 KiB 0.274 -> 0.260, 2 KiB 0.360 -> 0.350; 4 KiB (past it) and 8 - 64
 * B level; 2-rank MPI_Allreduce (14 pairs) 512 B 0.378 -> 0.352, 256 B
 * 0.305 -> 0.314, 8 - 128 B level. */
#define SHM_ZONE_MAX 2048u
/* Outside a stream: inside one records up to SHM_TX_PREFETCHW_MAX take
 * the prefetches instead (ring_put), but for one that rewinds, which
 * stores its zone. */
_Static_assert(SHM_ZONE_MAX <= SHM_TX_PREFETCHW_MAX, "a stream's records prefetch, not zone");

struct shm_addr {
	uint32_t magic;
	int32_t local_rank;
	int32_t pid;
	uint32_t pad;
	uint64_t jobid;
};

/* Where the record after one of len bytes at pos starts (shm.h,
 * SHM_SMALL_REC). */
static inline uint64_t rec_next(uint64_t pos, size_t len)
{
	uint64_t a = 8 + len <= SHM_SMALL_REC ? SHM_LINE - 1 : 7;

	return (pos + 8 + len + a) & ~a;
}

/* Where a record of a then b (alen + blen bytes) sent at tail ends, and
 * in *pad the bytes skipped before it (ring_put says why). */
static inline uint64_t rec_place(uint64_t tail, uint64_t S, size_t alen, size_t blen, uint64_t *pad)
{
	uint64_t off = tail & (S - 1), lead = 0;

	*pad = 0;
	if (blen >= SHM_PAYLOAD_ALIGN && (alen & 7) == 0) {
		lead = (0 - 8 - (uint64_t)alen) & 63; /* from a line's start to where the record goes */
		*pad = (lead - off) & 63;
	}
	if (((off + *pad) & (S - 1)) + 8 + alen + blen > S)
		*pad = S - off + lead;
	return rec_next(tail + *pad, alen + blen);
}

/* Asks for the lines of the record at r (len bytes after its word) past
 * the word's own line, up to SHM_RX_PREFETCH bytes: they come from the
 * sender's cache while the upcall matches the header, rather than one
 * copy loop at a time afterwards (1 KiB ptl ping-pong: 0.240 -> 0.220 us). */
static inline void rec_prefetch(const uint8_t *r, size_t len)
{
	const uint8_t *e = r + 8 + (len < SHM_RX_PREFETCH ? len : SHM_RX_PREFETCH);

	for (const uint8_t *q = (const uint8_t *)((uintptr_t)r & ~(uintptr_t)63) + 64; q < e; q += 64)
		__builtin_prefetch(q, 0, 3);
}

/* A streamed send's payload goes into the ring by non-temporal stores
 * (shm_nt_copy, shm_bulk.c's) when struct shm_sc picks them, for a consumer that is behind: the lines go out through
 * write-combining buffers instead of each being taken over, in turn, from
 * the consumer's cache, where the consumer read them a lap before. That
 * takeover is what a streaming producer waits for: in 4 KiB MPI_Isend
 * windows (bench/mpi_pingpong.c b4096, Zen 4 guest, 2 vCPUs) a send
 * spent ~660 of its ~1380 cycles (TSC) in the copy and ~270 more for its
 * stores to drain (the record word's, the wake-up's fence); with these
 * stores ~130 and ~30 (the MPI and Portals layers: ~200 either way).
 * 6 interleaved launches, median GB/s, before -> after (MPICH): b4096
 * 6.95 -> 8.07 (7.61), b8192 7.12 -> 8.78 (8.36); latency rows unchanged.
 * The consumer then reads the lines from memory, not from our cache:
 * slower for one that waits for this record, so only while it is behind
 * (shm_ring_put); and where the two cores share a cache closely (one
 * launch in five or so on that guest, base b4096 13.9 GB/s) the
 * takeover was cheap and these stores lose (8.1): hence struct shm_sc. shm_nt_copy's
 * sfence orders them before the record word's store, which a release
 * store alone does not. */

/*
 * Which copy a streamed send takes (struct shm_sc, one per ring) is
 * measured, not fixed: on the Zen 4 guest above the non-temporal one won
 * in most launches (b4096 8.07 vs 6.95 GB/s) and lost badly in the rest,
 * where the two vCPUs share a cache closely (8.1 vs 13.9), and on a Zen 5
 * machine plain copies streamed 4 KiB at 20.8 GB/s. The cost of a method
 * is what the sender pays per streamed byte, drain and waits included:
 * the TSC cycles from one streamed send's copy to the next one's, summed
 * over a run of SHM_SC_RUN streamed sends, over the ring bytes sent
 * meanwhile (a send between them that did not stream, the consumer having
 * caught up, counts too: else the method that lets the consumer keep up
 * would look the dearer, its bytes uncounted; the rest of a lap that a
 * rewind jumped over does not, struct shm_sc skipped: each window of a
 * b4096 stream rewinds once, and with that counted as sent the estimates
 * read half the cost at a 256 KiB ring and 1-22 cycles per KiB at 4 MiB,
 * the launch's switches then following which runs held a rewind). Per send
 * alone (copy start to after the wake-up's fence) would miss the other
 * half: the non-temporal lines reach the consumer from memory, not from
 * our cache, and a consumer slowed by that holds the sender back later,
 * when the ring is full or a window waits for it; the run sees those
 * waits. An interval of SHM_SC_GAP or more was idle, not streaming, and
 * is left out, as is the first after a change of method (it pays for
 * the cache state the other left). The rest follows shm_bulk.c's chooser,
 * cheaper: warm-up runs of the plain copy until it has SHM_SC_HIST, then
 * of NT; the estimate of each is the lowest of its latest
 * SHM_SC_HIST run costs (what else happens on the host only adds to a
 * run: a preempted run, or one whose peer was, is dearer, never
 * cheaper; see sc_low3); the pick
 * is the lower; the other is probed for SHM_SC_HIST runs, or at once
 * when the pick's estimate rises an eighth above the other's, and
 * becomes the pick when its estimate is an eighth lower (a sixteenth
 * swung here: run costs of one method spread ~10% in a launch; the two
 * differ by ~1.25x apart, ~2x close). A trial's first run (NT's in the
 * warm-up, the other method's in a probe) that costs half as much again
 * as the estimate it competes with ends the trial at once, as that
 * method's whole history (sc_dear): with runs spread ~10%, two more would
 * not bring it under, and in the near state, NT's runs 2-2.5x plain's,
 * they cost a short stream a tenth and more (bench/mpi_pingpong's b4096
 * row, 640 sends a trial after the latency rows, near state, 9
 * interleaved launches, medians: 18.7 -> 20.7 GB/s; MPICH 25.2). Probes
 * come SHM_SC_SETTLE runs after the warm-up, SHM_SC_CONFIRM after a
 * switch, then twice as far apart after each that confirmed the pick, up
 * to SHM_SC_REPROBE runs: a wrong pick (a probe spoiled by a row change,
 * a preemption) is undone soon, and in steady state a probe of a method
 * 1.25x slower costs 3 runs in 259 (0.3%), of one 1.75x slower 1 in 257.
 * (b4096, one launch: plain runs cost 64-80 cycles per KiB while the
 * vCPUs sat close, NT 134-178; later 250 vs 196, and the pick followed.)
 * Per streamed send: one rdtsc and a few adds; per run, the lowest of
 * three. No clock without a TSC: the warm-up never ends and plain stores
 * stay (without SSE2 both copies are memcpy).
 */

static inline uint64_t sc_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return 0;
#endif
}

/* The lowest of a method's last three run costs. Not their median: on
 * a shared host whole stretches of runs come out 1.5-5x dear (b4096, one
 * launch: NT runs 125-181 cycles per KiB, then 351 and 251 in a row; the
 * median of three rose to 251, the plain copy's older 195 looked an
 * eighth cheaper, a probe switched to it, and two dear plain runs (550,
 * 1014) switched back), so the median of three swung the pick with the
 * noise, while the lowest moves only when all three runs rise: the
 * method itself got dearer (the vCPUs moved apart), or the host stayed
 * busy long enough that both methods' probes see it alike. */
_Static_assert(SHM_SC_HIST == 3, "sc_low3 reads a history of three");
static uint32_t sc_low3(const uint32_t *h)
{
	uint32_t a = h[0] < h[1] ? h[0] : h[1];

	return a < h[2] ? a : h[2];
}

/* a is an eighth lower than b */
static int sc_better(uint32_t a, uint32_t b)
{
	return (uint64_t)a + a / 8 < b;
}

static void sc_use(struct shm_sc *c, int m)
{
	if (c->cur != m) {
		c->cur = (uint8_t)m;
		c->skip = 1;
	}
}

void shm_sc_init(struct shm_sc *c, int pick, int ready)
{
	memset(c, 0, sizeof(*c));
	c->cur = c->pick = (uint8_t)pick;
	c->ready = (uint8_t)ready;
	c->every = SHM_SC_CONFIRM;
}

/* Run cost x of method m, on trial against inc: when it is the trial's
 * first and half as much again as inc's estimate, it settles m as the
 * dearer (m's estimate made x; the comment above says why) and the trial
 * ends with this run. Only the first: a later dear run may be a spoiled
 * one after a cheap one, which the lowest of three keeps. */
static void sc_dear(struct shm_sc *c, int m, int inc, uint32_t x)
{
	int first = c->ready ? c->left == SHM_SC_HIST : c->nhist[m] == 1;

	if (m == inc || !first || c->nhist[inc] < SHM_SC_HIST ||
	    (uint64_t)x < (uint64_t)c->est[inc] + c->est[inc] / 2)
		return;
	c->hist[m][0] = c->hist[m][1] = c->hist[m][2] = x;
	c->nhist[m] = c->nhist[m] > SHM_SC_HIST ? c->nhist[m] : SHM_SC_HIST;
	c->est[m] = x;
	c->left = 1;
}

/* A run of c->cur ended, costing x cycles per KiB: what the next run takes. */
static void sc_run_end(struct shm_sc *c, uint32_t x)
{
	int m = c->cur, o = !m;

	c->runs[m]++;
	c->hist[m][2] = c->hist[m][1];
	c->hist[m][1] = c->hist[m][0];
	c->hist[m][0] = x;
	if (c->nhist[m] < 255)
		c->nhist[m]++;
	if (c->nhist[m] >= SHM_SC_HIST)
		c->est[m] = sc_low3(c->hist[m]);
	sc_dear(c, m, c->ready ? c->pick : SHM_SC_PLAIN, x);
	if (!c->ready) {
		if (c->nhist[SHM_SC_PLAIN] < SHM_SC_HIST) {
			sc_use(c, SHM_SC_PLAIN);
		} else if (c->nhist[SHM_SC_NT] < SHM_SC_HIST) {
			sc_use(c, SHM_SC_NT);
		} else {
			c->ready = 1;
			c->pick = c->est[SHM_SC_NT] < c->est[SHM_SC_PLAIN] ? SHM_SC_NT : SHM_SC_PLAIN;
			c->since = 0;
			c->every = SHM_SC_SETTLE;
			sc_use(c, c->pick);
		}
		return;
	}
	if (m != c->pick) { /* a probe's run */
		if (--c->left)
			return;
		c->since = 0;
		if (sc_better(c->est[m], c->est[c->pick])) {
			c->pick = (uint8_t)m;
			c->switches++;
			c->every = SHM_SC_CONFIRM;
		} else if (c->every < SHM_SC_REPROBE) {
			c->every *= 2;
		}
		sc_use(c, c->pick);
		return;
	}
	if (++c->since >= c->every || (c->nhist[o] >= SHM_SC_HIST && sc_better(c->est[o], c->est[m]))) {
		c->since = 0;
		c->left = SHM_SC_HIST;
		sc_use(c, o);
	}
}

/* A streamed send starts its copy at TSC now, at ring position pos (the
 * tail before it): counts the interval since the last one, ends a run
 * after SHM_SC_RUN of them; c->cur is then the method for this send. */
void shm_sc_note(struct shm_sc *c, uint64_t now, uint64_t pos)
{
	if (!c->ready && c->cold < SHM_SC_COLD) { /* the cold laps: not timed */
		c->cold++;
		c->t_last = 0;
		c->last_pos = pos;
		return;
	}
	if (c->t_last && !c->skip && now - c->t_last < SHM_SC_GAP && pos > c->last_pos) {
		c->run_cyc += now - c->t_last;
		c->run_bytes += pos - c->last_pos;
		c->n++;
	}
	c->skip = 0;
	c->t_last = now;
	c->last_pos = pos;
	if (c->n >= SHM_SC_RUN) {
		uint64_t x = (c->run_cyc << 10) / c->run_bytes;

		c->run_cyc = c->run_bytes = 0;
		c->n = 0;
		sc_run_end(c, x > UINT32_MAX ? UINT32_MAX : (uint32_t)x);
	}
}

static inline _Atomic uint64_t *rec_word(uint8_t *data, uint64_t off)
{
	return (_Atomic uint64_t *)(void *)(data + off);
}

/* A zero word at ring position pos (a terminator, or one stored ahead). */
static inline void word_zero(uint8_t *data, uint64_t pos, uint64_t mask)
{
	atomic_store_explicit(rec_word(data, pos & mask), 0, memory_order_relaxed);
}

uint64_t shm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int shm_open_nal(const struct nal_open_args *a, struct nal **out)
{
	struct nal *n;
	const char *e;
	int rc;

	if (!a || !out || a->local_size < 1 || a->local_rank < 0 || a->local_rank >= a->local_size ||
	    a->rank < 0 || a->rank >= a->size || a->local_size > a->size)
		return NAL_EINVAL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NAL_ENOMEM;
	n->rank = a->rank;
	n->size = a->size;
	n->lrank = a->local_rank;
	n->lsize = a->local_size;
	n->jobid = a->jobid;
	n->up = a->up;
	e = getenv("PTL_SHM_CMA");
	n->cma = shm_cma_env(e) != 0;
	n->tx = calloc((size_t)n->lsize, sizeof(*n->tx));
	n->rx = calloc((size_t)n->lsize, sizeof(*n->rx));
	n->bp = calloc((size_t)n->lsize, sizeof(*n->bp));
	n->dead = calloc((size_t)n->lsize, 1);
	n->l2g = calloc((size_t)n->lsize, sizeof(int));
	n->g2l = malloc((size_t)n->size * sizeof(int));
	if (!n->tx || !n->rx || !n->bp || !n->dead || !n->l2g || !n->g2l) {
		rc = NAL_ENOMEM;
		goto fail;
	}
	for (int i = 0; i < n->size; i++)
		n->g2l[i] = -1;
	for (int i = 0; i < n->lsize; i++)
		n->bp[i].qtail = &n->bp[i].q;
	/* max_inline before the segment exists: the same rule shm_seg_layout uses. */
	if (n->lrank == 0) {
		rc = shm_seg_create(n);
		if (rc)
			goto fail;
	}
	*out = n;
	return 0;
fail:
	free(n->tx);
	free(n->rx);
	free(n->bp);
	free(n->dead);
	free(n->l2g);
	free(n->g2l);
	free(n);
	return rc;
}

static int shm_addr_fn(struct nal *n, void *buf, size_t *len)
{
	struct shm_addr a = {
		.magic = SHM_ADDR_MAGIC,
		.local_rank = n->lrank,
		.pid = (int32_t)getpid(),
		.jobid = n->jobid,
	};

	memcpy(buf, &a, sizeof(a));
	*len = sizeof(a);
	return 0;
}

static int shm_start(struct nal *n, const int *local_ranks, int nlocal)
{
	int rc;

	if (nlocal != n->lsize || !local_ranks) {
		fprintf(stderr, "ptl shm: start() got %d local ranks, open() said %d\n", nlocal,
			n->lsize);
		return NAL_EINVAL;
	}
	for (int i = 0; i < nlocal; i++) {
		if (local_ranks[i] < 0 || local_ranks[i] >= n->size)
			return NAL_EINVAL;
		n->l2g[i] = local_ranks[i];
		n->g2l[local_ranks[i]] = i;
	}
	if (n->g2l[n->rank] != n->lrank) {
		fprintf(stderr, "ptl shm: rank %d is local rank %d but sits at %d in local_ranks\n",
			n->rank, n->lrank, n->g2l[n->rank]);
		return NAL_EINVAL;
	}
	if (n->lrank != 0) {
		rc = shm_seg_attach(n);
		if (rc)
			return rc;
	}
	/* The cgroup's CPU quota (shm_bulk_crowded's) is read from files once
	 * per process: now, not on the first send that finds a ring full. */
	shm_cpu_quota();
	n->started = 1;
	shm_seg_try_unlink(n);
	return 0;
}

static int shm_connect(struct nal *n, int peer, const void *addr, size_t len)
{
	struct shm_addr a;

	if (peer < 0 || peer >= n->size || n->g2l[peer] < 0 || len != sizeof(a))
		return NAL_EINVAL;
	memcpy(&a, addr, sizeof(a));
	if (a.magic != SHM_ADDR_MAGIC || a.jobid != n->jobid || a.local_rank != n->g2l[peer]) {
		fprintf(stderr, "ptl shm: address of rank %d does not match this job's segment\n",
			peer);
		return NAL_EINVAL;
	}
	return 0;
}

static int shm_reaches(struct nal *n, int peer)
{
	return n->started && peer >= 0 && peer < n->size && n->g2l[peer] >= 0;
}

/* PTL_SHM_BULK_REPORT=1: after shm_bulk_fini's lines, one per peer we
 * streamed to (struct shm_sc took a run), in the same shape: the pick,
 * its switches, each method's runs (SHM_SC_RUN streamed sends each) and
 * estimate (cycles per KiB, 0 before SHM_SC_HIST runs), e.g.
 *   ptl shm bulk: rank 0 peer 1 stream pick nt switches 0 plain 3:195 nt 310:140
 * so that a launch's streaming figures can be told apart by the copy they
 * ran (the pick) or the host (the same pick, other costs). */
static void sc_report(struct nal *n)
{
	static const char *const mname[2] = { "plain", "nt" };

	if (!n->tx || !shm_report_wanted())
		return;
	for (int li = 0; li < n->lsize; li++) {
		const struct shm_sc *c = &n->tx[li].sc;

		if (li == n->lrank || !(c->runs[SHM_SC_PLAIN] + c->runs[SHM_SC_NT]))
			continue;
		fprintf(stderr,
			"ptl shm bulk: rank %d peer %d stream pick %s switches %u plain %u:%u nt %u:%u\n",
			n->rank, n->l2g[li], c->ready ? mname[c->pick] : "none", c->switches,
			c->runs[SHM_SC_PLAIN], c->est[SHM_SC_PLAIN], c->runs[SHM_SC_NT],
			c->est[SHM_SC_NT]);
	}
}

static void shm_close(struct nal *n)
{
	if (!n)
		return;
	shm_bulk_fini(n);
	sc_report(n);
	if (n->lrank == 0 && !n->unlinked && n->hdr)
		shm_unlink(n->name);
	if (n->base)
		munmap(n->base, n->seg_len);
	free(n->tx);
	free(n->rx);
	free(n->bp);
	free(n->dead);
	free(n->l2g);
	free(n->g2l);
	free(n);
}

static void shm_props(struct nal *n, struct nal_props *p)
{
	size_t mi = SHM_MAX_INLINE;

	if (n->hdr) {
		mi = n->max_inline;
	} else {
		/* Not attached yet: the same answer the segment will give. */
		uint64_t rs = shm_ring_size((uint32_t)n->lsize);

		if (mi > rs / 4 - 8)
			mi = rs / 4 - 8;
	}
	p->name = "shm";
	p->max_inline = mi;
	p->ports = 1;
	p->latency_class = 1;
	p->has_bulk = 1;
}

/* Is the peer's process gone? Called when something to it is stuck, when
 * the application asks (PtlRtRankFailed), or once a second while this
 * process waits with operations in flight to the peer (nal_ops.peer_check,
 * lib/ptl's ptl_peers_probe): a sleeping process sees no stuck send.
 * Gone: its pid no longer names the process that published it with its
 * start time (rt_proc_is: no such process, a zombie, or another process
 * given the pid since). force: check now, whatever the time. */
int shm_peer_check(struct nal *n, int li, int force)
{
	pid_t pid;

	(void)force;
	if (n->dead[li])
		return 1;
	pid = (pid_t)atomic_load_explicit(&n->ranks[li].pid, memory_order_acquire);
	if (pid <= 0 || rt_proc_is(pid, atomic_load_explicit(&n->ranks[li].start, memory_order_relaxed)))
		return 0;
	shm_peer_dead(n, li);
	return 1;
}

void shm_peer_dead(struct nal *n, int li)
{
	if (n->dead[li])
		return;
	n->dead[li] = 1;
	shm_bulk_fail_peer(n, li, NAL_EPEER);
	if (n->up.peer_failed)
		n->up.peer_failed(n->up.arg, n->l2g[li], NAL_EPEER);
}

/* nal_ops.peer_check: a rank asked about (PtlRtRankFailed) or awaited
 * (ptl_peers_probe), not stuck. */
static int shm_peer_check_rank(struct nal *n, int peer)
{
	int li = peer >= 0 && peer < n->size ? n->g2l[peer] : -1;
	return li >= 0 && li != n->lrank ? shm_peer_check(n, li, 1) : 0;
}

/* A send found no room: after SHM_DEAD_NS of that, see whether the peer is
 * still there. Reading the clock every 256th time keeps this cheap. Where
 * the local ranks outnumber their CPUs, the rings rewind further in from
 * now on (SHM_HOT_BYTES_CROWDED says why): asked here, where it shows,
 * and known once every local rank has attached (shm_bulk_crowded keeps
 * it then; before, its guess counts the CPUs of those attached only). */
static int ring_full(struct nal *n, int li, struct shm_tx *tx)
{
	uint32_t count = atomic_load_explicit(&tx->full_count, memory_order_relaxed);
	uint64_t now;

	if (n->hot_bytes == SHM_HOT_BYTES && shm_bulk_crowded(n) && n->crowded > 0)
		n->hot_bytes = SHM_HOT_BYTES_CROWDED;
	n->st.eagain++;
	atomic_store_explicit(&tx->full_count, count + 1, memory_order_relaxed);
	if ((count & 255) != 0)
		return NAL_EAGAIN;
	now = shm_now_ns();
	if (!tx->full_since) {
		tx->full_since = now;
		return NAL_EAGAIN;
	}
	if ((int64_t)(now - tx->full_since) < SHM_DEAD_NS)
		return NAL_EAGAIN;
	tx->full_since = now;
	return shm_peer_check(n, li, 1) ? NAL_EPEER : NAL_EAGAIN;
}

/* What the ack in a record word w from local peer li says of our ring to
 * li: a head newer than the one we knew raises head_cache. A head more
 * than a ring behind our tail cannot be (an ack that old aliased): ignored.
 *
 * The ack holds 16 GiB of positions. The record was written after a
 * drain found the ring empty (our tail then: ack_floor), by a peer
 * whose head was then at least ack_floor less a ring (we never write more
 * than a ring past the head it published). So while we have sent less
 * than 16 GiB less a ring since ack_floor, the ack is that recent one;
 * past that (we sent 16 GiB without a drain that found the ring empty),
 * it could alias a newer head than the true one, and it is ignored:
 * ring_ctl still tells us the head. */
static inline void ring_take_ack(struct nal *n, int li, uint64_t w)
{
	struct shm_tx *tx = &n->tx[li];
	uint64_t ack = (w >> SHM_ACK_SHIFT) & SHM_ACK_MASK;
	uint64_t head = tx->tail - ((((tx->tail >> 3) - ack) & SHM_ACK_MASK) << 3);

	if ((int64_t)(head - tx->head_cache) > 0 && tx->tail - head <= n->ring_size &&
	    tx->tail - tx->ack_floor < ((SHM_ACK_MASK + 1) << 3) - n->ring_size)
		tx->head_cache = tx->ack_head = head;
}

/* Whether the record being written at tx->tail, its word at position at,
 * ending hot_bytes or more into the lap that starts at base, may
 * rewind: only when the consumer has read all we sent before it
 * (head_cache, from an ack or from ring_ctl), a ping-pong or a stream
 * that keeps up. It is then past base + 8, so the terminator's place at
 * the next lap's start (base + S) is free.
 *
 * Or this record starts the lap (its word in the first line), and the
 * consumer zeroes that place as it reads it (shm.h); but only in a
 * ping-pong (pp: acks said all was read when this record and the one
 * before it were sent), as the next record cannot be written until this
 * one is read. In a stream that keeps up (ring_ctl says all was read)
 * every record waited so (8 KiB MPI_Isend windows, b8192: 25,438
 * ring-full returns in a run against 3,157 without); one ack is not
 * enough either: a window's first record follows the answer to the
 * window before.
 *
 * A stream whose consumer is behind does not rewind: after a rewind the
 * producer has only the room the consumer has read of the lap before, so
 * a burst larger than that found the ring full and went to ptl's backlog
 * (a copy more, sent only on a later progress pass, while the consumer
 * waited for it). Rewinding once the consumer had read the lap's first
 * 8 KiB, a 32-deep window of 4 KiB puts queued three sends in four on
 * this EPYC (ptl_pingpong bw 4096 ~20 -> ~29 GB/s without; MPI b4096
 * ~18 -> ~25). test_shm's stream_rewind. */
static inline int ring_rewind_ok(const struct shm_tx *tx, uint64_t base, uint64_t at, int pp)
{
	return tx->head_cache == tx->tail && ((int64_t)(tx->head_cache - base) >= 8 || (at - base < SHM_LINE && pp));
}

/* After a small record (rec bytes) that ends at next: zeroes the starts
 * of the lines after next where the terminator of a next small record of
 * up to two lines, or of up to as many as this one, goes, unless done
 * already or not known free. Their stores follow the record word's and
 * the wake-up's fence, so they delay nothing the consumer waits for, nor
 * this rank; the next record then stores to its own lines only before
 * its word. A terminator in a line of its own, stored before
 * the word, made the word wait for that line too: with records starting
 * on lines, an 8-byte raw ping-pong took
 * 0.095-0.11 us against 0.075-0.08 with it zeroed ahead like this
 * (bench/shm_ring --lat, Zen 4 guest, 8 interleaved launches). Not after
 * a large record: the next one is likely large too (a stream), and
 * lines stored ahead of a streamed copy by non-temporal stores are
 * lines it must evict; outside a stream one zero goes ahead there, where
 * a next record as long ends (SHM_ZONE_MAX). */
static inline void ring_prezero(struct shm_tx *tx, uint64_t next, size_t rec, uint64_t S, uint64_t mask)
{
	uint64_t ahead = rec <= 2 * SHM_LINE ? 2 * SHM_LINE : SHM_SMALL_REC;
	uint64_t want = (next & ~(uint64_t)(SHM_LINE - 1)) + ahead;

	if (tx->zend >= want || want + 8 - tx->head_cache > S)
		return;
	for (uint64_t q = (tx->zend > next ? tx->zend : next & ~(uint64_t)(SHM_LINE - 1)) + SHM_LINE;
	     q <= want; q += SHM_LINE)
		word_zero(tx->data, q, mask);
	tx->zend = want;
}

/* Asks for a line of our ring to write (ring_put, shm.h's
 * SHM_TX_STREAM_SENDS). GCC's builtin says prefetchw only with -mprfchw;
 * x86-64 CPUs without the feature take it as a no-op, old 32-bit ones
 * may not, hence the builtin (a read prefetch) there. */
static inline void line_prefetchw(const uint8_t *p)
{
#if defined(__x86_64__) && !defined(__PRFCHW__)
	__asm__ volatile("prefetchw %0" ::"m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/* Appends one record (a then b, contiguous) to our ring to local peer li.
 *
 * Free space: [tail, head + size). We need the record, a possible PAD in
 * front of it, and 8 bytes for the terminator after the record (at the
 * line boundary after a small one: shm.h, SHM_SMALL_REC). The PAD
 * skips to the start of the ring when the record does not fit before its
 * end, and, for a payload of SHM_PAYLOAD_ALIGN bytes or more, on to where
 * b starts on a cache line: the sender's copy then stores whole lines
 * (nal_copy's loop stores whole vectors wherever the destination starts,
 * but a copy from a source on a line moves no line twice) and the
 * receiver's copy reads whole lines. A PAD is only
 * its word; what it covers may run past the end of the ring.
 *
 * The record rewinds (SHM_RF_REWIND: its terminator at the start of the
 * next lap) when it ends hot_bytes (SHM_HOT_BYTES, or _CROWDED) or more
 * into the ring and the consumer is known to have freed that
 * terminator's place.
 *
 * Stores: b, then a, then the terminator (unless stored ahead already:
 * ring_prezero, struct shm_tx's zone), the record word and the PAD word.
 * The consumer polls the line of the PAD or record word; a, which shares
 * that line, stored just before the word rather than before b's copy,
 * lets the line go to the consumer once per message, not twice (a poll
 * between a's store and the word's took it back in between). */
__attribute__((always_inline)) static inline int ring_put(struct nal *n, int li, uint32_t type, const void *a,
							size_t alen, const void *b, size_t blen)
{
	struct shm_tx *tx = &n->tx[li];
	size_t len = alen + blen, rec = 8 + len;
	uint64_t S = n->ring_size, off = tx->tail & n->ring_mask, pad, end, next, lap;
	uint64_t word, ctl_head = tx->head_cache;
	uint8_t *dst;
	int hot, nt = 0, acked, pp;

	next = rec_place(tx->tail, S, alen, blen, &pad);
	end = next + 8;
	if (end - tx->head_cache > S) {
		uint64_t h = atomic_load_explicit(&tx->ctl->head, memory_order_acquire);

		if ((int64_t)(h - tx->head_cache) > 0)
			tx->head_cache = h;
		if (end - tx->head_cache > S)
			return ring_full(n, li, tx);
	}
	atomic_store_explicit(&tx->full_count, 0, memory_order_relaxed);
	tx->full_since = 0;
	acked = tx->ack_head == tx->tail;
	pp = acked && tx->acked_prev;
	tx->acked_prev = acked;
	lap = (next + S - 1) & ~(S - 1);
	hot = (next & n->ring_mask) >= n->hot_bytes;
	word = ((uint64_t)len << SHM_LEN_SHIFT) |
	       (((n->rx[li].head >> 3) & SHM_ACK_MASK) << SHM_ACK_SHIFT) | type;
	/* Its answer may come next: our polls of its ring look ahead. */
	n->rx[li].pf_now = n->rx[li].pf_lines;
	n->rx[li].replied = 1;
	/* No ack says the consumer has read all we sent (a one-way stream):
	 * ring_ctl may, loaded now so that the line crosses while we copy.
	 * Not when this record is the first of its lap. */
	if (hot && !ring_rewind_ok(tx, lap - S, tx->tail + pad, pp) && tx->tail >= lap - S + 8) {
		ctl_head = atomic_load_explicit(&tx->ctl->head, memory_order_acquire);
		n->st.ctl_loads++;
	}
	dst = tx->data + ((tx->tail + pad) & n->ring_mask);
	/* A consumer behind: the copy that does not wait for its lines, if
	 * it streams faster with this peer (struct shm_sc). */
	if (blen >= SHM_STREAM_MIN && tx->tail - tx->head_cache >= SHM_STREAM_BEHIND &&
	    !((uintptr_t)(dst + 8 + alen) & 15)) {
		shm_sc_note(&tx->sc, sc_now(), tx->tail - tx->sc.skipped);
		n->st.stream_sends++;
		nt = tx->sc.cur == SHM_SC_NT;
	}
	if (nt) {
		shm_nt_copy(dst + 8 + alen, b, blen);
		n->st.stream_copies++;
	} else {
		nal_copy(dst + 8 + alen, b, blen);
	}
	nal_copy(dst + 8, a, alen);
	if ((int64_t)(ctl_head - tx->head_cache) > 0)
		tx->head_cache = ctl_head;
	/* The lap's rest is skipped: see ring_rewind_ok for when. */
	if (hot && ring_rewind_ok(tx, lap - S, tx->tail + pad, pp)) {
		tx->sc.skipped += lap - next;
		next = lap;
		word |= SHM_RF_REWIND;
		n->st.rewinds++;
	}
	/* Terminator first, then the record word: a consumer that sees this
	 * record also sees a zero (or a newer record) after it. */
	if (next != tx->zone && (next > tx->zend || (next & (SHM_LINE - 1))))
		word_zero(tx->data, next, n->ring_mask);
	atomic_store_explicit((_Atomic uint64_t *)(void *)dst, word, memory_order_release);
	if (pad)
		atomic_store_explicit(rec_word(tx->data, off), (pad << SHM_LEN_SHIFT) | SHM_REC_PAD,
				      memory_order_release);
	tx->tail = next;
	shm_wake_peer(n, li);
	if (n->unheard < SHM_TX_STREAM_SENDS)
		n->unheard++;
	if (rec <= SHM_SMALL_REC) {
		ring_prezero(tx, next, rec, S, n->ring_mask);
	} else if (rec <= SHM_TX_PREFETCHW_MAX && n->unheard >= SHM_TX_STREAM_SENDS &&
		   !(word & SHM_RF_REWIND)) {
		/* A stream: the next record's lines past the one it starts
		 * in, ours to write before its copy needs them (shm.h), and
		 * not past the room the consumer freed. */
		uint64_t q = (next | (SHM_LINE - 1)) + 1, q_end = next + rec + 8 + SHM_LINE - 1;

		if (q_end - tx->head_cache > S)
			q_end = tx->head_cache + S;
		for (; q < q_end; q += SHM_LINE)
			line_prefetchw(tx->data + (q & n->ring_mask));
	} else if (rec <= SHM_ZONE_MAX) {
		uint64_t zpad, z = rec_place(next, S, alen, blen, &zpad);

		if (z + 8 - tx->head_cache <= S) {
			word_zero(tx->data, z, n->ring_mask);
			tx->zone = z;
		}
	}
	return 0;
}

int shm_ring_put(struct nal *n, int li, uint32_t type, const void *a, size_t alen,
		 const void *b, size_t blen)
{
	return ring_put(n, li, type, a, alen, b, blen);
}

/* ring_put inline here: a call more, with its frame, was a tenth of a
 * small send. */
static int shm_send(struct nal *n, int peer, const void *hdr, size_t hdr_len,
		    const void *payload, size_t len)
{
	int li;

	if ((unsigned)peer >= (unsigned)n->size || (li = n->g2l[peer]) < 0 || li == n->lrank ||
	    hdr_len + len > n->max_inline)
		return NAL_EINVAL;
	if (n->dead[li])
		return NAL_EPEER;
	return ring_put(n, li, SHM_REC_MSG, hdr, hdr_len, payload, len);
}

/* Delivers what waits in the ring from local peer li. */
static int ring_drain(struct nal *n, int li)
{
	struct shm_rx *rx = &n->rx[li];
	int done = 0, empty = 0;

	while (done < SHM_RX_BUDGET) {
		uint64_t off = rx->head & n->ring_mask;
		uint64_t w = atomic_load_explicit(rec_word(rx->data, off), memory_order_acquire);
		uint32_t type = (uint32_t)w & SHM_REC_TYPE;
		size_t len = (size_t)(w >> SHM_LEN_SHIFT);

		if (!w) {
			empty = 1;
			break;
		}
		/* A lap's first record may rewind onto itself: its PAD's word
		 * and its own are zeroed here, for its terminator (shm.h). A
		 * PAD leaves pf_lines as they were: the record before it is
		 * still the last one read (the PAD only moves the head to
		 * where the next one starts). */
		if (type == SHM_REC_PAD) {
			if (!off)
				word_zero(rx->data, 0, n->ring_mask);
			rx->head += len;
			continue;
		}
		ring_take_ack(n, li, w);
		/* The record stays ours until we publish a head past it, which
		 * happens only after the upcall returned. */
		rec_prefetch(rx->data + off, len);
		if (type == SHM_REC_MSG)
			n->up.recv(n->up.arg, n->l2g[li], rx->data + off + 8, len);
		else if (type == SHM_REC_BULK)
			shm_bulk_serve_req(n, li, rx->data + off + 8, len);
		else if (type == SHM_REC_HELP)
			shm_bulk_help(n, li, rx->data + off + 8, len);
		if ((w & SHM_RF_REWIND) && off < SHM_LINE)
			word_zero(rx->data, off, n->ring_mask);
		rx->head = rec_next(rx->head, len);
		if (w & SHM_RF_REWIND)
			rx->head = (rx->head + n->ring_size - 1) & ~(n->ring_size - 1);
		/* From where the next one starts: a record past a small one's
		 * size ends mid-line. */
		rx->pf_lines = 8 + len <= SHM_RX_POLL_AHEAD
				       ? (uint32_t)(((rx->head & (SHM_LINE - 1)) + 8 + len - 1) / SHM_LINE)
				       : 0;
		uint32_t replied = rx->replied;
		rx->pf_now = rx->replied = 0;
		n->unheard = 0;
		done++;
		/* After a small record the next word sits in a line of its
		 * own (shm.h, SHM_SMALL_REC), which the producer stored its
		 * zero in: reading it now is a transfer from the producer's
		 * core before this rank can answer (2-rank 8-byte allreduce
		 * +8%, +27% while the vCPUs sat far apart). So the drain stops
		 * there, and after a record of up to SHM_ZONE_MAX that ended
		 * on a line if we sent the peer something since its last (a
		 * ping-pong, an exchange: its sends then store their
		 * terminators ahead, ring_put); in a one-way stream reading on
		 * keeps the consumer up with the producer (256 B - 1 KiB
		 * streaming 3 - 8% faster than when it stopped there too). The
		 * next poll reads it, after the answer; but once a quarter
		 * ring this drain goes on, to find the ring empty (ack_floor
		 * below). */
		if ((8 + len <= SHM_SMALL_REC ||
		     (replied && 8 + len <= SHM_ZONE_MAX && !(rx->head & (SHM_LINE - 1)))) &&
		    rx->head - rx->woken < n->ring_size / 4)
			break;
	}
	/* A store to our own line: it moves only when the producer reads
	 * it, which it does when it streams past the hot window or finds the
	 * ring full. */
	if (rx->head != rx->stored) {
		rx->stored = rx->head;
		atomic_store_explicit(&rx->ctl->head, rx->head, memory_order_release);
		/* A producer that found the ring full may sleep on it: woken
		 * each quarter ring, which leaves room for the largest record
		 * plus padding. A rewind moves our head on to the next lap's
		 * start, so reading a lap's first record that rewound wakes it
		 * too, though that record alone may have filled the ring for
		 * its next send (test_shm's self_rewind). */
		if (rx->head - rx->woken >= n->ring_size / 4) {
			rx->woken = rx->head;
			/* Found empty: acks from here on are no older than our
			 * tail now less a ring. Here, once a quarter ring, not
			 * on every pass: an older floor only makes
			 * ring_take_ack ignore acks sooner. A drain that ends
			 * within its budget without finding the ring empty
			 * stopped after a small record (or a line-ending one,
			 * answered) below the quarter, so never gets here:
			 * "done < SHM_RX_BUDGET" would read the same, but empty
			 * is the rule (test_shm's ack_floor_budget). */
			if (empty)
				n->tx[li].ack_floor = n->tx[li].tail;
			shm_wake_peer(n, li);
		}
	}
	return done;
}

/* Whether a ring from a peer has a record: all an empty poll looks at
 * (and asks for ahead).
 *
 * Once we have sent a peer something since its last record, if that was
 * of two to five lines (SHM_RX_POLL_AHEAD), each poll of its ring also
 * asks for as many lines past the head's (counted from where the next
 * record starts: struct shm_rx's pf_now), before loading the word. The
 * next record, likely the same size, then has all its lines on their way
 * at once, where those past the word's, asked for once the word was seen
 * (rec_prefetch), came one transfer later; so does a record already
 * there when the poll comes (an exchange: both ranks sent at once). The
 * producer's stores to those lines have copies to invalidate, alongside
 * the word's line's. 2 ranks, far state, 3 interleaved rounds against
 * no poll ahead: MPI ping-pong half round trips 64 B 0.458 - 0.482 ->
 * 0.374 - 0.378 us, 128 B 0.514 - 0.533 -> 0.431 - 0.438, 176 B 0.488 -
 * 0.504 -> 0.440 - 0.448 (8 B, one line, and 1 - 4 KiB level); 2-rank
 * allreduce 64 B 0.478 - 0.514 -> 0.450 - 0.456, 128 B 0.584 - 0.594 ->
 * 0.489 - 0.497 (Open MPI 0.55 - 0.56).
 *
 * Only after sending: a poll is then likely to wait for an answer, while
 * a one-way stream's consumer keeps up with its producer and took lines
 * from it mid-copy (64 B streaming 0.272 - 0.279 -> 0.257 - 0.260 GB/s,
 * 128 B 0.420 - 0.425 -> 0.381 - 0.386, MPICH's 0.43; with the
 * condition level). Not further: after any record, even one line cost
 * the 4 KiB half round trip 2 - 4% (1.015 - 1.021 -> 1.031 - 1.061 us),
 * the producer's copy meeting it; after records of up to six lines, 320
 * B half round trips read 0.54 - 0.57 us against 0.53 - 0.55, after up
 * to eight, 448 B ones 0.54 - 0.58 against 0.54. Five against four (256
 * B of MPI data and their header): 2-rank allreduce of 256 B 0.585 -
 * 0.616 -> 0.563 - 0.588 us in 3 rounds (Open MPI 0.570 - 0.581), level
 * in 3 more (0.58 - 0.60 each way); 256 B streaming 3% less (0.342 -
 * 0.347 against 0.330 - 0.337 us a message; MPICH's 0.32). */
static inline int rings_ready(const struct nal *n)
{
	for (int li = 0; li < n->lsize; li++) {
		const struct shm_rx *rx = &n->rx[li];

		if (li == n->lrank)
			continue;
		for (uint32_t k = 1; k <= rx->pf_now; k++)
			__builtin_prefetch(rx->data + ((rx->head + k * SHM_LINE) & n->ring_mask), 0, 3);
		if (atomic_load_explicit(rec_word(rx->data, rx->head & n->ring_mask), memory_order_relaxed))
			return 1;
	}
	return 0;
}

/* shm_progress past its empty poll. */
static __attribute__((noinline)) int shm_progress_rings(struct nal *n)
{
	int done = 0, L = n->lsize;
	unsigned li;

	n->in_progress = 1;
	if (!n->unlinked && n->lrank == 0)
		shm_seg_try_unlink(n);
	/* The round-robin start advances by one each call, wrapping by
	 * compare (no division). */
	li = n->rr;
	n->rr = li + 1 < (unsigned)L ? li + 1 : 0;
	for (int k = 0; k < L; k++, li = li + 1 < (unsigned)L ? li + 1 : 0) {
		struct shm_rx *rx = &n->rx[li];

		if ((int)li == n->lrank ||
		    !atomic_load_explicit(rec_word(rx->data, rx->head & n->ring_mask), memory_order_relaxed))
			continue;
		done += ring_drain(n, (int)li);
	}
	if (n->nbulk)
		done += shm_bulk_progress(n);
	n->in_progress = 0;
	return done;
}

/* An empty poll is what a waiting or testing rank repeats, and how soon
 * it sees an arrival: a load of the next record word per peer (and the
 * prefetches of rings_ready), returning before anything else is set up.
 * The rest is a call of its own, whose frame (six registers saved and
 * restored) the empty poll does not pay: 17 of the ~370 instructions an
 * empty MPI_Testany took before (doc/bench-notes.md, session 74). */
static int shm_progress(struct nal *n)
{
	if (!n->started || n->in_progress ||
	    (!n->nbulk && (n->unlinked || n->lrank != 0) && !rings_ready(n)))
		return 0;
	return shm_progress_rings(n);
}

/* Whether progress() would find something: a record, or bounce work. */
int shm_pending(struct nal *n)
{
	for (int li = 0; li < n->lsize; li++) {
		if (li == n->lrank)
			continue;
		if (atomic_load_explicit(rec_word(n->rx[li].data, n->rx[li].head & n->ring_mask),
					 memory_order_acquire))
			return 1;
		/* A ring that refused a send has room again: the caller retries.
		 * Said once per head move, so an abandoned retry cannot spin us. */
		if (atomic_load_explicit(&n->tx[li].full_count, memory_order_relaxed)) {
			uint64_t h = atomic_load_explicit(&n->tx[li].ctl->head, memory_order_acquire);

			if (h != n->tx[li].sleep_seen) {
				n->tx[li].sleep_seen = h;
				return 1;
			}
		}
	}
	return n->nbulk ? shm_bulk_pending(n) : 0;
}

void shm_get_stats(struct nal *n, struct shm_stats *out)
{
	*out = n->st;
}

const struct nal_ops nal_shm_ops = {
	.name = "shm",
	.open = shm_open_nal,
	.addr = shm_addr_fn,
	.start = shm_start,
	.connect = shm_connect,
	.reaches = shm_reaches,
	.close = shm_close,
	.props = shm_props,
	.send = shm_send,
	.mem_reg = shm_mem_reg,
	.mem_dereg = shm_mem_dereg,
	.bulk = shm_bulk,
	.progress = shm_progress,
	.sleep = shm_sleep,
	.kick = shm_kick,
	.set_polling = shm_set_polling,
	.peer_check = shm_peer_check_rank,
};
