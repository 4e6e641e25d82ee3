/*
 * lib/nal/shm/shm_bulk.c - one-sided bulk moves between local ranks.
 *
 * Three methods. Bounce: the move goes through the bounce area (requester,
 * target) of the segment, two plain copies pipelined over SHM_NSLOT slots,
 * both CPUs at work:
 *
 *   requester: SHM_REC_BULK {op, flags, raddr, len} through the ring to the target;
 *   READ:  target's progress() copies chunks of raddr into free slots and
 *          marks them full; the requester's progress() copies full slots
 *          into its iovecs and frees them; done when all chunks arrived;
 *   WRITE: the requester fills free slots from its iovecs; the target's
 *          progress() copies full slots to raddr and frees them; done when
 *          the target has freed every chunk (the bytes are in place).
 *
 * NT: the same, the producer's copy into the slots by non-temporal stores
 * (SHM_BREQ_NT tells a READ's target; shm_nt_copy says when it wins).
 *
 * CMA: one copy by the kernel (process_vm_readv/writev on the peer's pid),
 * done before bulk() returns (or, behind a split move in flight or
 * another queued CMA move, from progress() at its turn: below); if the OS
 * refuses CMA (EPERM: Yama ptrace_scope, a container, a seccomp filter, a
 * peer not dumpable), it is never tried again with that peer. Before each
 * one a poll() of the peer's pidfd says whether it has exited, so that no
 * move reaches whoever the kernel gave its pid to since (cma_peer_gone).
 *
 * Which is fastest depends on the machine (bulk_mode() has the figures: 1.7x
 * for bounce over CMA on one guest, 2.7x for CMA over bounce on another,
 * where NT streams 1.3x faster than CMA) and on the load, so by default the
 * requester measures: per local peer and size class (struct shm_choice,
 * eight classes 2x wide from 16 KiB to 2 MiB), each move's time from its
 * start (a bounced one's from when it becomes the area's active move) to its
 * end, in fs per byte (bounced moves that run back to back each at their
 * run's mean: rq_time_done says why): one clock_gettime (vDSO) at each end
 * of a move, against the microseconds a bulk move takes. The warm-up takes
 * SHM_CH_WIN moves of each permitted method in turn; then the one with the
 * lowest estimate, the lowest of its latest SHM_CH_HIST costs (ch_low says
 * why the lowest), is the pick, and each other is tried again soon
 * (SHM_CH_CONFIRM moves apart: warm-up moves pay for first touches), and
 * after a switch the old pick is too (in turn with the warm-up's early
 * probes still owed). A probe takes SHM_CH_WIN moves of another method in a
 * row, every SHM_CH_REPROBE moves (the others in turn), or at once when the
 * pick's estimate rises above another's; the probed method becomes the pick
 * when the lowest of the probe's moves is a sixteenth lower than the pick's
 * estimate. Several moves in a row, not single moves, because a move pays
 * for the cache state the previous one left: alternating 32 KiB ping-pongs
 * here cost 4.4-5.2 us by CMA and 4.8-5.2 bounced, each method's own runs
 * 4.1-4.3 and 5.4-5.6. Why this cannot cost much:
 *  - a probe of a slower method costs SHM_CH_WIN moves in SHM_CH_REPROBE
 *    (under 1% at 2-3x), and one when the pick's estimate rises (after it
 *    the other's record is fresh: no probe again until the pick rises
 *    further);
 *  - the lowest ignores preempted moves, up to all but one of a
 *    probe's; a longer stretch of them can make a wrong switch, which a
 *    probe of the old pick SHM_CH_CONFIRM moves later undoes. Bounced
 *    moves that run back to back are sampled at their run's mean
 *    (rq_time_done), so one preempted move raises all of its run's
 *    samples: a probe at once, and a switch the confirming probe undoes;
 *  - the sixteenth of hysteresis stops swings between methods whose costs
 *    are close, and while they are that close a swing costs at most that;
 *  - the chooser costs about 155 instructions a move (callgrind, 200,000
 *    take+record pairs of three methods, costs jittering up to 15%: 17
 *    to take, the rest to record; 230 with the median of eight kept in a
 *    sorted window, 1,480 while each estimate was sorted afresh), no
 *    allocation (its state sits in struct shm_bpeer), and PTL_SHM_CMA=1
 *    skips it: well under 0.1 us against the 4-5 us of a 32 KiB move.
 * The two ranks of a pair make one choice: the lower local rank (the
 * leader) chooses as above for its moves to the other, and tells it
 * (SHM_HELP_PICK) the method each time its next move in a class takes
 * another one (warm-up, probes, switches), and every SHM_CH_TELL_EVERY
 * moves anyway; the other's moves in that class follow (ch_take), and its
 * own timings only feed its report - while the leader moves too: before
 * the first word and after SHM_CH_QUIET moves of its own without one (a
 * one-way stream from the leader, whose receiver makes every move) it
 * chooses for itself.
 * Why: in an exchange (a 2-rank allreduce's halves: each rank reads the
 * other's at the same time) each move's time depends on what the peer's
 * move does meanwhile, so two choosers each measure the other's pick as
 * much as their own. Chosen apart, the pair ended launches mixed (CMA one
 * way, bounce or NT the other: the CMA side copies inside the kernel
 * while its peer waits for it to serve its slots) or apart on noisy
 * warm-up samples, and the launch kept what it got: 2-rank MPI_Allreduce
 * 1 MiB read 175-235 us by launch, the mixed and NT-NT ones the slow ones
 * (Open MPI 161-170, both ranks forced to CMA 139-208). Followed, the
 * leader's samples time the pair's joint method (but for the one move per
 * change that the follower had started before it heard); in a ping-pong
 * the two sides' moves are alike, and the leader's time them as well.
 * A move that would go by CMA while a move to the same peer still waits
 * in the bounce area's queue goes the queued one's way instead, in every
 * mode: CMA copies inside bulk(), so it would land, and complete, before
 * the moves asked for earlier (a READ of bytes a queued WRITE has yet to
 * write, a WRITE under a queued READ; shm_bulk). Chosen, it is neither
 * taken nor told, its time only sampled (ch_take says why: in a stream of
 * gets the two timed each other).
 * A split CMA move (below) is still in flight when bulk() returns 1, its
 * second half the peer's to copy: the moves to that peer asked meanwhile
 * wait behind it, and those behind them in turn, so that every move lands
 * and completes in the order asked (a READ of bytes its half has yet to
 * write, a move's END before the split one's; before, a CMA move asked
 * meanwhile was done at once, and a bounced one could finish first). A
 * bounced move's request waits for the split move to complete (rq_work);
 * a CMA move is queued as such (struct shm_bop's method SHM_M_CMA, behind
 * a queued CMA move too) and moved from progress() once the moves ahead
 * of it have completed (cma_run), as bulk() would have moved it: split
 * if long, and then the queue waits again. Its time runs from there, so
 * the chooser counts it as any CMA move (not joined: no bounced move's
 * slots wait on it). A stream of long CMA moves is then split move
 * after move, where the moves asked during the first one's flight went
 * unsplit at once; the order costs that wait for each split half.
 * PTL_SHM_CMA=1 forces CMA (long moves split unless crowded), PTL_SHM_CMA=0
 * forbids it (the chooser then picks between bounce and NT). Where the
 * local ranks outnumber the CPUs they may use (shm_bulk_crowded() says why),
 * every move bounces by plain stores, unchosen (bulk_mode() says why);
 * every one by unsplit CMA if PTL_SHM_CMA=1.
 * CMA refused after it worked ends CMA with that peer: a split move whose
 * half was refused finishes it by bounce (cma_split, hp_work).
 *
 * A long CMA move (SHM_SPLIT_MIN and up) is split: the mover asks the peer
 * (SHM_REC_HELP) to copy the second half with its own CPU and copies the
 * first half meanwhile; the peer stores a done word back into the mover's
 * memory by CMA, and the move completes (bulk_done) when both halves are
 * in place. The peer is waiting for this move anyway (its get's REPLY, its
 * put's ACK), so its core is idle; two cores copy at once, and each touches
 * half the bytes, which keeps a 1 MiB ping-pong's buffers within a core's
 * L2. If the peer cannot copy its half, the mover does. One move at a
 * time is split; the moves asked while it is in flight wait behind it
 * (above).
 *
 * Both sides walk the area's slots in the same order (a chunk counter per
 * area on each side) and the moves in the order they were asked for: the
 * target keeps up to SHM_SV_QUEUE requests, and a move's pieces follow
 * the last one's in the slots (rq_may_send says why; moves of the other
 * op wait until the area is empty). Slot hand-over is a release store of `full`, read
 * with acquire by the other side; each hand-over wakes the other side if it
 * sleeps (shm_wake_peer), so neither needs to spin. A move's record comes
 * from a free list of finished ones: no malloc per move once warm.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "nal/nal_copy.h"
#include "rt/rt_proc.h"
#include "shm.h"

#define SHM_CMA_IOV 64 /* local iovecs per process_vm_* call */
#define SHM_BOP_IOV 4  /* iovecs a reused move record has room for */
#define SHM_STALL_POLLS 4096
#if defined(__SSE2__)
#define SHM_NT_OK 1 /* shm_nt_copy streams; without SSE2 it would be memcpy: not offered */
#else
#define SHM_NT_OK 0
#endif

int shm_mem_reg(struct nal *n, void *addr, size_t len, struct nal_mr *mr)
{
	(void)n;
	(void)len;
	mr->addr = (uint64_t)(uintptr_t)addr;
	mr->key = 0;
	mr->priv = NULL;
	return 0;
}

void shm_mem_dereg(struct nal *n, struct nal_mr *mr)
{
	(void)n;
	(void)mr;
}

/* Whether local peer li's process is gone, asked before each system
 * call of CMA to it: CMA goes by pid, and once the peer has died the
 * kernel may give its pid to another process (any user's; pid_max is
 * 32768 on many hosts), whose memory a move would then write or read,
 * before anything else noticed the death (shm_peer_check runs when
 * something is stuck, from lib/ptl's probe once a second while it waits,
 * or when asked). At the first CMA move with the peer its pidfd is
 * opened (rt_proc_pidfd: of the process that published the pid and its
 * start time, or none: the peer is gone already); before each move one
 * poll() on it says whether it has exited since. Gone: the peer is dead
 * (shm_peer_dead: its moves fail in order, peer_failed), the move is
 * refused with NAL_EPEER. Where there are no pidfds (before Linux 5.3,
 * a seccomp filter, no fd left) the first move's start-time check is
 * all, and a death is found as before (ESRCH, a stuck move).
 * The cost, a system call a move: a poll() of a pidfd takes 0.20 us on
 * this EPYC guest; a process_vm_writev to a pinned peer, 41 runs each way
 * interleaved, medians, without vs with it: 64 KiB 5.18-5.23 vs 5.47-5.53
 * us (+6%), 1 MiB 64.6-64.8 vs 65.2 (+0.6-1%); bench/shm_ring with
 * PTL_SHM_CMA=1, 3 interleaved runs: a 32 KiB move and its notice 1.86 -
 * 1.95 vs 2.06 - 2.08 us a half round trip, 64 KiB moves back to back
 * (split: a poll on each side) 12.4 - 12.6 vs 11.6 - 12.0 GB/s, 1 MiB
 * level (15.3 - 15.6). Not closed: a peer that dies, and whose pid is
 * given again, between the poll and the end of the move's system calls
 * (a copy's time: the pid space would have to come round meanwhile). */
