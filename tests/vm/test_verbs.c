/*
 * tests/vm/test_verbs.c - the verbs NAL on its own (its sources compiled
 * in, no libptl), two processes on one RDMA device: run it where a device
 * exists (inside the Soft-RoCE VM: tests/vm/vm-tests.sh). Exits 77 when
 * there is no device.
 *
 * Checks: addresses refused at connect, saying why (another build's
 * verbs NAL, "VRB1"; not a verbs address; a port of the other kind),
 * the connection then made as usual; the crossed handshake (both ranks
 * connect at once); eager
 * messages of every size in order and intact, the small ones with zero
 * words zipped (vrb_zip.h), also when sent again after a re-open; credits (a receiver that
 * stops polling makes send() say NAL_EAGAIN after at most VRB_CREDITS
 * messages, never an overrun; polling again frees them); bulk READ and
 * WRITE from 0 B to 16 MiB, with several local pieces; the registration
 * cache after free and re-map at the same address, of part of a region
 * (a registration still exposed for its other part stays; pages remapped
 * in the middle are seen) and with another size (remap_part); without
 * page frames, registrations freed when their exposure or bulk ends
 * (regfree); with them, one in use never freed for room (reg_inuse);
 * sleep() with a
 * timeout and kick(); a broken connection (RDMA READ beyond the peer's
 * registration, RDMA WRITE with a wrong rkey) fails that bulk with
 * NAL_EIO but not the peer, loses or doubles none of the eager messages
 * sent right behind it either way, and re-opens so that messages and
 * bulks work again both ways; a peer that keeps breaking its connection
 * is failed on both sides (reopen_limit, only when named); a dead peer
 * reported through peer_failed (by the keepalive, with nothing in flight
 * to it).
 *
 *   test_verbs [-n REPEAT] [TEST...]
 *   tests: eager pingpong credits due bulk remap remap_part regfree
 *          reg_inuse sleep reopen [reopen_limit]
 *   (the handshake first and the dead peer last always run, unless
 *   reopen_limit failed the peer already)
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nal/verbs/vrb.h"
#include "nal/verbs/vrb_zip.h"

#define CHECK(c)                                                                          \
	do {                                                                              \
		if (!(c)) {                                                               \
			fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", me, __FILE__, \
				__LINE__, #c);                                            \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

static int me, sock;
static struct nal *n;

/* connect() with addr, which it must refuse (NAL_EINVAL) saying want on
 * stderr. */
static void connect_refused(const void *addr, size_t len, const char *want)
{
	char said[1024] = "";
	int fds[2], saved = dup(2);
	CHECK(saved >= 0 && pipe(fds) == 0);
	fflush(stderr);
	CHECK(dup2(fds[1], 2) == 2);
	int rc = nal_verbs_ops.connect(n, 1 - me, addr, len);
	fflush(stderr);
	CHECK(dup2(saved, 2) == 2);
	close(saved);
	close(fds[1]);
	ssize_t got = read(fds[0], said, sizeof said - 1);
	close(fds[0]);
	said[got > 0 ? got : 0] = 0;
	if (rc != NAL_EINVAL || !strstr(said, want)) {
		fprintf(stderr, "rank %d: connect with a bad address: %d, said \"%s\" (want \"%s\")\n", me, rc,
			said, want);
		exit(1);
	}
}
static uint64_t nrecv, bad_recv, expect;
static int bulk_pending, bulk_status, failed_peer = -1;

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Every other message is small enough to be zipped (vrb_zip.h). */
static size_t msg_len(uint64_t i)
{
	if (i % 64 == 2) /* a whole eager buffer: 8 KiB of data and the header room */
		return VRB_EAGER;
	if (i % 2)
		return (size_t)((i * 37) % (VRB_ZIP_MAX + 1)) + 8;
	return (size_t)((i * 131) % (VRB_EAGER - 7)) + 8;
}

/* Byte i of message seq (after its 8-byte seq): every third word is zero,
 * so small messages go zipped. */
static unsigned char msg_byte(uint64_t seq, size_t i)
{
	return (seq + i / 8) % 3 == 0 ? 0 : (unsigned char)(seq + i);
}

/* Whether message seq goes zipped: small, with a zero word. */
static bool msg_zips(uint64_t seq)
{
	size_t len = msg_len(seq);
	bool zero = seq == 0;
	for (size_t w = 1; w < len / 8; w++)
		zero = zero || (seq + w) % 3 == 0;
	return len <= VRB_ZIP_MAX && zero;
}

static void on_recv(void *arg, int peer, const void *msg, size_t len)
{
	(void)arg;
	uint64_t seq;
	memcpy(&seq, msg, 8);
	int ok = peer == 1 - me && seq == expect && len == msg_len(seq);
	for (size_t i = 8; ok && i < len; i++)
		ok = ((const unsigned char *)msg)[i] == msg_byte(seq, i);
	if (!ok)
		bad_recv++;
	nrecv++;
	expect++;
}

static void on_bulk(void *arg, void *cookie, int status)
{
	(void)arg;
	(void)cookie;
	bulk_pending--;
	if (status)
		bulk_status = status;
}

static void on_fail(void *arg, int peer, int status)
{
	(void)arg;
	(void)status;
	failed_peer = peer;
}

static void xwrite(const void *b, size_t l) { CHECK(write(sock, b, l) == (ssize_t)l); }
static void xread(void *b, size_t l)
{
	size_t got = 0;
	while (got < l) {
		ssize_t r = read(sock, (char *)b + got, l - got);
		CHECK(r > 0);
		got += (size_t)r;
	}
}
static void sync_peer(void)
{
	char c = 's';
	xwrite(&c, 1);
	for (;;) { /* keep the NAL going while the peer catches up */
		struct timeval tv = { 0, 1000 };
		fd_set s;
		FD_ZERO(&s);
		FD_SET(sock, &s);
		if (select(sock + 1, &s, NULL, NULL, &tv) > 0)
			break;
		n->args.up.recv ? (void)vrb_progress(n) : (void)0;
	}
	xread(&c, 1);
}

