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
