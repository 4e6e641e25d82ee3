/*
 * lib/nal/shm/shm_wake.c - sleeping without spinning, waking without a
 * system call on the sender's path unless the receiver really sleeps.
 *
 * Each local rank owns one state word in the segment (struct shm_rank.state,
 * a process-shared futex) with three bits: POLLING (a thread of the rank
 * polls; never wake it), SLEEPING (a thread is in, or entering, sleep()),
 * KICKED (kick() was called; the sleep returns).
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
 */
#include "config.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shm.h"

static long shm_futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	/* No FUTEX_PRIVATE_FLAG: the word lives in a mapping shared between processes. */
	return syscall(SYS_futex, (uint32_t *)(void *)w, op, val, ts, NULL, 0);
}

/* shm_wake_peer found the peer's state word at exactly SLEEPING (v). */
void shm_wake_slow(struct nal *n, int li, uint32_t v)
{
	_Atomic uint32_t *w = &n->ranks[li].state;

	if (!atomic_compare_exchange_strong_explicit(w, &v, 0, memory_order_seq_cst,
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
