/*
 * lib/nal/shm/shm_bulk.c - one-sided bulk moves between local ranks.
 *
 * First choice: CMA (process_vm_readv/writev on the peer's pid), one copy,
 * done before bulk() returns. When the OS refuses CMA (EPERM: Yama
 * ptrace_scope, a container, or PTL_SHM_CMA=0), the move goes through the
 * bounce area (requester, target) of the segment instead, two copies,
 * pipelined over SHM_NSLOT slots:
 *
 *   requester: SHM_REC_BULK {op, raddr, len} through the ring to the target;
 *   READ:  target's progress() copies chunks of raddr into free slots and
 *          marks them full; the requester's progress() copies full slots
 *          into its iovecs and frees them; done when all chunks arrived;
 *   WRITE: the requester fills free slots from its iovecs; the target's
 *          progress() copies full slots to raddr and frees them; done when
 *          the target has freed every chunk (the bytes are in place).
 *
 * Both sides walk the area's slots in the same order (a chunk counter per
 * area on each side), and the requester starts a move only after the
 * previous one on that area is complete, so the slots are all free at the
 * start of every move. Slot hand-over is a release store of `full`, read
 * with acquire by the other side; each hand-over wakes the other side if it
 * sleeps (shm_wake_peer), so neither needs to spin.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "shm.h"

#define SHM_CMA_IOV 64 /* local iovecs per process_vm_* call */
#define SHM_STALL_POLLS 4096

int shm_mem_reg(struct nal *n, void *addr, size_t len, struct nal_mr *mr)
{
	(void)n;
	(void)len;
	mr->addr = (uint64_t)(uintptr_t)addr;
	mr->key = 0;
	mr->priv = NULL;
	return 0;
}

void shm_mem_dereg(struct nal *n, struct nal_mr *mr)
{
	(void)n;
	(void)mr;
}

/* One copy by the kernel; loops over partial transfers. */
static int cma_move(struct nal *n, int li, enum nal_bulk_op op, const struct iovec *local,
		    int niov, uint64_t raddr, size_t len)
{
	pid_t pid = (pid_t)atomic_load_explicit(&n->ranks[li].pid, memory_order_relaxed);
	struct iovec lv[SHM_CMA_IOV], rv;
	int i = 0;
	size_t off = 0, done = 0;

	while (done < len) {
		size_t t = 0;
		int k = 0;
		ssize_t r;

		for (int j = i; j < niov && k < SHM_CMA_IOV && done + t < len; j++) {
			size_t o = j == i ? off : 0, l = local[j].iov_len - o;

			if (l > len - done - t)
				l = len - done - t;
			if (!l)
				continue;
			lv[k].iov_base = (char *)local[j].iov_base + o;
			lv[k].iov_len = l;
			t += l;
			k++;
		}
		rv.iov_base = (void *)(uintptr_t)(raddr + done);
		rv.iov_len = t;
		if (op == NAL_BULK_READ)
			r = process_vm_readv(pid, lv, (unsigned long)k, &rv, 1, 0);
		else
			r = process_vm_writev(pid, lv, (unsigned long)k, &rv, 1, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPERM || errno == ENOSYS)
				return NAL_EPERM;
			if (errno == ESRCH) {
				shm_peer_check(n, li, 1);
				return NAL_EPEER;
			}
			fprintf(stderr, "ptl shm: %s of %zu bytes at 0x%llx in rank %d failed: %s\n",
				op == NAL_BULK_READ ? "process_vm_readv" : "process_vm_writev", t,
				(unsigned long long)(raddr + done), n->l2g[li], strerror(errno));
			return errno == EFAULT ? NAL_EINVAL : NAL_EIO;
		}
		if (r == 0)
			return NAL_EIO;
		done += (size_t)r;
		/* Advance the local cursor by r bytes. */
		while (r > 0) {
			size_t l = local[i].iov_len - off;

			if ((size_t)r < l) {
				off += (size_t)r;
				r = 0;
			} else {
				r -= (ssize_t)l;
				i++;
				off = 0;
			}
		}
	}
	return 0;
}

static void iov_copy(struct shm_bop *op, uint8_t *buf, size_t len, int to_iov)
{
	while (len) {
		struct iovec *v = &op->iov[op->iov_i];
		size_t t = v->iov_len - op->iov_off;

		if (!t) {
			op->iov_i++;
			op->iov_off = 0;
			continue;
		}
		if (t > len)
			t = len;
		if (to_iov)
			memcpy((char *)v->iov_base + op->iov_off, buf, t);
		else
			memcpy(buf, (char *)v->iov_base + op->iov_off, t);
		op->iov_off += t;
		buf += t;
		len -= t;
	}
}

