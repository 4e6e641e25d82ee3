/*
 * tests/ptl/unit/ut_ni.h - a hand-built NI for the unit tests that
 * compile lib/ptl's MD, ME and receive code without PtlNIInit
 * (test_md.c, test_recv.c): its tables, portals and IOVEC pool, and EQs
 * whose events the test's own ptl_eq_post/ptl_eq_notify stand-ins record.
 */
#ifndef PTL_UT_NI_H
#define PTL_UT_NI_H

#include <stdlib.h>
#include <string.h>

#include "ptl/ptl_internal.h"

/* ni with max_mds MDs of up to max_iov iovecs each, room for neqs EQs
 * and nmes MEs, and npts portals in pts (initialised); ptl_lib.ni is
 * set to it. Non-zero if an allocation failed. */
static inline int ut_ni_init(struct ptl_ni *ni, struct ptl_pt *pts, int npts, int max_mds, int max_iov,
			     int neqs, int nmes)
{
	memset(ni, 0, sizeof *ni);
	ni->handle = ptl_handle_make(PTL_HK_NI, 0, 1, 0);
	ni->limits.max_mds = max_mds;
	ni->limits.max_md_iovecs = max_iov;
	ni->limits.max_pt_index = npts - 1;
	ni->pts = pts;
	for (int i = 0; i < npts; i++)
		ptl_pt_init(&pts[i]);
	ni->iov_pool = calloc((size_t)(max_mds * max_iov), sizeof *ni->iov_pool);
	if (!ni->iov_pool || ptl_htab_init(&ni->mds, PTL_HK_MD, 0, (uint32_t)max_mds, sizeof(struct ptl_md)) ||
	    ptl_htab_init(&ni->eqs, PTL_HK_EQ, 0, (uint32_t)neqs, sizeof(struct ptl_eq)) ||
	    ptl_htab_init(&ni->mes, PTL_HK_ME, 0, (uint32_t)nmes, sizeof(struct ptl_me)))
		return -1;
	ptl_lib.ni = ni;
	ptl_lib.init_count = 1;
	return 0;
}

/* A new EQ of 8 events in ni, its handle in *h and its ring (to free
 * with ut_ni_fini's caller) in *ring; handler must never run (events go
 * to the test's stand-ins). NULL if an allocation failed. */
static inline struct ptl_eq *ut_eq_new(struct ptl_ni *ni, ptl_handle_eq_t *h, struct ptl_view_eq **ring,
				       ptl_eq_handler_t handler)
{
	struct ptl_eq *eq = ptl_htab_alloc(&ni->eqs, h);
	*ring = calloc(1, sizeof **ring + 8 * sizeof(ptl_event_t));
	if (!eq || !*ring)
		return NULL;
	eq->handle = *h;
	eq->ring = *ring;
	eq->count = 8;
	eq->handler = handler;
	return eq;
}

/* Undoes ut_ni_init (not the EQs' rings). */
static inline void ut_ni_fini(struct ptl_ni *ni)
{
	ptl_htab_fini(&ni->mds);
	ptl_htab_fini(&ni->eqs);
	ptl_htab_fini(&ni->mes);
	free(ni->iov_pool);
	ptl_lib.ni = NULL;
}

#endif
