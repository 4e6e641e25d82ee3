/* ptl_runtime.h: the job as the application sees it. */
#include "config.h"

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

void PtlRtAbort(int code, const char *why)
{
	fflush(stdout);
	fflush(stderr);
	rt_abort(code, why ? why : "");
}

int PtlRtBarrier(void)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	return rt_barrier() == 0 ? PTL_OK : PTL_FAIL;
}