static int cma_peer_gone(struct nal *n, int li)
{
	struct shm_bpeer *bp = &n->bp[li];

	if (!bp->pidfd_state) {
		pid_t pid = (pid_t)atomic_load_explicit(&n->ranks[li].pid, memory_order_acquire);
		int fd;

		if (pid <= 0) /* not attached: the system call answers */
			return 0;
		fd = rt_proc_pidfd(pid, atomic_load_explicit(&n->ranks[li].start, memory_order_relaxed));
		if (fd < 0 && errno != ESRCH) {
			bp->pidfd_state = -1;
			return 0;
		}
		if (fd >= 0) {
			bp->pidfd = fd;
			bp->pidfd_state = 1;
		}
	}
	if (bp->pidfd_state < 0 || (bp->pidfd_state > 0 && !rt_proc_exited(bp->pidfd)))
		return 0;
	n->st.cma_gone++;
	shm_peer_dead(n, li);
	return 1;
}

/* One copy by the kernel, to a peer that lives (cma_peer_gone); loops over
 * partial transfers. */
static int cma_move(struct nal *n, int li, enum nal_bulk_op op, const struct iovec *local,
		    int niov, uint64_t raddr, size_t len)
{
	pid_t pid = (pid_t)atomic_load_explicit(&n->ranks[li].pid, memory_order_relaxed);
	struct iovec lv[SHM_CMA_IOV], rv;
	int i = 0;
	size_t off = 0, done = 0;

	if (cma_peer_gone(n, li))
		return NAL_EPEER;
	while (done < len) {
		size_t t = 0;
		int k = 0;
		ssize_t r;

		for (int j = i; j < niov && k < SHM_CMA_IOV && done + t < len; j++) {
			size_t o = j == i ? off : 0, l = local[j].iov_len - o;

			if (l > len - done - t)
				l = len - done - t;
			if (!l)
				continue;
			lv[k].iov_base = (char *)local[j].iov_base + o;
			lv[k].iov_len = l;
			t += l;
			k++;
		}
		rv.iov_base = (void *)(uintptr_t)(raddr + done);
		rv.iov_len = t;
		if (op == NAL_BULK_READ)
			r = process_vm_readv(pid, lv, (unsigned long)k, &rv, 1, 0);
		else
			r = process_vm_writev(pid, lv, (unsigned long)k, &rv, 1, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPERM || errno == ENOSYS)
				return NAL_EPERM;
			if (errno == ESRCH) {
				shm_peer_check(n, li, 1);
				return NAL_EPEER;
			}
			fprintf(stderr, "ptl shm: %s of %zu bytes at 0x%llx in rank %d failed: %s\n",
				op == NAL_BULK_READ ? "process_vm_readv" : "process_vm_writev", t,
				(unsigned long long)(raddr + done), n->l2g[li], strerror(errno));
			return errno == EFAULT ? NAL_EINVAL : NAL_EIO;
		}
		if (r == 0)
			return NAL_EIO;
		done += (size_t)r;
		/* Advance the local cursor by r bytes. */
		while (r > 0) {
			size_t l = local[i].iov_len - off;

			if ((size_t)r < l) {
				off += (size_t)r;
				r = 0;
			} else {
				r -= (ssize_t)l;
				i++;
				off = 0;
			}
		}
	}
	return 0;
}

static int stalled(struct nal *n, int li, uint64_t *since, uint32_t *count);
static void ch_told(struct nal *n, int li, uint64_t k, uint64_t m);
static void ch_note(struct nal *n, int li, int m, size_t len, uint64_t ns);

/* A producer's copy into a bounce slot (or, streaming, into a ring:
 * shm_nal.c) by non-temporal stores: the lines
 * go to memory, not into the producer's cache, so the consumer's loads
 * need not fetch them from that cache (a probe and a transfer per line,
 * slow where the two cores sit far apart), and the producer's stores need
 * no read for ownership of lines the consumer read last. Where the two
 * share a cache it loses (4 ranks on 2 cores, MPI_Allreduce 256 KiB: 200
 * us against 130 with plain stores): a method of its own for the chooser
 * (SHM_M_NT). On the Zen 4 guest, 2 pinned ranks, PTL_SHM_CMA=0, 3
 * interleaved launches (loaded), plain vs non-temporal: 1 MiB streaming
 * 1.3-5.5 vs 14.7-16.2 GB/s, 64 KiB 1.1-2.0 vs 9.6-9.8; 64 KiB half round
 * trip 9.7-36 vs 7.0-19 us. */
void shm_nt_copy(void *dst, const void *src, size_t len)
{
#if defined(__SSE2__)
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t head = (64 - ((uintptr_t)d & 63)) & 63; /* whole lines: a write-combining buffer each */

	if (len < 1024) {
		nal_copy(d, s, len);
		return;
	}
	nal_copy(d, s, head);
	d += head;
	s += head;
	len -= head;
	for (; len >= 64; len -= 64, d += 64, s += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)s);
		__m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(s + 48));

		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), c);
		_mm_stream_si128((__m128i *)(d + 48), e);
	}
	nal_copy(d, s, len);
	_mm_sfence(); /* before the slot's release store: streamed stores are weakly ordered */
#else
	memcpy(dst, src, len); /* the chooser does not offer it (SHM_NT_OK); the ring's never picks it without a TSC */
#endif
}
static struct shm_bop *bop_new(struct nal *n, enum nal_bulk_op op, const struct iovec *local, int niov,
			       uint64_t raddr, size_t len, void *cookie);
static void bop_queue(struct nal *n, struct shm_bpeer *bp, struct shm_bop *b);
static void bop_queue_first(struct nal *n, struct shm_bpeer *bp, struct shm_bop *b);
static void bop_put(struct nal *n, struct shm_bop *b);

/* CMA with local peer li refused (EPERM, ENOSYS), though it may have
 * worked until now: a seccomp filter installed since, Yama's ptrace_scope
 * raised, the peer no longer dumpable (then other peers may still allow
 * it: per peer). Its moves bounce from now on. */
static void cma_refused(struct nal *n, int li)
{
	n->bp[li].cma_refused = 1;
}

/* Whether moves to local peer li may go by CMA. */
static int cma_allowed(const struct nal *n, int li)
{
	return n->cma && !n->bp[li].cma_refused;
}

static size_t piece(const struct nal *n)
{
	return shm_piece(n->chunk);
}

/* Where in an area's data (after its slots' words) piece number cur goes:
 * in slot cur % SHM_NSLOT, at the next of the slot's first `parts`
 * piece-sized parts each lap of the slots, so a long run of pieces walks
 * SHM_NSLOT * parts pieces' worth of bytes before it writes the same
 * bytes again. Why: a piece's bytes stay in the consumer's cache after it
 * copied them in, and the producer's next store to them first takes them
 * back from there. With every piece at its slot's start the producer
 * rewrote what the consumer had just read every SHM_NSLOT pieces (a 512
 * KiB move rewrote its own first half): on the Zen 4 guest, 4 ranks bound
 * two to a core (chunk 256 KiB), a producer's 64 KiB copy into such bytes
 * took 6 - 10 us of CPU against 1.5 - 2 into bytes the consumer no longer
 * held, and a back-to-back 128 KiB exchange of one pair took 28 - 30 us,
 * 20 - 21 with a 3 MiB memset between exchanges (2026-12-07; flushing the
 * consumer's lines after its copy did not help: the stores then went to
 * memory). Both sides count the same pieces in the same order (the
 * requester's rq_cur, the target's sv_cur) and take parts from the same
 * segment header, so both compute the same offset. */
size_t shm_slot_off(size_t chunk, size_t parts, uint64_t cur)
{
	return (size_t)(cur % SHM_NSLOT) * chunk + (size_t)((cur / SHM_NSLOT) % parts) * shm_piece(chunk);
}

/* How many parts of each slot the pieces walk in a segment of L ranks
 * (the creator's plan(), shm_seg.c, puts it in the header): as many as a
 * slot holds, a power of two, while the walks of all the segment's pairs
 * together span at most SHM_WALK_BUDGET; at least one (the slot's start,
 * as without the walk). Why a budget: the walk spreads each pair's moves
 * over more lines, and where many pairs move at once their lines
 * together outgrow the caches. On the Zen 4 guest, bench/mpi_allreduce,
 * interleaved launches, medians us, no walk vs all four parts vs two
 * (2026-12-07): 4 ranks bound two to a core (12 pairs: 12 MiB walked
 * with four parts, 6 with two), MPI_Allreduce's own 1 MiB (the
 * bidirectional ring) 318 - 352 vs 320 - 408 (three of four launches
 * over 385) vs 308 - 332, the tree forced 581 - 673 vs 347 - 358 vs 369
 * - 377, halving-doubling forced 396 - 437 (and one launch of 1495) vs
 * 331 - 362 vs 310 - 327; 2 ranks pinned (2 pairs, 2 MiB with four
 * parts) 1 MiB 114 - 150 vs 81 - 86 vs 88 - 99, 256 KiB 33 - 45 vs 21.3
 * vs 27 - 34; one pair's back-to-back 128 KiB exchange among 4 ranks 29
 * - 83 vs 19.6 - 20.4 vs 25 - 26. So 2 ranks walk eight parts (their
 * slots 512 KiB since: shm_chunk_size), 3 ranks four and 4 ranks two;
 * from 5 ranks (chunks of 128 KiB and less) the budget leaves one part:
 * no walk, which nothing here has measured either way. */
size_t shm_slot_parts(uint32_t L, size_t chunk)
{
	uint64_t pairs = shm_pairs(L);
	size_t pc = shm_piece(chunk), full = chunk / pc, parts = 1;

	while (parts * 2 <= full && pairs * SHM_NSLOT * pc * parts * 2 <= SHM_WALK_BUDGET)
		parts *= 2;
	return parts;
}

/* Splits a CMA move of len bytes with the peer when it is long and its
 * second half is one piece of local memory: asks the peer to copy that
 * half, copies the first. 1: pending (bulk_done follows); NAL_EPEER: the
 * peer is dead; 0: not split, the caller moves it all. */