/* After the receiver (rank 1) has reset its counters, the sender (rank
 * 0) may send: sync_peer polls the NAL while it waits, so messages sent
 * the moment rank 0 left it could land in rank 1's count before the
 * next test took its baseline (eager once read 1975 of 2000, the first
 * 25 counted as the sync's). */
static void stream_go(void)
{
	char c = 'g';
	if (me == 1)
		xwrite(&c, 1);
	else
		xread(&c, 1);
}

static void pump_until(int *flag_zero_or_cond, uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	while (*flag_zero_or_cond && now_ms() < end)
		vrb_progress(n);
}

static void send_one(uint64_t seq)
{
	static unsigned char buf[VRB_EAGER];
	size_t len = msg_len(seq);
	memcpy(buf, &seq, 8);
	for (size_t i = 8; i < len; i++)
		buf[i] = msg_byte(seq, i);
	uint64_t end = now_ms() + 20000;
	int rc;
	/* header and payload in two pieces, as lib/ptl sends them */
	while ((rc = vrb_send(n, 1 - me, buf, 8, buf + 8, len - 8)) == NAL_EAGAIN && now_ms() < end)
		vrb_progress(n);
	CHECK(rc == 0);
}

/* Also a stream of many send queues' worth: eager SENDs are signaled only
 * every VRB_SIG_EVERY-th time, and the signaled ones must retire the rest,
 * or the send queue would fill for good and the stream stop. */
static void test_eager(void)
{
	const uint64_t count = 2000;
	if (me == 0) {
		struct vrb_peer *p = &n->peers[1];
		uint64_t sig0 = n->sends_signaled, zip0 = n->sends_zipped, zips = 0;
		CHECK(count > 8 * VRB_SQ_DEPTH);
		/* one byte past an eager buffer is refused, nothing sent */
		static unsigned char big[VRB_EAGER + 1];
		CHECK(vrb_send(n, 1, big, 8, big + 8, VRB_EAGER - 7) == NAL_EINVAL);
		stream_go();
		for (uint64_t i = 0; i < count; i++) {
			send_one(i);
			zips += msg_zips(i);
		}
		uint64_t sig = n->sends_signaled - sig0;
		printf("rank 0: eager: %llu of %llu sends signaled, %llu zipped\n", (unsigned long long)sig,
		       (unsigned long long)count, (unsigned long long)(n->sends_zipped - zip0));
		CHECK(sig >= count / VRB_SIG_EVERY && sig < count / 2);
		CHECK(n->sends_zipped - zip0 == zips && zips > count / 4);
		/* The signaled completions come back; only the unsignaled tail
		 * since the last one stays counted. */
		uint64_t end = now_ms() + 20000;
		while (p->sq_used != p->unsig_out && now_ms() < end)
			vrb_progress(n);
		CHECK(p->sq_used == p->unsig_out && p->unsig_out < VRB_SIG_EVERY);
		CHECK(n->unsig_total == p->unsig_out);
	} else {
		uint64_t end, before = nrecv;
		expect = 0;
		bad_recv = 0;
		stream_go();
		end = now_ms() + 60000;
		while (nrecv - before < count && now_ms() < end)
			vrb_progress(n);
		if (nrecv - before != count) {
			struct vrb_peer *p = &n->peers[0];
			fprintf(stderr,
				"rank 1: eager: %llu of %llu messages in 60 s; peer state %d epoch %u "
				"reopens %u consumed %llu told %llu granted %u rbuf_posted %u\n",
				(unsigned long long)(nrecv - before), (unsigned long long)count,
				(int)p->state, p->epoch, p->reopens, (unsigned long long)p->consumed,
				(unsigned long long)p->told, p->granted, n->rbuf_posted);
		}
		CHECK(nrecv - before == count);
		CHECK(bad_recv == 0);
	}
	sync_peer();
	printf("rank %d: eager: %llu messages of 8..%u bytes in order\n", me, (unsigned long long)count,
	       VRB_EAGER);
}

/* A ping-pong of four grants' worth of messages: every message carries
 * the sender's consumed count, so after the first exchange no credit
 * write is needed either way, and nothing waits for credits. */
static void test_pingpong_credits(void)
{
	const uint64_t rounds = 4 * VRB_CREDITS;
	struct vrb_peer *p = &n->peers[1 - me];
	uint64_t writes = 0, before = nrecv;
	expect = 0;
	bad_recv = 0;
	stream_go();
	for (uint64_t i = 0; i < rounds; i++) {
		if (i == 1) /* the first may settle what the eager test left owed */
			writes = p->credit_writes;
		if (me == 0)
			send_one(i);
		uint64_t end = now_ms() + 20000;
		while (nrecv - before < i + 1 && now_ms() < end)
			vrb_progress(n);
		CHECK(nrecv - before == i + 1);
		if (me == 1)
			send_one(i);
	}
	CHECK(bad_recv == 0);
	CHECK(p->credit_writes == writes);
	printf("rank %d: ping-pong: %llu round trips, %llu credit writes after the first\n", me,
	       (unsigned long long)rounds, (unsigned long long)(p->credit_writes - writes));
	sync_peer();
}

/* nal_ops.due, which keeps lib/ptl's waiting thread polling: due from a
 * send until something comes back, never once due_ms has run out since a
 * waiter first asked, never with due_ms 0 (PTL_VERBS_DUE_MS=0). */
