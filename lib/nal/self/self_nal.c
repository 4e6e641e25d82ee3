/*
 * The self NAL: a process talking to itself. Messages go through a small
 * queue and are delivered by the next progress(), never inside send(), so
 * the events of a send to oneself come in the same order as to anyone
 * else. Bulk moves are plain copies within the process.
 */
#include "config.h"

#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nal/nal.h"
#include "nal/nal_copy.h"

#define SELF_RING (256u * 1024u) /* bytes of queued messages */
#define SELF_MAX_INLINE (16u * 1024u + NAL_HDR_ROOM)
#define SELF_ALIGN 8u

struct nal {
	struct nal_upcalls up;
	int rank;
	size_t head, tail;          /* byte offsets, ever increasing */
	uint32_t bell;              /* futex word: bumped by kick() */
	uint32_t bell_seen;         /* the bell as the last sleep() left it */
	unsigned char ring[SELF_RING];
	unsigned char msg[SELF_MAX_INLINE]; /* the record being delivered */
};

static size_t self_rec_size(size_t len)
{
	return (sizeof(uint32_t) + len + SELF_ALIGN - 1) & ~(size_t)(SELF_ALIGN - 1);
}

static void self_copy_in(struct nal *n, size_t at, const void *src, size_t len)
{
	size_t o = at % SELF_RING, first = SELF_RING - o < len ? SELF_RING - o : len;
	nal_copy(n->ring + o, src, first);
	nal_copy(n->ring, (const char *)src + first, len - first);
}

static void self_copy_out(const struct nal *n, size_t at, void *dst, size_t len)
{
	size_t o = at % SELF_RING, first = SELF_RING - o < len ? SELF_RING - o : len;
	nal_copy(dst, n->ring + o, first);
	nal_copy((char *)dst + first, n->ring, len - first);
}

static int self_open(const struct nal_open_args *args, struct nal **out)
{
	struct nal *n = calloc(1, sizeof *n);
	if (!n)
		return NAL_ENOMEM;
	n->up = args->up;
	n->rank = args->rank;
	*out = n;
	return 0;
}

static int self_addr(struct nal *n, void *buf, size_t *len)
{
	(void)n;
	(void)buf;
	*len = 0;
	return 0;
}

static int self_connect(struct nal *n, int peer, const void *addr, size_t len)
{
	(void)addr;
	(void)len;
	return peer == n->rank ? 0 : NAL_EINVAL;
}

static int self_reaches(struct nal *n, int peer)
{
	return peer == n->rank;
}

static void self_close(struct nal *n)
{
	free(n);
}

static void self_props(struct nal *n, struct nal_props *p)
{
	(void)n;
	*p = (struct nal_props){ .name = "self", .max_inline = SELF_MAX_INLINE, .ports = 1,
				 .latency_class = 0, .has_bulk = 1 };
}

static int self_send(struct nal *n, int peer, const void *hdr, size_t hdr_len, const void *payload, size_t len)
{
	if (peer != n->rank || hdr_len + len > SELF_MAX_INLINE)
		return NAL_EINVAL;
	size_t rec = self_rec_size(hdr_len + len);
	if (n->tail + rec - n->head > SELF_RING)
		return NAL_EAGAIN;
	uint32_t l = (uint32_t)(hdr_len + len);
	self_copy_in(n, n->tail, &l, sizeof l);
	self_copy_in(n, n->tail + sizeof l, hdr, hdr_len);
	if (len)
		self_copy_in(n, n->tail + sizeof l + hdr_len, payload, len);
	__atomic_store_n(&n->tail, n->tail + rec, __ATOMIC_RELEASE);
	return 0;
}

static int self_mem_reg(struct nal *n, void *addr, size_t len, struct nal_mr *mr)
{
	(void)n;
	(void)len;
	*mr = (struct nal_mr){ .addr = (uint64_t)(uintptr_t)addr };
	return 0;
}

static void self_mem_dereg(struct nal *n, struct nal_mr *mr)
{
	(void)n;
	(void)mr;
}

static int self_bulk(struct nal *n, int peer, enum nal_bulk_op op, const struct iovec *local, int niov,
		     uint64_t raddr, uint64_t rkey, size_t len, void *cookie)
{
	(void)rkey;
	(void)cookie;
	if (peer != n->rank)
		return NAL_EINVAL;
	char *remote = (char *)(uintptr_t)raddr;
	for (int i = 0; i < niov && len; i++) {
		size_t k = local[i].iov_len < len ? local[i].iov_len : len;
		if (op == NAL_BULK_READ)
			nal_move(local[i].iov_base, remote, k);
		else
			nal_move(remote, local[i].iov_base, k);
		remote += k;
		len -= k;
	}
	return 0;
}

static int self_progress(struct nal *n)
{
	int done = 0;
	/* Only what is queued now: messages sent by these deliveries wait for
	 * the next call, so one call never runs unbounded. */
	size_t end = n->tail;
	while (n->head < end) {
		uint32_t l;
		self_copy_out(n, n->head, &l, sizeof l);
		self_copy_out(n, n->head + sizeof l, n->msg, l);
		n->head += self_rec_size(l);
		n->up.recv(n->up.arg, n->rank, n->msg, l);
		done++;
	}
	return done;
}

/* Only this process sends to itself, and lib/ptl kicks the sleeper after
 * such a send when no application thread polls. A kick is kept until a
 * sleep takes it, as the shm NAL's is: a kick that came between the
 * sleeper's last look at the work and its sleep (lib/ptl kicks when an
 * application thread starts polling, after which its sends to itself kick
 * no one) ends that sleep at once, where it was lost and the sleeper slept
 * with no timeout while messages to itself waited. One sleeper at a time
 * (the progress thread, or without it the one waiting thread). */
static int self_sleep(struct nal *n, int timeout_ms)
{
	uint32_t bell = __atomic_load_n(&n->bell, __ATOMIC_ACQUIRE);
	if (bell != n->bell_seen) {
		n->bell_seen = bell;
		return 0;
	}
	if (__atomic_load_n(&n->tail, __ATOMIC_ACQUIRE) != __atomic_load_n(&n->head, __ATOMIC_ACQUIRE))
		return 0;
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
	syscall(SYS_futex, &n->bell, FUTEX_WAIT_PRIVATE, bell, timeout_ms < 0 ? NULL : &ts, NULL, 0);
	n->bell_seen = __atomic_load_n(&n->bell, __ATOMIC_ACQUIRE);
	return 0;
}

static void self_kick(struct nal *n)
{
	__atomic_add_fetch(&n->bell, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &n->bell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

const struct nal_ops nal_self_ops = {
	.name = "self",
	.open = self_open,
	.addr = self_addr,
	.start = NULL,
	.connect = self_connect,
	.reaches = self_reaches,
	.close = self_close,
	.props = self_props,
	.send = self_send,
	.mem_reg = self_mem_reg,
	.mem_dereg = self_mem_dereg,
	.bulk = self_bulk,
	.progress = self_progress,
	.sleep = self_sleep,
	.kick = self_kick,
	.set_polling = NULL,
};
