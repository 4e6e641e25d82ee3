/*
 * portals3.h - the Portals 3.3 message passing API (SAND2006-0420, rev 2.1).
 *
 * Every function, type and constant of the 3.3 specification, with the
 * specification's names and signatures, so existing Portals 3.3 programs
 * compile unchanged. Every function returns PTL_OK or one of the PTL_* codes
 * below; PtlErrorStr() turns a code into a message. Only PtlEQWait and
 * PtlEQPoll block; every other call returns without waiting for a peer.
 * Every call is atomic with respect to other threads and to incoming
 * operations. See portals3(7) and the man3 page of each function.
 */
#ifndef PORTALS3_H
#define PORTALS3_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ base types */
typedef uint64_t ptl_size_t;
typedef uint64_t ptl_match_bits_t;
typedef uint64_t ptl_hdr_data_t;
typedef uint32_t ptl_pt_index_t;
typedef uint32_t ptl_ac_index_t;
typedef uint32_t ptl_nid_t;
typedef uint32_t ptl_pid_t;
typedef uint32_t ptl_uid_t;
typedef uint32_t ptl_jid_t;
typedef uint32_t ptl_seq_t;
typedef int ptl_interface_t;
typedef int ptl_sr_index_t;
typedef long ptl_sr_value_t;
typedef int ptl_time_t; /* milliseconds */
typedef int ptl_ni_fail_t;

/* Handles pack (kind, NI, generation, index): a stale or forged handle is
 * detected and reported, never dereferenced. Compare them with
 * PtlHandleIsEqual. */
typedef uint64_t ptl_handle_any_t;
typedef ptl_handle_any_t ptl_handle_ni_t;
typedef ptl_handle_any_t ptl_handle_eq_t;
typedef ptl_handle_any_t ptl_handle_md_t;
typedef ptl_handle_any_t ptl_handle_me_t;

typedef struct {
	ptl_nid_t nid;
	ptl_pid_t pid;
} ptl_process_id_t;

/* ------------------------------------------------------------ return codes */
enum {
	PTL_OK = 0,
	PTL_AC_INDEX_INVALID,
	PTL_EQ_DROPPED,
	PTL_EQ_EMPTY,
	PTL_EQ_INVALID,
	PTL_FAIL,
	PTL_HANDLE_INVALID,
	PTL_IFACE_INVALID,
	PTL_MD_ILLEGAL,
	PTL_MD_INVALID,
	PTL_MD_IN_USE,
	PTL_MD_NO_UPDATE,
	PTL_ME_INVALID,
	PTL_ME_IN_USE,
	PTL_ME_LIST_TOO_LONG,
	PTL_NI_INVALID,
	PTL_NO_INIT,
	PTL_NO_SPACE,
	PTL_PID_INVALID,
	PTL_PROCESS_INVALID,
	PTL_PT_FULL,
	PTL_PT_INDEX_INVALID,
	PTL_SEGV,
	PTL_SR_INDEX_INVALID,
	PTL_UNKNOWN_ERROR,
	PTL_IFACE_DUP,
	PTL_MAX_ERRNO
};

/* ------------------------------------------------------------ wildcards */
#define PTL_NID_ANY ((ptl_nid_t)0xffffffffu)
#define PTL_PID_ANY ((ptl_pid_t)0xffffffffu)
#define PTL_UID_ANY ((ptl_uid_t)0xffffffffu)
#define PTL_JID_ANY ((ptl_jid_t)0xffffffffu)
#define PTL_JID_NONE ((ptl_jid_t)0xfffffffeu)
#define PTL_PT_INDEX_ANY ((ptl_pt_index_t)0xffffffffu)

#define PTL_IFACE_DEFAULT ((ptl_interface_t)0)

#define PTL_INVALID_HANDLE ((ptl_handle_any_t)0)
#define PTL_HANDLE_NONE PTL_INVALID_HANDLE
#define PTL_EQ_NONE ((ptl_handle_eq_t)0)

#define PTL_TIME_FOREVER ((ptl_time_t)-1)

/* ------------------------------------------------------------ enums */
typedef enum { PTL_RETAIN = 0, PTL_UNLINK = 1 } ptl_unlink_t;
typedef enum { PTL_INS_BEFORE = 0, PTL_INS_AFTER = 1 } ptl_ins_pos_t;
typedef enum { PTL_ACK_REQ = 0, PTL_NO_ACK_REQ = 1 } ptl_ack_req_t;

/* ------------------------------------------------------------ memory descriptors */
#define PTL_MD_THRESH_INF (-1)

#define PTL_MD_OP_PUT (1u << 0)
#define PTL_MD_OP_GET (1u << 1)
#define PTL_MD_MANAGE_REMOTE (1u << 2)
#define PTL_MD_TRUNCATE (1u << 3)
#define PTL_MD_ACK_DISABLE (1u << 4)
#define PTL_MD_IOVEC (1u << 5)
#define PTL_MD_MAX_SIZE (1u << 6)
#define PTL_MD_EVENT_START_DISABLE (1u << 7)
#define PTL_MD_EVENT_END_DISABLE (1u << 8)

