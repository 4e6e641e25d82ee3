/*
 * tests/nal/shm_job.h - a tiny launcher for shm NAL tests and benchmarks:
 * forks N processes on this host, exchanges their NAL addresses through
 * socketpairs with the parent (the "fence"), and offers a barrier.
 * Header-only so tests and bench/shm_ring.c share it without a library.
 */
#ifndef PTL_TEST_SHM_JOB_H
#define PTL_TEST_SHM_JOB_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nal/shm/shm.h"

#define SJ_MAX 8

struct sj_ctx {
	struct nal *n;
	int rank, size;
	int fd; /* to the parent */
};

typedef int (*sj_body)(struct sj_ctx *c, void *arg);

static inline uint64_t sj_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int sj_full_io(int fd, void *buf, size_t len, int wr)
{
	char *p = buf;

	while (len) {
		ssize_t r = wr ? write(fd, p, len) : read(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* Child side: every child must call it the same number of times. */
static inline int sj_barrier(struct sj_ctx *c)
{
	char b = 'b';

	if (sj_full_io(c->fd, &b, 1, 1) || sj_full_io(c->fd, &b, 1, 0))
		return -1;
	return 0;
}

#define SJ_CHECK(cond)                                                                     \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", c->rank,     \
				__FILE__, __LINE__, #cond);                                \
			return 1;                                                          \
		}                                                                          \
	} while (0)

static int sj_child(int rank, int size, uint64_t jobid, int fd, struct nal_upcalls up,
		    sj_body body, void *arg)
{
	struct nal_open_args a = { 0 };
	struct sj_ctx ctx = { .rank = rank, .size = size, .fd = fd };
	uint8_t blobs[SJ_MAX][NAL_ADDR_MAX];
	size_t lens[SJ_MAX], len;
	int ranks[SJ_MAX], rc;

	a.rank = rank;
	a.size = size;
	a.local_rank = rank;
	a.local_size = size;
	a.jobid = jobid;
	a.up = up;
	if (nal_shm_ops.open(&a, &ctx.n))
		return 10;
	if (nal_shm_ops.addr(ctx.n, blobs[rank], &len))
		return 11;
	if (sj_full_io(fd, &len, sizeof(len), 1) || sj_full_io(fd, blobs[rank], len, 1))
		return 12;
	for (int i = 0; i < size; i++) {
		if (sj_full_io(fd, &lens[i], sizeof(lens[i]), 0) ||
		    sj_full_io(fd, blobs[i], lens[i], 0))
			return 13;
		ranks[i] = i;
	}
	if (nal_shm_ops.start(ctx.n, ranks, size))
		return 14;
	for (int i = 0; i < size; i++)
		if (i != rank && nal_shm_ops.connect(ctx.n, i, blobs[i], lens[i]))
			return 15;
	if (sj_barrier(&ctx))
		return 16;
	rc = body(&ctx, arg);
	nal_shm_ops.close(ctx.n);
	return rc;
}

/* Runs body in size processes. Returns 0 when every rank exited 0 (rank
 * killed_rank may instead die of SIGKILL), else -1. */
static int sj_run(int size, struct nal_upcalls up, sj_body body, void *arg, int timeout_s,
		  int killed_rank, uint64_t *jobid_out)
{
	int fds[SJ_MAX][2], open_fd[SJ_MAX], nopen = size, nbar = 0, fail = 0;
	uint8_t blob[SJ_MAX][NAL_ADDR_MAX];
	size_t lens[SJ_MAX];
	pid_t pids[SJ_MAX];
	uint64_t jobid = ((uint64_t)getpid() << 24) ^ (sj_now_ns() & 0xffffff) ^ 0x5a00000000000000ULL;
	uint64_t deadline = sj_now_ns() + (uint64_t)timeout_s * 1000000000u;

	if (jobid_out)
		*jobid_out = jobid;
	fflush(NULL);
	for (int i = 0; i < size; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds[i]))
			return -1;
		pids[i] = fork();
		if (pids[i] == 0) {
			for (int j = 0; j <= i; j++)
				close(fds[j][0]);
			alarm((unsigned)timeout_s);
			_exit(sj_child(i, size, jobid, fds[i][1], up, body, arg));
		}
		close(fds[i][1]);
		open_fd[i] = 1;
	}
	/* The fence: every blob in, all blobs out. */
	for (int i = 0; i < size && !fail; i++)
		if (sj_full_io(fds[i][0], &lens[i], sizeof(lens[i]), 0) || lens[i] > NAL_ADDR_MAX ||
		    sj_full_io(fds[i][0], blob[i], lens[i], 0))
			fail = 1;
	for (int i = 0; i < size && !fail; i++)
		for (int j = 0; j < size; j++)
			if (sj_full_io(fds[i][0], &lens[j], sizeof(lens[j]), 1) ||
			    sj_full_io(fds[i][0], blob[j], lens[j], 1))
				fail = 1;
	/* Barriers until everyone hung up. */
	while (!fail && nopen > 0) {
		struct pollfd p[SJ_MAX];
		int64_t left = (int64_t)(deadline - sj_now_ns()) / 1000000;

		if (left <= 0) {
			fprintf(stderr, "sj_run: job timed out\n");
			fail = 1;
			break;
		}
		for (int i = 0; i < size; i++) {
			p[i].fd = open_fd[i] ? fds[i][0] : -1;
			p[i].events = POLLIN;
		}
		if (poll(p, (nfds_t)size, (int)left) < 0 && errno != EINTR)
			fail = 1;
		for (int i = 0; i < size; i++) {
			char b;

			if (!open_fd[i] || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (read(fds[i][0], &b, 1) == 1) {
				nbar++;
			} else {
				open_fd[i] = 0;
				nopen--;
			}
		}
		if (nopen > 0 && nbar >= nopen) {
			for (int i = 0; i < size; i++)
				if (open_fd[i])
					(void)!write(fds[i][0], "g", 1);
			nbar = 0;
		}
	}
	for (int i = 0; i < size; i++) {
		int st = 0;

		if (fail)
			kill(pids[i], SIGKILL);
		close(fds[i][0]);
		if (waitpid(pids[i], &st, 0) != pids[i])
			fail = 1;
		else if (i == killed_rank && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			continue;
		else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "sj_run: rank %d %s %d\n", i,
				WIFEXITED(st) ? "exited with" : "died of signal",
				WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			fail = 1;
		}
	}
	return fail ? -1 : 0;
}

/* Whether the job's segment name is still in /dev/shm. */
static inline int sj_seg_exists(uint64_t jobid)
{
	char name[64], path[80];

	shm_seg_name(jobid, name, sizeof(name));
	snprintf(path, sizeof(path), "/dev/shm%s", name);
	return access(path, F_OK) == 0;
}

#endif
