/*
 * The registrations behind mem_reg() and bulk(). A registration
 * (ibv_reg_mr) pins the pages its range had when it was made, against
 * RLIMIT_MEMLOCK unless the process has CAP_IPC_LOCK. Each one counts its
 * users: mem_reg() takes one for lib/ptl, which gives it back through
 * mem_dereg() when the exposure ends (the op's answer came, it failed,
 * its peer died, the NI went), and bulk() one per local piece until its
 * RDMA op completes. A registration in use is never freed: a peer may
 * hold its key, or our own WR its lkey.
 *
 * An unused registration is kept for reuse when it can be validated:
 * memory the application frees and gets back at the same addresses
 * (malloc of a large block after free, a heap that shrank and grew) has
 * NEW pages there, and a registration keyed by address alone would move
 * the old ones. So a registration records the page frame of each of its
 * pages (/proc/self/pagemap) and a request reuses it only when EVERY page
 * the request covers still has its frame: the old frames stay pinned by
 * the registration, so a frame seen again is the same page, never a new
 * one at the old place. A check reads 8 bytes a page, 256 pages a pread,
 * on the verbs path only; the kernel's walk of the page table is most of
 * its cost (~60 ns a page on a 2020s x86 host: 15-25 us for 1 MiB).
 * Where frames cannot be read (no CAP_SYS_ADMIN: every normal user, they
 * read as 0) or PTL_VERBS_REG_CACHE=0, nothing is reused, and a
 * registration is freed as soon as its last user is done: only the ones
 * in flight exist, and freed memory is not kept pinned.
 *
 * A cached one holds pages the application may have freed, so it goes
 * when it is unused and it cannot serve what it served any more: [ulo,
 * uhi) are the pages every request it served has in common, and once one
 * of those changed (or, when they share no page, all of its pages did)
 * it is freed, when a request finds it stale or when it is the oldest at
 * a miss. At VRB_REG_MAX registrations the oldest unused one goes (the
 * stale among the oldest VRB_REAP_SCAN first); when all are in use the
 * table grows, as in-flight ones cannot wait. When ibv_reg_mr says
 * ENOMEM or EAGAIN (the memlock limit), every unused one is freed and it
 * is tried once more.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nal/verbs/vrb.h"

/* A pagemap entry: bit 63 present, bits 0-54 the page frame. */
#define VRB_PM_PRESENT (1ull << 63)
#define VRB_PM_KEEP (VRB_PM_PRESENT | ((1ull << 55) - 1))
#define VRB_PM_ABSENT UINT64_MAX /* recorded for a page not present: matches nothing */
#define VRB_PFN_CHUNK 256u /* pagemap entries read at once (on the stack) */
#define VRB_REAP_SCAN 8u   /* oldest registrations looked at when the cache is full */

static uintptr_t vrb_page;

static uintptr_t vrb_page_down(uintptr_t a) { return a & ~(vrb_page - 1); }
static uintptr_t vrb_page_up(uintptr_t a) { return (a + vrb_page - 1) & ~(vrb_page - 1); }

/* The raw pagemap entries of npages pages from start. */
static int vrb_pagemap(struct nal *n, uintptr_t start, size_t npages, uint64_t *out)
{
	size_t bytes = npages * 8;
	off_t off = (off_t)(start / vrb_page) * 8;
	return pread(n->pagemap_fd, out, bytes, off) == (ssize_t)bytes ? 0 : -1;
}

/* What a registration records of each page: its frame and the present
 * bit as the check reads them, VRB_PM_ABSENT for a page not present. */
static int vrb_pfns(struct nal *n, uintptr_t start, size_t npages, uint64_t *out)
{
	if (vrb_pagemap(n, start, npages, out) != 0)
		return -1;
	for (size_t i = 0; i < npages; i++)
		out[i] = (out[i] & VRB_PM_PRESENT) ? out[i] & VRB_PM_KEEP : VRB_PM_ABSENT;
	return 0;
}

int vrb_reg_init(struct nal *n)
{
	vrb_page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const char *e = getenv("PTL_VERBS_REG_CACHE");
	if (e && !strcmp(e, "0"))
		return 0;
	n->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (n->pagemap_fd < 0)
		return 0;
	/* Are frames visible? Look at a page we just touched. */
	static volatile char probe[1];
	probe[0] = 1;
	uint64_t f = 0;
	if (vrb_pfns(n, vrb_page_down((uintptr_t)probe), 1, &f) != 0 || f == VRB_PM_ABSENT ||
	    (f & ~VRB_PM_PRESENT) == 0) { /* frames read as 0 */
		close(n->pagemap_fd);
		n->pagemap_fd = -1;
	}
	return 0;
}

static void vrb_reg_free(struct vrb_reg *r)
{
	ibv_dereg_mr(r->mr);
	free(r->pfn);
}

