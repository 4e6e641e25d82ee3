/*
 * rt_ptlrun.c - a rank started by ptlrun. ptlrun puts who we are in the
 * environment (PTL_RT_*) and keeps one socket per rank for the key-value
 * exchange; the protocol is in rt_proto.h. A fence brings every rank's
 * values here, so rt_get never talks to ptlrun.
 *
 * Every wait on ptlrun is bounded by PTL_RT_TIMEOUT and names what it waited
 * for; EOF on the socket (ptlrun gone) fails the call instead of hanging.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "rt_proto.h"

static int pr_fd = -1;
static int pr_rank = -1;
static int pr_size;
static char *pr_in;       /* bytes read from ptlrun, not yet parsed */
static size_t pr_inlen, pr_incap;

static const char *env_need(const char *name)
{
	const char *v = getenv(name);

	if (v == NULL || *v == '\0')
		fprintf(stderr, "ptl: %s is set but %s is not: the PTL_RT_* "
			"environment comes from ptlrun; unset %s to run as a "
			"job of one\n", RT_ENV_FD, name, RT_ENV_FD);
	return v != NULL && *v != '\0' ? v : NULL;
}

static int env_int(const char *name, long min, long max, long *out)
{
	const char *v = env_need(name);

	if (v == NULL)
		return -1;
	if (rt_parse_int(v, min, max, out) != 0) {
		fprintf(stderr, "ptl: %s='%s' is not a number in %ld..%ld\n",
			name, v, min, max);
		return -1;
	}
	return 0;
}

/* A rank on another host: connects to ptlrun's listener at PTL_RT_ADDR
 * and proves it belongs to the job. Returns the socket or -1. */
