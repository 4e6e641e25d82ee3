/*
 * rt_singleton.c - a process started without a launcher is a job of one:
 * rank 0 of 1, alone on its host. Puts land straight in the local table, so
 * fence and barrier have nothing to do.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"
#include "rt_proto.h"

static int single_init(struct rt_info *info)
{
	uint64_t jobid = 0;

	info->rank = 0;
	info->size = 1;
	info->local_rank = 0;
	info->local_size = 1;
	info->nid = rt_host_nid();
	/* 64 random bits: unique on the host for as long as anyone cares,
	 * and never 0 so a zero jobid always means "not initialized". */
	while (jobid == 0)
		if (rt_random_bytes(&jobid, sizeof(jobid)) != 0 ||
		    rt_random_bytes(info->job_key, sizeof(info->job_key)) != 0) {
			perror("ptl: getrandom for the job id and key");
			return -1;
		}
	info->jobid = jobid;
	return 0;
}

static int single_put(const char *key, const void *val, size_t len)
{
	if (rt_kv_set(0, key, val, len) != 0) {
		fprintf(stderr, "ptl: rt_put: out of memory\n");
		return -1;
	}
	return 0;
}

static int single_fence(void)
{
	return 0;
}

static int single_get(int rank, const char *key, void *val, size_t *len)
{
	if (rank != 0 || key == NULL || len == NULL)
		return -1;
	return rt_kv_get(rank, key, val, len) == 0 ? 0 : -1;
}

static int single_barrier(void)
{
	return 0;
}

static void single_abort(int code, const char *why)
{
	fprintf(stderr, "ptl: abort with code %d: %s\n", code, why);
	_exit(code > 0 && code < 256 ? code : 1);
}

static void single_fini(void)
{
	rt_kv_clear();
}

const struct rt_ops rt_singleton_ops = {
	.name = "singleton",
	.init = single_init,
	.put = single_put,
	.fence = single_fence,
	.get = single_get,
	.barrier = single_barrier,
	.abort = single_abort,
	.fini = single_fini,
};