static void test_due(void)
{
	unsigned due_ms = n->due_ms;
	uint64_t before = nrecv;
	expect = 0;
	bad_recv = 0;
	CHECK(due_ms > 0);
	stream_go();
	for (uint64_t i = 0; i < 8; i++) {
		if (me == 0) {
			send_one(i);
			CHECK(nal_verbs_ops.due(n) == 1);
		}
		uint64_t end = now_ms() + 20000;
		while (nrecv - before < i + 1 && now_ms() < end)
			vrb_progress(n);
		CHECK(nrecv - before == i + 1);
		CHECK(nal_verbs_ops.due(n) == 0); /* the answer came */
		if (me == 1) {
			send_one(i);
			CHECK(nal_verbs_ops.due(n) == 1);
		}
	}
	sync_peer();
	/* Rank 1 sends once more and hears nothing: due for due_ms from the
	 * first ask, then not. Timed from before the send, so a loaded host
	 * that stalls this thread anywhere (a sync with the peer included:
	 * the first ask used to be before it) only makes took longer; the
	 * NAL's clock is coarse (a tick, up to 10 ms, early), hence 20. It
	 * must clear: when is up to the emulated vCPU, which a loaded host
	 * can leave unscheduled for a second or more, so the bound on the
	 * wait is what fails a due that never clears (still due when it ran
	 * out), not how long the wait took: a stalled guest once took 22 s
	 * over a unit that takes 9, and a "took < 10 s" check failed on a
	 * due that had cleared. */
	if (me == 1) {
		n->due_ms = 30;
		uint64_t t0 = now_ms();
		send_one(8);
		CHECK(nal_verbs_ops.due(n) == 1);
		while (nal_verbs_ops.due(n) && now_ms() < t0 + 10000)
			usleep(1000);
		uint64_t took = now_ms() - t0;
		CHECK(nal_verbs_ops.due(n) == 0);
		CHECK(took >= 20);
		n->due_ms = 0;
		send_one(9);
		CHECK(nal_verbs_ops.due(n) == 0);
		n->due_ms = due_ms;
	} else {
		uint64_t end = now_ms() + 20000;
		while (nrecv - before < 10 && now_ms() < end)
			vrb_progress(n);
		CHECK(nrecv - before == 10);
	}
	CHECK(bad_recv == 0);
	printf("rank %d: due: polled on while an answer was due, for %u ms at most\n", me, due_ms);
	sync_peer();
}

/* The receiver stops polling: the sender gets NAL_EAGAIN before it could
 * overrun the buffers granted to it. The receiver tells consumed counts a
 * quarter of the grant at a time, so between 3/4 of the grant and all of
 * it is free when the sender starts. When the receiver polls again,
 * credits flow back; a send after the refusal may then overtake the
 * receiver's count of the first batch, so it counts the total. */
static void test_credits(void)
{
	const unsigned quarter = VRB_CREDITS / 4;
	if (me == 0) {
		sync_peer(); /* the peer now stops polling */
		/* Its last credit writes may still be on the wire. Its
		 * counts come written into our slot or carried by its
		 * messages (immediate data): the later of the two counts. */
		struct vrb_peer *p = &n->peers[1];
		uint64_t end = now_ms() + 10000;
		for (;;) {
			uint64_t back = __atomic_load_n(&n->slots[1], __ATOMIC_ACQUIRE);
			if (p->imm_back > back)
				back = p->imm_back;
			if (p->sent - back < quarter || now_ms() >= end)
				break;
			vrb_progress(n);
		}
		unsigned sent = 0;
		static unsigned char buf[64];
		for (;;) {
			uint64_t s = 2000 + sent;
			memcpy(buf, &s, 8);
			int rc = vrb_send(n, 1, buf, 8, NULL, 0);
			if (rc == NAL_EAGAIN)
				break;
			CHECK(rc == 0);
			sent++;
			CHECK(sent <= VRB_CREDITS);
		}
		printf("rank 0: credits: %u sends, then NAL_EAGAIN (grant %u)\n", sent, VRB_CREDITS);
		CHECK(sent > VRB_CREDITS - quarter);
		xwrite(&sent, sizeof sent);
		/* The peer polls again: credits come back. */
		end = now_ms() + 20000;
		int rc = NAL_EAGAIN;
		while (rc == NAL_EAGAIN && now_ms() < end) {
			vrb_progress(n);
			rc = vrb_send(n, 1, buf, 8, NULL, 0);
		}
		CHECK(rc == 0);
		sent++;
		xwrite(&sent, sizeof sent);
	} else {
		char c;
		xread(&c, 1);
		xwrite(&c, 1);
		unsigned sent;
		uint64_t before = nrecv;
		xread(&sent, sizeof sent);
		/* Everything sent within the grant arrives; polling returns the credits. */
		uint64_t end = now_ms() + 20000;
		while (nrecv - before < sent && now_ms() < end)
			vrb_progress(n);
		if (nrecv - before < sent)
			fprintf(stderr, "rank 1: %llu of %u arrived\n", (unsigned long long)(nrecv - before), sent);
		CHECK(nrecv - before >= sent);
		xread(&sent, sizeof sent);
		while (nrecv - before < sent && now_ms() < end)
			vrb_progress(n);
		CHECK(nrecv - before == sent);
		bad_recv = 0; /* these did not carry the eager test's pattern */
	}
	sync_peer();
}

struct reg_msg {
	uint64_t addr, key, len;
};

static void fill(unsigned char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 7 + seed + (i >> 12));
}

static int same(const unsigned char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (unsigned char)(i * 7 + seed + (i >> 12)))
			return 0;
	return 1;
}

