/* trc_sig.c: call-site signatures that agree across ranks.
 *
 * A raw return address differs from rank to rank under address-space
 * randomization, so each frame becomes (module name, offset in module):
 * the same on every rank running the same binary. dladdr is slow, so the
 * answer for each raw address is cached (single-threaded use). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* dladdr and Dl_info, whatever config.h says */
#endif
#include "config.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "trc.h"

#define CACHE 1024

static struct {
	const void *pc;
	uint32_t h;
} cache[CACHE];

static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	while (n--)
		h = (h ^ *b++) * 16777619u;
	return h;
}

static uint32_t frame_sig(const void *pc)
{
	size_t slot = ((uintptr_t)pc >> 2) % CACHE;
	if (cache[slot].pc == pc && pc)
		return cache[slot].h;
	Dl_info di;
	uint32_t h = 2166136261u;
	if (pc && dladdr(pc, &di) && di.dli_fname) {
		const char *base = strrchr(di.dli_fname, '/');
		base = base ? base + 1 : di.dli_fname;
		uint64_t off = (uint64_t)((uintptr_t)pc - (uintptr_t)di.dli_fbase);
		h = fnv(h, base, strlen(base));
		h = fnv(h, &off, sizeof off);
	} else {
		uint64_t raw = (uint64_t)(uintptr_t)pc;
		h = fnv(h, &raw, sizeof raw);
	}
	cache[slot].pc = pc;
	cache[slot].h = h;
	return h;
}

uint32_t trc_sig_of(void *const *pcs, int n)
{
	uint32_t h = 2166136261u;
	for (int i = 0; i < n; i++) {
		uint32_t f = frame_sig(pcs[i]);
		h = fnv(h, &f, sizeof f);
	}
	return h;
}