static int cma_split(struct nal *n, int li, enum nal_bulk_op op, const struct iovec *local, int niov,
		     uint64_t raddr, size_t len, void *cookie)
{
	struct shm_bpeer *bp = &n->bp[li];
	size_t h = (len / 2) & ~(size_t)4095, at = 0;
	int i = 0;

	if (len < SHM_SPLIT_MIN || bp->hp_active || !n->cma_ok || !cma_allowed(n, li) || shm_bulk_crowded(n))
		return 0;
	while (i < niov && at + local[i].iov_len <= h)
		at += local[i++].iov_len;
	if (i == niov || at + local[i].iov_len - h < len - h)
		return 0;
	bp->hp_iov.iov_base = (char *)local[i].iov_base + (h - at);
	bp->hp_iov.iov_len = len - h;
	bp->hp_op = op;
	bp->hp_raddr = raddr + h;
	struct shm_help_req r = {
		/* the peer's view: we write its memory, so it reads ours */
		.op = op == NAL_BULK_WRITE ? NAL_BULK_READ : NAL_BULK_WRITE,
		.their_addr = (uint64_t)(uintptr_t)bp->hp_iov.iov_base,
		.own_addr = bp->hp_raddr,
		.len = len - h,
		.done_addr = (uint64_t)(uintptr_t)&bp->hp_done,
	};
	atomic_store_explicit(&bp->hp_done, 0, memory_order_relaxed);
	if (shm_ring_put(n, li, SHM_REC_HELP, &r, sizeof(r), NULL, 0) != 0)
		return 0;
	/* Our half, before the move counts as pending: a peer found dead
	 * here fails it through our return code, not through a bulk_done
	 * from inside bulk(). Otherwise its result waits for the peer's. */
	bp->hp_status = cma_move(n, li, op, local, niov, raddr, h);
	if (bp->hp_status == NAL_EPEER)
		return NAL_EPEER;
	bp->hp_redo = NULL;
	if (bp->hp_status == NAL_EPERM) {
		/* Refused now: our half bounces, once the peer has answered
		 * (it may be copying its half into our memory meanwhile). */
		cma_refused(n, li);
		bp->hp_redo = bop_new(n, op, local, niov, raddr, h, cookie);
		bp->hp_status = bp->hp_redo ? 0 : NAL_ENOMEM;
	}
	bp->hp_active = 1;
	bp->hp_len = len;
	bp->hp_cookie = cookie;
	bp->hp_stall_since = 0;
	bp->hp_stall_count = 0;
	n->nbulk++;
	n->st.split_moves++;
	return 1;
}

/* Tells local peer li by the ring that we did not copy its split move's
 * part (our CMA is refused: we cannot store its done word either); later
 * from shm_bulk_progress if the ring is full now. */
static void help_answer(struct nal *n, int li, uint64_t done_addr)
{
	struct shm_bpeer *bp = &n->bp[li];
	struct shm_help_req a = { .op = SHM_HELP_FAILED, .done_addr = done_addr };

	if (shm_ring_put(n, li, SHM_REC_HELP, &a, sizeof(a), NULL, 0) == 0) {
		if (bp->help_owed) {
			bp->help_owed = 0;
			n->nbulk--;
		}
		shm_wake_peer(n, li);
	} else if (!bp->help_owed && !n->dead[li]) {
		bp->help_owed = done_addr;
		n->nbulk++;
	}
}

/* A SHM_REC_HELP arrived from local peer li: copy our part of its move now
 * (its CPU copies the other part meanwhile) and tell it by its done word. */
void shm_bulk_help(struct nal *n, int li, const void *body, size_t len)
{
	struct shm_help_req r;
	uint64_t st = 1;

	if (len != sizeof(r)) {
		fprintf(stderr, "ptl shm: malformed copy request from rank %d ignored\n", n->l2g[li]);
		return;
	}
	memcpy(&r, body, sizeof(r));
	if (r.op == SHM_HELP_PICK) {
		ch_told(n, li, r.len, r.own_addr);
		return;
	}
	if (r.op == SHM_HELP_FAILED) { /* the answer to our split move: it could not */
		struct shm_bpeer *bp = &n->bp[li];

		if (bp->hp_active && r.done_addr == (uint64_t)(uintptr_t)&bp->hp_done)
			atomic_store_explicit(&bp->hp_done, 2, memory_order_release);
		return;
	}
	struct iovec own = { (void *)(uintptr_t)r.own_addr, (size_t)r.len };
	int rc = NAL_EPERM;

	if (r.op != NAL_BULK_READ && r.op != NAL_BULK_WRITE)
		rc = NAL_EINVAL;
	else if (cma_allowed(n, li))
		rc = cma_move(n, li, (enum nal_bulk_op)r.op, &own, 1, r.their_addr, (size_t)r.len);
	if (n->dead[li])
		return; /* gone: nobody to answer */
	if (rc != 0)
		st = 2; /* it copies the part itself */
	if (rc == NAL_EPERM && n->cma)
		cma_refused(n, li);
	if (cma_allowed(n, li)) {
		struct iovec lv = { &st, sizeof(st) }, rv = { (void *)(uintptr_t)r.done_addr, sizeof(st) };

		/* The data went first, by the same CPU: a store seen after it.
		 * Its check (cma_peer_gone) was our copy's: one more here cost
		 * a split move's peer 0.2 us for a window of a copy's time.
		 * A request we could not read made no copy: checked here. */
		if (rc == NAL_EINVAL && cma_peer_gone(n, li))
			return;
		if (process_vm_writev((pid_t)atomic_load_explicit(&n->ranks[li].pid, memory_order_relaxed),
				      &lv, 1, &rv, 1, 0) == (ssize_t)sizeof(st)) {
			shm_wake_peer(n, li);
			return;
		}
		if (errno != EPERM && errno != ENOSYS)
			return; /* gone: its own death handling ends the move */
		cma_refused(n, li);
	}
	help_answer(n, li, r.done_addr);
}

/* Our split move to li: complete once the peer answered. */
static int hp_work(struct nal *n, int li)
{
	struct shm_bpeer *bp = &n->bp[li];
	struct shm_bop *redo;
	uint64_t d;
	int rc;

	if (!bp->hp_active)
		return 0;
	d = atomic_load_explicit(&bp->hp_done, memory_order_acquire);
	if (!d) {
		if (stalled(n, li, &bp->hp_stall_since, &bp->hp_stall_count))
			return 1; /* the peer is dead: shm_bulk_fail_peer ended the move */
		return 0;
	}
	rc = bp->hp_status;
	redo = bp->hp_redo; /* our half, refused by CMA */
	bp->hp_redo = NULL;
	if (d != 1 && rc == 0) { /* the peer could not: its half is ours too */
		if (cma_allowed(n, li))
			rc = cma_move(n, li, bp->hp_op, &bp->hp_iov, 1, bp->hp_raddr, bp->hp_iov.iov_len);
		else
			rc = NAL_EPERM;
		if (n->dead[li]) { /* found dead there: shm_bulk_fail_peer ended the move */
			if (redo)
				bop_put(n, redo);
			return 1;
		}
		if (rc == NAL_EPERM) {
			cma_refused(n, li);
			rc = 0;
			if (redo) { /* the whole move then: it has all the iovecs */
				redo->len = bp->hp_len;
				redo->nchunk = (redo->len + piece(n) - 1) / piece(n);
			} else if (!(redo = bop_new(n, bp->hp_op, &bp->hp_iov, 1, bp->hp_raddr,
						    bp->hp_iov.iov_len, bp->hp_cookie))) {
				rc = NAL_ENOMEM;
			}
		}
	}
	bp->hp_active = 0;
	n->nbulk--;
	if (rc == 0 && redo) { /* completes by bounce, untimed: bulk_done from rq_work */
		bop_queue_first(n, bp, redo);
		return 1;
	}
	if (redo)
		bop_put(n, redo);
	if (rc == 0) {
		n->st.cma_moves++;
		if (bp->hp_t0)
			ch_note(n, li, SHM_M_CMA, bp->hp_len, shm_now_ns() - bp->hp_t0);
	}
	if (n->up.bulk_done)
		n->up.bulk_done(n->up.arg, bp->hp_cookie, rc);
	return 1;
}

/* to_iov: from buf into op's iovecs; else from them into buf, by
 * non-temporal stores if op->method says so. */
static void iov_copy(struct shm_bop *op, uint8_t *buf, size_t len, int to_iov)
{
	while (len) {
		struct iovec *v = &op->iov[op->iov_i];
		size_t t = v->iov_len - op->iov_off;

		if (!t) {
			op->iov_i++;
			op->iov_off = 0;
			continue;
		}
		if (t > len)
			t = len;
		if (to_iov)
			nal_copy((char *)v->iov_base + op->iov_off, buf, t);
		else if (op->method == SHM_M_NT)
			shm_nt_copy(buf, (char *)v->iov_base + op->iov_off, t);
		else
			nal_copy(buf, (char *)v->iov_base + op->iov_off, t);
		op->iov_off += t;
		buf += t;
		len -= t;
	}
}

/* Whether this host's ranks outnumber the CPUs they may use: the union
 * of their affinity masks (published at attach, shm_seg.c), fewer if our
 * cgroup's cpu.max quota allows fewer. Known once every local rank has
 * published; an affinity changed later is not seen. Then a peer asked for
 * anything may wait for a core: a CMA move is not split
 * (4 ranks on 2 cores, MPI_Allreduce 256 KiB by halving-doubling, 10
 * interleaved launches at load 4: median 508 us unsplit, 667 split; 1 MiB
 * even), and moves bounce without a choice: the chooser's clock would
 * charge a bounced move with its peer's wait for a core, which the job
 * pays whichever way the bytes go (the peer has to run to go on anyway),
 * and pick CMA, which loses here: the same allreduce, 10 launches at load
 * 5-6, bounced vs CMA (Open MPI): 256 KiB 256 vs 327 us (259), 1 MiB 827
 * vs 1108 (1042); by the chooser 354 and 1095. */
int shm_bulk_crowded(struct nal *n)
{
	if (!n->crowded) {
		uint64_t u[SHM_CPU_WORDS] = { 0 };
		int ncpu = 0, all = 1, q;

		for (int li = 0; li < n->lsize; li++) {
			const struct shm_rank *r = &n->ranks[li];

			if (!atomic_load_explicit(&r->ncpu, memory_order_acquire)) {
				all = 0; /* not attached yet: counted as none for now */
				continue;
			}
			for (int w = 0; w < SHM_CPU_WORDS; w++)
				u[w] |= r->cpus[w];
		}
		for (int w = 0; w < SHM_CPU_WORDS; w++)
			ncpu += __builtin_popcountll(u[w]);
		if ((q = shm_cpu_quota()) > 0 && q < ncpu)
			ncpu = q;
		if (!all) /* may still grow: not kept */
			return n->lsize > ncpu;
		n->crowded = n->lsize > ncpu ? 1 : -1;
	}
	return n->crowded > 0;
}