static void do_bulk(enum nal_bulk_op op, struct iovec *iov, int niov, uint64_t raddr, uint64_t rkey, size_t len)
{
	bulk_pending++;
	int rc = vrb_bulk(n, 1 - me, op, iov, niov, raddr, rkey, len, &bulk_pending);
	CHECK(rc == 0 || rc == 1);
	if (rc == 0)
		bulk_pending--;
	pump_until(&bulk_pending, 60000);
	CHECK(bulk_pending == 0);
	CHECK(bulk_status == 0);
}

static void test_bulk(void)
{
	const size_t max = 16u << 20;
	static const size_t sizes[] = { 0, 1, 7, 4095, 4096, 4097, 65536, 1u << 20, 16u << 20 };
	unsigned char *buf = malloc(max);
	CHECK(buf);
	if (me == 0) {
		fill(buf, max, 1);
		struct nal_mr mr;
		CHECK(vrb_mem_reg(n, buf, max, &mr) == 0);
		struct reg_msg m = { mr.addr, mr.key, max };
		xwrite(&m, sizeof m);
		sync_peer(); /* peer read and wrote */
		/* The peer wrote seed 2 over every byte. */
		CHECK(same(buf, max, 2));
		printf("rank 0: bulk: the peer's RDMA WRITEs landed\n");
	} else {
		struct reg_msg m;
		xread(&m, sizeof m);
		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
			size_t len = sizes[k];
			memset(buf, 0, max);
			struct iovec one = { buf, len };
			do_bulk(NAL_BULK_READ, &one, 1, m.addr, m.key, len);
			CHECK(same(buf, len, 1));
		}
		/* Three local pieces, one remote range. */
		unsigned char *a = malloc(100000), *b = malloc(3), *c = malloc(1 << 20);
		CHECK(a && b && c);
		size_t tot = 100000 + 3 + (1 << 20);
		struct iovec three[3] = { { a, 100000 }, { b, 3 }, { c, 1 << 20 } };
		do_bulk(NAL_BULK_READ, three, 3, m.addr, m.key, tot);
		unsigned char *flat = malloc(tot);
		memcpy(flat, a, 100000);
		memcpy(flat + 100000, b, 3);
		memcpy(flat + 100003, c, 1 << 20);
		CHECK(same(flat, tot, 1));
		free(flat);
		free(a);
		free(b);
		free(c);
		fill(buf, max, 2);
		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
			struct iovec one = { buf, sizes[k] };
			do_bulk(NAL_BULK_WRITE, &one, 1, m.addr, m.key, sizes[k]);
		}
		printf("rank 1: bulk: READ and WRITE of 0 B .. 16 MiB, 3-piece READ, all intact\n");
		sync_peer();
	}
	free(buf);
	sync_peer();
}

static void test_remap(void)
{
	const size_t len = 4u << 20;
	if (me == 0) {
		unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(p != MAP_FAILED);
		fill(p, len, 5);
		struct nal_mr mr;
		CHECK(vrb_mem_reg(n, p, len, &mr) == 0);
		struct reg_msg m = { mr.addr, mr.key, len };
		xwrite(&m, sizeof m);
		sync_peer();
		vrb_mem_dereg(n, &mr);
		/* free, map again at the same place, new contents */
		CHECK(munmap(p, len) == 0);
		unsigned char *q = mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		CHECK(q == p);
		fill(q, len, 9);
		CHECK(vrb_mem_reg(n, q, len, &mr) == 0);
		m = (struct reg_msg){ mr.addr, mr.key, len };
		xwrite(&m, sizeof m);
		sync_peer();
		printf("rank 0: reg cache: page frames %s\n", n->pagemap_fd >= 0 ? "checked" : "hidden, no reuse");
		vrb_mem_dereg(n, &mr);
		munmap(q, len);
	} else {
		unsigned char *buf = malloc(len);
		struct reg_msg m;
		xread(&m, sizeof m);
		struct iovec one = { buf, len };
		do_bulk(NAL_BULK_READ, &one, 1, m.addr, m.key, len);
		CHECK(same(buf, len, 5));
		sync_peer();
		xread(&m, sizeof m);
		do_bulk(NAL_BULK_READ, &one, 1, m.addr, m.key, len);
		CHECK(same(buf, len, 9)); /* not the freed pages */
		printf("rank 1: reg cache: after free + re-map the new pages were read\n");
		sync_peer();
		free(buf);
	}
}

/* What rank 0 exposes to rank 1 in test_remap_part: a registered range
 * and the pattern rank 1 must read from it, piece by piece (byte pos of
 * a piece holds fill()'s byte pos - base of seed). len 0: the end. */
struct want {
	uint64_t addr, key, len;
	uint32_t npieces;
	struct {
		uint64_t from, to, base;
		uint32_t seed;
	} piece[3];
};

/* Whether the cache holds a registration with this rkey. */
static bool reg_alive(uint64_t key)
{
	for (unsigned i = 0; i < n->nregs; i++)
		if (n->regs[i].mr->rkey == key)
			return true;
	return false;
}

/* Registers [p, p+len), has the peer read and check it, and ends the
 * exposure (mem_dereg, as lib/ptl does when the answer came); its rkey. */
static uint64_t expose(const void *p, size_t len, uint32_t npieces, const uint64_t (*pieces)[4])
{
	struct nal_mr mr;
	CHECK(vrb_mem_reg(n, (void *)p, len, &mr) == 0);
	struct want w = { mr.addr, mr.key, len, npieces, { { 0, 0, 0, 0 } } };
	for (uint32_t k = 0; k < npieces; k++) {
		w.piece[k].from = pieces[k][0];
		w.piece[k].to = pieces[k][1];
		w.piece[k].base = pieces[k][2];
		w.piece[k].seed = (uint32_t)pieces[k][3];
	}
	xwrite(&w, sizeof w);
	sync_peer(); /* the peer read and checked it */
	vrb_mem_dereg(n, &mr);
	return mr.key;
}

