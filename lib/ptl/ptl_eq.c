/*
 * Event queues: fixed rings kept in a shared view object (ptl_view.h) so
 * ptltool can read them live. Writers (always under the library lock)
 * store the event, then advance write_seq; an overrun overwrites the
 * oldest events and the next read reports PTL_EQ_DROPPED with the event it
 * delivers.
 */
#include "config.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ptl/ptl_internal.h"

/* Application threads sleeping in PtlEQWait/PtlEQPoll sleep on one word,
 * bumped whenever an event lands in an EQ somebody waits on: one futex
 * serves a wait over any number of EQs. */
static uint32_t ptl_eq_bell;

static void ptl_eq_ring_bell(void)
{
	__atomic_add_fetch(&ptl_eq_bell, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &ptl_eq_bell, FUTEX_WAKE_PRIVATE, 1 << 30, NULL, NULL, 0);
}

_Thread_local int ptl_eq_in_handler;

void ptl_eq_notify(struct ptl_eq *eq, ptl_event_t *slot)
{
	if (atomic_load_explicit(&eq->waiters, memory_order_relaxed))
		ptl_eq_ring_bell();
	if (eq->handler) {
		ptl_eq_in_handler++;
		eq->handler(slot);
		ptl_eq_in_handler--;
	}
}

void ptl_eq_post(struct ptl_eq *eq, ptl_event_t *ev)
{
	ptl_event_t *slot = ptl_eq_slot(eq);
	ev->sequence = (ptl_seq_t)eq->ring->write_seq;
	*slot = *ev;
	ptl_eq_commit(eq, slot);
}

/* Whether eq holds an event not yet read (inline: a spinning poll asks
 * this of every EQ it waits on, each time round). Lock held. */
static inline bool ptl_eq_ready(const struct ptl_eq *eq)
{
	return __atomic_load_n(&eq->ring->write_seq, __ATOMIC_ACQUIRE) != eq->rd;
}

/* Takes the next event if there is one. Lock held. */
static inline int ptl_eq_take(struct ptl_eq *eq, ptl_event_t *event)
{
	struct ptl_view_eq *r = eq->ring;
	uint64_t w = __atomic_load_n(&r->write_seq, __ATOMIC_ACQUIRE);
	if (w == eq->rd)
		return PTL_EQ_EMPTY;
	int rc = PTL_OK;
	if (w - eq->rd > eq->count) {
		uint64_t lost = w - eq->count - eq->rd;
		__atomic_add_fetch(&r->dropped, lost, __ATOMIC_RELAXED);
		eq->rd = w - eq->count;
		eq->rd_slot = eq->rd % eq->count;
		rc = PTL_EQ_DROPPED;
	}
	*event = PTL_VIEW_EQ_EVENTS(r)[eq->rd_slot];
	eq->rd++;
	eq->rd_slot = eq->rd_slot + 1 == eq->count ? 0 : eq->rd_slot + 1;
	__atomic_store_n(&r->read_seq, eq->rd, __ATOMIC_RELEASE);
	return rc;
}

/* EQs destroyed so far (lock held to change it). A poll looks its EQs up
 * once, and again only when this moved while it had the lock dropped:
 * never reset, so a PtlFini and PtlInit in between count too. */
static uint64_t ptl_eq_frees;

void ptl_eq_destroy(struct ptl_ni *ni, struct ptl_eq *eq)
{
	/* A thread still sleeping on it (the NI is going away) wakes up and
	 * finds the handle invalid. */
	if (atomic_load(&eq->waiters))
		ptl_eq_ring_bell();
	ptl_eq_frees++;
	ptl_view_eq_destroy(eq);
	eq->handle = 0; /* an MD's cached pointer to it no longer matches (ptl_md_live_eq) */
	ptl_htab_free(&ni->eqs, eq);
}