/* cgroup v2 only (/proc/self/cgroup's "0::" line); read once per process. */
int shm_cpu_quota(void)
{
	static int q = -1;
	char line[512], path[600];
	FILE *f;

	if (q >= 0)
		return q;
	q = 0;
	if (!(f = fopen("/proc/self/cgroup", "r")))
		return q;
	path[0] = 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpu.max", line + 3);
			break;
		}
	fclose(f);
	if (path[0] && (f = fopen(path, "r"))) {
		long long quota, period;

		if (fscanf(f, "%lld %lld", &quota, &period) == 2 && quota > 0 && period > 0)
			q = (int)((quota + period - 1) / period);
		fclose(f);
	}
	return q;
}

int shm_cma_env(const char *e)
{
	static atomic_int warned;

	if (!e || !e[0])
		return -1;
	if (!strcmp(e, "0") || !strcmp(e, "1"))
		return e[0] - '0';
	if (!atomic_exchange(&warned, 1))
		fprintf(stderr, "ptl shm: PTL_SHM_CMA=%s is neither 0 nor 1: the bulk method is chosen by "
			"measurement, as when unset\n", e);
	return -1;
}

/* The bulk mode, PTL_SHM_CMA read once: 1 forces CMA, 0 forbids it (then
 * n->cma is 0 already, shm_nal.c: the chooser picks the stores), anything
 * else lets the chooser decide; crowded (shm_bulk_crowded), moves bounce by
 * plain stores unless CMA is forced.
 * Why not a fixed default: the two methods trade places between machines.
 * The bounce copies are plain stores at both ends (nal_copy), two CPUs in a pipeline;
 * a CMA copy is the kernel's, page by page with each remote page pinned,
 * and one CPU (two when split). On the Zen 5 guest a 256 KiB
 * process_vm_readv of a buffer the other core wrote ran at 15 GB/s, a
 * memcpy of it at 78 GB/s; 2 pinned ranks, bench/mpi_pingpong.c, CMA vs
 * bounce: 1 MiB streaming 12.4 vs 45.1 GB/s, 1 MiB half round trip 43.3
 * vs 26.1 us. On the Zen 4 guest whose two vCPUs sit far apart (an 8-byte
 * half round trip of 0.17 us), the reverse: 1 MiB half round trip 46 us
 * by CMA, 128 us bounced (every bounced line crosses between the cores'
 * caches twice: the producer's store invalidates the consumer's copy, the
 * consumer's load fetches it back; CMA's one copy reads each line across
 * once). And CMA needs nothing of the peer, which should matter where
 * ranks outnumber cores (a bounced move waits for its peer to be
 * scheduled), but measured it does not: there (crowded: no chooser,
 * shm_bulk_crowded says why) every move bounces. (Moves of 128 KiB and up
 * went by unsplit CMA there for a while, measured faster on an earlier
 * build: the commit that ended it has those figures.) 4 ranks on the 2
 * vCPUs of an AMD EPYC guest, bound (ptlrun --bind-to core), bench/
 * mpi_allreduce.c, 3 interleaved launches each, medians us, CMA from
 * 128 KiB vs every move bounced (2026-12-05): near state, halving-doubling
 * forced, 256 KiB 92 - 97 vs 72 - 74, 512 KiB 158 - 161 vs 108 - 110,
 * 1 MiB 276 - 283 vs 193 - 197; the bidirectional ring forced, 512 KiB
 * (128 KiB moves) 170 - 180 vs 118 - 120; MPI_Allreduce's own picks 2 MiB
 * 568 - 606 vs 393 - 422, 8 MiB 3485 - 3655 vs 2324 - 2353 (Open MPI 4.1
 * on the same cores: 1 MiB 342 - 355, 8 MiB 4770 - 5845); far state
 * (core_rtt 367 - 398 ns), its own picks, 256 KiB 113 - 119 vs 93 - 97,
 * 1 MiB 347 - 375 vs 248 - 257, 4 MiB 1526 - 1617 vs 1110 - 1348; 8 ranks,
 * near, 1 MiB 757 - 761 vs 592 - 593; MPI_Bcast of 1 MiB on 4 ranks 163 -
 * 168 vs 91 - 93 (Open MPI 214 - 228). Moves below 128 KiB had always
 * bounced (64 KiB ones by CMA lost in the far state: the 128 KiB tree's
 * two trees of halves, 183 against 147 us). */
static int bulk_mode(struct nal *n)
{
	if (!n->bulk_mode) {
		int mode = shm_cma_env(getenv("PTL_SHM_CMA")) == 1 ? SHM_BULK_CMA
			   : shm_bulk_crowded(n) ? SHM_BULK_CROWDED : SHM_BULK_AUTO;

		if (n->crowded == 0) /* some rank not attached yet: ask again */
			return mode;
		n->bulk_mode = mode;
	}
	return n->bulk_mode;
}

/* ---- the chooser (see the file's header comment for why it is safe) */

int shm_choice_class(size_t len)
{
	int k = 0;

	while (k < SHM_CH_CLASSES - 1 && len >= ((size_t)SHM_CH_CLASS0 << k))
		k++;
	return k;
}

/* For reports: class k's sizes, as "64K-128K". */
const char *shm_choice_class_name(int k)
{
	static const char *const name[] = { "0-32K", "32K-64K", "64K-128K", "128K-256K",
					    "256K-512K", "512K-1M", "1M-2M", "2M-" };

	_Static_assert(sizeof(name) / sizeof(name[0]) == SHM_CH_CLASSES, "a name per class");
	return k >= 0 && k < SHM_CH_CLASSES ? name[k] : "?";
}

uint32_t shm_choice_est(const struct shm_choice *c, int m)
{
	return c->est[m] / 1000;
}

/* The lowest of method m's latest samples (up to SHM_CH_HIST): what else
 * runs on the host only ever adds to a move's time (a preempted move, or one
 * whose peer was, or whose vCPU stalled, costs more, never less), so the
 * lowest is the method's own cost (for bounced moves that ran back to back,
 * the lowest of their runs' means: rq_time_done says why), and it rises only
 * when all of the latest rise: the method got dearer, or the host stayed
 * busy so long that every method's moves see it alike. With the median of
 * four (a warm-up's, a probe's) two dear moves of four lost a method its
 * place for the launch: a 2-rank allreduce makes ~300 moves of a class, so
 * the warm-up and the early probes decide it. 2-rank MPI_Allreduce, 36
 * interleaved launches each, load 1-2, the median of eight then the lowest
 * of four (with the early probes owed, ch_owed): 128K-256K class bounce in
 * 11 then 35 launches (CMA 14 then 1, NT 11 then 0), 256 KiB 56.4 -> 46.8 us
 * (Open MPI 62.6); 512K-1M class CMA 26 then 28 (bounce 8 then 5, NT 2 then
 * 3), 1 MiB 162 -> 169 (Open MPI 148: launches that kept CMA throughout
 * still read 139-228). As the streamed copy's chooser (shm_nal.c,
 * sc_low3). */
static uint32_t ch_low(const uint32_t *w, uint32_t n)
{
	uint32_t lo = w[0];

	for (uint32_t i = 1; i < n && i < SHM_CH_HIST; i++)
		lo = w[i] < lo ? w[i] : lo;
	return lo;
}

/* a clearly cheaper than b (by a sixteenth): within that, no switch. An
 * eighth kept whichever of CMA and NT came first at 64 KiB here (5.7-6.4
 * and 6.3-6.6 us a move in runs of each): 4 interleaved launches, 64 KiB
 * half round trip 7.31 us with an eighth, 6.56 with a sixteenth (MPICH
 * 7.14, 7.00). */
static int ch_better(uint32_t a, uint32_t b)
{
	return (uint64_t)a * 16 < (uint64_t)b * 15;
}

/* The permitted method with the lowest estimate (unmeasured ones last). */
static int ch_best(const struct shm_choice *c)
{
	int b = -1;

	for (int m = 0; m < SHM_M_COUNT; m++) {
		if (!(c->mask >> m & 1))
			continue;
		if (b < 0 || (c->nwin[m] && (!c->nwin[b] || c->est[m] < c->est[b])))
			b = m;
	}
	return b < 0 ? SHM_M_BOUNCE : b;
}

/* The early probes still owed (1 << SHM_M_*): permitted ones, not the pick. */
static unsigned ch_owed(const struct shm_choice *c)
{
	return c->early & c->mask & ~(1u << c->pick);
}

/* The permitted method after m (round the list), other than the pick. */
static int ch_after(const struct shm_choice *c, int m)
{
	for (int k = 1; k <= SHM_M_COUNT; k++) {
		int x = (m + k) % SHM_M_COUNT;

		if ((c->mask >> x & 1) && x != c->pick)
			return x;
	}
	return -1;
}

/* Whether c's next move is a probe's: moves of one owed, its method in mask. */
static bool ch_probing(const struct shm_choice *c, unsigned mask)
{
	return c->burst && (mask >> c->probe & 1) && c->probe != c->pick;
}

int shm_choice_next(const struct shm_choice *c, unsigned mask)
{
	if (!c->ready || !(mask >> c->pick & 1))
		return -1; /* take decides as it goes (warm-up; a pick no longer permitted) */
	if (ch_probing(c, mask))
		return c->probe;
	return c->pick;
}

void shm_choice_defer(struct shm_choice *c)
{
	/* A queue that never empties (windows that overlap) would hold the
	 * probe, and with it every other decision, for good. */
	if (c->burst && c->probe == SHM_M_CMA && ++c->waited >= SHM_CH_CONFIRM) {
		c->burst = 0;
		c->fresh = 0;
		c->waited = 0;
	}
}

int shm_choice_take(struct shm_choice *c, unsigned mask)
{
	c->waited = 0;
	c->mask = (uint8_t)(mask ? mask : 1u << SHM_M_BOUNCE);
	if (!c->ready) { /* warm-up: SHM_CH_WIN of each method in turn */
		for (int m = 0; m < SHM_M_COUNT; m++) {
			if ((c->mask >> m & 1) && c->warm[m] < SHM_CH_WIN) {
				c->warm[m]++;
				return m;
			}
		}
		return ch_best(c); /* all taken, some not ended yet */
	}
	if (!(c->mask >> c->pick & 1)) /* no longer permitted (CMA refused) */
		c->pick = (uint8_t)ch_best(c);
	if (ch_probing(c, c->mask)) {
		c->burst--;
		return c->probe;
	}
	if (c->burst) { /* its method no longer permitted: dropped */
		c->burst = 0;
		c->fresh = 0;
	}
	c->since++;
	return c->pick;
}