/* Pages of a region that its registration cache entry pinned are freed
 * and mapped again, in part or with another size; every read by the peer
 * must see the bytes the region holds now, and a registration the peer
 * may still use must not be freed because another part of its range was
 * remapped (the old cache freed it: the peer's READ failed with a remote
 * access error; and it checked only a request's first and last page, so
 * pages remapped in the middle were read from the freed ones). */
static void test_remap_part(void)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = 1u << 20, half = len / 2;
	if (me == 1) {
		unsigned char *buf = malloc(len);
		CHECK(buf);
		for (;;) {
			struct want w;
			xread(&w, sizeof w);
			if (w.len == 0)
				break;
			memset(buf, 0, len);
			struct iovec one = { buf, w.len };
			do_bulk(NAL_BULK_READ, &one, 1, w.addr, w.key, w.len);
			for (uint32_t k = 0; k < w.npieces; k++)
				for (uint64_t i = w.piece[k].from; i < w.piece[k].to; i++)
					CHECK(buf[i] == (unsigned char)((i - w.piece[k].base) * 7 + w.piece[k].seed +
									((i - w.piece[k].base) >> 12)));
			sync_peer();
		}
		free(buf);
		printf("rank 1: reg cache: partly remapped regions read as they are now\n");
		sync_peer();
		return;
	}
	if (n->pagemap_fd < 0) {
		printf("rank 0: reg cache: page frames hidden, nothing reused: remap_part skipped\n");
		struct want end = { 0, 0, 0, 0, { { 0, 0, 0, 0 } } };
		xwrite(&end, sizeof end);
		sync_peer();
		return;
	}
	const int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;
	unsigned char *r = mmap(NULL, len, prot, flags, -1, 0);
	CHECK(r != MAP_FAILED);
	fill(r, len, 11);
	uint64_t made = n->reg_made;
	uint64_t rkey = expose(r, len, 1, (const uint64_t[][4]){ { 0, len, 0, 11 } });
	/* Its first half, still exposed (a peer's READ may come any time),
	 * is served by the same registration. */
	struct nal_mr d;
	CHECK(vrb_mem_reg(n, r, half, &d) == 0);
	CHECK(n->reg_made == made + 1 && d.key == rkey);
	/* The second half is freed and mapped again: registered anew, and
	 * the first half's registration stays. */
	CHECK(munmap(r + half, half) == 0);
	CHECK(mmap(r + half, half, prot, flags | MAP_FIXED, -1, 0) == r + half);
	fill(r + half, half, 12);
	expose(r + half, half, 1, (const uint64_t[][4]){ { 0, half, 0, 12 } });
	CHECK(n->reg_made == made + 2 && reg_alive(rkey));
	struct want w = { d.addr, d.key, half, 1, { { 0, half, 0, 11 } } };
	xwrite(&w, sizeof w);
	sync_peer();
	vrb_mem_dereg(n, &d);
	/* Four pages in the middle remapped: first and last page unchanged. */
	unsigned char *m = mmap(NULL, len, prot, flags, -1, 0);
	CHECK(m != MAP_FAILED);
	fill(m, len, 13);
	uint64_t mkey = expose(m, len, 1, (const uint64_t[][4]){ { 0, len, 0, 13 } });
	size_t mid = 64 * pg, mlen = 4 * pg;
	CHECK(munmap(m + mid, mlen) == 0);
	CHECK(mmap(m + mid, mlen, prot, flags | MAP_FIXED, -1, 0) == m + mid);
	fill(m + mid, mlen, 14);
	expose(m, len, 3, (const uint64_t[][4]){ { 0, mid, 0, 13 }, { mid, mid + mlen, mid, 14 },
						 { mid + mlen, len, 0, 13 } });
	CHECK(!reg_alive(mkey)); /* nothing it served was live: freed */
	/* Freed, and a smaller block mapped at the same address. */
	CHECK(munmap(m, len) == 0);
	size_t small = 600u << 10;
	CHECK(mmap(m, small, prot, flags | MAP_FIXED, -1, 0) == m);
	fill(m, small, 15);
	expose(m, small, 1, (const uint64_t[][4]){ { 0, small, 0, 15 } });
	/* A registration that served two halves (no page in common) goes
	 * once all its pages are new. */
	unsigned char *t = mmap(NULL, len, prot, flags, -1, 0);
	CHECK(t != MAP_FAILED);
	fill(t, len, 16);
	uint64_t tkey = expose(t, len, 1, (const uint64_t[][4]){ { 0, len, 0, 16 } });
	struct nal_mr d2;
	CHECK(vrb_mem_reg(n, t, half, &d) == 0 && d.key == tkey);
	CHECK(vrb_mem_reg(n, t + half, half, &d2) == 0 && d2.key == tkey);
	vrb_mem_dereg(n, &d); /* both exposures end: unused */
	vrb_mem_dereg(n, &d2);
	CHECK(mmap(t, len, prot, flags | MAP_FIXED, -1, 0) == t);
	fill(t, len, 17);
	CHECK(expose(t, len, 1, (const uint64_t[][4]){ { 0, len, 0, 17 } }) != tkey && !reg_alive(tkey));
	munmap(t, len);
	struct want end = { 0, 0, 0, 0, { { 0, 0, 0, 0 } } };
	xwrite(&end, sizeof end);
	sync_peer();
	printf("rank 0: reg cache: %llu registrations, %llu found remapped, %llu freed\n",
	       (unsigned long long)n->reg_made, (unsigned long long)n->reg_stale,
	       (unsigned long long)n->reg_freed);
	munmap(m, small);
	munmap(r, len);
}

