/* Names for codes, events and failures; handle comparison. */
#include "config.h"

#include "ptl/ptl_internal.h"

static const char *const ptl_err_names[PTL_MAX_ERRNO] = {
	[PTL_OK] = "PTL_OK: success",
	[PTL_AC_INDEX_INVALID] = "PTL_AC_INDEX_INVALID: access control index out of range",
	[PTL_EQ_DROPPED] = "PTL_EQ_DROPPED: events were lost because the event queue overflowed",
	[PTL_EQ_EMPTY] = "PTL_EQ_EMPTY: no event is waiting",
	[PTL_EQ_INVALID] = "PTL_EQ_INVALID: not a live event queue handle",
	[PTL_FAIL] = "PTL_FAIL: the operation failed",
	[PTL_HANDLE_INVALID] = "PTL_HANDLE_INVALID: not a live handle",
	[PTL_IFACE_INVALID] = "PTL_IFACE_INVALID: no such network interface",
	[PTL_MD_ILLEGAL] = "PTL_MD_ILLEGAL: the memory descriptor's fields are not valid",
	[PTL_MD_INVALID] = "PTL_MD_INVALID: not a live memory descriptor handle",
	[PTL_MD_IN_USE] = "PTL_MD_IN_USE: the memory descriptor has operations in flight",
	[PTL_MD_NO_UPDATE] = "PTL_MD_NO_UPDATE: the event queue was not empty or the memory descriptor has operations in flight; memory descriptor unchanged",
	[PTL_ME_INVALID] = "PTL_ME_INVALID: not a live match entry handle",
	[PTL_ME_IN_USE] = "PTL_ME_IN_USE: the match entry already has a memory descriptor",
	[PTL_ME_LIST_TOO_LONG] = "PTL_ME_LIST_TOO_LONG: the match list is at its limit (max_me_list)",
	[PTL_NI_INVALID] = "PTL_NI_INVALID: not a live network interface handle",
	[PTL_NO_INIT] = "PTL_NO_INIT: PtlInit has not been called",
	[PTL_NO_SPACE] = "PTL_NO_SPACE: a table or pool is full (see the NI limits)",
	[PTL_PID_INVALID] = "PTL_PID_INVALID: this process cannot take that pid",
	[PTL_PROCESS_INVALID] = "PTL_PROCESS_INVALID: no such process in this job",
	[PTL_PT_FULL] = "PTL_PT_FULL: every portal table entry is in use",
	[PTL_PT_INDEX_INVALID] = "PTL_PT_INDEX_INVALID: portal index out of range",
	[PTL_SEGV] = "PTL_SEGV: a pointer argument is NULL or invalid",
	[PTL_SR_INDEX_INVALID] = "PTL_SR_INDEX_INVALID: no such status register",
	[PTL_UNKNOWN_ERROR] = "PTL_UNKNOWN_ERROR: unknown error",
	[PTL_IFACE_DUP] = "PTL_IFACE_DUP: the interface was already initialized; its handle is returned",
};

const char *PtlErrorStr(unsigned int ptl_errno)
{
	if (ptl_errno >= PTL_MAX_ERRNO || !ptl_err_names[ptl_errno])
		return "unknown Portals error code";
	return ptl_err_names[ptl_errno];
}

const char *PtlEventKindStr(ptl_event_kind_t kind)
{
	switch (kind) {
	case PTL_EVENT_GET_START: return "PTL_EVENT_GET_START";
	case PTL_EVENT_GET_END: return "PTL_EVENT_GET_END";
	case PTL_EVENT_PUT_START: return "PTL_EVENT_PUT_START";
	case PTL_EVENT_PUT_END: return "PTL_EVENT_PUT_END";
	case PTL_EVENT_REPLY_START: return "PTL_EVENT_REPLY_START";
	case PTL_EVENT_REPLY_END: return "PTL_EVENT_REPLY_END";
	case PTL_EVENT_SEND_START: return "PTL_EVENT_SEND_START";
	case PTL_EVENT_SEND_END: return "PTL_EVENT_SEND_END";
	case PTL_EVENT_ACK: return "PTL_EVENT_ACK";
	case PTL_EVENT_UNLINK: return "PTL_EVENT_UNLINK";
	}
	return "unknown event kind";
}

const char *PtlNIFailStr(ptl_handle_ni_t ni_handle, ptl_ni_fail_t fail_type)
{
	(void)ni_handle;
	switch (fail_type) {
	case PTL_NI_OK: return "PTL_NI_OK: no failure";
	case PTL_NI_FAIL: return "PTL_NI_FAIL: the peer died or could not be reached";
	case PTL_NI_DROPPED: return "PTL_NI_DROPPED: the target dropped the request (no match, no room, or access denied)";
	}
	return "unknown failure type";
}

int PtlHandleIsEqual(ptl_handle_any_t handle1, ptl_handle_any_t handle2)
{
	return handle1 == handle2 ? PTL_OK : PTL_FAIL;
}