/* A move of len bytes by method m took ns: into m's samples and estimate,
 * nothing decided. */
static void ch_sample(struct shm_choice *c, int m, size_t len, uint64_t ns)
{
	/* fs per byte: at 1 MiB and up a move costs 12-25 ps per byte here,
	 * where whole ps would be steps of 4-8%, as coarse as the sixteenth
	 * of hysteresis. u32 holds up to 4.29 us per byte (a 16 KiB move of
	 * 70 ms: the clamp only meets preempted moves, which the lowest skips). */
	uint64_t cost = len ? ns * 1000000 / len : 0;

	if (cost < 1)
		cost = 1;
	if (cost > UINT32_MAX)
		cost = UINT32_MAX;
	c->win[m][c->nwin[m] % SHM_CH_HIST] = (uint32_t)cost;
	if (++c->nwin[m] == 0) /* saturate on a multiple of the ring: it goes on */
		c->nwin[m] = UINT32_MAX - UINT32_MAX % SHM_CH_HIST;
	c->est[m] = ch_low(c->win[m], c->nwin[m]);
}

void shm_choice_record(struct shm_choice *c, int m, size_t len, uint64_t ns)
{
	int o = -1;

	if (m < 0 || m >= SHM_M_COUNT)
		return;
	ch_sample(c, m, len, ns);
	if (!c->ready) {
		for (int x = 0; x < SHM_M_COUNT; x++)
			if ((c->mask >> x & 1) && c->nwin[x] < SHM_CH_WIN)
				return;
		c->ready = 1;
		c->pick = (uint8_t)ch_best(c);
		c->next_probe = (uint8_t)(ch_after(c, c->pick) < 0 ? c->pick : ch_after(c, c->pick));
		/* Warm-up moves pay for first touches and for the previous
		 * method's cache state: each other method is tried again soon. */
		c->early = (uint8_t)(c->mask & ~(1u << c->pick));
		c->since = ch_owed(c) ? SHM_CH_REPROBE - SHM_CH_CONFIRM : 0;
		return;
	}
	if (m != c->pick) { /* a probe's: decide once its window is all fresh */
		if (m != c->probe || ++c->fresh < SHM_CH_WIN || c->burst)
			return; /* (or a move the old pick took before a switch) */
		c->fresh = 0;
		c->early &= (uint8_t)~(1u << m);
		c->since = ch_owed(c) ? SHM_CH_REPROBE - SHM_CH_CONFIRM : 0;
		/* the probe's own moves (its window holds just those:
		 * SHM_CH_HIST is SHM_CH_WIN) against the pick's latest */
		if (ch_better(c->est[m], c->est[c->pick])) {
			/* The old pick's record may have been spoiled by a
			 * long stretch of dear moves: it gets a probe of its
			 * own soon, in turn with the warm-up's early probes
			 * still owed. Not instead of them: a switch in the
			 * warm-up's first early probe left the third method
			 * on its warm-up moves until the periodic probe, past
			 * a 1 MiB allreduce's ~300 moves (CMA's four at
			 * 139-186 ps per byte, its later moves ~86: the
			 * launch stayed on bounce, 92-107); nor the old pick
			 * first: NT and bounce each won the other's probe in
			 * turn, and CMA was never tried. Not every method
			 * after every switch either: under host noise a
			 * settled pair switches every few hundred moves, and
			 * each probe more costs its moves by a method likely
			 * 2x dear. */
			c->early |= (uint8_t)(1u << c->pick);
			c->pick = (uint8_t)m;
			c->switches++;
			c->since = SHM_CH_REPROBE - SHM_CH_CONFIRM;
		}
		return;
	}
	if (c->burst || (c->fresh && c->since < SHM_CH_REPROBE / 2))
		return; /* a probe under way (or lost: a move that failed) */
	c->fresh = 0;
	/* The pick now looks worse than another did when last tried: that
	 * one. Or it is time to look again: the next in turn. */
	for (int x = 0; x < SHM_M_COUNT; x++)
		if ((c->mask >> x & 1) && x != m && c->nwin[x] &&
		    ch_better(c->est[x], c->est[m]) && (o < 0 || c->est[x] < c->est[o]))
			o = x;
	if (o < 0 && c->since >= SHM_CH_REPROBE) {
		for (int k = 0; ch_owed(c) && k < SHM_M_COUNT; k++) /* early probes owed: the next of those */
			if (ch_owed(c) >> (c->next_probe + k) % SHM_M_COUNT & 1) {
				c->next_probe = (uint8_t)((c->next_probe + k) % SHM_M_COUNT);
				break;
			}
		o = (c->mask >> c->next_probe & 1) && c->next_probe != m ? c->next_probe
									 : ch_after(c, c->next_probe);
		if (o >= 0)
			c->next_probe = (uint8_t)(ch_after(c, o) < 0 ? o : ch_after(c, o));
	}
	if (o >= 0) {
		c->probe = (uint8_t)o;
		c->burst = SHM_CH_WIN;
		c->since = 0;
	}
}

/* ---- the pair's one choice (the file's header comment says why) */

/* The leader tells an unchanged method again every SHM_CH_TELL_EVERY of
 * its moves in a class (one ring record: well under 1% of 16 moves of 16
 * KiB and up), and a follower that made SHM_CH_QUIET moves in the class
 * without a word chooses for itself: the leader is not moving there, or
 * moves under a quarter as often, and the follower's moves are then the
 * ones that count (shm.h has the two). */
_Static_assert(SHM_CH_QUIET <= 255 && SHM_CH_TELL_EVERY < SHM_CH_QUIET, "struct shm_choice.word counts either");

/* Whether local peer li leads our pair's choice: the lower local rank does. */
static int ch_follows(const struct nal *n, int li)
{
	return li < n->lrank;
}

/* Whether our moves to li in c's class follow the leader's word: for
 * SHM_CH_QUIET moves after each (before the first, we choose: the leader
 * may never move in the class). */
static int ch_led(const struct nal *n, int li, const struct shm_choice *c)
{
	return ch_follows(n, li) && c->word;
}

/* What ch_take would return, not counted; -1 where it decides as it
 * goes (led, the leader's method not permitted to us: never CMA, the one
 * method that can be). Where the chooser decides as it goes (its warm-up,
 * a pick no longer permitted) a take on a copy says: the warm-up's CMA
 * moves must not pass queued ones either. */
static int ch_next(const struct nal *n, int li, const struct shm_choice *c, unsigned mask)
{
	int m;

	if (ch_led(n, li, c))
		return mask >> c->told & 1 ? c->told : -1;
	if ((m = shm_choice_next(c, mask)) < 0) {
		struct shm_choice t = *c;

		m = shm_choice_take(&t, mask);
	}
	return m;
}

/* The method our next move to li in c's class takes. Led: the leader's
 * word for the class, or the cheapest permitted method when that one is
 * not permitted to us (CMA refused on our side only).
 * Leading (or a follower the leader left alone): the chooser's, and the
 * follower hears of a change before the move's own records reach it (the
 * same ring, in order); a full ring leaves it untold until our next move
 * in the class.
 * Behind a move to li still queued through the segment (queued: the last
 * one's method, else -1), a move that would go by CMA goes by queued
 * instead: neither taken nor told, its time only sampled into its own
 * method's estimate (*joined), and a CMA probe due waits for the queue to
 * empty (shm_choice_defer), a CMA warm-up move for a move with nothing
 * queued (a window's first). Why: CMA copies inside bulk(), so it would
 * land and complete before the queued moves (the file's header); and
 * their slots wait meanwhile, so each would be timed with the other's
 * work in it. A stream of 64 KiB gets here (mpi_pingpong b65536: 32 in a
 * window, each served from the sender's progress) stayed on CMA at 96 -
 * 102 ps per byte a move while the probes of bounce and NT, each
 * interleaved with two CMA moves, read 192 - 243; behind each other their
 * moves take 64 - 75, and the stream went 9.1 - 9.7 -> 12.7 - 12.9 GB/s
 * (NT forced 12.2 - 12.6; MPICH 11.5 - 12.3), 256 KiB 18.2 - 21.6 ->
 * 21.5 - 22.4; 2-rank allreduces, whose moves rarely queue, level. A
 * split CMA move's peer half may still be in flight when a probe's first
 * move starts: the probe's estimate, the lowest of its moves, leaves that
 * one out where they are timed apart (back to back, rq_time_done, the
 * run's mean holds a share of it). */
static int ch_take(struct nal *n, int li, struct shm_choice *c, unsigned mask, int queued, int *joined)
{
	int m;

	*joined = queued >= 0 && ch_next(n, li, c, mask) == SHM_M_CMA;
	if (*joined) {
		if (!ch_led(n, li, c))
			shm_choice_defer(c);
		return queued;
	}
	if (ch_follows(n, li)) {
		if (!ch_led(n, li, c))
			return shm_choice_take(c, mask);
		c->word--;
		c->mask = (uint8_t)mask;
		return mask >> c->told & 1 ? c->told : ch_best(c);
	}
	m = shm_choice_take(c, mask);
	if (m != c->told || ++c->word >= SHM_CH_TELL_EVERY) {
		struct shm_help_req r = { .op = SHM_HELP_PICK,
					  .len = (uint64_t)(c - n->bp[li].ch), /* the class */
					  .own_addr = (uint64_t)m };

		if (shm_ring_put(n, li, SHM_REC_HELP, &r, sizeof(r), NULL, 0) == 0) {
			c->told = (uint8_t)m;
			c->word = 0;
		}
	}
	return m;
}

/* Local peer li, our pair's leader, says its moves of class k go by
 * method m from now on: ours follow. Its pick in our report. */
static void ch_told(struct nal *n, int li, uint64_t k, uint64_t m)
{
	struct shm_choice *c;

	if (k >= SHM_CH_CLASSES || m >= SHM_M_COUNT || !ch_follows(n, li)) {
		fprintf(stderr, "ptl shm: rank %d sent a bulk pick (class %llu, method %llu) it may not; ignored\n",
			n->l2g[li], (unsigned long long)k, (unsigned long long)m);
		return;
	}
	c = &n->bp[li].ch[k];
	c->switches += c->ready && c->told != m;
	c->told = (uint8_t)m;
	c->pick = (uint8_t)m; /* where our own choice resumes if the leader falls quiet */
	c->ready = 1;
	c->word = SHM_CH_QUIET;
}

/* A timed move to li: the chooser decides on it; a led one is only kept
 * for the report. */
