/*
 * lib/nal/shm/shm_seg.c - the job's segment on this host: name, size,
 * creation by local rank 0, attachment by the others, early unlink.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt/rt_proc.h"
#include "shm.h"

/* A segment of up to SHM_SEG_RESERVE_MAX bytes (up to 18 ranks on a host;
 * 2 ranks: 5 MiB, 4 ranks: 18 MiB) has all its pages allocated by its creator
 * (posix_fallocate) and mapped at once by every rank (MAP_POPULATE):
 * mapped on demand, a rank took a fault the first time it touched each
 * page of a ring or bounce slot, in whichever call first reached it, and
 * faults are dear on the VM guests here. 5 interleaved launches each,
 * bench/mpi_allreduce.c, medians: 4 ranks on 2 cores 256 KiB 254 -> 250
 * us (range 251-417 -> 227-293: the slow tail), 1 MiB 543 -> 482; 2 ranks
 * pinned 256 KiB 29.8 -> 26.8, 1 MiB 124 -> 122. And a /dev/shm too small
 * for it fails the job at start, with a message, not with a SIGBUS at
 * whichever store first reaches a page it cannot have. Larger segments
 * (the rings' and slots' floors outgrow the budgets: 32 ranks 94 MiB, 64
 * ranks 317 MiB, mostly pairs that never talk) stay sparse and are
 * mapped on demand, as is a segment on a /dev/shm that cannot fallocate:
 * reserving all of that would cost the host its memory and each rank
 * its page tables. */
#define SHM_SEG_RESERVE_MAX (64u << 20)

/* The flags a rank maps a segment of len bytes with. */
static int seg_map_flags(uint64_t len)
{
#ifdef MAP_POPULATE
	if (len <= SHM_SEG_RESERVE_MAX)
		return MAP_SHARED | MAP_POPULATE;
#endif
	(void)len;
	return MAP_SHARED;
}

/* Allocates the pages of a new segment of len bytes (fd) where it is
 * within SHM_SEG_RESERVE_MAX: 0, or the error (ENOSPC: /dev/shm cannot
 * hold it). A /dev/shm whose filesystem cannot fallocate keeps the
 * segment sparse (0). */
static int seg_reserve(int fd, uint64_t len)
{
	int err;

	if (len > SHM_SEG_RESERVE_MAX)
		return 0;
	err = posix_fallocate(fd, 0, (off_t)len);
	if (err == EINTR) /* older kernels' tmpfs stops at a signal: once more */
		err = posix_fallocate(fd, 0, (off_t)len);
	return err == EOPNOTSUPP || err == ENOSYS ? 0 : err;
}

/* Our affinity mask into our shm_rank, for shm_bulk_crowded: the CPUs the
 * host's ranks may use are the union of theirs (not the host's count,
 * which taskset, cpusets and a launcher's binding do not change; not one
 * rank's own either: bound to a core each, each sees one). More than 1024
 * CPUs (sched_getaffinity refuses a cpu_set_t): all online ones. */
static void publish_cpus(struct nal *n)
{
	cpu_set_t set;
	uint32_t cnt = 0;

	memset(n->me->cpus, 0, sizeof(n->me->cpus));
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (int c = 0; c < SHM_CPU_WORDS * 64 && c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				n->me->cpus[c / 64] |= 1ull << (c % 64);
				cnt++;
			}
	} else {
		long on = sysconf(_SC_NPROCESSORS_ONLN);

		for (long c = 0; c < on && c < SHM_CPU_WORDS * 64; c++) {
			n->me->cpus[c / 64] |= 1ull << (c % 64);
			cnt++;
		}
	}
	atomic_store_explicit(&n->me->ncpu, cnt ? cnt : 1, memory_order_release);
}

/* Our pid and start time into our shm_rank (struct shm_rank says why
 * both): read once here, at attach, so that a peer's check compares
 * them with what /proc says then. Read by our pid, as a peer will, not
 * by /proc/self: an entry we cannot find so is one the peers cannot
 * either, and they must not take its absence for our death (start 0). */