typedef struct {
	void *iov_base;
	ptl_size_t iov_len;
} ptl_md_iovec_t;

typedef struct {
	void *start;          /* buffer, or ptl_md_iovec_t[] with PTL_MD_IOVEC */
	ptl_size_t length;    /* bytes, or number of iovecs with PTL_MD_IOVEC */
	int threshold;        /* operations left; PTL_MD_THRESH_INF: no limit */
	ptl_size_t max_size;  /* with PTL_MD_MAX_SIZE: unlink when less is free */
	unsigned int options; /* PTL_MD_* bits */
	void *user_ptr;       /* handed back in every event of this MD */
	ptl_handle_eq_t eq_handle; /* PTL_EQ_NONE: no events */
} ptl_md_t;

/* ------------------------------------------------------------ events */
typedef enum {
	PTL_EVENT_GET_START,
	PTL_EVENT_GET_END,
	PTL_EVENT_PUT_START,
	PTL_EVENT_PUT_END,
	PTL_EVENT_REPLY_START,
	PTL_EVENT_REPLY_END,
	PTL_EVENT_SEND_START,
	PTL_EVENT_SEND_END,
	PTL_EVENT_ACK,
	PTL_EVENT_UNLINK
} ptl_event_kind_t;

#define PTL_NI_OK 0
#define PTL_NI_FAIL 1          /* the operation failed: peer dead or unreachable */
#define PTL_NI_DROPPED 2       /* the target dropped it: no match, no room or denied */

typedef struct {
	ptl_event_kind_t type;
	ptl_process_id_t initiator;
	ptl_uid_t uid;
	ptl_jid_t jid;
	ptl_pt_index_t pt_index;
	ptl_match_bits_t match_bits;
	ptl_size_t rlength;       /* length requested */
	ptl_size_t mlength;       /* length manipulated */
	ptl_size_t offset;        /* offset within the MD */
	ptl_handle_md_t md_handle;
	ptl_md_t md;              /* the MD's state after the operation */
	ptl_hdr_data_t hdr_data;
	ptl_seq_t link;           /* nonzero when the operation unlinked the MD */
	ptl_ni_fail_t ni_fail_type;
	volatile ptl_seq_t sequence; /* per-EQ, increasing by one */
} ptl_event_t;

typedef void (*ptl_eq_handler_t)(ptl_event_t *event);
#define PTL_EQ_HANDLER_NONE ((ptl_eq_handler_t)0)

/* ------------------------------------------------------------ limits, status */
typedef struct {
	int max_mes;       /* match entries per NI */
	int max_mds;       /* memory descriptors per NI */
	int max_eqs;       /* event queues per NI */
	int max_ac_index;  /* highest access control index */
	int max_pt_index;  /* highest portal table index */
	int max_md_iovecs; /* iovecs per MD */
	int max_me_list;   /* match entries on one portal's list */
	int max_getput_md; /* bytes PtlGetPut swaps atomically */
} ptl_ni_limits_t;

#define PTL_SR_DROP_COUNT 0
#define PTL_SR_PERMISSIONS_VIOLATIONS 1
#define PTL_SR_ACK_DROP_COUNT 2   /* ptl: ACKs/REPLYs whose MD was gone */
#define PTL_SR_PEER_FAILURES 3    /* ptl: operations failed by a dead peer */
#define PTL_SR_REFUSED_COUNT 4    /* ptl: puts and gets refused for now (PTL_NO_SPACE: too many queued) */
#define PTL_SR_MES_IN_USE 5       /* ptl: match entries in use now (a level, not a count) */
#define PTL_SR_COUNT 6

/* ------------------------------------------------------------ functions */

/* Library: PtlInit must come first; *max_interfaces gets the number of
 * interfaces. PtlFini ends every NI still open. */
int PtlInit(int *max_interfaces);
void PtlFini(void);

/* Network interfaces. pid PTL_PID_ANY takes the id the runtime assigns
 * (see ptl_runtime.h); a second PtlNIInit of one interface returns the same
 * handle and PTL_IFACE_DUP. desired/actual may be NULL. */
int PtlNIInit(ptl_interface_t iface, ptl_pid_t pid, ptl_ni_limits_t *desired,
	      ptl_ni_limits_t *actual, ptl_handle_ni_t *ni_handle);
int PtlNIFini(ptl_handle_ni_t ni_handle);
int PtlNIStatus(ptl_handle_ni_t ni_handle, ptl_sr_index_t status_register,
		ptl_sr_value_t *status);
/* Distance: 0 this process, 1 same NUMA node, 2 same host, 3 other host. */
int PtlNIDist(ptl_handle_ni_t ni_handle, ptl_process_id_t process, unsigned long *distance);
int PtlNIHandle(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle);