int PtlEQAlloc(ptl_handle_ni_t ni_handle, ptl_size_t count, ptl_eq_handler_t eq_handler,
	       ptl_handle_eq_t *eq_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	if (!eq_handle)
		return PTL_SEGV;
	ptl_lock();
	struct ptl_ni *ni = ptl_ni_lookup(ni_handle);
	int rc = PTL_OK;
	uint64_t h;
	struct ptl_eq *eq;
	if (!ni)
		rc = PTL_NI_INVALID;
	else if (count == 0 || count > PTL_EQ_MAX_COUNT)
		rc = PTL_NO_SPACE;
	else if (!(eq = ptl_htab_alloc(&ni->eqs, &h)))
		rc = PTL_NO_SPACE;
	else {
		eq->handle = h;
		eq->count = count; /* a zeroed slot: rd, wr_slot, rd_slot 0 */
		eq->handler = eq_handler;
		if (ptl_view_eq_create(eq, count) != 0) {
			ptl_htab_free(&ni->eqs, eq);
			rc = PTL_NO_SPACE;
		} else {
			*eq_handle = h;
		}
	}
	ptl_unlock();
	return rc;
}

int PtlEQFree(ptl_handle_eq_t eq_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	struct ptl_eq *eq = ptl_eq_lookup(ptl_lib.ni, eq_handle);
	int rc = PTL_OK;
	if (!eq)
		rc = PTL_EQ_INVALID;
	else if (atomic_load(&eq->waiters))
		rc = PTL_FAIL; /* a thread is blocked on it; freeing would strand it */
	else
		ptl_eq_destroy(ptl_lib.ni, eq);
	ptl_unlock();
	return rc;
}

/*
 * PTL_PROGRESS_THREAD=0: a thread that polls - PtlEQGet, or PtlEQPoll
 * with a timeout of 0 - never sleeps, so it never reaches a wait's
 * dead-peer probe (ptl_peers_probe), and no progress thread probes for it
 * (ptl_lease_probe): the answer of a shm peer that died would be polled
 * for forever. So an empty poll asks the probe too, at a price a poll
 * loop does not notice: one load (the NI's count of operations in flight)
 * while nothing is in flight, else a decrement, and every
 * PTL_POLL_PROBE_EVERY empty polls (of either call: one count) the
 * probe's own test (a walk of the shm peers, a read of the coarse clock:
 * the vDSO's, no system call); its system calls come once a
 * PTL_PEER_PROBE_MS. A count of polls, not the clock, says when: a clock
 * read per poll is what the wait keeps out of its polls too (every 64,
 * PTL_WAIT_CLOCK_EVERY below). With a progress thread the thread probes
 * (ptl_lease_probe). Lock held.
 */
#define PTL_POLL_PROBE_EVERY 64
static unsigned ptl_poll_probe_in = PTL_POLL_PROBE_EVERY;

static inline bool ptl_eq_poll_probe_due(void)
{
	if (ptl_lib.thread_running || !ptl_lib.ni || !ptl_lib.ni->ops.used || --ptl_poll_probe_in)
		return false;
	ptl_poll_probe_in = PTL_POLL_PROBE_EVERY;
	return true;
}

/* PtlEQGet found eq (of handle h) empty: one progress pass, then a second
 * look, and if that finds nothing either, the dead-peer probe when due
 * (above) and a last look if it failed any operation. An EQ handler the
 * pass or the failures run may have freed eq (PtlEQFree): its handle is
 * then invalid and its ring gone, not to be read. Lock held. */
static __attribute__((noinline)) int ptl_eq_get_empty(ptl_handle_eq_t h, struct ptl_eq *eq, ptl_event_t *event)
{
	uint64_t frees = ptl_eq_frees;
	ptl_progress_app();
	if (frees != ptl_eq_frees && !(eq = ptl_eq_lookup(ptl_lib.ni, h)))
		return PTL_EQ_INVALID;
	int rc = ptl_eq_take(eq, event);
	if (rc != PTL_EQ_EMPTY || !ptl_eq_poll_probe_due())
		return rc;
	int ms;
	frees = ptl_eq_frees;
	if (!ptl_peers_probe(&ms))
		return PTL_EQ_EMPTY;
	if (frees != ptl_eq_frees && !(eq = ptl_eq_lookup(ptl_lib.ni, h)))
		return PTL_EQ_INVALID;
	return ptl_eq_take(eq, event);
}

