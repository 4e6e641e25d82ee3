/* Helpers shared by the collectives tests (header-only, static). */
#ifndef COLL_TEST_UTIL_H
#define COLL_TEST_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "coll.h"

static inline struct coll_req mkreq(enum coll_op op, enum coll_algo algo, int n, size_t bytes,
                                    int chunks, int ports)
{
	struct coll_req r;
	memset(&r, 0, sizeof r);
	r.op = op;
	r.algo = algo;
	r.nranks = n;
	r.bytes = bytes;
	r.elem_size = 1;
	r.num_chunks = chunks;
	r.ports = ports;
	return r;
}

/* Expand, failing the test with the library's message if it does not work,
 * and check the schedule's invariants. */
static inline struct coll_sched *expand_ok(const struct coll_req *r)
{
	char msg[256] = "";
	struct coll_sched *s = NULL;
	int rc = coll_expand(r, &s, msg, sizeof msg);
	if (rc) {
		fail_msg("expand %s %s N=%d bytes=%zu: %d %s", coll_op_name(r->op),
		         coll_algo_name(r->algo), r->nranks, r->bytes, rc, msg);
	}
	rc = coll_check(s, msg, sizeof msg);
	if (rc)
		fail_msg("check %s %s N=%d bytes=%zu: %s", coll_op_name(r->op),
		         coll_algo_name(s->info.algo), r->nranks, r->bytes, msg);
	return s;
}

/* sends of one rank in one step and direction */
static inline int count_kind(const struct coll_sched *s, int rank, enum coll_kind k,
                             int step, int dir)
{
	size_t n;
	const struct coll_cmd *c = coll_rank_cmds(s, rank, &n);
	int cnt = 0;
	for (size_t i = 0; i < n; i++)
		if (c[i].kind == k && (step < 0 || c[i].step == (uint32_t)step)
		    && (dir < 0 || c[i].dir == dir))
			cnt++;
	return cnt;
}

#endif
