/*
 * lib/ptl/ptl_lock.c - turning the library lock's biased path on and off
 * (ptl_internal.h, ptl_lock, says what the path is). The bias goes off
 * only under the mutex with the path shut, so that a thread that took the
 * mutex and read no bias never runs beside one in by the path, and comes
 * back only for the thread it was for.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ptl/ptl_internal.h"

/* A child forked after PtlInit (ptl_init.c's ptl_atfork_child): its one
 * thread, fork's caller, goes by the mutex from here. The bias thread may
 * have been another, gone with the parent, and the child has no PtlInit
 * of its own to come (it inherited the count). */
void ptl_lock_atfork_child(void)
{
	atomic_store_explicit(&ptl_lib.lock.bias, 0, memory_order_relaxed);
}

/* Only the thread biased before, if any: another thread may still be
 * inside ptl_lock past its first look at revoked, having called in
 * across the last PtlFini, and with revoked open again for a new bias
 * thread it would take the path beside it; left shut (PtlFini shut it),
 * it backs out by the mutex. The thread biased before cannot be so: it
 * is the one calling PtlInit. */
void ptl_lock_bias_init(void)
{
	struct ptl_rlock *l = &ptl_lib.lock;
	unsigned long me = ptl_thread_id();
	const char *e = getenv("PTL_LOCK_BIAS");
	/* without the child handler a child could inherit a bias thread it has not */
	if (!ptl_atfork_ok || l->bias_broken || (e && !strcmp(e, "0")) || (l->last_bias && l->last_bias != me))
		return;
	long cmds = ptl_membarrier(PTL_MEMBARRIER_QUERY);
	if (cmds < 0 || !(cmds & PTL_MEMBARRIER_PRIVATE_EXPEDITED) ||
	    ptl_membarrier(PTL_MEMBARRIER_REGISTER_PRIVATE_EXPEDITED) != 0)
		return;
	/* Fresh: a child forked while this thread was in by the path
	 * inherited its flag set, and a revoker would wait on it for ever. */
	l->others = l->others_seen = l->quiet = 0;
	atomic_store_explicit(&l->fast_in, 0, memory_order_relaxed);
	atomic_store_explicit(&l->revoked, 0, memory_order_relaxed);
	l->last_bias = me;
	atomic_store_explicit(&l->bias, me, memory_order_relaxed);
}

void ptl_lock_bias_fini(void)
{
	struct ptl_rlock *l = &ptl_lib.lock;
	unsigned long bias = atomic_load_explicit(&l->bias, memory_order_relaxed);
	if (!bias)
		return;
	ptl_mutex_take(l);
	if (bias != ptl_thread_id())
		ptl_lock_revoke(l); /* waits for the bias thread to be out */
	else
		atomic_store_explicit(&l->revoked, 1, memory_order_relaxed); /* we hold nothing: not in */
	atomic_store_explicit(&l->bias, 0, memory_order_relaxed);
	ptl_mutex_give(l);
}