int PtlEQGet(ptl_handle_eq_t eq_handle, ptl_event_t *event)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	struct ptl_eq *eq = ptl_eq_lookup(ptl_lib.ni, eq_handle);
	int rc;
	if (!eq) {
		rc = PTL_EQ_INVALID;
	} else if (!event) {
		rc = PTL_SEGV;
	} else {
		rc = ptl_eq_take(eq, event);
		if (rc == PTL_EQ_EMPTY)
			rc = ptl_eq_get_empty(eq_handle, eq, event);
	}
	ptl_unlock();
	return rc;
}

/* Timeouts are in milliseconds, on ptl_now_ms's clock (ptl_internal.h).
 * A deadline on that clock: one resolution late, so that a clock lagging
 * by up to a tick when the wait starts never makes it end early. */
static int64_t ptl_deadline_ms(int64_t now, ptl_time_t timeout)
{
	struct timespec r;
	int64_t res_ms = clock_getres(PTL_WAIT_CLOCK, &r) == 0 ? (int64_t)r.tv_sec * 1000 + r.tv_nsec / 1000000 + 1 : 1;
	return now + timeout + res_ms;
}

/* How long a waiting application thread polls before it sleeps: long enough
 * to catch a ping-pong reply without a system call, short enough that an
 * oversubscribed rank yields the core to the one it waits for. How often it
 * yields meanwhile is ptl_lib.wait_yield_every: with more ranks on this host
 * than CPUs, every poll (4 ranks on 2 cores: 7 us per 8-byte allreduce
 * instead of 20), else rarely: not within a round trip even where a poll
 * is slow (a poll of the verbs NAL under TCG emulation is about a
 * microsecond, and a system call there costs several). */
#define PTL_WAIT_SPINS 2000
#define PTL_WAIT_CLOCK_EVERY 64 /* polls between clock reads */
/* Where the ranks do not outnumber the CPUs, a wait whose PTL_WAIT_SPINS
 * polls are out polls on for this long before it sleeps: a peer that
 * copies or combines a long vector keeps us waiting longer than those
 * polls (tens of us), and a wait that slept then costs a wake-up (a
 * futex, a switch) on the path of what follows it - often the peer's next
 * request, which our own CPU has to serve (a rendezvous get on shm).
 * 2-rank MPI_Reduce of 1 MiB, whose leaf waits while the root combines:
 * 6 interleaved launches each, median 190 us [121-443] with the sleep
 * after the polls, 121 [107-129] polling on (a build that polled 100 times
 * as long); 2-rank MPI_Allreduce 32 KiB - 1 MiB, whose ranks wait little,
 * the same. The clock is read only once the polls are out, every
 * PTL_WAIT_CLOCK_EVERY polls: short waits pay nothing for it. */
#define PTL_WAIT_SPIN_NS 200000
/* Without a progress thread a waiting thread sleeps in a NAL for at most
 * this long at a time (it cannot hear the other NALs or the EQ bell). */
#define PTL_WAIT_NAL_SLICE_MS 10

static int64_t ptl_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Between two empty passes of a wait: one spin-wait hint to the CPU. A
 * pass without it reads the rings' next words again at once, while the
 * sender may be storing into those very lines (why that costs what it
 * does was not measured, only that it does). One PAUSE (x86; YIELD on
 * arm64) a pass took a 2-rank 0-byte half
 * round trip from 0.162 - 0.172 to 0.151 - 0.159 us, 8 B from 0.166 -
 * 0.177 to 0.154 - 0.159 (bench/mpi_pingpong, alternating launches,
 * near host state; far: 0 B 0.36 - 0.40 -> 0.33 - 0.36), 1 KiB, 2-rank
 * allreduce and streaming level; two a pass were level with none, four
 * slower (0 B 0.20 - 0.25): the next look waits for the pause, whose
 * length is the CPU's (measured on an AMD EPYC Zen 3 guest; a Skylake's
 * is several times longer). */
