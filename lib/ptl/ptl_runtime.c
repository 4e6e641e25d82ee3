/* ptl_runtime.h: the job as the application sees it. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include <ptl_runtime.h>

#include "ptl/ptl_internal.h"

int PtlRtRank(void)
{
	return ptl_initialized() ? ptl_lib.rt.rank : -1;
}

int PtlRtSize(void)
{
	return ptl_initialized() ? ptl_lib.rt.size : -1;
}

int PtlRtId(int rank, ptl_process_id_t *id)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	if (!id)
		return PTL_SEGV;
	ptl_lock();
	int rc = ptl_peer_id(rank, id);
	ptl_unlock();
	return rc;
}

int PtlRtRankFailed(int rank, int *failed)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	if (!failed)
		return PTL_SEGV;
	if (rank < 0 || rank >= ptl_lib.rt.size)
		return PTL_PROCESS_INVALID;
	ptl_lock();
	struct ptl_peer *p = &ptl_lib.peers[rank];
	/* A NAL that notices deaths only when something is stuck (shm) looks
	 * now; the others have reported theirs already (peer_failed). */
	if (!p->failed && rank != ptl_lib.rt.rank && p->nal >= 0) {
		struct ptl_nalinst *n = &ptl_lib.nals[p->nal];
		if (n->ops->peer_check)
			n->ops->peer_check(n->n, rank);
	}
	*failed = p->failed;
	ptl_unlock();
	return PTL_OK;
}

size_t PtlRtMaxInline(void)
{
	/* ptl_lib.max_inline is the smallest of the NALs' (ptl_start_nals). */
	if (!ptl_initialized() || ptl_lib.max_inline < sizeof(struct ptl_hdr))
		return 0;
	return ptl_lib.max_inline - sizeof(struct ptl_hdr);
}

void PtlRtAbort(int code, const char *why)
{
	fflush(stdout);
	fflush(stderr);
	rt_abort(code, why ? why : "");
}

/* How long the barrier's helper sleeps in a NAL at a time (it cannot hear
 * the others). */
#define PTL_BARRIER_SLICE_MS 10

/* PTL_PROGRESS_THREAD=0: what the progress thread would do while the
 * caller waits in the launcher's barrier. Without it, sends the caller
 * left in a backlog (a NAL out of credits), and the answers peers wait
 * for, would stay put until the next API call: after the barrier, when a
 * peer may be waiting for exactly those messages before it calls in again
 * (bench/ptl_pingpong's last bandwidth window hung that way). */
static void *ptl_barrier_progress(void *arg)
{
	atomic_bool *done = arg;
	ptl_lock();
	ptl_progress_app_sleeping(); /* so the NALs wake the sleep below */
	ptl_unlock();
	while (!atomic_load(done)) {
		ptl_lock();
		int did = ptl_progress();
		ptl_unlock();
		if (!did && !atomic_load(done))
			ptl_progress_nal_wait(PTL_BARRIER_SLICE_MS);
	}
	return NULL;
}

int PtlRtBarrier(void)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	atomic_bool done = false;
	pthread_t helper;
	bool helped = !ptl_lib.thread_running &&
		      pthread_create(&helper, NULL, ptl_barrier_progress, &done) == 0;
	int rc = rt_barrier();
	if (helped) {
		atomic_store(&done, true);
		ptl_kick_nals(); /* end its sleep now */
		pthread_join(helper, NULL);
	}
	return rc == 0 ? PTL_OK : PTL_FAIL;
}