static void publish_self(struct nal *n)
{
	uint64_t start = 0;
	char state;

	if (rt_proc_stat(getpid(), &state, &start) != 0)
		start = 0;
	atomic_store_explicit(&n->me->start, start, memory_order_relaxed);
	atomic_store_explicit(&n->me->pid, (int32_t)getpid(), memory_order_release);
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static uint64_t pow2_floor(uint64_t v)
{
	uint64_t p = 1;

	while (p * 2 <= v)
		p *= 2;
	return p;
}

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void shm_seg_name(uint64_t jobid, char *buf, size_t len)
{
	snprintf(buf, len, "/ptl.%016" PRIx64 ".seg", jobid);
}

uint64_t shm_ring_size(uint32_t L)
{
	uint64_t pairs = shm_pairs(L);

	return clamp_u64(pow2_floor(SHM_RING_BUDGET / pairs), SHM_RING_MIN,
			 L <= SHM_RING_SMALL_JOB ? SHM_RING_MAX_SMALL : SHM_RING_MAX);
}

/* A slot's bytes in a segment of L ranks: the bounce budget's share of
 * each of the pairs' SHM_NSLOT slots, a power of two from SHM_CHUNK_MIN
 * to SHM_CHUNK_PLAIN, then doubled up to SHM_CHUNK_MAX while the share
 * allows and the pieces would walk more parts of it (shm.h says why). A
 * lone rank has no area (shm_pair_index): its figure, which no slot
 * takes, stays the plain one. */
uint64_t shm_chunk_size(uint32_t L)
{
	uint64_t share = pow2_floor(SHM_BOUNCE_BUDGET / (shm_pairs(L) * SHM_NSLOT));
	uint64_t chunk = clamp_u64(share, SHM_CHUNK_MIN, SHM_CHUNK_PLAIN);

	while (L > 1 && chunk * 2 <= SHM_CHUNK_MAX && chunk * 2 <= share &&
	       shm_slot_parts(L, chunk * 2) > shm_slot_parts(L, chunk))
		chunk *= 2;
	return chunk;
}

/* Sizes every part for L local ranks: rings shrink as L grows so the whole
 * stays near SHM_RING_BUDGET + SHM_BOUNCE_BUDGET. */
static void plan(struct shm_seg_hdr *h, uint32_t L)
{
	uint64_t off;

	h->magic = SHM_MAGIC;
	h->version = SHM_VERSION;
	h->local_size = L;
	h->ring_size = shm_ring_size(L);
	h->ring_stride = sizeof(struct shm_ring_ctl) + h->ring_size;
	h->chunk = shm_chunk_size(L);
	h->slot_parts = shm_slot_parts(L, h->chunk);
	h->bounce_stride = align_up(SHM_NSLOT * sizeof(struct shm_slot) + SHM_NSLOT * h->chunk,
				    SHM_ALIGN);
	off = align_up(sizeof(struct shm_seg_hdr), SHM_ALIGN);
	h->rank_off = off;
	off = align_up(off + L * sizeof(struct shm_rank), SHM_ALIGN);
	h->ring_off = off;
	off += (uint64_t)L * (L - 1) * h->ring_stride;
	h->bounce_off = off;
	off += (uint64_t)L * (L - 1) * h->bounce_stride;
	h->seg_len = align_up(off, 4096);
}

/* Points our per-peer state at the segment's rings and bounce areas;
 * our own entry at none (nothing of ours goes to ourselves through the
 * segment: a use of it faults at once rather than write a peer's ring). */
void shm_seg_layout(struct nal *n)
{
	struct shm_seg_hdr *h = n->hdr;
	uint32_t L = (uint32_t)n->lsize, me = (uint32_t)n->lrank;

	n->ranks = (struct shm_rank *)(n->base + h->rank_off);
	n->me = &n->ranks[me];
	n->ring_size = h->ring_size;
	n->ring_mask = h->ring_size - 1;
	n->hot_bytes = SHM_HOT_BYTES;
	n->chunk = h->chunk;
	n->slot_parts = h->slot_parts;
	n->max_inline = SHM_MAX_INLINE;
	if (n->max_inline > h->ring_size / 4 - 8)
		n->max_inline = h->ring_size / 4 - 8;
	for (uint32_t p = 0; p < L; p++) {
		if (p == me) {
			n->tx[p].ctl = NULL;
			n->tx[p].data = NULL;
			n->rx[p].ctl = NULL;
			n->rx[p].data = NULL;
			n->bp[p].rq_slot = n->bp[p].sv_slot = NULL;
			n->bp[p].rq_data = n->bp[p].sv_data = NULL;
			continue;
		}
		uint64_t mine = shm_pair_index(me, p, L), theirs = shm_pair_index(p, me, L);
		uint8_t *out = n->base + h->ring_off + mine * h->ring_stride;
		uint8_t *in = n->base + h->ring_off + theirs * h->ring_stride;
		uint8_t *rq = n->base + h->bounce_off + mine * h->bounce_stride;
		uint8_t *sv = n->base + h->bounce_off + theirs * h->bounce_stride;

		n->tx[p].ctl = (struct shm_ring_ctl *)out;
		n->tx[p].data = out + sizeof(struct shm_ring_ctl);
		n->rx[p].ctl = (struct shm_ring_ctl *)in;
		n->rx[p].data = in + sizeof(struct shm_ring_ctl);
		n->bp[p].rq_slot = (struct shm_slot *)rq;
		n->bp[p].rq_data = rq + SHM_NSLOT * sizeof(struct shm_slot);
		n->bp[p].sv_slot = (struct shm_slot *)sv;
		n->bp[p].sv_data = sv + SHM_NSLOT * sizeof(struct shm_slot);
	}
}

int shm_seg_create(struct nal *n)
{
	struct shm_seg_hdr plan_h;
	int fd, tries = 0;
	void *p;

	memset(&plan_h, 0, sizeof(plan_h));
	plan(&plan_h, (uint32_t)n->lsize);
	shm_seg_name(n->jobid, n->name, sizeof(n->name));
	for (;;) {
		fd = shm_open(n->name, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd >= 0 || errno != EEXIST || tries++)
			break;
		/* jobids are unique per host, so this is a leftover of a crashed
		 * job that had our id: nobody can be using it. */
		fprintf(stderr, "ptl shm: removing stale segment /dev/shm%s\n", n->name);
		shm_unlink(n->name);
	}
	if (fd < 0) {
		fprintf(stderr, "ptl shm: shm_open(%s) failed: %s (is /dev/shm mounted and writable?)\n",
			n->name, strerror(errno));
		return NAL_EIO;
	}
	if (ftruncate(fd, (off_t)plan_h.seg_len) != 0) {
		fprintf(stderr, "ptl shm: sizing %s to %" PRIu64 " bytes failed: %s\n", n->name,
			plan_h.seg_len, strerror(errno));
		close(fd);
		shm_unlink(n->name);
		return NAL_EIO;
	}
	int err = seg_reserve(fd, plan_h.seg_len); /* SHM_SEG_RESERVE_MAX says why */
	if (err != 0) {
		fprintf(stderr, "ptl shm: reserving %" PRIu64 " bytes of /dev/shm for %s failed: %s "
			"(is /dev/shm full or too small?)\n", plan_h.seg_len, n->name, strerror(err));
		close(fd);
		shm_unlink(n->name);
		return NAL_EIO;
	}
	p = mmap(NULL, plan_h.seg_len, PROT_READ | PROT_WRITE, seg_map_flags(plan_h.seg_len), fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "ptl shm: mmap of %s (%" PRIu64 " bytes) failed: %s\n", n->name,
			plan_h.seg_len, strerror(errno));
		shm_unlink(n->name);
		return NAL_EIO;
	}
	n->base = p;
	n->seg_len = plan_h.seg_len;
	n->hdr = p;
	/* ftruncate gave zeros: rings are empty, slots free, states 0. */
	memcpy(n->hdr, &plan_h, offsetof(struct shm_seg_hdr, initialized));
	n->hdr->jobid = n->jobid;
	atomic_store_explicit(&n->hdr->attached, 1, memory_order_relaxed);
	shm_seg_layout(n);
	publish_self(n);
	publish_cpus(n);
	shm_wake_publish(n);
	/* Publishes the header: an attacher that sees 1 sees everything above. */
	atomic_store_explicit(&n->hdr->initialized, 1, memory_order_release);
	return 0;
}