/* Registrations that cannot be validated (no page frames: every user
 * without CAP_SYS_ADMIN, or PTL_VERBS_REG_CACHE=0; here page frames are
 * hidden by hand) are freed when their exposure ends, as lib/ptl says
 * through mem_dereg and a bulk through its completion: bulk moves from
 * distinct 1 MiB buffers, malloc'ed and freed each round, leave only the
 * ones in flight (the old cache kept them all, VRB_REG_MAX of them, the
 * freed memory pinned, until ibv_reg_mr ran into the memlock limit).
 * Rank 0 keeps WINDOW exposures out at once, as lib/ptl does with ops
 * in flight; rank 1 reads each into a new buffer of its own. */
/* Registrations without page frames (never reused): the ones that live. */
static int reg_unchecked(void)
{
	int k = 0;
	for (unsigned i = 0; i < n->nregs; i++)
		k += !n->regs[i].pfn;
	return k;
}

static void test_regfree(void)
{
	enum { ROUNDS = 40, WINDOW = 4 };
	const size_t len = 1u << 20;
	int fd = n->pagemap_fd;
	n->pagemap_fd = -1;
	/* Cached ones the tests before left may go meanwhile: count these. */
	int live0 = reg_unchecked(), most = 0;
	uint64_t made0 = n->reg_made, freed0 = n->reg_freed;
	if (me == 0) {
		unsigned char *buf[WINDOW] = { NULL };
		struct nal_mr mr[WINDOW];
		for (int k = 0; k < ROUNDS + WINDOW; k++) {
			int w = k % WINDOW;
			if (buf[w]) { /* round k - WINDOW's answer came: the exposure ends */
				vrb_mem_dereg(n, &mr[w]);
				free(buf[w]);
				buf[w] = NULL;
			}
			struct reg_msg m = { 0, 0, 0 };
			if (k < ROUNDS) {
				CHECK((buf[w] = malloc(len)) != NULL);
				fill(buf[w], len, (unsigned)k);
				CHECK(vrb_mem_reg(n, buf[w], len, &mr[w]) == 0);
				m = (struct reg_msg){ mr[w].addr, mr[w].key, len };
			}
			if (reg_unchecked() - live0 > most)
				most = reg_unchecked() - live0;
			xwrite(&m, sizeof m);
			sync_peer(); /* read (rounds behind: they overlap) */
		}
		CHECK(reg_unchecked() == live0);
	} else {
		for (int k = 0;; k++) {
			struct reg_msg m;
			xread(&m, sizeof m);
			if (m.len) {
				unsigned char *got = malloc(len);
				CHECK(got);
				struct iovec one = { got, len };
				do_bulk(NAL_BULK_READ, &one, 1, m.addr, m.key, len);
				CHECK(same(got, len, (unsigned)k));
				free(got);
				if (reg_unchecked() - live0 > most)
					most = reg_unchecked() - live0;
			}
			sync_peer();
			if (k == ROUNDS + WINDOW - 1)
				break;
		}
	}
	printf("rank %d: regfree: frames hidden: %llu registrations made, %llu freed, at most %d live (%s)\n", me,
	       (unsigned long long)(n->reg_made - made0), (unsigned long long)(n->reg_freed - freed0), most,
	       me == 0 ? "the exposures out" : "none after a bulk");
	CHECK(n->reg_made - made0 == ROUNDS && n->reg_freed - freed0 >= ROUNDS);
	CHECK(most <= (me == 0 ? WINDOW : 0));
	n->pagemap_fd = fd;
	sync_peer();
}

/* Where page frames are seen, registrations are kept for reuse, but one
 * in use (lib/ptl's exposure not ended) is never freed for room, however
 * many there are; once released, the table shrinks back to VRB_REG_MAX
 * at the next miss. The old cache freed the oldest at VRB_REG_MAX, in
 * use or not (a peer's READ of it then broke the connection). Rank 0
 * only: registrations of one page each. */
