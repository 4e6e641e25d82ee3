/*
 * The read-only view a ptl process keeps in shared memory for ptltool:
 * ptltool maps these objects read-only, so looking never stops or slows the
 * process (the library writes them as part of its normal work).
 *
 *   /dev/shm/ptl.view.<pid>          struct ptl_view_proc (one per process)
 *   /dev/shm/ptl.view.<pid>.eq<i>    struct ptl_view_eq + events (one per EQ)
 *
 * The process removes them in PtlFini and at exit; ptlrun removes them for
 * its ranks when the job ends; a process that opens its view removes those
 * of processes that died without either (a live one holds a flock on its
 * process view: ptl_view.c). Layout changes bump PTL_VIEW_VERSION.
 */
#ifndef PTL_VIEW_H
#define PTL_VIEW_H

#include <stdint.h>

#include <portals3.h>

#define PTL_VIEW_MAGIC 0x70746c7669657731ull /* "ptlview1" */
#define PTL_VIEW_VERSION 6 /* 2: pidns (withdrawn); 3: its process holds a flock on the view; 4: PTL_SR_REFUSED_COUNT; 5: start; 6: PTL_SR_MES_IN_USE */
#define PTL_VIEW_VERSION_LOCKED 3 /* the first whose process holds that lock (ptl_view.c's sweep) */
#define PTL_VIEW_MAX_EQS 256 /* EQs listed in the view (more are not shown) */

struct ptl_view_eqref {
	uint32_t in_use;
	uint32_t index;        /* <i> of the eq object's name */
	uint64_t handle;
	uint64_t count;
};

struct ptl_view_proc {
	uint64_t magic;
	uint32_t version;
	int32_t pid;
	int32_t rank, size;
	uint64_t jobid;
	/* The process's start time (lib/rt/rt_proc.h): pid names it only
	 * while the process with that pid started then (ptltool's live
	 * views); 0: unknown (no /proc entry of its own to read). */
	uint64_t start;
	char prog[64];
	char nals[64];         /* NALs in use, e.g. "self,shm" */
	uint32_t ni_up;        /* an NI is initialized */
	ptl_process_id_t id;
	ptl_ni_limits_t limits;
	int64_t sr[PTL_SR_COUNT]; /* status registers */
	uint32_t neqs;         /* slots of eqs[] ever used */
	uint32_t waiting;      /* an application thread is blocked in PtlEQWait/Poll */
	struct ptl_view_eqref eqs[PTL_VIEW_MAX_EQS];
};

/* Head of an EQ object; ptl_event_t[count] follows at offset 64. The writer
 * stores an event, then advances write_seq (release); readers of the view
 * take write_seq (acquire) and read events behind it. */
struct ptl_view_eq {
	uint64_t magic;
	uint64_t count;
	uint64_t write_seq;    /* events ever written */
	uint64_t read_seq;     /* events ever consumed by the process */
	uint64_t dropped;      /* events overwritten before they were read */
	uint64_t handle;
	uint64_t pad[2];
};

#define PTL_VIEW_EQ_EVENTS(v) ((ptl_event_t *)((char *)(v) + sizeof(struct ptl_view_eq)))

#endif
