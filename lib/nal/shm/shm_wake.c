/*
 * lib/nal/shm/shm_wake.c - sleeping without spinning, waking without a
 * system call on the sender's path unless the receiver really sleeps.
 *
 * Each local rank owns one state word in the segment (struct shm_rank.state,
 * a process-shared futex) with four bits: POLLING (a thread of the rank
 * polls; never wake it), SLEEPING (a thread is in, or entering, sleep()),
 * KICKED (kick() was called; the sleep returns), ASYM (set once: its
 * sleeps fence for their senders, below).
 *
 * Lost wake-ups are ruled out by Dekker ordering:
 *
 *   sender                          sleeper
 *   publish record (release)        state |= SLEEPING (RMW)
 *   full fence                      full fence
 *   load state                      load every ring's next record word
 *
 * With a full fence between each side's store and its load, at least one
 * side sees the other's store: either the sender reads SLEEPING (and wakes
 * the sleeper) or the sleeper sees the record (and returns without waiting),
 * or both. The wake itself is a CAS SLEEPING -> 0 followed by FUTEX_WAKE: if
 * it lands before the sleeper's FUTEX_WAIT, the kernel finds the word no
 * longer equal to the value the sleeper read and FUTEX_WAIT returns at once.
 * Only the sender whose CAS succeeds makes the system call, so a burst of
 * sends to a sleeper costs one FUTEX_WAKE, and sends to a rank that polls
 * (or is awake) cost a fence and a load of a line that stays shared.
 *
 * The sender's fence is the dear half: it waits for every store before it
 * to leave the core, the record's bytes too, and a stream of 4 KiB MPI
 * messages spent 81% of shm_send there (perf, 2026-12-04: 25 GB/s against
 * MPICH's 30). Sleeping is rare and sending is not, so the fence moves to
 * the sleeper where the kernel allows it (an asymmetric fence): each rank
 * registers for MEMBARRIER_CMD_GLOBAL_EXPEDITED and says so in its state
 * word (SHM_ST_ASYM, set once); its sleep() then issues that membarrier
 * before its own fence, which runs a full barrier on every CPU running a
 * registered process (one that is not running passed one when it was
 * switched out). A registered sender sending to an ASYM peer then needs
 * only the compiler to keep its record before its load of the state: the
 * membarrier stands for its fence, and one side still sees the other's
 * store. Unregistered (no membarrier, a seccomp filter,
 * PTL_SHM_MEMBARRIER=0), a rank sets no ASYM and fences its sends; a
 * sender that sees no ASYM fences too.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#if defined(__has_include)
#if __has_include(<linux/membarrier.h>)
#include <linux/membarrier.h>
#define SHM_HAVE_MEMBARRIER 1 /* its commands are enum constants, not macros */
#endif
#endif
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shm.h"

static long shm_futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	/* No FUTEX_PRIVATE_FLAG: the word lives in a mapping shared between processes. */
	return syscall(SYS_futex, (uint32_t *)(void *)w, op, val, ts, NULL, 0);
}

#if defined(SYS_membarrier) && defined(SHM_HAVE_MEMBARRIER)
static long shm_membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}
#else /* headers before Linux 4.16: every send fences */
#define MEMBARRIER_CMD_QUERY 0
#define MEMBARRIER_CMD_GLOBAL_EXPEDITED 2
#define MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED 4
static long shm_membarrier(int cmd)
{
	(void)cmd;
	return -1;
}
#endif

void shm_wake_publish(struct nal *n)
{
	const char *e = getenv("PTL_SHM_MEMBARRIER");
	long q = e && strcmp(e, "0") == 0 ? -1 : shm_membarrier(MEMBARRIER_CMD_QUERY);

	n->asym = q > 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
		  (q & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) &&
		  shm_membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
	if (n->asym)
		atomic_fetch_or_explicit(&n->me->state, SHM_ST_ASYM, memory_order_seq_cst);
}

/* shm_wake_peer found the peer's state word at exactly SLEEPING (v; with
 * the peer's ASYM, which stays). */
void shm_wake_slow(struct nal *n, int li, uint32_t v)
{
	_Atomic uint32_t *w = &n->ranks[li].state;

	if (!atomic_compare_exchange_strong_explicit(w, &v, v & SHM_ST_ASYM, memory_order_seq_cst,
						     memory_order_relaxed))
		return; /* another sender (or a kick) got there first and wakes it */
	shm_futex(w, FUTEX_WAKE, INT_MAX, NULL);
	n->st.futex_wakes++;
}

int shm_sleep(struct nal *n, int timeout_ms)
{
	_Atomic uint32_t *w;
	struct timespec ts, *tsp = NULL;
	uint32_t v;

	if (!n->me)
		return 0;
	shm_seg_try_unlink(n); /* a progress thread may sleep before any progress() */
	w = &n->me->state;
	v = atomic_fetch_or_explicit(w, SHM_ST_SLEEPING, memory_order_seq_cst) | SHM_ST_SLEEPING;
	/* The senders' fence as well as ours where they skip theirs (the
	 * header), only when a sender could wake this sleep (a sleep of 0
	 * is a probe, a polling rank's senders never wake it, and the
	 * membarrier interrupts every CPU running a rank): it cannot fail
	 * once registered, but if it does (a seccomp filter installed
	 * since), waiting could miss a record, so this sleep lasts 1 ms at
	 * most instead of spinning. */
	if (timeout_ms != 0 && !(v & (SHM_ST_KICKED | SHM_ST_POLLING)) && (v & SHM_ST_ASYM) &&
	    shm_membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0)
		timeout_ms = 1;
	atomic_thread_fence(memory_order_seq_cst);
	if (timeout_ms != 0 && !(v & SHM_ST_KICKED) && !shm_pending(n)) {
		if (timeout_ms > 0) {
			ts.tv_sec = timeout_ms / 1000;
			ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
			tsp = &ts;
		}
		/* Returns at once if a sender or kick() changed the word since v. */
		shm_futex(w, FUTEX_WAIT, v, tsp);
		n->st.futex_waits++;
	}
	atomic_fetch_and_explicit(w, ~(uint32_t)(SHM_ST_SLEEPING | SHM_ST_KICKED),
				  memory_order_seq_cst);
	return 0;
}

/* Any thread, async-signal-safe: atomics and at most one system call. A
 * kick with no sleep in progress makes the next sleep() return at once. */
void shm_kick(struct nal *n)
{
	uint32_t old;

	if (!n->me)
		return;
	old = atomic_fetch_or_explicit(&n->me->state, SHM_ST_KICKED, memory_order_seq_cst);
	if (old & SHM_ST_SLEEPING)
		shm_futex(&n->me->state, FUTEX_WAKE, INT_MAX, NULL);
}

void shm_set_polling(struct nal *n, int on)
{
	if (!n->me)
		return;
	if (on)
		atomic_fetch_or_explicit(&n->me->state, SHM_ST_POLLING, memory_order_seq_cst);
	else
		atomic_fetch_and_explicit(&n->me->state, ~(uint32_t)SHM_ST_POLLING,
					  memory_order_seq_cst);
}