static void ch_note(struct nal *n, int li, int m, size_t len, uint64_t ns)
{
	struct shm_choice *c = &n->bp[li].ch[shm_choice_class(len)];

	if (ch_led(n, li, c)) {
		if (m >= 0 && m < SHM_M_COUNT)
			ch_sample(c, m, len, ns);
		return;
	}
	shm_choice_record(c, m, len, ns);
}

/* A move record with room for niov iovecs: a finished one reused if it
 * has the room (moves of one iovec are the rule), else a new one. */
static struct shm_bop *bop_get(struct nal *n, int niov)
{
	struct shm_bop *b = n->bop_free;
	int cap = niov > SHM_BOP_IOV ? niov : SHM_BOP_IOV;

	if (b && b->cap >= niov) {
		n->bop_free = b->next;
	} else {
		b = malloc(sizeof(*b) + (size_t)cap * sizeof(struct iovec));
		if (!b)
			return NULL;
		b->cap = cap;
	}
	int keep = b->cap;
	memset(b, 0, sizeof(*b));
	b->cap = keep;
	b->iov = (struct iovec *)(b + 1);
	return b;
}

/* A bounced move of len bytes between raddr and the iovecs, not queued. */
static struct shm_bop *bop_new(struct nal *n, enum nal_bulk_op op, const struct iovec *local, int niov,
			       uint64_t raddr, size_t len, void *cookie)
{
	struct shm_bop *b = bop_get(n, niov);

	if (!b)
		return NULL;
	b->op = op;
	b->raddr = raddr;
	b->len = len;
	b->nchunk = (len + piece(n) - 1) / piece(n);
	memcpy(b->iov, local, (size_t)niov * sizeof(struct iovec));
	b->niov = niov;
	b->cookie = cookie;
	b->method = SHM_M_BOUNCE;
	return b;
}

/* Behind the moves queued to bp's peer. */
static void bop_queue(struct nal *n, struct shm_bpeer *bp, struct shm_bop *b)
{
	n->st.bounce_moves += b->method != SHM_M_CMA;
	n->st.nt_moves += b->method == SHM_M_NT;
	*bp->qtail = b;
	bp->qtail = &b->next;
	if (!bp->unsent)
		bp->unsent = b;
	bp->qmethod = b->method;
	n->nbulk++;
}

/* A bounced move ahead of those queued to bp's peer: the rest of a
 * split move (hp_work), ahead of the moves asked while it was in flight,
 * none of which has gone yet (rq_work waits for the split move). */
static void bop_queue_first(struct nal *n, struct shm_bpeer *bp, struct shm_bop *b)
{
	n->st.bounce_moves++;
	n->st.nt_moves += b->method == SHM_M_NT;
	b->next = bp->q;
	if (!bp->q) {
		bp->qtail = &b->next;
		bp->qmethod = b->method;
	}
	bp->q = b;
	bp->unsent = b;
	n->nbulk++;
}

/* Back to the free list; a record with room for more than SHM_BOP_IOV
 * iovecs is freed instead (rare, and would pin the memory). */
static void bop_put(struct nal *n, struct shm_bop *b)
{
	if (b->cap > SHM_BOP_IOV) {
		free(b);
		return;
	}
	b->next = n->bop_free;
	n->bop_free = b;
}

int shm_bulk(struct nal *n, int peer, enum nal_bulk_op op, const struct iovec *local, int niov,
	     uint64_t raddr, uint64_t rkey, size_t len, void *cookie)
{
	struct shm_bpeer *bp;
	struct shm_choice *ch;
	struct shm_bop *b;
	size_t have = 0;
	int li, rc, mode, m, joined = 0;

	(void)rkey;
	if ((unsigned)peer >= (unsigned)n->size || (li = n->g2l[peer]) < 0 || niov < 0 ||
	    (op != NAL_BULK_READ && op != NAL_BULK_WRITE) || (niov && !local))
		return NAL_EINVAL;
	for (int i = 0; i < niov; i++)
		have += local[i].iov_len;
	if (have < len)
		return NAL_EINVAL;
	if (n->dead[li])
		return NAL_EPEER;
	if (len == 0)
		return 0;
	if (li == n->lrank) { /* ourselves: a plain copy */
		struct shm_bop tmp = { .iov = (struct iovec *)local, .niov = niov };

		iov_copy(&tmp, (uint8_t *)(uintptr_t)raddr, len, op == NAL_BULK_READ);
		return 0;
	}
	bp = &n->bp[li];
	mode = bulk_mode(n);
	ch = mode == SHM_BULK_AUTO ? &bp->ch[shm_choice_class(len)] : NULL;
	m = ch ? ch_take(n, li, ch,
			 (1u << SHM_M_BOUNCE) | (SHM_NT_OK ? 1u << SHM_M_NT : 0) |
				 (cma_allowed(n, li) ? 1u << SHM_M_CMA : 0),
			 bp->q && bp->qmethod != SHM_M_CMA ? bp->qmethod : -1, &joined)
	       : mode == SHM_BULK_CMA && cma_allowed(n, li) ? SHM_M_CMA : SHM_M_BOUNCE; /* refused, or crowded */
	/* Not past the moves asked before it to li (the file's header says
	 * why): behind moves queued in the bounce area, a CMA move goes
	 * their way (ch_take joins the chooser's itself, with their
	 * timing); behind a split move in flight or a queued CMA move, a CMA
	 * move is queued too, and done at its turn (cma_run). */
	if (m == SHM_M_CMA && bp->q)
		m = bp->qmethod;
	if (m == SHM_M_CMA && !bp->q && !bp->hp_active) {
		uint64_t t0 = ch ? shm_now_ns() : 0;

		if ((rc = cma_split(n, li, op, local, niov, raddr, len, cookie)) != 0) {
			bp->hp_t0 = t0;
			return rc;
		}
		rc = cma_move(n, li, op, local, niov, raddr, len);
		n->cma_ok |= rc == 0; /* permitted here: long moves may be split */
		if (rc == 0) {
			n->st.cma_moves++;
			if (ch)
				ch_note(n, li, SHM_M_CMA, len, shm_now_ns() - t0);
		}
		if (rc != NAL_EPERM)
			return rc;
		cma_refused(n, li); /* not permitted here: bounce from now on */
		ch = NULL;          /* this one untimed */
		m = SHM_M_BOUNCE;
	}
	b = bop_new(n, op, local, niov, raddr, len, cookie);
	if (!b)
		return NAL_ENOMEM;
	b->timed = ch != NULL; /* from its first piece (rq_time_done), or as cma_run moves it */
	b->joined = joined;
	b->method = m;
	bop_queue(n, bp, b);
	return 1;
}

static void bop_pop(struct nal *n, struct shm_bpeer *bp)
{
	struct shm_bop *b = bp->q;

	bp->q = b->next;
	if (b == bp->unsent) /* failed before it went */
		bp->unsent = b->next;
	else
		bp->nsent--;
	if (!bp->q)
		bp->qtail = &bp->q;
	n->nbulk--;
}

/* Did a move or a serve stall long enough to suspect the peer? */
static int stalled(struct nal *n, int li, uint64_t *since, uint32_t *count)
{
	uint64_t now;

	if ((++*count % SHM_STALL_POLLS) != 0)
		return 0;
	now = shm_now_ns();
	if (!*since) {
		*since = now;
		return 0;
	}
	if ((int64_t)(now - *since) < SHM_DEAD_NS)
		return 0;
	*since = now;
	return shm_peer_check(n, li, 1);
}

/* Whether the next queued move may go to the target now: the target
 * serves up to SHM_SV_QUEUE moves in order, so a stream's next move is
 * asked for while the last ones are served, and the producer of the
 * pieces (a WRITE's requester, a READ's target) starts on its first piece
 * as soon as a slot of the last one's is free. One move at a time left a
 * piece's time idle per move on each side: 256 KiB streams of 64 KiB
 * pieces ran at 0.78 of the 1 MiB rate, n / (n + 1) for n pieces a move.
 * A move of the other op waits until the area is empty: a READ's target
 * would refill a slot whose freeing our WRITE had not seen yet. A queued
 * CMA move is no request: it and the moves behind it wait until it is
 * at the head (cma_run). */
static int rq_may_send(const struct shm_bpeer *bp)
{
	return bp->unsent && bp->unsent->method != SHM_M_CMA && bp->nsent < SHM_SV_QUEUE &&
	       (!bp->nsent || bp->unsent->op == bp->q->op);
}

/* Sends the requests of the moves that may go (rq_may_send): the count
 * sent, -1 when the peer is dead (shm_peer_check failed the moves). */
static int rq_send(struct nal *n, int li, struct shm_bpeer *bp)
{
	int did = 0;

	while (rq_may_send(bp)) {
		struct shm_bop *b = bp->unsent;
		struct shm_bulk_req r = { .op = (uint32_t)b->op, .raddr = b->raddr, .len = b->len,
					  .flags = b->method == SHM_M_NT ? SHM_BREQ_NT : 0 };
		int rc = shm_ring_put(n, li, SHM_REC_BULK, &r, sizeof(r), NULL, 0);

		if (rc == NAL_EPEER || n->dead[li])
			return -1;
		if (rc)
			break;
		bp->unsent = b->next;
		bp->nsent++;
		if (b->timed && b->op == NAL_BULK_READ)
			b->t0 = shm_now_ns();
		did++;
	}
	return did;
}

/* READ moves sent: empties the full slots in order into the moves they
 * belong to (the oldest unfinished first). */
static int rq_drain(struct nal *n, struct shm_bpeer *bp)
{
	struct shm_bop *b = bp->q;
	unsigned i = 0;
	int did = 0;

	while (i < bp->nsent) {
		uint64_t k = bp->rq_cur % SHM_NSLOT;
		struct shm_slot *s = &bp->rq_slot[k];

		if (b->cons == b->nchunk) {
			b = b->next;
			i++;
			continue;
		}
		if (!atomic_load_explicit(&s->full, memory_order_acquire))
			break;
		iov_copy(b, bp->rq_data + shm_slot_off(n->chunk, n->slot_parts, bp->rq_cur), s->len, 1);
		atomic_store_explicit(&s->full, 0, memory_order_release);
		bp->rq_cur++;
		if (++b->cons == b->nchunk && b->timed)
			b->t_done = shm_now_ns();
		did++;
	}
	bp->rq_free = bp->rq_cur;
	return did;
}

/* WRITE moves sent: the slots the target freed since we last looked,
 * counted in order (each to the oldest move with pieces in flight). */