static void test_reg_inuse(void)
{
	enum { MANY = VRB_REG_MAX + 44 };
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	if (me == 1 || n->pagemap_fd < 0) {
		if (me == 0)
			printf("rank 0: reg in use: page frames hidden, nothing kept: skipped\n");
		sync_peer();
		return;
	}
	unsigned char *p = mmap(NULL, (MANY + 1) * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	memset(p, 1, (MANY + 1) * pg);
	static struct nal_mr mr[MANY];
	for (int i = 0; i < MANY; i++)
		CHECK(vrb_mem_reg(n, p + (size_t)i * pg, pg, &mr[i]) == 0);
	unsigned kept = 0;
	for (int i = 0; i < MANY; i++)
		kept += reg_alive(mr[i].key);
	unsigned most = n->nregs;
	CHECK(kept == MANY);
	/* One taken twice is still in use after one release. */
	struct nal_mr again;
	CHECK(vrb_mem_reg(n, p, pg, &again) == 0 && again.key == mr[0].key);
	for (int i = 0; i < MANY; i++)
		vrb_mem_dereg(n, &mr[i]);
	struct nal_mr one;
	CHECK(vrb_mem_reg(n, p + (size_t)MANY * pg, pg, &one) == 0);
	printf("rank 0: reg in use: %u of %u in use kept (%u live), %u live after their release\n", kept,
	       (unsigned)MANY, most, n->nregs);
	CHECK(n->nregs <= VRB_REG_MAX && reg_alive(mr[0].key));
	vrb_mem_dereg(n, &again);
	vrb_mem_dereg(n, &one);
	munmap(p, (MANY + 1) * pg);
	sync_peer();
}

/* Where (raddr, rkey) of a bad RDMA point: beyond the registration, or
 * its range with a key that is not its own. */
static void bad_remote(const struct reg_msg *pm, bool bad_key, uint64_t *raddr, uint64_t *rkey)
{
	*raddr = bad_key ? pm->addr : ((pm->addr + pm->len + 4095) & ~(uint64_t)4095) + 8192;
	*rkey = bad_key ? pm->key ^ 0xff : pm->key; /* rxe: the low byte is the key's own */
}

/* bad_rank starts an RDMA op the peer's memory refuses, then both ranks
 * send eager messages at once (some sit behind the bad op on the QP that
 * breaks); every message arrives once and in order, the bad op fails
 * with NAL_EIO, nobody reports the peer failed, and a correct READ each
 * way after the re-open moves the right bytes. */
static void reopen_round(int bad_rank, enum nal_bulk_op op, bool bad_key)
{
	const size_t len = 1u << 16;
	const uint64_t count = 3 * VRB_CREDITS;
	unsigned char *buf = malloc(len), *got = malloc(len), *scratch = malloc(4096);
	CHECK(buf && got && scratch);
	fill(buf, len, 3 + (unsigned)me);
	struct nal_mr mr;
	CHECK(vrb_mem_reg(n, buf, len, &mr) == 0);
	struct reg_msg m = { mr.addr, mr.key, len }, pm;
	xwrite(&m, sizeof m);
	xread(&pm, sizeof pm);
	struct vrb_peer *p = &n->peers[1 - me];
	uint32_t epoch0 = p->epoch;
	uint64_t before = nrecv;
	expect = 0;
	bad_recv = 0;
	bulk_status = 0;
	sync_peer();
	if (me == bad_rank) {
		uint64_t raddr, rkey;
		bad_remote(&pm, bad_key, &raddr, &rkey);
		struct iovec one = { scratch, 4096 };
		bulk_pending++;
		CHECK(vrb_bulk(n, 1 - me, op, &one, 1, raddr, rkey, 4096, &bulk_pending) == 1);
	}
	for (uint64_t i = 0; i < count; i++)
		send_one(i);
	uint64_t end = now_ms() + 30000;
	while ((nrecv - before < count || bulk_pending) && failed_peer < 0 && now_ms() < end)
		vrb_progress(n);
	CHECK(failed_peer < 0);
	CHECK(nrecv - before == count);
	CHECK(bad_recv == 0);
	CHECK(bulk_pending == 0);
	if (me == bad_rank)
		CHECK(bulk_status == NAL_EIO);
	bulk_status = 0;
	sync_peer();
	struct iovec all = { got, len };
	do_bulk(NAL_BULK_READ, &all, 1, pm.addr, pm.key, len);
	CHECK(same(got, len, 3 + (unsigned)(1 - me)));
	CHECK(p->epoch > epoch0 && p->state == VRB_UP && failed_peer < 0);
	printf("rank %d: re-open: %s %s by rank %d failed it with NAL_EIO, not the peer; %llu messages each "
	       "way intact (%llu sent again so far), then a READ each way (epoch %u -> %u)\n", me,
	       op == NAL_BULK_READ ? "READ" : "WRITE", bad_key ? "with a wrong rkey" : "beyond the registration",
	       bad_rank, (unsigned long long)count, (unsigned long long)p->resent, epoch0, p->epoch);
	sync_peer();
	free(scratch);
	free(got);
	free(buf);
}

static void test_reopen(void)
{
	reopen_round(1, NAL_BULK_READ, false);
	reopen_round(0, NAL_BULK_WRITE, true);
}

/* Rank 1 keeps reading beyond rank 0's registration: after reopen_max
 * re-opens the connection is given up, on both sides. */
static void test_reopen_limit(void)
{
	n->reopen_max = 2;
	const size_t len = 4096;
	unsigned char *buf = malloc(len);
	CHECK(buf);
	struct nal_mr mr;
	CHECK(vrb_mem_reg(n, buf, len, &mr) == 0);
	struct reg_msg m = { mr.addr, mr.key, len }, pm;
	xwrite(&m, sizeof m);
	xread(&pm, sizeof pm);
	sync_peer();
	uint64_t end = now_ms() + 30000;
	int tries = 0;
	while (failed_peer < 0 && now_ms() < end) {
		if (me == 1 && bulk_pending == 0) {
			uint64_t raddr, rkey;
			bad_remote(&pm, false, &raddr, &rkey);
			struct iovec one = { buf, len };
			bulk_pending++;
			tries++;
			CHECK(vrb_bulk(n, 0, NAL_BULK_READ, &one, 1, raddr, rkey, len, &bulk_pending) == 1);
		}
		vrb_progress(n);
	}
	CHECK(failed_peer == 1 - me);
	CHECK(n->peers[1 - me].state == VRB_FAILED);
	printf("rank %d: re-open limit: rank %d failed (limit %u re-opens), %d bad READs\n", me, 1 - me,
	       n->reopen_max, tries);
	if (me == 1)
		CHECK(tries <= (int)n->reopen_max + 1);
	free(buf);
}

static void *kicker(void *arg)
{
	(void)arg;
	usleep(100000);
	vrb_kick(n);
	return NULL;
}

static void test_sleep(void)
{
	uint64_t t = now_ms();
	vrb_sleep(n, 50);
	uint64_t d = now_ms() - t;
	CHECK(d < 5000);
	pthread_t th;
	pthread_create(&th, NULL, kicker, NULL);
	t = now_ms();
	vrb_sleep(n, 20000);
	d = now_ms() - t;
	pthread_join(th, NULL);
	CHECK(d < 10000);
	printf("rank %d: sleep: timeout and kick wake it (%llu ms)\n", me, (unsigned long long)d);
}

/* The peer dies without closing anything while we have nothing in flight
 * to it: the keepalive probe finds out, sleep() wakes for it, and the
 * transport gives up after its retries (not forever: rxe takes retry_cnt 7
 * as infinite). */
static void test_dead_peer(void)
{
	n->ka_ms = 500;
	if (me == 1) {
		sync_peer();
		_exit(0); /* dies without closing anything */
	}
	sync_peer();
	uint64_t end = now_ms() + 30000, t0 = now_ms();
	while (failed_peer < 0 && now_ms() < end) {
		vrb_sleep(n, -1);
		vrb_progress(n);
	}
	CHECK(failed_peer == 1);
	static unsigned char buf[64];
	CHECK(vrb_send(n, 1, buf, 16, NULL, 0) == NAL_EPEER);
	uint64_t d = now_ms() - t0;
	printf("rank 0: dead peer: reported after %llu ms (keepalive 500 ms), sends then fail with NAL_EPEER\n",
	       (unsigned long long)d);
	CHECK(d < 10000);
}

static const struct {
	const char *name;
	void (*run)(void);
} tests[] = { { "eager", test_eager }, { "pingpong", test_pingpong_credits }, { "credits", test_credits },
	      { "due", test_due },
	      { "bulk", test_bulk },
	      { "remap", test_remap }, { "remap_part", test_remap_part }, { "regfree", test_regfree },
	      { "reg_inuse", test_reg_inuse }, { "sleep", test_sleep }, { "reopen", test_reopen },
	      { "reopen_limit", test_reopen_limit } };
#define LIMIT_TEST (NTESTS - 1) /* only when named: it fails the peer */
#define NTESTS (sizeof tests / sizeof tests[0])

int main(int argc, char **argv)
{
	int repeat = 1;
	bool want[NTESTS] = { false }, any = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			repeat = atoi(argv[++i]);
			continue;
		}
		size_t t = 0;
		while (t < NTESTS && strcmp(argv[i], tests[t].name))
			t++;
		if (t == NTESTS) {
			fprintf(stderr, "usage: test_verbs [-n REPEAT] "
					"[eager|pingpong|credits|due|bulk|remap|remap_part|regfree|reg_inuse|sleep|reopen|\n"
					"reopen_limit]...\n");
			return 2;
		}
		want[t] = any = true;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 99;
	pid_t child = fork();
	me = child == 0 ? 1 : 0;
	sock = sv[me];
	close(sv[1 - me]);
	static const uint8_t key[16] = "vrb-test-key-123";
	struct nal_open_args a = {
		.rank = me, .size = 2, .local_rank = 0, .local_size = 1, .jobid = 42,
		.job_key = key, .job_key_len = 16,
		.up = { .recv = on_recv, .bulk_done = on_bulk, .peer_failed = on_fail },
	};
	int rc = nal_verbs_ops.open(&a, &n);
	int ok = rc == 0;
	xwrite(&ok, sizeof ok);
	int peer_ok;
	xread(&peer_ok, sizeof peer_ok);
	if (!ok || !peer_ok) {
		if (me == 0) {
			waitpid(child, NULL, 0);
			fprintf(stderr, "SKIP: no usable RDMA device (open: %d)\n", rc);
		}
		return rc == NAL_EPERM ? 77 : 1;
	}
	unsigned char addr[NAL_ADDR_MAX], paddr[NAL_ADDR_MAX];
	size_t len = sizeof addr;
	CHECK(nal_verbs_ops.addr(n, addr, &len) == 0);
	xwrite(&len, sizeof len);
	xwrite(addr, len);
	size_t plen;
	xread(&plen, sizeof plen);
	xread(paddr, plen);
	CHECK(nal_verbs_ops.start(n, NULL, 0) == 0);
	/* Addresses it cannot connect to: refused, saying why, before any
	 * state changes (the real one connects below). */
	CHECK(plen == sizeof(struct vrb_addr));
	struct vrb_addr bad;
	memcpy(&bad, paddr, sizeof bad);
	bad.magic = 0x56524231u; /* "VRB1": 8 KiB eager buffers */
	connect_refused(&bad, sizeof bad, "runs another version of libptl's verbs NAL (VRB1, this one VRB2");
	bad.magic = 0x73686d61u;
	connect_refused(&bad, sizeof bad, "is not a verbs address");
	memcpy(&bad, paddr, sizeof bad);
	bad.is_global = !bad.is_global;
	connect_refused(&bad, sizeof bad, "they cannot connect");
	CHECK(n->peers[1 - me].state == VRB_IDLE);
	/* Both ask at once: the crossed handshake. */
	CHECK(nal_verbs_ops.connect(n, 1 - me, paddr, plen) == 0);
	uint64_t end = now_ms() + 20000;
	while (n->peers[1 - me].state != VRB_UP && now_ms() < end)
		vrb_progress(n);
	CHECK(n->peers[1 - me].state == VRB_UP);
	struct nal_props pr;
	nal_verbs_ops.props(n, &pr);
	/* an 8 KiB payload (MPI's default eager limit) and libptl's header
	 * go in one eager buffer (vrb.h's VRB_EAGER) */
	CHECK(pr.max_inline >= 8192 + NAL_HDR_ROOM);
	if (me == 0)
		printf("verbs NAL on %s port %u, gid index %d, max_inline %zu, inline data %u\n", n->devname,
		       n->port, n->gid_index, pr.max_inline, n->max_inline_data);
	sync_peer();
	for (int k = 0; k < repeat; k++)
		for (size_t t = 0; t < NTESTS; t++)
			if (any ? want[t] : t != LIMIT_TEST)
				tests[t].run();
	if (failed_peer < 0)
		test_dead_peer();
	if (me == 0) {
		int st;
		waitpid(child, &st, 0);
		nal_verbs_ops.close(n);
		printf("test_verbs: all passed\n");
	}
	return 0;
}