void vrb_reg_fini(struct nal *n)
{
	unsigned used = 0;
	for (unsigned i = 0; i < n->nregs; i++)
		used += n->regs[i].refs > 0;
	if (n->debug)
		fprintf(stderr, "ptl: verbs: rank %d: registrations: %u live at close (%u in use), %u at most, "
			"%llu made, %llu freed, %llu found remapped, %llu freed for the memlock limit\n",
			n->args.rank, n->nregs, used, n->reg_peak, (unsigned long long)n->reg_made,
			(unsigned long long)n->reg_freed, (unsigned long long)n->reg_stale,
			(unsigned long long)n->reg_trimmed);
	for (unsigned i = 0; i < n->nregs; i++)
		vrb_reg_free(&n->regs[i]);
	free(n->regs);
	n->regs = NULL;
	n->nregs = n->regs_cap = 0;
	if (n->pagemap_fd >= 0)
		close(n->pagemap_fd);
	n->pagemap_fd = -1;
}

/* Whether the pages [lo, hi) of r (page aligned, inside it) still have the
 * frames r pinned: all of them, or (any) at least one. Reads no further
 * than it must; where it cannot read, says what keeps r (not all, any). */
static bool vrb_reg_kept(struct nal *n, const struct vrb_reg *r, uintptr_t lo, uintptr_t hi, bool any)
{
	if (!r->pfn)
		return any;
	uint64_t now[VRB_PFN_CHUNK];
	size_t i = (lo - r->start) / vrb_page, end = (hi - r->start) / vrb_page;
	while (i < end) {
		size_t k = end - i < VRB_PFN_CHUNK ? end - i : VRB_PFN_CHUNK;
		if (vrb_pagemap(n, r->start + i * vrb_page, k, now) != 0)
			return any;
		const uint64_t *was = r->pfn + i;
		for (size_t j = 0; j < k; j++)
			if (((now[j] & VRB_PM_KEEP) == was[j]) == any)
				return any; /* a page that decides it */
		i += k;
	}
	return !any;
}

/* Whether no request r served can still be live (see the top of the
 * file): a page they all cover was freed, or, when they have none in
 * common, every page of r was. */
static bool vrb_reg_dead(struct nal *n, const struct vrb_reg *r)
{
	if (!r->pfn)
		return false;
	if (r->ulo < r->uhi)
		return !vrb_reg_kept(n, r, r->ulo, r->uhi, false);
	return !vrb_reg_kept(n, r, r->start, r->end, true);
}

static void vrb_reg_remove(struct nal *n, unsigned i)
{
	vrb_reg_free(&n->regs[i]);
	memmove(&n->regs[i], &n->regs[i + 1], (n->nregs - i - 1) * sizeof n->regs[0]);
	n->nregs--;
	n->reg_freed++;
}

/* Before a new registration: frees the oldest if it is unused and dead
 * (one at a time, so a miss costs at most one more check, as long as the
 * registration it makes); when the cache is full, the unused dead among
 * the oldest VRB_REAP_SCAN, or else the oldest unused ones, until below
 * it. One in use stays: the table grows instead (vrb_reg_get). */
static void vrb_reg_reap(struct nal *n)
{
	if (n->nregs && n->nregs < VRB_REG_MAX && !n->regs[n->nregs - 1].refs &&
	    vrb_reg_dead(n, &n->regs[n->nregs - 1]))
		vrb_reg_remove(n, n->nregs - 1);
	if (n->nregs < VRB_REG_MAX)
		return;
	unsigned seen = 0;
	for (unsigned i = n->nregs; i-- > 0 && seen < VRB_REAP_SCAN; seen++)
		if (!n->regs[i].refs && vrb_reg_dead(n, &n->regs[i]))
			vrb_reg_remove(n, i);
	for (unsigned i = n->nregs; n->nregs >= VRB_REG_MAX && i-- > 0;)
		if (!n->regs[i].refs) /* (after a growth: back to the limit) */
			vrb_reg_remove(n, i);
}

/* Frees every unused registration (ibv_reg_mr hit the memlock limit);
 * how many. */
static unsigned vrb_reg_trim(struct nal *n)
{
	unsigned freed = 0;
	for (unsigned i = n->nregs; i-- > 0;)
		if (!n->regs[i].refs) {
			vrb_reg_remove(n, i);
			freed++;
		}
	n->reg_trimmed += freed;
	return freed;
}

/* ibv_reg_mr of [lo, hi); sets *memlock when the refusal was for want of
 * lockable memory (ENOMEM, EAGAIN), errno to the first refusal's. */