int shm_bulk(struct nal *n, int peer, enum nal_bulk_op op, const struct iovec *local, int niov,
	     uint64_t raddr, uint64_t rkey, size_t len, void *cookie)
{
	struct shm_bpeer *bp;
	struct shm_bop *b;
	size_t have = 0;
	int li, rc;

	(void)rkey;
	if ((unsigned)peer >= (unsigned)n->size || (li = n->g2l[peer]) < 0 || niov < 0 ||
	    (op != NAL_BULK_READ && op != NAL_BULK_WRITE) || (niov && !local))
		return NAL_EINVAL;
	for (int i = 0; i < niov; i++)
		have += local[i].iov_len;
	if (have < len)
		return NAL_EINVAL;
	if (n->dead[li])
		return NAL_EPEER;
	if (len == 0)
		return 0;
	if (li == n->lrank) { /* ourselves: a plain copy */
		struct shm_bop tmp = { .iov = (struct iovec *)local, .niov = niov };

		iov_copy(&tmp, (uint8_t *)(uintptr_t)raddr, len, op == NAL_BULK_READ);
		return 0;
	}
	if (n->cma) {
		rc = cma_move(n, li, op, local, niov, raddr, len);
		if (rc != NAL_EPERM)
			return rc;
		n->cma = 0; /* not permitted here: bounce from now on */
	}
	b = calloc(1, sizeof(*b) + (size_t)niov * sizeof(struct iovec));
	if (!b)
		return NAL_ENOMEM;
	b->op = op;
	b->raddr = raddr;
	b->len = len;
	b->nchunk = (len + n->chunk - 1) / n->chunk;
	b->iov = (struct iovec *)(b + 1);
	memcpy(b->iov, local, (size_t)niov * sizeof(struct iovec));
	b->niov = niov;
	b->cookie = cookie;
	bp = &n->bp[li];
	*bp->qtail = b;
	bp->qtail = &b->next;
	n->nbulk++;
	return 1;
}

static void bop_pop(struct nal *n, struct shm_bpeer *bp)
{
	struct shm_bop *b = bp->q;

	bp->q = b->next;
	if (!bp->q)
		bp->qtail = &bp->q;
	n->nbulk--;
}

/* Did a move or a serve stall long enough to suspect the peer? */
static int stalled(struct nal *n, int li, uint64_t *since, uint32_t *count)
{
	uint64_t now;

	if ((++*count % SHM_STALL_POLLS) != 0)
		return 0;
	now = shm_now_ns();
	if (!*since) {
		*since = now;
		return 0;
	}
	if ((int64_t)(now - *since) < SHM_DEAD_NS)
		return 0;
	*since = now;
	return shm_peer_check(n, li, 1);
}

/* Our active move to local peer li. */
static int rq_work(struct nal *n, int li)
{
	struct shm_bpeer *bp = &n->bp[li];
	struct shm_bop *b = bp->q;
	int did = 0;

	if (!b)
		return 0;
	if (!b->sent) {
		struct shm_bulk_req r = { .op = (uint32_t)b->op, .raddr = b->raddr, .len = b->len };
		int rc = shm_ring_put(n, li, SHM_REC_BULK, &r, sizeof(r), NULL, 0);

		if (rc == NAL_EPEER || n->dead[li])
			return 1; /* shm_peer_check failed the moves */
		if (rc)
			return 0;
		b->sent = 1;
		did++;
	}
	if (b->op == NAL_BULK_READ) {
		while (b->cons < b->nchunk) {
			uint64_t k = bp->rq_cur % SHM_NSLOT;
			struct shm_slot *s = &bp->rq_slot[k];

			if (!atomic_load_explicit(&s->full, memory_order_acquire))
				break;
			iov_copy(b, bp->rq_data + k * n->chunk, s->len, 1);
			atomic_store_explicit(&s->full, 0, memory_order_release);
			bp->rq_cur++;
			b->cons++;
			did++;
		}
	} else {
		/* Chunks the target has applied come back free, in order. */
		while (b->cons < b->prod) {
			struct shm_slot *s = &bp->rq_slot[(bp->rq_cur - (b->prod - b->cons)) % SHM_NSLOT];

			if (atomic_load_explicit(&s->full, memory_order_acquire))
				break;
			b->cons++;
			did++;
		}
		while (b->prod < b->nchunk && b->prod - b->cons < SHM_NSLOT) {
			uint64_t k = bp->rq_cur % SHM_NSLOT;
			struct shm_slot *s = &bp->rq_slot[k];
			size_t off = b->prod * n->chunk, t = b->len - off;

			if (atomic_load_explicit(&s->full, memory_order_acquire))
				break;
			if (t > n->chunk)
				t = n->chunk;
			iov_copy(b, bp->rq_data + k * n->chunk, t, 0);
			s->len = (uint32_t)t;
			atomic_store_explicit(&s->full, 1, memory_order_release);
			bp->rq_cur++;
			b->prod++;
			n->st.bounce_chunks++;
			did++;
		}
	}
	if (did) {
		b->stall_count = 0;
		b->stall_since = 0;
		shm_wake_peer(n, li);
	} else if (stalled(n, li, &b->stall_since, &b->stall_count)) {
		return 1;
	}
	if (b->cons == b->nchunk) {
		void *cookie = b->cookie;

		bop_pop(n, bp);
		free(b);
		if (n->up.bulk_done)
			n->up.bulk_done(n->up.arg, cookie, 0);
		did++;
	}
	return did;
}

