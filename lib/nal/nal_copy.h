/*
 * lib/nal/nal_copy.h - nal_copy, the copy of message data: the small one
 * both sides of a message make on their fast paths (shm's sender into its
 * ring, a header and a payload; lib/ptl's arrival into the target MD)
 * inline, and the larger ones of the transports, lib/ptl and the MPI shim
 * by nal_copy_big (nal_copy.c, built as libnalcopy.la into libptl and into
 * libptlmpi).
 */
#ifndef PTL_NAL_COPY_H
#define PTL_NAL_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* n bytes from s to d (apart), n > 128: nal_copy.c (why not memcpy). */
__attribute__((visibility("hidden"))) void nal_copy_big(void *d, const void *s, size_t n);

/* Copies n bytes from src to d (apart), whatever n: message data. Up to
 * 128 with fixed-size moves, some overlapping, inline; nal_copy_big above.
 * A call into libc's memcpy (its PLT jump, and a size class chosen at run
 * time) was two calls of a small put on the sender, and ~20 instructions
 * of an 8-byte arrival. The sizes are split in halves, so an 8-byte
 * payload takes two tests to its moves, a 40-byte header three. */
__attribute__((always_inline)) static inline void nal_copy(void *d, const void *src, size_t n)
{
	uint8_t *t = d;
	const uint8_t *s = src;

	if (n > 16) {
		if (n > 128) {
			nal_copy_big(t, s, n);
		} else if (n > 64) {
			memcpy(t, s, 64);
			memcpy(t + n - 64, s + n - 64, 64);
		} else if (n > 32) {
			memcpy(t, s, 32);
			memcpy(t + n - 32, s + n - 32, 32);
		} else {
			memcpy(t, s, 16);
			memcpy(t + n - 16, s + n - 16, 16);
		}
	} else if (n >= 8) {
		memcpy(t, s, 8);
		memcpy(t + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(t, s, 4);
		memcpy(t + n - 4, s + n - 4, 4);
	} else if (n) {
		t[0] = s[0];
		t[n / 2] = s[n / 2];
		t[n - 1] = s[n - 1];
	}
}

/* n bytes from src to d, which may overlap: nal_copy where they are apart,
 * memmove where they are not. For moves within a process whose ends may
 * be one buffer (a rank's move to itself, a schedule's local copy), not
 * glibc's memmove for all: from 2 KiB it takes rep movsb, 25-30x slower
 * at some offsets on the Zen 3 guest (nal_copy.c; MPI_Sendrecv of 32 KiB
 * to itself between two malloc'd buffers 16 bytes apart modulo a page
 * 12.2-12.9 us against 1.5-1.7). */
static inline void nal_move(void *d, const void *src, size_t n)
{
	uintptr_t a = (uintptr_t)d, b = (uintptr_t)src;
	if (a + n <= b || b + n <= a)
		nal_copy(d, src, n);
	else
		memmove(d, src, n);
}

#endif
