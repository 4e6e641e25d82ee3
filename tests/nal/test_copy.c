/*
 * tests/nal/test_copy.c - nal_copy and the loops behind nal_copy_big
 * (lib/nal/nal_copy.c, compiled in here so the test reaches each loop,
 * not only the one this CPU picks): every byte of the destination is the
 * source's, and not one byte either side of it is written, at sizes
 * around each loop's turn and tail and at every pair of alignments that
 * matter (within a vector, a vector apart, a page apart); nothing read
 * before the source or past its end (the source flush against a page
 * that faults); and the pick itself: the AVX2 loop where
 * __builtin_cpu_supports says the CPU has AVX2, SSE2's elsewhere.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "nal/nal_copy.c"

#define GUARD 128
#define AREA (70000 + 2 * 4096 + 2 * GUARD)

typedef void copy_fn_t(void *, const void *, size_t);

static unsigned char *src_area, *dst_area;

static int setup(void **state)
{
	(void)state;
	src_area = aligned_alloc(4096, AREA);
	dst_area = aligned_alloc(4096, AREA);
	if (!src_area || !dst_area)
		return -1;
	for (size_t i = 0; i < AREA; i++)
		src_area[i] = (unsigned char)(i * 131 + 7);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(src_area);
	free(dst_area);
	return 0;
}

/* One copy of n bytes from src_area + so to dst_area + GUARD + dof,
 * checked whole and with the bytes around it untouched. */
static void check_one(copy_fn_t *f, size_t n, size_t so, size_t dof)
{
	unsigned char *d = dst_area + GUARD + dof;
	const unsigned char *s = src_area + so;

	memset(dst_area, 0xa5, dof + n + 2 * GUARD);
	f(d, s, n);
	if (memcmp(d, s, n) != 0)
		fail_msg("copy of %zu bytes (source +%zu, destination +%zu) differs", n, so, dof);
	for (size_t i = 0; i < GUARD + dof; i++)
		if (dst_area[i] != 0xa5)
			fail_msg("copy of %zu bytes (+%zu, +%zu) wrote %zu bytes before its destination", n, so, dof,
				 GUARD + dof - i);
	for (size_t i = 0; i < GUARD; i++)
		if (d[n + i] != 0xa5)
			fail_msg("copy of %zu bytes (+%zu, +%zu) wrote byte %zu past its end", n, so, dof, i);
}

static const size_t offs[] = { 0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 48, 63, 4096 + 16 };
#define NOFFS (sizeof offs / sizeof offs[0])

/* Sizes from min to 1100 one by one (every tail and turn of both loops),
 * then the sizes messages come in and a long odd one. */
static void check_sizes(copy_fn_t *f, size_t min)
{
	static const size_t big[] = { 2048, 2112, 4095, 4096, 4097, 8192, 16384, 65536, 65536 + 4096 - 3 };

	for (size_t a = 0; a < NOFFS; a++)
		for (size_t b = 0; b < NOFFS; b++) {
			for (size_t n = min; n <= 1100; n++)
				check_one(f, n, offs[a], offs[b]);
			for (size_t k = 0; k < sizeof big / sizeof big[0]; k++)
				check_one(f, big[k], offs[a], offs[b]);
		}
}

/* Copies of every size class with the source's first byte right after
 * a page that faults, then its last right before one: a loop that reads
 * outside [s, s + n) dies. */
static void check_no_overread(copy_fn_t *f, size_t min)
{
	static const size_t sizes[] = { 129, 130, 160, 191, 255, 256, 257, 1000, 4096, 4100, 65536 + 24 };
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), span = (65536 + 24 + 2 * pg) / pg * pg + 2 * pg;
	unsigned char *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m, pg, PROT_NONE), 0);
	assert_int_equal(mprotect(m + span - pg, pg, PROT_NONE), 0);
	for (size_t i = pg; i < span - pg; i++)
		m[i] = (unsigned char)(i * 7 + 3);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		size_t n = sizes[k];
		if (n < min)
			continue;
		for (size_t o = 0; o < NOFFS; o++) {
			const unsigned char *first = m + pg, *last = m + span - pg - n;
			unsigned char *d = dst_area + GUARD + offs[o];
			f(d, first, n);
			assert_memory_equal(d, first, n);
			f(d, last, n);
			assert_memory_equal(d, last, n);
		}
	}
	munmap(m, span);
}

static void nal_copy_fn(void *d, const void *s, size_t n)
{
	nal_copy(d, s, n);
}

static void test_nal_copy(void **state)
{
	(void)state;
	check_sizes(nal_copy_fn, 0);
	check_no_overread(nal_copy_fn, 0);
}

#if defined(__x86_64__) && defined(__GNUC__)
static void test_sse2_loop(void **state)
{
	(void)state;
	check_sizes(copy_sse2, 129);
	check_no_overread(copy_sse2, 129);
}

static void test_avx2_loop(void **state)
{
	(void)state;
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2"))
		skip();
	check_sizes(copy_avx2, 129);
	check_no_overread(copy_avx2, 129);
}

/* The first big copy picks the loop: AVX2's where __builtin_cpu_supports
 * says the CPU has it, else SSE2's. */
static void test_pick(void **state)
{
	(void)state;
	nal_copy_big(dst_area, src_area, 4096);
	__builtin_cpu_init();
	copy_fn_t *want = __builtin_cpu_supports("avx2") ? copy_avx2 : copy_sse2;
	assert_ptr_equal(__atomic_load_n(&copy_fn, __ATOMIC_RELAXED), want);
	assert_memory_equal(dst_area, src_area, 4096);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#if defined(__x86_64__) && defined(__GNUC__)
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_sse2_loop),
		cmocka_unit_test(test_avx2_loop),
#endif
		cmocka_unit_test(test_nal_copy),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