static struct ibv_mr *vrb_reg_mr(struct nal *n, uintptr_t lo, uintptr_t hi, bool *memlock)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_mr *m = ibv_reg_mr(n->pd, (void *)lo, hi - lo, acc);
	if (m)
		return m;
	int e = errno;
	*memlock = e == ENOMEM || e == EAGAIN;
	/* read-only memory can still be read */
	m = ibv_reg_mr(n->pd, (void *)lo, hi - lo, IBV_ACCESS_REMOTE_READ);
	if (!m) {
		*memlock = *memlock || errno == ENOMEM || errno == EAGAIN;
		errno = e;
	}
	return m;
}

/* The registration covering [addr, addr+len), from the cache or new,
 * with one more user: vrb_reg_put() gives it back. */
struct ibv_mr *vrb_reg_get(struct nal *n, void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	uintptr_t lo = vrb_page_down(a), hi = vrb_page_up(a + (len ? len : 1));
	for (unsigned i = 0; i < n->nregs; i++) {
		struct vrb_reg *r = &n->regs[i];
		if (lo < r->start || hi > r->end || !r->pfn)
			continue;
		if (vrb_reg_kept(n, r, lo, hi, false)) {
			struct vrb_reg hit = *r;
			hit.ulo = lo > hit.ulo ? lo : hit.ulo;
			hit.uhi = hi < hit.uhi ? hi : hit.uhi;
			hit.refs++;
			memmove(&n->regs[1], &n->regs[0], i * sizeof n->regs[0]); /* most recent first */
			n->regs[0] = hit;
			return hit.mr;
		}
		/* Remapped here; freed when unused and nothing it could
		 * serve is left. */
		n->reg_stale++;
		if (!r->refs && vrb_reg_dead(n, r))
			vrb_reg_remove(n, i--);
	}
	struct vrb_reg r = { .start = lo, .end = hi, .ulo = lo, .uhi = hi, .refs = 1 };
	bool memlock = false;
	r.mr = vrb_reg_mr(n, lo, hi, &memlock);
	if (!r.mr && memlock && vrb_reg_trim(n) > 0) /* unused ones made room? */
		r.mr = vrb_reg_mr(n, lo, hi, &memlock);
	if (!r.mr) {
		fprintf(stderr, "ptl: verbs: cannot register %zu bytes at %p: %s (memlock limit? ulimit -l)\n",
			len, addr, strerror(errno));
		return NULL;
	}
	r.lkey = r.mr->lkey;
	/* The frames now, pinned: recorded after ibv_reg_mr faulted them in. */
	if (n->pagemap_fd >= 0) {
		size_t np = (hi - lo) / vrb_page;
		r.pfn = malloc(np * sizeof *r.pfn);
		if (r.pfn && vrb_pfns(n, lo, np, r.pfn) != 0) {
			free(r.pfn);
			r.pfn = NULL;
		}
	}
	vrb_reg_reap(n);
	if (n->nregs == n->regs_cap) { /* all in use (or the first one) */
		unsigned cap = n->regs_cap ? 2 * n->regs_cap : VRB_REG_MAX;
		struct vrb_reg *g = realloc(n->regs, cap * sizeof *g);
		if (!g) {
			fprintf(stderr, "ptl: verbs: out of memory for %u registrations\n", cap);
			vrb_reg_free(&r);
			return NULL;
		}
		n->regs = g;
		n->regs_cap = cap;
	}
	memmove(&n->regs[1], &n->regs[0], n->nregs * sizeof n->regs[0]);
	n->regs[0] = r;
	n->nregs++;
	n->reg_made++;
	if (n->nregs > n->reg_peak)
		n->reg_peak = n->nregs;
	return r.mr;
}

/* A user of registration i is done. */
static void vrb_reg_unuse(struct nal *n, unsigned i)
{
	struct vrb_reg *r = &n->regs[i];
	if (r->refs && --r->refs == 0 && !r->pfn)
		vrb_reg_remove(n, i); /* never reused: unpinned now */
}

/* A user of the registration with this lkey (a bulk's piece) is done.
 * The one just used is usually first (most recent first). */
void vrb_reg_put(struct nal *n, uint32_t lkey)
{
	for (unsigned i = 0; i < n->nregs; i++)
		if (n->regs[i].lkey == lkey) {
			vrb_reg_unuse(n, i);
			return;
		}
}

int vrb_mem_reg(struct nal *n, void *addr, size_t len, struct nal_mr *mr)
{
	struct ibv_mr *m = vrb_reg_get(n, addr, len);
	if (!m)
		return NAL_ENOMEM;
	mr->addr = (uintptr_t)addr;
	mr->key = m->rkey;
	mr->priv = m;
	return 0;
}

/* lib/ptl's exposure of mr ended. mr->priv is compared, never read: a
 * registration close() freed is simply not found. */
void vrb_mem_dereg(struct nal *n, struct nal_mr *mr)
{
	for (unsigned i = 0; i < n->nregs; i++)
		if (n->regs[i].mr == mr->priv) {
			vrb_reg_unuse(n, i);
			return;
		}
}
