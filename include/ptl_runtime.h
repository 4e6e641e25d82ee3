/*
 * ptl_runtime.h - where this process sits in its job.
 *
 * Valid after PtlInit. A program started by ptlrun (or, later, by another
 * supported launcher) learns its rank and the job's size from the launcher;
 * a program started on its own is a job of one. See ptl_runtime(3).
 */
#ifndef PTL_RUNTIME_H
#define PTL_RUNTIME_H

#include <portals3.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This process's rank, 0..size-1; 0 when run alone. -1 before PtlInit. */
int PtlRtRank(void);

/* Number of processes in the job; 1 when run alone. -1 before PtlInit. */
int PtlRtSize(void);

/* The id rank's NI gets from PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, ...).
 * PTL_OK, PTL_NO_INIT before PtlInit, PTL_PROCESS_INVALID for a rank outside
 * the job, PTL_SEGV for a NULL id. */
int PtlRtId(int rank, ptl_process_id_t *id);

/* Waits for every process of the job. PTL_OK, PTL_NO_INIT, or PTL_FAIL when
 * the launcher is gone or a peer died (the reason is printed on stderr). */
int PtlRtBarrier(void);

/* Whether rank's process is known to be gone: *failed is 1 when libptl has
 * seen it die (operations to it failed, a transport reported it) or, asked
 * now, finds it gone; 0 while it lives as far as libptl can tell. On the same
 * host the answer is immediate; across hosts a death shows once the
 * transport notices it (the verbs keepalive: seconds; TCP: the broken
 * connection). PTL_OK, PTL_NO_INIT, PTL_PROCESS_INVALID for a rank outside
 * the job, PTL_SEGV for a NULL failed. */
int PtlRtRankFailed(int rank, int *failed);

/* The most bytes a put carries inline to any rank of the job: a put (or
 * PtlPutRegion) of at most this many bytes has been copied out of its MD
 * when the call returns, so the memory may change at once; a larger one is
 * read from the MD later, until its SEND_END. 0 before PtlInit. */
size_t PtlRtMaxInline(void);

/* Ends the whole job: the launcher stops every process and exits with
 * code (1..255; other values become 1), printing why and which rank asked.
 * Run alone, the process prints why and exits with code. Never returns. */
void PtlRtAbort(int code, const char *why) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif /* PTL_RUNTIME_H */