static inline void ptl_eq_spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Whether a wait whose polls are out polls on (PTL_WAIT_SPIN_NS from the
 * first time it asks, *end; never where the ranks outnumber the CPUs,
 * whose waits yield at every poll and sleep after their polls). */
static bool ptl_eq_spin_more(int64_t *end)
{
	if (ptl_lib.wait_yield_every == 1)
		return false;
	int64_t now = ptl_now_ns();
	if (!*end)
		*end = now + PTL_WAIT_SPIN_NS;
	return now < *end;
}

/* Whether a NAL expects an answer soon (nal_ops.due): the wait polls on
 * past PTL_WAIT_SPINS then. Lock held. */
static bool ptl_eq_answer_due(void)
{
	for (int i = 0; i < ptl_lib.nnals; i++)
		if (ptl_lib.nals[i].ops->due && ptl_lib.nals[i].ops->due(ptl_lib.nals[i].n))
			return true;
	return false;
}

/* Looks up the EQs of handles[0, n) into eqs; false when one is no live
 * EQ. Lock held. */
static bool ptl_eq_lookup_all(const ptl_handle_eq_t *handles, int n, struct ptl_eq **eqs)
{
	for (int i = 0; i < n; i++)
		if (!(eqs[i] = ptl_eq_lookup(ptl_lib.ni, handles[i])))
			return false;
	return true;
}

/* The first of eqs[0, n) with an event, or -1. Lock held. */
static inline int ptl_eq_first_ready(struct ptl_eq *const *eqs, int n)
{
	for (int i = 0; i < n; i++)
		if (ptl_eq_ready(eqs[i]))
			return i;
	return -1;
}

/*
 * The wait behind PtlEQWait and PtlEQPoll: poll (driving progress) for a
 * while, then sleep on the first EQ's futex until an event is posted or the
 * deadline passes. The progress thread, woken by peers, posts the events.
 * A spin is what a ping-pong's latency waits on, so it does the least it
 * can: its EQs looked up once (again only if an EQ was destroyed while the
 * lock was dropped), an inline test per EQ before and after one progress
 * pass, a countdown rather than a division to decide when to yield.
 * Called with the lock held and the arguments checked (PtlEQPoll), and
 * with first the one EQ it has looked at already and found empty, or
 * NULL: with it the wait starts at the progress pass.
 */
