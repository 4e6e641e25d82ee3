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
#include <immintrin.h>

/* n > 128, d and s apart. The first vector and the last four go by
 * unaligned moves (they may overlap what the loop stores: the same bytes
 * again); the loop stores whole aligned vectors, four a turn. */
__attribute__((target("avx2"))) static void copy_avx2(void *d, const void *s, size_t n)
{
	uint8_t *t = d;
	const uint8_t *f = s;
	__m256i e0 = _mm256_loadu_si256((const __m256i *)(f + n - 128));
	__m256i e1 = _mm256_loadu_si256((const __m256i *)(f + n - 96));
	__m256i e2 = _mm256_loadu_si256((const __m256i *)(f + n - 64));
	__m256i e3 = _mm256_loadu_si256((const __m256i *)(f + n - 32));
	uint8_t *end = t + n;

	_mm256_storeu_si256((__m256i *)t, _mm256_loadu_si256((const __m256i *)f));
	size_t skip = 32 - ((uintptr_t)t & 31);
	t += skip;
	f += skip;
	for (; (size_t)(end - t) > 128; t += 128, f += 128) {
		__m256i a = _mm256_loadu_si256((const __m256i *)f);
		__m256i b = _mm256_loadu_si256((const __m256i *)(f + 32));
		__m256i c = _mm256_loadu_si256((const __m256i *)(f + 64));
		__m256i g = _mm256_loadu_si256((const __m256i *)(f + 96));
		_mm256_store_si256((__m256i *)t, a);
		_mm256_store_si256((__m256i *)(t + 32), b);
		_mm256_store_si256((__m256i *)(t + 64), c);
		_mm256_store_si256((__m256i *)(t + 96), g);
	}
	_mm256_storeu_si256((__m256i *)(end - 128), e0);
	_mm256_storeu_si256((__m256i *)(end - 96), e1);
	_mm256_storeu_si256((__m256i *)(end - 64), e2);
	_mm256_storeu_si256((__m256i *)(end - 32), e3);
}

/* The same with 16-byte moves: first one, last four, 64 bytes a turn. */
static void copy_sse2(void *d, const void *s, size_t n)
{
	uint8_t *t = d;
	const uint8_t *f = s;
	__m128i e0 = _mm_loadu_si128((const __m128i *)(f + n - 64));
	__m128i e1 = _mm_loadu_si128((const __m128i *)(f + n - 48));
	__m128i e2 = _mm_loadu_si128((const __m128i *)(f + n - 32));
	__m128i e3 = _mm_loadu_si128((const __m128i *)(f + n - 16));
	uint8_t *end = t + n;

	_mm_storeu_si128((__m128i *)t, _mm_loadu_si128((const __m128i *)f));
	size_t skip = 16 - ((uintptr_t)t & 15);
	t += skip;
	f += skip;
	for (; (size_t)(end - t) > 64; t += 64, f += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)f);
		__m128i b = _mm_loadu_si128((const __m128i *)(f + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(f + 32));
		__m128i g = _mm_loadu_si128((const __m128i *)(f + 48));
		_mm_store_si128((__m128i *)t, a);
		_mm_store_si128((__m128i *)(t + 16), b);
		_mm_store_si128((__m128i *)(t + 32), c);
		_mm_store_si128((__m128i *)(t + 48), g);
	}
	_mm_storeu_si128((__m128i *)(end - 64), e0);
	_mm_storeu_si128((__m128i *)(end - 48), e1);
	_mm_storeu_si128((__m128i *)(end - 32), e2);
	_mm_storeu_si128((__m128i *)(end - 16), e3);
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