static int pr_connect(const char *addr, long rank, const char *key)
{
	char ip[64], line[128];
	const char *colon = strrchr(addr, ':');
	struct sockaddr_in sa = { .sin_family = AF_INET };
	long port;
	int fd, one = 1, n;

	if (colon == NULL || (size_t)(colon - addr) >= sizeof(ip) ||
	    rt_parse_int(colon + 1, 1, 65535, &port) != 0) {
		fprintf(stderr, "ptl: %s='%s' is not IPv4:port\n", RT_ENV_ADDR, addr);
		return -1;
	}
	memcpy(ip, addr, (size_t)(colon - addr));
	ip[colon - addr] = '\0';
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) {
		fprintf(stderr, "ptl: %s='%s' is not IPv4:port\n", RT_ENV_ADDR, addr);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "ptl: rank %ld: cannot reach ptlrun at %s: %s (is "
			"the address reachable from this host? ptlrun --kvs-addr "
			"chooses it)\n", rank, addr, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	n = snprintf(line, sizeof(line), "HELLO %ld %s\n", rank, key);
	if (send(fd, line, (size_t)n, MSG_NOSIGNAL) != n) {
		fprintf(stderr, "ptl: rank %ld: lost ptlrun at %s: %s\n", rank,
			addr, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int pr_init(struct rt_info *info)
{
	long rank, size, lrank, lsize, fd, nid;
	const char *jobid, *key;
	size_t n;
	struct stat st;
	char *end;

	if (env_int(RT_ENV_SIZE, 1, 1 << 20, &size) != 0 ||
	    env_int(RT_ENV_RANK, 0, size - 1, &rank) != 0 ||
	    env_int(RT_ENV_LOCAL_SIZE, 1, size, &lsize) != 0 ||
	    env_int(RT_ENV_LOCAL_RANK, 0, lsize - 1, &lrank) != 0 ||
	    env_int(RT_ENV_NID, 0, UINT32_MAX, &nid) != 0)
		return -1;
	if (getenv(RT_ENV_FD) == NULL) {
		fd = pr_fd; /* PTL_RT_ADDR: connect on the first init */
	} else if (env_int(RT_ENV_FD, 0, 1 << 20, &fd) != 0) {
		return -1;
	}
	if ((jobid = env_need(RT_ENV_JOBID)) == NULL ||
	    (key = env_need(RT_ENV_JOB_KEY)) == NULL)
		return -1;
	errno = 0;
	info->jobid = strtoull(jobid, &end, 16);
	if (strlen(jobid) != 16 || *end != '\0' || errno != 0 ||
	    info->jobid == 0) {
		fprintf(stderr, "ptl: %s='%s' is not 16 hex digits\n",
			RT_ENV_JOBID, jobid);
		return -1;
	}
	if (strlen(key) != 2 * RT_JOB_KEY_LEN ||
	    rt_hex_decode(info->job_key, sizeof(info->job_key), key,
			  strlen(key), &n) != 0) {
		fprintf(stderr, "ptl: %s is not %d hex digits\n",
			RT_ENV_JOB_KEY, 2 * RT_JOB_KEY_LEN);
		return -1;
	}
	if (fd < 0) {
		fd = pr_connect(getenv(RT_ENV_ADDR), rank, key);
		if (fd < 0)
			return -1;
		pr_fd = (int)fd;
		pr_inlen = 0;
	}
	/* Re-initialization after rt_fini keeps the connection. */
	if (pr_fd != (int)fd) {
		if (fstat((int)fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
			fprintf(stderr, "ptl: %s=%ld is not ptlrun's socket "
				"(a child of a rank inherited the environment?"
				" unset %s to run as a job of one)\n",
				RT_ENV_FD, fd, RT_ENV_FD);
			return -1;
		}
		/* Programs the rank starts must not inherit it. */
		fcntl((int)fd, F_SETFD, FD_CLOEXEC);
		pr_fd = (int)fd;
		pr_inlen = 0;
	}
	if ((jobid = getenv(RT_ENV_SHM_JOBID)) != NULL) {
		info->shm_jobid = strtoull(jobid, &end, 16);
		if (strlen(jobid) != 16 || *end != '\0') {
			fprintf(stderr, "ptl: %s='%s' is not 16 hex digits\n",
				RT_ENV_SHM_JOBID, jobid);
			return -1;
		}
	}
	pr_rank = (int)rank;
	pr_size = (int)size;
	info->rank = (int)rank;
	info->size = (int)size;
	info->local_rank = (int)lrank;
	info->local_size = (int)lsize;
	info->nid = (uint32_t)nid;
	return 0;
}

static int pr_send(const char *line, size_t len, const char *what)
{
	while (len > 0) {
		ssize_t n = send(pr_fd, line, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "ptl: rank %d: lost contact with ptlrun "
				"sending %s: %s\n", pr_rank, what,
				strerror(errno));
			return -1;
		}
		line += n;
		len -= (size_t)n;
	}
	return 0;
}

static int pr_put(const char *key, const void *val, size_t len)
{
	char line[RT_LINE_MAX];
	int n;

	n = snprintf(line, sizeof(line), "PUT %s ", key);
	rt_hex_encode(line + n, val, len);
	n += (int)(2 * len);
	line[n++] = '\n';
	return pr_send(line, (size_t)n, "a put");
}

static long ms_left(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (deadline->tv_sec - now.tv_sec) * 1000 +
	       (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

/* Handles one line from ptlrun. 1: the awaited reply, 0: more to come,
 * -1: failure (printed). */
static int pr_line(char *line, const char *what, const char *done)
{
	if (strcmp(line, done) == 0)
		return 1;
	if (strncmp(line, "KV ", 3) == 0) {
		char *rs = line + 3, *key, *hex, *end;
		uint8_t val[RT_VAL_MAX];
		size_t n;
		long r;

		key = strchr(rs, ' ');
		hex = key != NULL ? strchr(key + 1, ' ') : NULL;
		if (hex != NULL) {
			*key++ = '\0';
			*hex++ = '\0';
			r = strtol(rs, &end, 10);
			if (*end == '\0' && r >= 0 && r < pr_size &&
			    rt_key_valid(key) &&
			    rt_hex_decode(val, sizeof(val), hex, strlen(hex),
					  &n) == 0) {
				if (rt_kv_set((int)r, key, val, n) != 0) {
					fprintf(stderr, "ptl: rank %d: out of "
						"memory storing the %s's "
						"values\n", pr_rank, what);
					return -1;
				}
				return 0;
			}
		}
	} else if (strncmp(line, "ERR ", 4) == 0) {
		fprintf(stderr, "ptl: rank %d: the %s failed: %s\n", pr_rank,
			what, line + 4);
		return -1;
	}
	fprintf(stderr, "ptl: rank %d: unexpected reply from ptlrun during "
		"the %s: '%.60s'\n", pr_rank, what, line);
	return -1;
}

/* Waits for ptlrun to answer a collective with done, storing KV lines. */
static int pr_wait(const char *what, const char *done)
{
	int timeout = rt_wait_timeout();
	struct timespec deadline;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout;
	for (;;) {
		char *nl;
		struct pollfd pfd = { .fd = pr_fd, .events = POLLIN };
		long left;
		ssize_t n;

		while ((nl = memchr(pr_in, '\n', pr_inlen)) != NULL) {
			size_t used = (size_t)(nl - pr_in) + 1;
			int rc;

			*nl = '\0';
			rc = pr_line(pr_in, what, done);
			memmove(pr_in, pr_in + used, pr_inlen - used);
			pr_inlen -= used;
			if (rc != 0)
				return rc > 0 ? 0 : -1;
		}
		if (pr_inlen > RT_LINE_MAX) {
			fprintf(stderr, "ptl: rank %d: overlong line from "
				"ptlrun during the %s\n", pr_rank, what);
			return -1;
		}
		left = ms_left(&deadline);
		if (left <= 0) {
			fprintf(stderr, "ptl: rank %d: timed out after %d s "
				"waiting for ptlrun to complete the %s (the "
				"other ranks did not all arrive; %s sets the "
				"limit)\n", pr_rank, timeout, what,
				RT_ENV_TIMEOUT);
			return -1;
		}
		n = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "ptl: rank %d: poll on ptlrun's socket:"
				" %s\n", pr_rank, strerror(errno));
			return -1;
		}
		if (n <= 0)
			continue;
		if (pr_incap - pr_inlen < 4096) {
			size_t cap = pr_incap != 0 ? pr_incap * 2 : 16384;
			char *p = realloc(pr_in, cap);

			if (p == NULL) {
				fprintf(stderr, "ptl: rank %d: out of memory "
					"during the %s\n", pr_rank, what);
				return -1;
			}
			pr_in = p;
			pr_incap = cap;
		}
		n = read(pr_fd, pr_in + pr_inlen, pr_incap - pr_inlen);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			fprintf(stderr, "ptl: rank %d: lost contact with ptlrun "
				"while waiting for the %s (%s)\n", pr_rank,
				what, n == 0 ? "ptlrun exited or was killed"
					     : strerror(errno));
			return -1;
		}
		pr_inlen += (size_t)n;
	}
}

static int pr_fence(void)
{
	if (pr_send("FENCE\n", 6, "the fence") != 0)
		return -1;
	return pr_wait("fence", "FENCE_DONE");
}

static int pr_barrier(void)
{
	if (pr_send("BARRIER\n", 8, "the barrier") != 0)
		return -1;
	return pr_wait("barrier", "BARRIER_DONE");
}

static int pr_get(int rank, const char *key, void *val, size_t *len)
{
	if (rank < 0 || rank >= pr_size || key == NULL || len == NULL)
		return -1;
	return rt_kv_get(rank, key, val, len) == 0 ? 0 : -1;
}

static void pr_abort(int code, const char *why)
{
	char line[1024];
	int n = snprintf(line, sizeof(line) - 1, "ABORT %d %s", code, why);

	if (n < 0 || n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	for (int i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	/* ptlrun reads the reason when it reaps us, so exiting right away is
	 * safe; without ptlrun, say it here. */
	if (pr_fd < 0 || send(pr_fd, line, (size_t)n, MSG_NOSIGNAL) != n)
		fprintf(stderr, "ptl: rank %d: abort with code %d: %s\n",
			pr_rank, code, why);
	_exit(code > 0 && code < 256 ? code : 1);
}

static void pr_fini(void)
{
	/* The socket and the table stay: a later rt_init (PtlFini, then
	 * PtlInit again) continues the same job. */
}

const struct rt_ops rt_ptlrun_ops = {
	.name = "ptlrun",
	.init = pr_init,
	.put = pr_put,
	.fence = pr_fence,
	.get = pr_get,
	.barrier = pr_barrier,
	.abort = pr_abort,
	.fini = pr_fini,
};