static __attribute__((noinline)) int ptl_eq_poll_wait(ptl_handle_eq_t *eq_handles, int size, ptl_time_t timeout,
							ptl_event_t *event, int *which, struct ptl_eq *first)
{
	/* The clock is read only every PTL_WAIT_CLOCK_EVERY polls, and first
	 * after that many (a timeout runs from then: late by that many polls),
	 * to keep even the vDSO's work out of most polls; a countdown says
	 * when, so that a poll between pays one decrement for the clock, the
	 * deadline and the decision to sleep. A timeout of 0 decides after
	 * the first pass. */
	bool timed = timeout != PTL_TIME_FOREVER;
	int64_t now = 0, deadline = -1;
	struct ptl_eq *eqs[PTL_LIM_MAX_EQS];
	bool looked_up = first != NULL;
	uint64_t frees = ptl_eq_frees;
	eqs[0] = first;
	unsigned yield_in = ptl_lib.wait_yield_every;
	unsigned check_in = timeout == 0 ? 1 : PTL_WAIT_CLOCK_EVERY;
	unsigned spin = 0; /* polls so far, counted at each check */
	int64_t spin_end = 0; /* ns: PTL_WAIT_SPIN_NS past the polls, once they are out */
	int probe_ms = -1;    /* ptl_peers_probe's: how long a sleep may last, -1: no limit */
	for (;;) {
		/* Lock held here. The EQs are tested before the progress pass
		 * only on the first pass (and after a sleep or a free): later an
		 * event another thread posted while we let the lock go waits for
		 * the test after our pass, not the cost of a test on every pass. */
		int ready = -1;
		if (!looked_up || frees != ptl_eq_frees) {
			if (!ptl_eq_lookup_all(eq_handles, size, eqs)) {
				ptl_unlock();
				return PTL_EQ_INVALID;
			}
			frees = ptl_eq_frees;
			looked_up = true;
			ready = ptl_eq_first_ready(eqs, size);
		}
		if (ready < 0) {
			ptl_progress_app();
			/* An EQ handler run by progress may have freed one of
			 * ours: then look them up again (next time round)
			 * before touching any. */
			looked_up = frees == ptl_eq_frees;
			ready = looked_up ? ptl_eq_first_ready(eqs, size) : -1;
		}
		if (ready >= 0) {
			int rc = ptl_eq_take(eqs[ready], event);
			*which = ready;
			ptl_unlock();
			return rc;
		}
		if (--check_in == 0) {
			/* A timeout of 0 decides at every pass: after the first,
			 * or after the second when the probe below failed
			 * something. */
			check_in = timeout == 0 ? 1 : PTL_WAIT_CLOCK_EVERY;
			/* Without a progress thread only the calls look at peers
			 * whose death shows only when looked at: a wait before
			 * its sleep (below) and here, since one that yields at
			 * every poll (more ranks than CPUs) may take seconds to
			 * reach its sleep on a loaded host; a poll of timeout 0,
			 * which never sleeps, as an empty PtlEQGet does (when
			 * due: every PTL_POLL_PROBE_EVERY empty polls). What a
			 * look finds dead has failed, its events posted (by
			 * handlers, maybe, that freed an EQ of ours): look at
			 * the EQs again. */
			bool probe = timeout == 0 ? ptl_eq_poll_probe_due() : !ptl_lib.thread_running;
			if (probe && ptl_peers_probe(&probe_ms)) {
				looked_up = false;
				continue;
			}
			if (timed) {
				if (timeout == 0)
					break;
				now = ptl_now_ms();
				if (deadline < 0)
					deadline = ptl_deadline_ms(now, timeout);
				else if (now >= deadline)
					break;
			}
			spin += PTL_WAIT_CLOCK_EVERY;
			if (spin >= PTL_WAIT_SPINS && ptl_eq_spin_more(&spin_end))
				spin = PTL_WAIT_SPINS - PTL_WAIT_CLOCK_EVERY;
		}
		/* Asked every PTL_WAIT_CLOCK_EVERY polls once the spins are out. */
		if (spin >= PTL_WAIT_SPINS && ptl_eq_answer_due())
			spin = PTL_WAIT_SPINS - PTL_WAIT_CLOCK_EVERY;
		if (spin < PTL_WAIT_SPINS) {
			ptl_eq_spin_pause();
			/* The lock stays ours from pass to pass unless another
			 * thread waits for it (ptl_lock marked it contended) or
			 * we yield: letting it go and taking it again is two
			 * locked instructions, most of an idle pass, and a
			 * message that lands during a pass waits for the next
			 * one's look at the rings. */
			if (--yield_in == 0) {
				yield_in = ptl_lib.wait_yield_every;
				ptl_unlock();
				sched_yield();
				ptl_lock();
			} else if (ptl_lock_wanted()) {
				ptl_unlock();
				ptl_lock();
			}
			continue;
		}
		/* Answers due from peers whose death shows only when looked
		 * at (ptl_peers_probe): look before sleeping, and sleep no
		 * longer than until the next look is due. With a progress
		 * thread this sets the period going; the thread looks. */
		if (ptl_peers_probe(&probe_ms)) {
			looked_up = false;
			continue;
		}
		/* Sleep. Announce it first, so the progress thread is woken by
		 * peers and wakes us through the bell; re-check after announcing. */
		uint32_t seen = __atomic_load_n(&ptl_eq_bell, __ATOMIC_ACQUIRE);
		for (int i = 0; i < size; i++)
			atomic_fetch_add(&eqs[i]->waiters, 1);
		__atomic_add_fetch(&ptl_lib.view->waiting, 1, __ATOMIC_RELAXED);
		ptl_progress_app_sleeping();
		bool have = ptl_eq_first_ready(eqs, size) >= 0;
		ptl_unlock();
		if (!have && !ptl_lib.thread_running) {
			/* PTL_PROGRESS_THREAD=0: no thread hears the peers or
			 * rings the bell; sleep in the NAL ourselves, in slices,
			 * then poll again (and probe, above, when due). */
			int64_t left = timed ? deadline - now : PTL_WAIT_NAL_SLICE_MS;
			if (left > PTL_WAIT_NAL_SLICE_MS)
				left = PTL_WAIT_NAL_SLICE_MS;
			if (probe_ms >= 0 && probe_ms < left)
				left = probe_ms;
			ptl_progress_nal_wait((int)left);
		} else if (!have) {
			int64_t left = timed ? deadline - now : 0;
			struct timespec ts = { left / 1000, (long)(left % 1000) * 1000000L };
			syscall(SYS_futex, &ptl_eq_bell, FUTEX_WAIT_PRIVATE, seen, timed ? &ts : NULL,
				NULL, 0);
		}
		ptl_lock();
		/* PtlEQFree refuses while we wait, but PtlNIFini or PtlFini on
		 * another thread may have destroyed the EQs: look them up again. */
		for (int i = 0; i < size; i++) {
			struct ptl_eq *eq = ptl_eq_lookup(ptl_lib.ni, eq_handles[i]);
			if (eq)
				atomic_fetch_sub(&eq->waiters, 1);
		}
		if (ptl_lib.view)
			__atomic_sub_fetch(&ptl_lib.view->waiting, 1, __ATOMIC_RELAXED);
		ptl_unlock();
		if (!ptl_initialized())
			return PTL_NO_INIT;
		spin = PTL_WAIT_SPINS / 2; /* after a wake-up, poll a little again */
		looked_up = false;
		ptl_lock();
	}
	/* Timed out (lock held). */
	ptl_unlock();
	return PTL_EQ_EMPTY;
}

