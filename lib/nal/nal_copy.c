/*
 * lib/nal/nal_copy.c - nal_copy_big, the copy of more than 128 bytes that
 * the transports, lib/ptl and the MPI shim make of message data.
 *
 * Why not memcpy: from 2112 bytes (glibc.cpu.x86_rep_movsb_threshold on
 * AMD CPUs with fast short rep movsb) up to the non-temporal threshold,
 * glibc's memcpy copies with rep movsb, and on the Zen 3 guest that
 * microcoded copy ran at half the vector loop's speed where it went well
 * and 25-30x slower where it did not (bench/copy_grid, from cache to
 * cache): 4 KiB in 49-84 ns against 40 with both ends on a line, ~180 ns
 * for some pairs of offsets within a line (source at 0, destination at
 * 8 or 16), 1.4-2.3 us where the two were also that far apart modulo a
 * page, as a ring's payload and a malloc'd buffer's start often are. A
 * 2-rank 4 KiB MPI_Allreduce, whose message is copied out of the reserve
 * buffer it landed in, took 2.2-2.7 us against 0.9 with rep movsb turned
 * off (GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=100000000). This
 * is the vector loop, chosen once: 32-byte moves where the CPU has AVX2,
 * 16-byte SSE2 ones otherwise (every x86-64 CPU), memcpy elsewhere.
 */
#include "config.h"

#include "nal/nal_copy.h"

#if defined(__x86_64__) && defined(__GNUC__)
/* 32 bytes, at any address (vec_u) or at a multiple of 32 (vec_a): GCC's
 * vector extension, so the one loop below is 32-byte moves where it is
 * built for AVX2 and pairs of 16-byte ones for the baseline (SSE2). */
typedef uint8_t vec_u __attribute__((vector_size(32), aligned(1), may_alias));
typedef uint8_t vec_a __attribute__((vector_size(32), may_alias));

/* n > 128, d and s apart. The first vector and the last four go by
 * unaligned moves (they may overlap what the loop stores: the same bytes
 * again); the loop stores whole aligned vectors, four a turn. All loads
 * of the last four come first. */
__attribute__((always_inline)) static inline void copy_loop(void *d, const void *s, size_t n)
{
	uint8_t *t = d;
	const uint8_t *f = s;
	vec_u e0 = *(const vec_u *)(f + n - 128), e1 = *(const vec_u *)(f + n - 96);
	vec_u e2 = *(const vec_u *)(f + n - 64), e3 = *(const vec_u *)(f + n - 32);
	uint8_t *end = t + n;

	*(vec_u *)t = *(const vec_u *)f;
	size_t skip = 32 - ((uintptr_t)t & 31);
	t += skip;
	f += skip;
	for (; (size_t)(end - t) > 128; t += 128, f += 128) {
		vec_u a = *(const vec_u *)f, b = *(const vec_u *)(f + 32);
		vec_u c = *(const vec_u *)(f + 64), g = *(const vec_u *)(f + 96);
		*(vec_a *)t = a;
		*(vec_a *)(t + 32) = b;
		*(vec_a *)(t + 64) = c;
		*(vec_a *)(t + 96) = g;
	}
	*(vec_u *)(end - 128) = e0;
	*(vec_u *)(end - 96) = e1;
	*(vec_u *)(end - 64) = e2;
	*(vec_u *)(end - 32) = e3;
}

__attribute__((target("avx2"))) static void copy_avx2(void *d, const void *s, size_t n)
{
	copy_loop(d, s, n);
}

static void copy_sse2(void *d, const void *s, size_t n)
{
	copy_loop(d, s, n);
}

static void copy_first(void *d, const void *s, size_t n);
/* Which loop: decided at the first copy (a relaxed race between threads
 * only decides it twice, alike). */
static void (*copy_fn)(void *, const void *, size_t) = copy_first;

static void copy_first(void *d, const void *s, size_t n)
{
	__builtin_cpu_init(); /* in a shared library, before any constructor may have run it */
	void (*f)(void *, const void *, size_t) = __builtin_cpu_supports("avx2") ? copy_avx2 : copy_sse2;
	__atomic_store_n(&copy_fn, f, __ATOMIC_RELAXED);
	f(d, s, n);
}

void nal_copy_big(void *d, const void *s, size_t n)
{
	__atomic_load_n(&copy_fn, __ATOMIC_RELAXED)(d, s, n);
}
#else
void nal_copy_big(void *d, const void *s, size_t n)
{
	memcpy(d, s, n);
}
#endif