static int rq_seen_free(struct shm_bpeer *bp)
{
	struct shm_bop *b = bp->q;
	int did = 0;

	while (bp->rq_free < bp->rq_cur &&
	       !atomic_load_explicit(&bp->rq_slot[bp->rq_free % SHM_NSLOT].full, memory_order_acquire)) {
		while (b->cons == b->prod)
			b = b->next;
		if (++b->cons == b->nchunk && b->timed)
			b->t_done = shm_now_ns();
		bp->rq_free++;
		did++;
	}
	return did;
}

/* WRITE moves sent: fills free slots with the next pieces, the next
 * move's once a move's are all out, looking for freed slots before each
 * (a move is seen to finish within a piece's copy of when it did). */
static int rq_fill(struct nal *n, struct shm_bpeer *bp)
{
	struct shm_bop *b;
	unsigned i = 0;
	int did = rq_seen_free(bp);

	for (b = bp->q; i < bp->nsent && b->prod == b->nchunk; b = b->next)
		i++;
	while (i < bp->nsent && bp->rq_cur - bp->rq_free < SHM_NSLOT) {
		uint64_t k = bp->rq_cur % SHM_NSLOT;
		struct shm_slot *s = &bp->rq_slot[k];
		size_t off = b->prod * piece(n), t = b->len - off;

		if (t > piece(n))
			t = piece(n);
		if (!b->prod && b->timed)
			b->t0 = shm_now_ns();
		iov_copy(b, bp->rq_data + shm_slot_off(n->chunk, n->slot_parts, bp->rq_cur), t, 0);
		n->st.nt_chunks += b->method == SHM_M_NT;
		s->len = (uint32_t)t;
		atomic_store_explicit(&s->full, 1, memory_order_release);
		bp->rq_cur++;
		n->st.bounce_chunks++;
		did++;
		if (++b->prod == b->nchunk) {
			b = b->next;
			i++;
		}
		did += rq_seen_free(bp);
	}
	return did;
}

int shm_run_breaks(const struct shm_run *r, int m, size_t len)
{
	return r->n && (m != r->m || shm_choice_class(len) != shm_choice_class(r->len[0]));
}

int shm_run_add(struct shm_run *r, int m, size_t len, int joined, uint64_t ns)
{
	r->m = m;
	r->len[r->n] = len;
	r->joined[r->n++] = (uint8_t)(joined != 0);
	r->ns += ns;
	return r->n == SHM_CH_WIN;
}

uint64_t shm_run_ns(const struct shm_run *r, unsigned k)
{
	size_t bytes = 0;

	for (unsigned i = 0; i < r->n; i++)
		bytes += r->len[i];
	return bytes ? (uint64_t)((double)r->ns * (double)r->len[k] / (double)bytes) : 0;
}

/* bp's run to the chooser, each move at the run's mean, and emptied. */
static void run_flush(struct nal *n, int li, struct shm_bpeer *bp)
{
	struct shm_run *r = &bp->run;

	for (unsigned k = 0; k < r->n; k++) {
		if (r->joined[k])
			ch_sample(&bp->ch[shm_choice_class(r->len[k])], r->m, r->len[k], shm_run_ns(r, k));
		else
			ch_note(n, li, r->m, r->len[k], shm_run_ns(r, k));
	}
	*r = (struct shm_run){ 0 };
}

/* Times the timed moves that finished since we last looked (the first
 * of q on), together: from when the first began (its first piece, or its
 * request) or, if later, when we saw the moves before finish, until we
 * saw the last finish, shared among them by bytes. A stream's moves
 * overlap, so a move's own time counts the pieces of those ahead of it;
 * and the time from the last one's end alone counts only what was left
 * of it, nothing when one look saw two finish: 256 KiB moves timed so
 * read 8 ps a byte (125 GB/s) at the lowest, and the chooser swung
 * between methods a dozen times a launch.
 *
 * Moves that run back to back (each asked before the one ahead of it
 * ended) go to the chooser as a run: up to SHM_CH_WIN of one method and
 * size class, each at the run's mean. Their times are then consecutive
 * stretches of one clock, and a stretch is short where the target had
 * filled the move's slots while we were away (in the MPI layer between
 * looks), the stretch before it long by as much: the chooser's estimate,
 * the lowest of a method's latest costs (ch_low), took the short ones
 * alone. A 64 KiB stream (bench/mpi_pingpong b65536, 2 pinned ranks, the
 * Zen 4 guest, 2026-12-06, each move's cost logged): bounced moves a
 * median 113 - 157 ps a byte by launch, their estimate 25 - 41; NT 74 -
 * 110, CMA 91 - 117 (one copy within the call: no such stretches). The
 * stream stayed on bounce or swung back to it (10 - 56 switches), at 6.4
 * - 8.3 GB/s (MPICH 9 - 10; launches that kept NT 8.8 - 9.9). A run's
 * mean holds a long stretch together with the short ones after it
 * (unless the run starts between them: then a run reads low by at most
 * those short ones' share). Sampled by runs, bounce's estimate read 95 -
 * 153, the streams kept NT or CMA (0 - 2 switches): 5 interleaved
 * launches each, b65536 8.6 - 13.2 GB/s, median 12.5, against 8.2 -
 * 11.6, median 8.5; 128 KiB and 256 KiB level or better, the half
 * round trips level. A move that does not run back to back (a
 * ping-pong's, an exchange's) is a run of one, sampled at once. */
static void rq_time_done(struct nal *n, int li, struct shm_bpeer *bp)
{
	struct shm_bop *b = bp->q, *last = NULL;
	size_t bytes = 0;
	unsigned i = 0, done;
	uint64_t from, dt;

	if (!b || !b->timed)
		return;
	for (; i < bp->nsent && b->cons == b->nchunk && b->timed; b = b->next, i++) {
		bytes += b->len;
		last = b;
	}
	if (!last)
		return;
	done = i;
	/* the first of them began (asked, a READ; its first piece out, a
	 * WRITE) after the last timed move ended: not back to back */
	if (bp->q->t0 > bp->t_done)
		run_flush(n, li, bp);
	from = bp->q->t0 > bp->t_done ? bp->q->t0 : bp->t_done;
	dt = last->t_done > from ? last->t_done - from : 0;
	bp->t_done = last->t_done;
	for (b = bp->q; i--; b = b->next) {
		if (shm_run_breaks(&bp->run, b->method, b->len))
			run_flush(n, li, bp);
		if (shm_run_add(&bp->run, b->method, b->len, b->joined,
				(uint64_t)((double)dt * (double)b->len / (double)bytes)))
			run_flush(n, li, bp);
	}
	/* b: the next move. Unless it is timed, sent (an unsent one's t0 is
	 * 0) and began before these ended, of the run's method and class,
	 * nothing runs back to back with them: the run is over, its costs go
	 * now. A sent WRITE whose first piece has not gone (t0 0) keeps the
	 * run open: if it starts late, the test above ends the run. */
	if (bp->run.n && !(b && done < bp->nsent && b->timed && b->t0 <= bp->t_done &&
			   !shm_run_breaks(&bp->run, b->method, b->len)))
		run_flush(n, li, bp);
}

/* The CMA moves at the head of our queue to local peer li (struct
 * shm_bop's SHM_M_CMA: asked behind a split move in flight or behind
 * another queued CMA move), now that the moves asked before each have
 * completed: each as bulk() would have moved it (split with the peer if
 * long: then the queue waits for the peer's half, hp_work), completed in
 * order; one refused since it was queued bounces from the head. The
 * count done, -1 when the peer is dead (shm_peer_check failed the moves,
 * this one first). */
static int cma_run(struct nal *n, int li, struct shm_bpeer *bp)
{
	struct shm_bop *b;
	int did = 0;

	while (!bp->hp_active && (b = bp->q) && b == bp->unsent && b->method == SHM_M_CMA) {
		void *cookie = b->cookie;
		uint64_t t0;
		int rc;

		if (!cma_allowed(n, li)) {
			b->method = SHM_M_BOUNCE;
			b->timed = 0;
			if (!b->next)
				bp->qmethod = SHM_M_BOUNCE;
			n->st.bounce_moves++;
			break;
		}
		t0 = b->timed ? shm_now_ns() : 0;
		rc = cma_split(n, li, b->op, b->iov, b->niov, b->raddr, b->len, cookie);
		if (n->dead[li]) /* found dead there (its ring, our half): b is gone */
			return -1;
		if (rc == 1) { /* the move is the split one's now (its iovecs copied) */
			bp->hp_t0 = t0;
			bop_pop(n, bp);
			bop_put(n, b);
			return did + 1;
		}
		if (rc == 0)
			rc = cma_move(n, li, b->op, b->iov, b->niov, b->raddr, b->len);
		if (n->dead[li])
			return -1;
		if (rc == NAL_EPERM) {
			cma_refused(n, li);
			continue;
		}
		n->cma_ok |= rc == 0;
		if (rc == 0) {
			n->st.cma_moves++;
			if (t0)
				ch_note(n, li, SHM_M_CMA, b->len, shm_now_ns() - t0);
		}
		bop_pop(n, bp);
		bop_put(n, b);
		if (n->up.bulk_done)
			n->up.bulk_done(n->up.arg, cookie, rc);
		did++;
	}
	return did;
}

/* Our moves to local peer li: queued CMA moves at the head done,
 * requests out, pieces moved, the finished ones completed in order.
 * None while a split move is in flight: it was asked before them all. */
static int rq_work(struct nal *n, int li)
{
	struct shm_bpeer *bp = &n->bp[li];
	struct shm_bop *b;
	int did, moved = 0, ran;

	if (bp->hp_active)
		return 0;
	if ((ran = cma_run(n, li, bp)) < 0)
		return 1;
	if (!(b = bp->q) || bp->hp_active)
		return ran;
	if ((did = rq_send(n, li, bp)) < 0)
		return 1;
	did += ran;
	if (bp->nsent)
		moved = b->op == NAL_BULK_READ ? rq_drain(n, bp) : rq_fill(n, bp);
	if (moved) {
		b->stall_count = 0;
		b->stall_since = 0;
		shm_wake_peer(n, li);
	} else if (!did && stalled(n, li, &b->stall_since, &b->stall_count)) {
		return 1;
	}
	did += moved;
	rq_time_done(n, li, bp);
	/* bulk_done may queue moves (or fail the peer's): q is read afresh */
	while ((b = bp->q) && bp->nsent && b->cons == b->nchunk) {
		void *cookie = b->cookie;

		bop_pop(n, bp);
		bop_put(n, b);
		if (n->up.bulk_done)
			n->up.bulk_done(n->up.arg, cookie, 0);
		did++;
	}
	/* a CMA move behind them goes now, not a progress() later */
	if ((ran = cma_run(n, li, bp)) < 0)
		return 1;
	return did + ran;
}

/* A SHM_REC_BULK arrived from local peer li: serve it from progress(),
 * after the ones it asked for before. */
