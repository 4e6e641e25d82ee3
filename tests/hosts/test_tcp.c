/*
 * tests/hosts/test_tcp.c - the TCP NAL on its own, across forked processes
 * on loopback: messages of mixed sizes arrive whole and in order, bulk
 * READ and WRITE of several chunks, a connection with the wrong job key is
 * refused and counted (and a stranger's bytes are not delivered), and a
 * killed peer turns into exactly one peer_failed, never a hang.
 */
#include "config.h"

#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nal/tcp/tcp.h"

#define NMSG 3000
#define BULK (1u << 20)

struct shared {
	volatile int ready[2];
	unsigned char addr[2][NAL_ADDR_MAX];
	size_t alen[2];
	volatile int phase;     /* parent -> ranks */
	volatile int result[2]; /* 1 ok, -1 failed */
	volatile int checked;   /* rank 1: refused counted */
	uint64_t buf0addr, buf0key;
};

static struct shared *sh;
static struct nal *nal;
static int me, next_seq, nfailed, failed_peer = -1, ndone, done_status;

#define CHECK(c)                                                             \
	do {                                                                 \
		if (!(c)) {                                                  \
			fprintf(stderr, "rank %d: %s:%d: %s\n", me, __FILE__, \
				__LINE__, #c);                               \
			sh->result[me] = -1;                                 \
			_exit(1);                                            \
		}                                                            \
	} while (0)

static void up_recv(void *arg, int peer, const void *msg, size_t len)
{
	const unsigned char *p = msg;
	int seq;

	(void)arg;
	CHECK(peer == 0 && len >= sizeof(int));
	memcpy(&seq, p, sizeof(seq));
	CHECK(seq == next_seq);
	CHECK(len == (size_t)(sizeof(int) + (seq * 37) % 9000));
	for (size_t i = sizeof(int); i < len; i++)
		CHECK(p[i] == (unsigned char)(seq + i));
	next_seq++;
}

static void up_bulk_done(void *arg, void *cookie, int status)
{
	(void)arg;
	(void)cookie;
	ndone++;
	done_status |= status;
}

static void up_failed(void *arg, int peer, int status)
{
	(void)arg;
	CHECK(status == NAL_EPEER);
	nfailed++;
	failed_peer = peer;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Progresses until cond or 20 s. */
#define WAIT_FOR(cond)                                                       \
	do {                                                                 \
		long long end_ = now_ms() + 20000;                           \
		while (!(cond)) {                                            \
			CHECK(now_ms() < end_);                              \
			if (nal_tcp_ops.progress(nal) == 0)                   \
				nal_tcp_ops.sleep(nal, 50);                   \
		}                                                            \
	} while (0)

static void rank_main(int rank, const uint8_t *key)
{
	struct nal_open_args a = {
		.rank = rank, .size = 2, .local_rank = rank, .local_size = 2,
		.jobid = 42, .job_key = key, .job_key_len = 16,
		.up = { .recv = up_recv, .bulk_done = up_bulk_done, .peer_failed = up_failed },
	};
	int other = 1 - rank, locals[2] = { 0, 1 };
	unsigned char *buf = malloc(BULK), *mine = malloc(BULK);

	me = rank;
	CHECK(buf != NULL && mine != NULL);
	CHECK(nal_tcp_ops.open(&a, &nal) == 0);
	sh->alen[rank] = NAL_ADDR_MAX;
	CHECK(nal_tcp_ops.addr(nal, sh->addr[rank], &sh->alen[rank]) == 0);
	__atomic_store_n(&sh->ready[rank], 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sh->ready[other], __ATOMIC_ACQUIRE))
		usleep(1000);
	CHECK(nal_tcp_ops.start(nal, locals, 2) == 0);
	CHECK(nal_tcp_ops.connect(nal, other, sh->addr[other], sh->alen[other]) == 0);

	if (rank == 0) {
		struct nal_mr mr;

		for (size_t i = 0; i < BULK; i++)
			buf[i] = (unsigned char)(i * 7);
		CHECK(nal_tcp_ops.mem_reg(nal, buf, BULK, &mr) == 0);
		sh->buf0addr = mr.addr;
		sh->buf0key = mr.key;
		/* Ordered messages, with EAGAIN when the queue is full. */
		for (int s = 0; s < NMSG; s++) {
			unsigned char m[9100];
			size_t len = sizeof(int) + (size_t)(s * 37) % 9000;
			int rc;

			memcpy(m, &s, sizeof(s));
			for (size_t i = sizeof(int); i < len; i++)
				m[i] = (unsigned char)(s + i);
			size_t h = len < 16 ? len : 16; /* header and payload split */

			while ((rc = nal_tcp_ops.send(nal, 1, m, h, m + h, len - h)) == NAL_EAGAIN)
				if (nal_tcp_ops.progress(nal) == 0)
					nal_tcp_ops.sleep(nal, 10);
			CHECK(rc == 0);
		}
		/* Serve rank 1's bulk moves until the parent kills us. */
		for (;;)
			if (nal_tcp_ops.progress(nal) == 0)
				nal_tcp_ops.sleep(nal, 50);
	}

	/* rank 1 */
	WAIT_FOR(next_seq == NMSG);
	{
		struct iovec iov[3] = { { mine, 1000 }, { mine + 1000, 300000 },
					{ mine + 301000, BULK - 301000 } };
		int rc = nal_tcp_ops.bulk(nal, 0, NAL_BULK_READ, iov, 3, sh->buf0addr,
					  sh->buf0key, BULK, (void *)1);

		CHECK(rc == 1);
		WAIT_FOR(ndone == 1);
		CHECK(done_status == 0);
		for (size_t i = 0; i < BULK; i++)
			CHECK(mine[i] == (unsigned char)(i * 7));
		/* WRITE back something else, then READ it again to see it landed. */
		for (size_t i = 0; i < BULK; i++)
			mine[i] = (unsigned char)(i * 13);
		rc = nal_tcp_ops.bulk(nal, 0, NAL_BULK_WRITE, iov, 3, sh->buf0addr,
				      sh->buf0key, BULK, (void *)2);
		CHECK(rc == 1);
		WAIT_FOR(ndone == 2);
		CHECK(done_status == 0);
		memset(mine, 0, BULK);
		rc = nal_tcp_ops.bulk(nal, 0, NAL_BULK_READ, iov, 3, sh->buf0addr,
				      sh->buf0key, BULK, (void *)3);
		WAIT_FOR(ndone == 3);
		for (size_t i = 0; i < BULK; i++)
			CHECK(mine[i] == (unsigned char)(i * 13));
		/* A wrong rkey fails the move, not the link. */
		rc = nal_tcp_ops.bulk(nal, 0, NAL_BULK_READ, iov, 1, sh->buf0addr,
				      sh->buf0key + 1, 1000, (void *)4);
		WAIT_FOR(ndone == 4);
		CHECK(done_status != 0 && nfailed == 0);
	}
	sh->phase = 1; /* parent: try a stranger */
	WAIT_FOR(tcp_refused(nal) == 1);
	CHECK(next_seq == NMSG && nfailed == 0);
	sh->checked = 1;
	WAIT_FOR(sh->phase == 2); /* parent killed rank 0 */
	WAIT_FOR(nfailed == 1);
	CHECK(failed_peer == 0);
	CHECK(nal_tcp_ops.send(nal, 0, "x", 1, NULL, 0) == NAL_EPEER);
	for (int i = 0; i < 10; i++)
		nal_tcp_ops.progress(nal);
	CHECK(nfailed == 1);
	nal_tcp_ops.close(nal);
	sh->result[1] = 1;
	_exit(0);
}

int main(void)
{
	uint8_t key[16];
	pid_t pid[2];
	struct tcp_addr a;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd, st, ok = 1;
	long long end;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 99;
	memset(sh, 0, sizeof(*sh));
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)(i * 11 + 3);
	for (int r = 0; r < 2; r++)
		if ((pid[r] = fork()) == 0)
			rank_main(r, key);
	end = now_ms() + 60000;
	while (sh->phase == 0 && now_ms() < end && sh->result[1] == 0)
		usleep(1000);
	/* A stranger with the wrong key: a HELLO of the right shape. */
	memcpy(&a, sh->addr[1], sizeof(a));
	sa.sin_port = a.port;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		struct tcp_fh fh = { .type = TCP_F_HELLO, .len = sizeof(struct tcp_hello) };
		struct tcp_hello h = { .magic = TCP_MAGIC, .jobid = 42, .rank = 0, .size = 2 };
		struct tcp_fh msg = { .type = TCP_F_MSG, .len = 8 };

		memset(h.key, 0x5a, sizeof(h.key));
		/* Rank 1 may close on us as soon as it has read the HELLO: the
		 * later sends may fail (EPIPE, never SIGPIPE); only the HELLO
		 * must go out. */
		if (send(fd, &fh, sizeof(fh), MSG_NOSIGNAL) < 0 || send(fd, &h, sizeof(h), MSG_NOSIGNAL) < 0)
			ok = 0;
		else if (send(fd, &msg, sizeof(msg), MSG_NOSIGNAL) >= 0)
			(void)send(fd, "stranger", 8, MSG_NOSIGNAL);
	} else {
		ok = 0;
		fprintf(stderr, "test_tcp: cannot connect to rank 1\n");
	}
	while (!sh->checked && now_ms() < end && sh->result[1] == 0)
		usleep(1000);
	if (fd >= 0)
		close(fd);
	kill(pid[0], SIGKILL);
	waitpid(pid[0], &st, 0);
	sh->phase = 2;
	waitpid(pid[1], &st, 0);
	ok = ok && WIFEXITED(st) && WEXITSTATUS(st) == 0 && sh->result[1] == 1;
	printf("test_tcp: %s (order of %d messages, bulk read/write of %u bytes, "
	       "wrong key refused and counted, killed peer -> one peer_failed)\n",
	       ok ? "PASS" : "FAIL", NMSG, BULK);
	return ok ? 0 : 1;
}