int shm_seg_attach(struct nal *n)
{
	struct shm_seg_hdr *h;
	struct stat sb;
	int fd;
	void *p;

	shm_seg_name(n->jobid, n->name, sizeof(n->name));
	fd = shm_open(n->name, O_RDWR, 0);
	if (fd < 0) {
		fprintf(stderr, "ptl shm: rank %d cannot open %s: %s (local rank 0 creates it before "
			"the address exchange)\n", n->rank, n->name, strerror(errno));
		return NAL_EIO;
	}
	if (fstat(fd, &sb) != 0 || (size_t)sb.st_size < sizeof(*h)) {
		fprintf(stderr, "ptl shm: %s is too small or unreadable\n", n->name);
		close(fd);
		return NAL_EIO;
	}
	p = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, seg_map_flags((uint64_t)sb.st_size), fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "ptl shm: mmap of %s failed: %s\n", n->name, strerror(errno));
		return NAL_EIO;
	}
	h = p;
	if (atomic_load_explicit(&h->initialized, memory_order_acquire) != 1 ||
	    h->magic != SHM_MAGIC || h->version != SHM_VERSION ||
	    h->local_size != (uint32_t)n->lsize || h->jobid != n->jobid ||
	    h->seg_len != (uint64_t)sb.st_size ||
	    /* a part count the slots cannot hold would misplace (or, 0,
	     * divide by zero in shm_slot_off) every bounced piece */
	    h->slot_parts < 1 || (h->chunk / shm_piece(h->chunk)) % h->slot_parts != 0) {
		fprintf(stderr, "ptl shm: %s is not this job's segment (initialized %u, version %u, this "
			"build's %u, %u local ranks, expected %d, %llu slot parts): stale or foreign\n",
			n->name, atomic_load(&h->initialized), h->version, SHM_VERSION, h->local_size, n->lsize,
			(unsigned long long)h->slot_parts);
		munmap(p, (size_t)sb.st_size);
		return NAL_EIO;
	}
	n->base = p;
	n->seg_len = (size_t)sb.st_size;
	n->hdr = h;
	shm_seg_layout(n);
	publish_self(n);
	publish_cpus(n);
	shm_wake_publish(n);
	atomic_fetch_add_explicit(&h->attached, 1, memory_order_acq_rel);
	return 0;
}

/* Local rank 0 removes the name once every local rank holds a mapping:
 * from then on, the segment dies with the last process, however it dies. */
void shm_seg_try_unlink(struct nal *n)
{
	if (n->unlinked || n->lrank != 0 || !n->hdr)
		return;
	if (atomic_load_explicit(&n->hdr->attached, memory_order_acquire) < (uint32_t)n->lsize)
		return;
	shm_unlink(n->name);
	n->unlinked = 1;
}
