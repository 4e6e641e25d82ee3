/*
 * rt_pmix.c - a rank started by a PMIx launcher (Open MPI's mpirun, Slurm's
 * srun --mpi=pmix). Rank and namespace from PMIx_Init, the job size from
 * the wildcard rank, local rank and size from the server; puts go to the
 * PMIx key space (values are bytes, keys carry no rank: PMIx keys are per
 * process), a fence is PMIx_Commit + PMIx_Fence with PMIX_COLLECT_DATA, so
 * a later PMIx_Get is local. rank 0's random job key travels the same way
 * at init.
 */
#include "config.h"

#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"
#include "rt_proto.h"

static pmix_proc_t px_me;
static int px_size;
static int px_up;

static uint64_t px_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s != '\0'; s++) {
		h ^= (uint8_t)*s;
		h *= 1099511628211ULL;
	}
	return h != 0 ? h : 1;
}

static int px_get_u32(const pmix_proc_t *proc, const char *key, uint32_t *out)
{
	pmix_value_t *val = NULL;
	pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, &val);

	if (rc != PMIX_SUCCESS || val == NULL)
		return -1;
	switch (val->type) {
	case PMIX_UINT32: *out = val->data.uint32; break;
	case PMIX_UINT16: *out = val->data.uint16; break;
	case PMIX_INT: *out = (uint32_t)val->data.integer; break;
	case PMIX_PROC_RANK: *out = val->data.rank; break;
	default: PMIX_VALUE_RELEASE(val); return -1;
	}
	PMIX_VALUE_RELEASE(val);
	return 0;
}

static int px_fence(int collect)
{
	pmix_info_t info;
	bool yes = true;
	pmix_status_t rc;

	if ((rc = PMIx_Commit()) != PMIX_SUCCESS) {
		fprintf(stderr, "ptl: rank %u: PMIx_Commit: %s\n", px_me.rank, PMIx_Error_string(rc));
		return -1;
	}
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
	rc = PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0);
	PMIX_INFO_DESTRUCT(&info);
	if (rc != PMIX_SUCCESS) {
		fprintf(stderr, "ptl: rank %u: PMIx_Fence: %s\n", px_me.rank, PMIx_Error_string(rc));
		return -1;
	}
	return 0;
}

static int px_put(const char *key, const void *val, size_t len)
{
	pmix_value_t v;
	pmix_status_t rc;

	PMIX_VALUE_CONSTRUCT(&v);
	v.type = PMIX_BYTE_OBJECT;
	v.data.bo.bytes = (char *)val;
	v.data.bo.size = len;
	rc = PMIx_Put(PMIX_GLOBAL, key, &v);
	if (rc != PMIX_SUCCESS) {
		fprintf(stderr, "ptl: rank %u: PMIx_Put(%s): %s\n", px_me.rank, key,
			PMIx_Error_string(rc));
		return -1;
	}
	return 0;
}

static int px_get(int rank, const char *key, void *val, size_t *len)
{
	pmix_proc_t proc;
	pmix_value_t *v = NULL;
	int ret = -1;

	if (rank < 0 || rank >= px_size || key == NULL || len == NULL)
		return -1;
	PMIX_PROC_LOAD(&proc, px_me.nspace, (pmix_rank_t)rank);
	if (PMIx_Get(&proc, key, NULL, 0, &v) != PMIX_SUCCESS || v == NULL)
		return -1;
	if (v->type == PMIX_BYTE_OBJECT) {
		if (v->data.bo.size > *len) {
			*len = v->data.bo.size;
		} else {
			if (v->data.bo.size)
				memcpy(val, v->data.bo.bytes, v->data.bo.size);
			*len = v->data.bo.size;
			ret = 0;
		}
	}
	PMIX_VALUE_RELEASE(v);
	return ret;
}

static int px_init(struct rt_info *info)
{
	pmix_proc_t wild;
	pmix_status_t rc;
	uint32_t u;
	size_t klen = RT_JOB_KEY_LEN;

	if (!px_up) {
		if ((rc = PMIx_Init(&px_me, NULL, 0)) != PMIX_SUCCESS) {
			fprintf(stderr, "ptl: PMIx_Init: %s (PMIX_NAMESPACE is set: was this "
				"started by a PMIx launcher?)\n", PMIx_Error_string(rc));
			return -1;
		}
		px_up = 1;
		PMIX_PROC_LOAD(&wild, px_me.nspace, PMIX_RANK_WILDCARD);
		if (px_get_u32(&wild, PMIX_JOB_SIZE, &u) != 0) {
			fprintf(stderr, "ptl: PMIx: no job size\n");
			return -1;
		}
		px_size = (int)u;
		if (px_me.rank == 0) {
			uint8_t k[RT_JOB_KEY_LEN];

			if (rt_random_bytes(k, sizeof(k)) != 0 || px_put("ptl.jobkey", k, sizeof(k)) != 0)
				return -1;
		}
		if (px_fence(1) != 0)
			return -1;
	}
	info->rank = (int)px_me.rank;
	info->size = px_size;
	PMIX_PROC_LOAD(&wild, px_me.nspace, PMIX_RANK_WILDCARD);
	info->local_rank = 0;
	info->local_size = 1;
	if (px_get_u32(&px_me, PMIX_LOCAL_RANK, &u) == 0)
		info->local_rank = (int)u;
	if (px_get_u32(&wild, PMIX_LOCAL_SIZE, &u) == 0)
		info->local_size = (int)u;
	info->nid = rt_host_nid();
	info->jobid = px_hash(px_me.nspace);
	if (px_get(0, "ptl.jobkey", info->job_key, &klen) != 0 || klen != RT_JOB_KEY_LEN) {
		fprintf(stderr, "ptl: rank %u: PMIx: no job key from rank 0\n", px_me.rank);
		return -1;
	}
	return 0;
}

static int px_fence_collect(void)
{
	return px_fence(1);
}

static int px_barrier(void)
{
	return px_fence(0);
}

static void px_abort(int code, const char *why)
{
	fprintf(stderr, "ptl: rank %u: abort with code %d: %s\n", px_me.rank, code, why);
	if (px_up)
		PMIx_Abort(code, why, NULL, 0);
	_exit(code > 0 && code < 256 ? code : 1);
}

static void px_fini(void)
{
	/* PMIx stays up for a later rt_init; finalized at exit. */
}

static void px_atexit(void)
{
	if (px_up)
		PMIx_Finalize(NULL, 0);
	px_up = 0;
}

static int px_init_once(struct rt_info *info)
{
	static int registered;
	int rc = px_init(info);

	if (rc == 0 && !registered) {
		atexit(px_atexit);
		registered = 1;
	}
	return rc;
}

const struct rt_ops rt_pmix_ops = {
	.name = "pmix",
	.init = px_init_once,
	.put = px_put,
	.fence = px_fence_collect,
	.get = px_get,
	.barrier = px_barrier,
	.abort = px_abort,
	.fini = px_fini,
};