/* The look before the wait, in a frame of its own: a waiting MPI
 * receiver that is behind its sender finds its next event already queued
 * (a progress pass delivers every record in the ring), and the wait's
 * frame - six saved registers, its EQ array, the clock and yield
 * countdowns - was most of a ~160-instruction take of one event (a
 * streamed 4 KiB message's PtlEQPoll). The same as the wait's first look
 * for one EQ; several go straight to the wait, which looks them all up
 * (an invalid one fails the call whatever the others hold). */
int PtlEQPoll(ptl_handle_eq_t *eq_handles, int size, ptl_time_t timeout, ptl_event_t *event, int *which)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	if (!eq_handles || !event || !which)
		return PTL_SEGV;
	if (size <= 0 || size > PTL_LIM_MAX_EQS || timeout < PTL_TIME_FOREVER)
		return PTL_EQ_INVALID;
	ptl_lock();
	struct ptl_eq *eq = NULL;
	if (size == 1 && (eq = ptl_eq_lookup(ptl_lib.ni, eq_handles[0])) && ptl_eq_ready(eq)) {
		int rc = ptl_eq_take(eq, event);
		*which = 0;
		ptl_unlock();
		return rc;
	}
	return ptl_eq_poll_wait(eq_handles, size, timeout, event, which, eq);
}

int PtlEQWait(ptl_handle_eq_t eq_handle, ptl_event_t *event)
{
	int which;
	return PtlEQPoll(&eq_handle, 1, PTL_TIME_FOREVER, event, &which);
}