void shm_bulk_serve_req(struct nal *n, int li, const void *body, size_t len)
{
	struct shm_bpeer *bp = &n->bp[li];
	struct shm_bulk_req r;
	struct shm_sreq *q;

	if (len != sizeof(r)) {
		fprintf(stderr, "ptl shm: malformed bulk request from rank %d ignored\n", n->l2g[li]);
		return;
	}
	memcpy(&r, body, sizeof(r));
	if (bp->sv_n == SHM_SV_QUEUE) {
		fprintf(stderr, "ptl shm: rank %d asked for more than %u bulk moves at once; ignored\n",
			n->l2g[li], SHM_SV_QUEUE);
		return;
	}
	q = &bp->sv_q[(bp->sv_head + bp->sv_n) % SHM_SV_QUEUE];
	q->op = (enum nal_bulk_op)r.op;
	q->nt = (r.flags & SHM_BREQ_NT) != 0;
	q->raddr = r.raddr;
	q->len = (size_t)r.len;
	bp->sv_n++;
	n->nbulk++;
}

/* Serve the moves that local peer li asked of us, in order. */
static int sv_work(struct nal *n, int li)
{
	struct shm_bpeer *bp = &n->bp[li];
	int did = 0, moved = 0;

	while (bp->sv_n) {
		const struct shm_sreq *r = &bp->sv_q[bp->sv_head];
		uint8_t *mem = (uint8_t *)(uintptr_t)r->raddr;

		while (bp->sv_off < r->len) {
			uint64_t k = bp->sv_cur % SHM_NSLOT;
			struct shm_slot *s = &bp->sv_slot[k];
			uint32_t full = atomic_load_explicit(&s->full, memory_order_acquire);
			size_t t;

			if (r->op == NAL_BULK_READ) { /* they read our memory: fill */
				if (full)
					break;
				t = r->len - bp->sv_off;
				if (t > piece(n))
					t = piece(n);
				if (r->nt) {
					shm_nt_copy(bp->sv_data + shm_slot_off(n->chunk, n->slot_parts, bp->sv_cur), mem + bp->sv_off, t);
					n->st.nt_chunks++;
				} else
					nal_copy(bp->sv_data + shm_slot_off(n->chunk, n->slot_parts, bp->sv_cur), mem + bp->sv_off, t);
				s->len = (uint32_t)t;
				atomic_store_explicit(&s->full, 1, memory_order_release);
			} else { /* they write our memory: drain */
				if (!full)
					break;
				t = s->len;
				if (t > r->len - bp->sv_off)
					t = r->len - bp->sv_off;
				nal_copy(mem + bp->sv_off, bp->sv_data + shm_slot_off(n->chunk, n->slot_parts, bp->sv_cur), t);
				atomic_store_explicit(&s->full, 0, memory_order_release);
			}
			n->st.bounce_chunks++;
			bp->sv_off += t;
			bp->sv_cur++;
			moved++;
		}
		if (bp->sv_off < r->len)
			break;
		bp->sv_head = (bp->sv_head + 1) % SHM_SV_QUEUE;
		bp->sv_n--;
		bp->sv_off = 0;
		n->nbulk--;
		did++;
	}
	if (moved) {
		shm_wake_peer(n, li);
		bp->sv_stall_since = 0;
		bp->sv_stall_count = 0;
	} else if (!did && bp->sv_n) {
		stalled(n, li, &bp->sv_stall_since, &bp->sv_stall_count);
	}
	return did + moved;
}

int shm_bulk_progress(struct nal *n)
{
	int done = 0;

	for (int li = 0; li < n->lsize && n->nbulk; li++) {
		if (li == n->lrank || n->dead[li])
			continue;
		if (n->bp[li].help_owed)
			help_answer(n, li, n->bp[li].help_owed);
		done += sv_work(n, li);
		done += hp_work(n, li); /* before rq_work: the queue waits for it */
		done += rq_work(n, li);
	}
	return done;
}

/* Whether shm_bulk_progress would find work (for sleep()). */
int shm_bulk_pending(struct nal *n)
{
	for (int li = 0; li < n->lsize; li++) {
		struct shm_bpeer *bp = &n->bp[li];
		struct shm_bop *b = bp->q;

		if (li == n->lrank || n->dead[li])
			continue;
		if (bp->hp_active && atomic_load_explicit(&bp->hp_done, memory_order_acquire))
			return 1;
		if (bp->help_owed) /* its ring was full: the peer, polling its move, drains it soon */
			return 1;
		if (bp->sv_n) {
			uint32_t f = atomic_load_explicit(&bp->sv_slot[bp->sv_cur % SHM_NSLOT].full,
							  memory_order_acquire);
			if ((bp->sv_q[bp->sv_head].op == NAL_BULK_READ) == !f)
				return 1;
		}
		if (!b || bp->hp_active) /* the queue waits for the split move (above) */
			continue;
		/* b and u loaded once: the sleeping progress thread calls us
		 * without ptl's lock, while an application thread may finish
		 * the queue (rq_may_send would load q again). A queued CMA
		 * move goes once it is the head (cma_run). */
		struct shm_bop *u = bp->unsent;
		unsigned ns = bp->nsent;

		if (u && (u->method == SHM_M_CMA ? !ns : ns < SHM_SV_QUEUE && (!ns || u->op == b->op)))
			return 1;
		if (!ns)
			continue;
		if (b->op == NAL_BULK_READ) {
			if (atomic_load_explicit(&bp->rq_slot[bp->rq_cur % SHM_NSLOT].full,
						 memory_order_acquire))
				return 1;
		} else if (bp->rq_free < bp->rq_cur &&
			   !atomic_load_explicit(&bp->rq_slot[bp->rq_free % SHM_NSLOT].full,
						 memory_order_acquire)) {
			return 1;
		}
	}
	return 0;
}

void shm_bulk_fail_peer(struct nal *n, int li, int status)
{
	struct shm_bpeer *bp = &n->bp[li];

	bp->run = (struct shm_run){ 0 }; /* the costs of moves to a dead peer choose nothing */
	n->nbulk -= (int)bp->sv_n;
	bp->sv_n = 0;
	bp->sv_off = 0;
	if (bp->help_owed) {
		bp->help_owed = 0;
		n->nbulk--;
	}
	if (bp->hp_active) {
		bp->hp_active = 0;
		n->nbulk--;
		if (bp->hp_redo)
			bop_put(n, bp->hp_redo);
		bp->hp_redo = NULL;
		if (n->up.bulk_done)
			n->up.bulk_done(n->up.arg, bp->hp_cookie, status);
	}
	while (bp->q) {
		struct shm_bop *b = bp->q;
		void *cookie = b->cookie;

		bop_pop(n, bp);
		bop_put(n, b);
		if (n->up.bulk_done)
			n->up.bulk_done(n->up.arg, cookie, status);
	}
	bp->rq_free = bp->rq_cur;
}

/* PTL_SHM_BULK_REPORT=1: what the chooser made of each local peer and
 * size class, printed once at teardown (shm_bulk_fini) so that a benchmark
 * can model the moves the way they went (bench/mpi_bench.sh takes the
 * copy structure per size from it) - nothing on the path of a move. One
 * line per peer and class that had moves, each method's timed moves and
 * estimate (the lowest of its latest SHM_CH_HIST costs, ps per byte:
 * 1000 / GB/s; 0 without a sample), or one
 * line saying why nothing was chosen (a follower's pick is its leader's
 * last word, its switches the changes it was told of; its costs are its
 * own moves'), and a line per peer that refused
 * CMA after it had been allowed (its moves bounce since):
 *   ptl shm bulk: rank 0 peer 1 class 2 64K-128K pick cma switches 0 bounce 8:310 cma 1042:95 nt 8:140
 *   ptl shm bulk: rank 0 mode cma|bounce|none (PTL_SHM_CMA=1|crowded|CMA refused|no moves)
 *   ptl shm bulk: rank 0 peer 1 cma refused */
bool shm_report_wanted(void)
{
	const char *e = getenv("PTL_SHM_BULK_REPORT");

	return e && e[0] == '1';
}

static void bulk_report(struct nal *n)
{
	static const char *const mname[SHM_M_COUNT] = { "bounce", "cma", "nt" };
	int mode = n->bulk_mode;

	if (!shm_report_wanted())
		return;
	for (int li = 0; li < n->lsize; li++)
		if (n->cma && n->bp[li].cma_refused)
			fprintf(stderr, "ptl shm bulk: rank %d peer %d cma refused\n", n->rank, n->l2g[li]);
	if (mode != SHM_BULK_AUTO) {
		fprintf(stderr, "ptl shm bulk: rank %d mode %s (%s)\n", n->rank,
			mode == SHM_BULK_CMA && n->cma ? "cma" : mode ? "bounce" : "none",
			mode == SHM_BULK_CMA ? (n->cma ? "PTL_SHM_CMA=1" : "CMA refused")
			: mode ? "crowded" : "no moves");
		return;
	}
	for (int li = 0; li < n->lsize; li++) {
		for (int k = 0; k < SHM_CH_CLASSES; k++) {
			const struct shm_choice *c = &n->bp[li].ch[k];
			char buf[160];
			int o = 0;

			for (int m = 0; m < SHM_M_COUNT && o >= 0 && o < (int)sizeof buf; m++)
				o += snprintf(buf + o, sizeof buf - (size_t)o, " %s %u:%u", mname[m],
					      c->nwin[m], shm_choice_est(c, m));
			if (!c->nwin[SHM_M_BOUNCE] && !c->nwin[SHM_M_CMA] && !c->nwin[SHM_M_NT])
				continue;
			fprintf(stderr, "ptl shm bulk: rank %d peer %d class %d %s pick %s switches %u%s\n",
				n->rank, n->l2g[li], k, shm_choice_class_name(k),
				c->ready ? mname[c->pick] : "none", c->switches, buf);
		}
	}
}

void shm_bulk_fini(struct nal *n)
{
	bulk_report(n);
	for (int li = 0; li < n->lsize; li++) {
		struct shm_bpeer *bp = &n->bp[li];

		while (bp->q) {
			struct shm_bop *b = bp->q;

			bp->q = b->next;
			free(b);
		}
		bp->qtail = &bp->q;
		bp->unsent = NULL;
		bp->nsent = 0;
		bp->run = (struct shm_run){ 0 };
		bp->sv_n = 0;
		bp->hp_active = 0;
		free(bp->hp_redo);
		bp->hp_redo = NULL;
		bp->help_owed = 0;
		if (bp->pidfd_state > 0)
			close(bp->pidfd);
		bp->pidfd_state = 0;
	}
	n->nbulk = 0;
	while (n->bop_free) {
		struct shm_bop *b = n->bop_free;

		n->bop_free = b->next;
		free(b);
	}
}
