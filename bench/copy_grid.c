/*
 * bench/copy_grid: the copy of message data, nal_copy (lib/nal/nal_copy.c)
 * against libc's memcpy in the same run, from cache to cache (L1 up to 16
 * KiB, L2 at 64 KiB), by size and by the
 * source's and destination's offsets within a cache line (and a page
 * apart plus 16 bytes, as a ring's payload and a malloc'd buffer's start
 * often are). Prints "copy <bytes> <src off> <dst off> <memcpy ns>
 * <nal_copy ns> <ratio>" (best of 15 passes of 1,000 copies; ratio =
 * nal_copy / memcpy) and, per size, the worst of each.
 *   bench/copy_grid [SIZE...]   (default 2048 4096 8192 16384 65536)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "nal/nal_copy.h"

typedef void copy_fn_t(void *, const void *, size_t);

static void libc_copy(void *d, const void *s, size_t n)
{
	memcpy(d, s, n);
}

static void our_copy(void *d, const void *s, size_t n)
{
	nal_copy(d, s, n);
}

static double best_ns(copy_fn_t *f, unsigned char *d, const unsigned char *s, size_t n)
{
	double best = 1e30;
	for (int pass = 0; pass < 15; pass++) {
		double t0 = bench_now_ns();
		for (int i = 0; i < 1000; i++) {
			f(d, s, n);
			__asm__ volatile("" : : "r"(d) : "memory");
		}
		double t = (bench_now_ns() - t0) / 1000;
		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	static const size_t dflt[] = { 2048, 4096, 8192, 16384, 65536 };
	static const size_t off[][2] = { { 0, 0 }, { 0, 8 }, { 0, 16 }, { 16, 0 }, { 8, 40 }, { 32, 48 }, { 0, 4096 + 16 } };
	size_t nsizes = argc > 1 ? (size_t)argc - 1 : sizeof dflt / sizeof dflt[0];
	unsigned char *a = aligned_alloc(4096, 1 << 20), *b = aligned_alloc(4096, 1 << 20);

	if (!a || !b)
		return 1;
	memset(a, 1, 1 << 20);
	memset(b, 2, 1 << 20);
	printf("# nal_copy vs memcpy, cache to cache, ns a copy (best of 15 x 1000); ratio = nal_copy / memcpy\n");
	for (size_t k = 0; k < nsizes; k++) {
		size_t n = argc > 1 ? strtoul(argv[k + 1], NULL, 0) : dflt[k];
		double worst_libc = 0, worst_ours = 0;
		if (n == 0 || n > (1 << 19)) {
			fprintf(stderr, "copy_grid: size %zu: 1 - %d bytes\n", n, 1 << 19);
			return 2;
		}
		for (size_t o = 0; o < sizeof off / sizeof off[0]; o++) {
			unsigned char *s = a + off[o][0], *d = b + off[o][1];
			double libc = best_ns(libc_copy, d, s, n), ours = best_ns(our_copy, d, s, n);
			printf("copy %6zu %4zu %4zu %9.1f %9.1f %6.2fx\n", n, off[o][0], off[o][1], libc, ours, ours / libc);
			worst_libc = libc > worst_libc ? libc : worst_libc;
			worst_ours = ours > worst_ours ? ours : worst_ours;
		}
		printf("worst %6zu memcpy %.1f nal_copy %.1f ns\n", n, worst_libc, worst_ours);
	}
	return 0;
}