int PtlGetUid(ptl_handle_ni_t ni_handle, ptl_uid_t *uid);
int PtlGetId(ptl_handle_ni_t ni_handle, ptl_process_id_t *id);
int PtlGetJid(ptl_handle_ni_t ni_handle, ptl_jid_t *jid);

/* Match entries. */
int PtlMEAttach(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		ptl_match_bits_t ignore_bits, ptl_unlink_t unlink_op,
		ptl_ins_pos_t position, ptl_handle_me_t *me_handle);
int PtlMEAttachAny(ptl_handle_ni_t ni_handle, ptl_pt_index_t *pt_index,
		   ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		   ptl_match_bits_t ignore_bits, ptl_unlink_t unlink_op,
		   ptl_handle_me_t *me_handle);
int PtlMEInsert(ptl_handle_me_t base, ptl_process_id_t match_id,
		ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits,
		ptl_unlink_t unlink_op, ptl_ins_pos_t position,
		ptl_handle_me_t *me_handle);
int PtlMEUnlink(ptl_handle_me_t me_handle);

/* Memory descriptors. */
int PtlMDAttach(ptl_handle_me_t me_handle, ptl_md_t md, ptl_unlink_t unlink_op,
		ptl_handle_md_t *md_handle);
int PtlMDBind(ptl_handle_ni_t ni_handle, ptl_md_t md, ptl_unlink_t unlink_op,
	      ptl_handle_md_t *md_handle);
int PtlMDUnlink(ptl_handle_md_t md_handle);
/* Reads the MD into *old_md (if not NULL) and, if new_md is not NULL,
 * replaces it - only if eq_handle is PTL_EQ_NONE or that EQ is empty, and
 * no operation on the MD is in flight (data moving, an answer due);
 * otherwise PTL_MD_NO_UPDATE and nothing changes. */
int PtlMDUpdate(ptl_handle_md_t md_handle, ptl_md_t *old_md, ptl_md_t *new_md,
		ptl_handle_eq_t eq_handle);

/* Event queues. */
int PtlEQAlloc(ptl_handle_ni_t ni_handle, ptl_size_t count,
	       ptl_eq_handler_t eq_handler, ptl_handle_eq_t *eq_handle);
int PtlEQFree(ptl_handle_eq_t eq_handle);
int PtlEQGet(ptl_handle_eq_t eq_handle, ptl_event_t *event);
int PtlEQWait(ptl_handle_eq_t eq_handle, ptl_event_t *event);
/* Waits up to timeout ms (PTL_TIME_FOREVER, or 0 to test) for an event on
 * any of size EQs; *which gets its index. PTL_EQ_EMPTY on timeout. */
int PtlEQPoll(ptl_handle_eq_t *eq_handles, int size, ptl_time_t timeout,
	      ptl_event_t *event, int *which);

/* Access control. */
int PtlACEntry(ptl_handle_ni_t ni_handle, ptl_ac_index_t ac_index,
	       ptl_process_id_t match_id, ptl_uid_t uid, ptl_jid_t jid,
	       ptl_pt_index_t pt_index);

/* Data movement. */
int PtlPut(ptl_handle_md_t md_handle, ptl_ack_req_t ack_req,
	   ptl_process_id_t target_id, ptl_pt_index_t pt_index,
	   ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
	   ptl_size_t remote_offset, ptl_hdr_data_t hdr_data);
int PtlPutRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		 ptl_size_t length, ptl_ack_req_t ack_req,
		 ptl_process_id_t target_id, ptl_pt_index_t pt_index,
		 ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
		 ptl_size_t remote_offset, ptl_hdr_data_t hdr_data);
int PtlGet(ptl_handle_md_t md_handle, ptl_process_id_t target_id,
	   ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
	   ptl_match_bits_t match_bits, ptl_size_t remote_offset);
int PtlGetRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		 ptl_size_t length, ptl_process_id_t target_id,
		 ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
		 ptl_match_bits_t match_bits, ptl_size_t remote_offset);
/* Atomic swap: the target's bytes come back into get_md_handle's memory,
 * put_md_handle's bytes replace them (at most max_getput_md bytes). */
int PtlGetPut(ptl_handle_md_t get_md_handle, ptl_handle_md_t put_md_handle,
	      ptl_process_id_t target_id, ptl_pt_index_t pt_index,
	      ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
	      ptl_size_t remote_offset, ptl_hdr_data_t hdr_data);

/* Misc. PtlHandleIsEqual returns PTL_OK when equal, PTL_FAIL otherwise. */
int PtlHandleIsEqual(ptl_handle_any_t handle1, ptl_handle_any_t handle2);
const char *PtlErrorStr(unsigned int ptl_errno);
const char *PtlEventKindStr(ptl_event_kind_t event_kind);
const char *PtlNIFailStr(ptl_handle_ni_t ni_handle, ptl_ni_fail_t fail_type);

#ifdef __cplusplus
}
#endif

#endif /* PORTALS3_H */