/* A SHM_REC_BULK arrived from local peer li: serve it from progress(). */
void shm_bulk_serve_req(struct nal *n, int li, const void *body, size_t len)
{
	struct shm_bpeer *bp = &n->bp[li];
	struct shm_bulk_req r;

	if (len != sizeof(r)) {
		fprintf(stderr, "ptl shm: malformed bulk request from rank %d ignored\n", n->l2g[li]);
		return;
	}
	memcpy(&r, body, sizeof(r));
	if (bp->sv_active) {
		fprintf(stderr, "ptl shm: rank %d started a bulk move before its last one ended\n",
			n->l2g[li]);
		return;
	}
	bp->sv_active = 1;
	bp->sv_op = (enum nal_bulk_op)r.op;
	bp->sv_raddr = r.raddr;
	bp->sv_len = (size_t)r.len;
	bp->sv_off = 0;
	n->nbulk++;
}

/* Serve the active move that local peer li asked of us. */
static int sv_work(struct nal *n, int li)
{
	struct shm_bpeer *bp = &n->bp[li];
	uint8_t *mem = (uint8_t *)(uintptr_t)bp->sv_raddr;
	int did = 0;

	if (!bp->sv_active)
		return 0;
	while (bp->sv_off < bp->sv_len) {
		uint64_t k = bp->sv_cur % SHM_NSLOT;
		struct shm_slot *s = &bp->sv_slot[k];
		uint32_t full = atomic_load_explicit(&s->full, memory_order_acquire);
		size_t t;

		if (bp->sv_op == NAL_BULK_READ) { /* they read our memory: fill */
			if (full)
				break;
			t = bp->sv_len - bp->sv_off;
			if (t > n->chunk)
				t = n->chunk;
			memcpy(bp->sv_data + k * n->chunk, mem + bp->sv_off, t);
			s->len = (uint32_t)t;
			atomic_store_explicit(&s->full, 1, memory_order_release);
		} else { /* they write our memory: drain */
			if (!full)
				break;
			t = s->len;
			if (t > bp->sv_len - bp->sv_off)
				t = bp->sv_len - bp->sv_off;
			memcpy(mem + bp->sv_off, bp->sv_data + k * n->chunk, t);
			atomic_store_explicit(&s->full, 0, memory_order_release);
		}
		n->st.bounce_chunks++;
		bp->sv_off += t;
		bp->sv_cur++;
		did++;
	}
	if (did)
		shm_wake_peer(n, li);
	if (bp->sv_off == bp->sv_len) {
		bp->sv_active = 0;
		n->nbulk--;
		did++;
	} else if (!did) {
		stalled(n, li, &bp->sv_stall_since, &bp->sv_stall_count);
	} else {
		bp->sv_stall_since = 0;
		bp->sv_stall_count = 0;
	}
	return did;
}

int shm_bulk_progress(struct nal *n)
{
	int done = 0;

	for (int li = 0; li < n->lsize && n->nbulk; li++) {
		if (li == n->lrank || n->dead[li])
			continue;
		done += sv_work(n, li);
		done += rq_work(n, li);
	}
	return done;
}

/* Whether shm_bulk_progress would find work (for sleep()). */
int shm_bulk_pending(struct nal *n)
{
	for (int li = 0; li < n->lsize; li++) {
		struct shm_bpeer *bp = &n->bp[li];
		struct shm_bop *b = bp->q;

		if (li == n->lrank || n->dead[li])
			continue;
		if (bp->sv_active) {
			uint32_t f = atomic_load_explicit(&bp->sv_slot[bp->sv_cur % SHM_NSLOT].full,
							  memory_order_acquire);
			if ((bp->sv_op == NAL_BULK_READ) == !f)
				return 1;
		}
		if (!b)
			continue;
		if (!b->sent)
			return 1;
		if (b->op == NAL_BULK_READ) {
			if (atomic_load_explicit(&bp->rq_slot[bp->rq_cur % SHM_NSLOT].full,
						 memory_order_acquire))
				return 1;
		} else if (b->cons < b->prod &&
			   !atomic_load_explicit(
				   &bp->rq_slot[(bp->rq_cur - (b->prod - b->cons)) % SHM_NSLOT].full,
				   memory_order_acquire)) {
			return 1;
		}
	}
	return 0;
}

void shm_bulk_fail_peer(struct nal *n, int li, int status)
{
	struct shm_bpeer *bp = &n->bp[li];

	if (bp->sv_active) {
		bp->sv_active = 0;
		n->nbulk--;
	}
	while (bp->q) {
		struct shm_bop *b = bp->q;
		void *cookie = b->cookie;

		bop_pop(n, bp);
		free(b);
		if (n->up.bulk_done)
			n->up.bulk_done(n->up.arg, cookie, status);
	}
}

void shm_bulk_fini(struct nal *n)
{
	for (int li = 0; li < n->lsize; li++) {
		struct shm_bpeer *bp = &n->bp[li];

		while (bp->q) {
			struct shm_bop *b = bp->q;

			bp->q = b->next;
			free(b);
		}
		bp->qtail = &bp->q;
	}
	n->nbulk = 0;
}
