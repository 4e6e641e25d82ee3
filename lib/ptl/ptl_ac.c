/* Access control list: who may reach which portal through which entry. */
#include "config.h"

#include <unistd.h>

#include "ptl/ptl_internal.h"

/* Entry 0 admits every process of this job, as the user who runs it, on
 * any portal; every other entry admits nobody until PtlACEntry sets it. */
void ptl_ac_defaults(struct ptl_ni *ni)
{
	ptl_ac_set(&ni->acs[0], (ptl_process_id_t){ PTL_NID_ANY, PTL_PID_ANY }, ptl_uid(), ptl_jid(),
		   PTL_PT_INDEX_ANY);
}

int PtlACEntry(ptl_handle_ni_t ni_handle, ptl_ac_index_t ac_index, ptl_process_id_t match_id,
	       ptl_uid_t uid, ptl_jid_t jid, ptl_pt_index_t pt_index)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	struct ptl_ni *ni = ptl_ni_lookup(ni_handle);
	int rc = PTL_OK;
	if (!ni)
		rc = PTL_NI_INVALID;
	else if (ac_index > (ptl_ac_index_t)ni->limits.max_ac_index)
		rc = PTL_AC_INDEX_INVALID;
	else if (pt_index != PTL_PT_INDEX_ANY && pt_index > (ptl_pt_index_t)ni->limits.max_pt_index)
		rc = PTL_PT_INDEX_INVALID;
	else if (match_id.pid != PTL_PID_ANY && match_id.pid >= (ptl_pid_t)ptl_lib.rt.size)
		rc = PTL_PROCESS_INVALID;
	else
		ptl_ac_set(&ni->acs[ac_index], match_id, uid, jid, pt_index);
	ptl_unlock();
	return rc;
}
