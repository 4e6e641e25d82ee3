/*
 * rt_kvs: a rank that publishes values, fences, and checks every other
 * rank's values, twice, with barriers between. Run under ptlrun or alone
 * (then it must be rank 0 of 1, backend "singleton"). Prints one line:
 *   rank R of N ok (local L/LS backend B jobid J)
 * and exits 0, or says what differed and exits 1.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "rt_kvs rank %d: ", me.rank);        \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			exit(1);                                             \
		}                                                            \
	} while (0)

static struct rt_info me = { .rank = -1 };

/* Rank r's value in round k: binary, with zeros, a rank-dependent size. */
static size_t value(int r, int k, uint8_t *buf)
{
	size_t len = (size_t)(37 * r + 11 * k + 5) % RT_VAL_MAX + 1;

	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)((i * 7 + (size_t)r * 13 + (size_t)k) % 251);
	buf[0] = 0;
	return len;
}

int main(void)
{
	uint8_t want[RT_VAL_MAX], got[RT_VAL_MAX + 1];
	size_t wl, gl;

	CHECK(rt_self() == NULL, "rt_self before rt_init is not NULL");
	CHECK(rt_init(&me) == 0, "rt_init failed");
	CHECK(rt_self() != NULL && rt_self()->rank == me.rank, "rt_self");
	CHECK(me.size >= 1 && me.rank >= 0 && me.rank < me.size,
	      "rank %d of %d", me.rank, me.size);
	CHECK(me.local_rank >= 0 && me.local_rank < me.local_size,
	      "local rank %d of %d", me.local_rank, me.local_size);
	CHECK(me.jobid != 0 && me.nid != 0, "jobid or nid is 0");
	CHECK(me.nid == rt_host_nid(), "nid %" PRIu32 " is not the host's",
	      me.nid);
	if (getenv(RT_ENV_FD) == NULL)
		CHECK(me.rank == 0 && me.size == 1 &&
		      strcmp(me.backend, "singleton") == 0,
		      "alone but rank %d of %d, backend %s", me.rank,
		      me.size, me.backend);

	for (int k = 0; k < 2; k++) {
		char big[RT_VAL_MAX];

		wl = value(me.rank, k, want);
		CHECK(rt_put("addr", want, wl) == 0, "put addr");
		memset(big, 'a' + me.rank % 26, sizeof(big));
		CHECK(rt_put("big", big, sizeof(big)) == 0, "put big");
		CHECK(rt_put("empty", "", 0) == 0, "put empty");
		CHECK(rt_fence() == 0, "fence %d", k);
		for (int r = 0; r < me.size; r++) {
			wl = value(r, k, want);
			gl = sizeof(got);
			CHECK(rt_get(r, "addr", got, &gl) == 0,
			      "get addr of rank %d", r);
			CHECK(gl == wl && memcmp(got, want, wl) == 0,
			      "round %d: rank %d's addr differs (%zu bytes, "
			      "want %zu)", k, r, gl, wl);
			gl = sizeof(got);
			CHECK(rt_get(r, "big", got, &gl) == 0 &&
			      gl == RT_VAL_MAX && got[RT_VAL_MAX - 1] ==
			      'a' + r % 26, "rank %d's big value", r);
			gl = 1;
			CHECK(rt_get(r, "big", got, &gl) == -1 && gl == RT_VAL_MAX,
			      "get into a 1-byte buffer succeeded or did not say the size (%zu)", gl);
			gl = sizeof(got);
			CHECK(rt_get(r, "empty", got, &gl) == 0 && gl == 0,
			      "rank %d's empty value", r);
		}
		gl = sizeof(got);
		CHECK(rt_get(0, "nosuchkey", got, &gl) == -1 && gl == sizeof(got),
		      "get of a missing key succeeded or changed the size (%zu)", gl);
		CHECK(rt_get(me.size, "addr", got, &gl) == -1,
		      "get of rank %d (out of range) succeeded", me.size);
		CHECK(rt_barrier() == 0, "barrier %d", k);
	}
	CHECK(rt_put("bad key", "x", 1) == -1, "put of a key with a space");
	CHECK(rt_put("k", want, RT_VAL_MAX + 1) == -1, "put of an overlong value");
	printf("rank %d of %d ok (local %d/%d backend %s jobid %016" PRIx64 ")\n",
	       me.rank, me.size, me.local_rank, me.local_size, me.backend,
	       me.jobid);
	rt_fini();
	CHECK(rt_self() == NULL, "rt_self after rt_fini is not NULL");
	return 0;
}
