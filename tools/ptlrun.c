/*
 * ptlrun - starts a ptl job of N processes on this host, or on several
 * hosts (--hosts, --hostfile) through a launch agent (ssh, or a command
 * template such as "ip netns exec {host}"). Ranks on other hosts reach
 * the key-value exchange over TCP (PTL_RT_ADDR) and must show the job key.
 *
 * One event loop, no busy waiting: poll() over a signalfd (SIGCHLD and the
 * signals we forward), one socket per rank (the key-value exchange and
 * fences, protocol in lib/rt/rt_proto.h) and, with --tag-output, each
 * rank's stdout and stderr pipes. The first rank to fail decides the exit
 * status and the message; the others are stopped (SIGTERM, then SIGKILL
 * after PTLRUN_GRACE_MS). When the last rank is reaped the job's shared
 * memory objects on this host are unlinked.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "rt_proto.h"
#include "ptlrun_stuck.h"

#define PTLRUN_MAX_RANKS 1024
#define PTLRUN_GRACE_MS 2000      /* SIGTERM to SIGKILL */
#define PTLRUN_EXIT_USAGE 2
#define PTLRUN_EXIT_TIMEOUT 124   /* as timeout(1) */
#define PTLRUN_TAG_LINE_MAX 65536 /* longer lines are split */

enum coll { COLL_NONE, COLL_FENCE, COLL_BARRIER };
static const char *const coll_name[] = { "none", "fence", "barrier" };

/* Bytes queued for one or more ranks' sockets; shared by a broadcast. */
struct blob {
	int refs;
	size_t len;
	char data[];
};

struct linebuf {
	int fd;           /* read end of the rank's pipe; -1 when closed */
	int out;          /* where we forward: 1 or 2 */
	char *buf;
	size_t len;
};

struct rank {
	int r;
	pid_t pid;
	int alive;        /* not reaped yet */
	int sock;         /* our end; -1 when closed */
	char *in;         /* unparsed bytes from the rank */
	size_t inlen, incap;
	struct blob *ob;  /* bytes owed to the rank */
	size_t ooff;
	int arrived;      /* in the collective being gathered */
	int host;         /* index in job.hosts, -1 without --hosts */
	int local_rank, local_size;
	struct linebuf lb[2]; /* stdout, stderr (--tag-output only) */
};

static struct {
	int n;
	int tag_output;
	int bind_core;
	int verbose;
	long timeout_s;   /* 0: none */
	char **argv;      /* program and its arguments */
	uint64_t jobid;
	struct rank *ranks;
	int nalive;
	enum coll coll;   /* collective being gathered */
	int narrived;
	int gone_rank;    /* first rank that exited while the job ran, or -1 */
	char *kv;         /* "KV ..." lines not yet delivered by a fence */
	size_t kvlen, kvcap;
	int failed;       /* the job is being stopped */
	int exit_code;
	long long kill_at; /* ms, when stopping: SIGKILL stragglers */
	int killed;
	int sigfd;
	char **hosts;     /* --hosts / --hostfile */
	int nhosts;
	const char *agent; /* launch agent template */
	const char *kvs_addr; /* address ranks on other hosts reach us at */
	int lfd;          /* TCP listener for them, -1 */
	char kvs_ep[64];  /* "ip:port" */
	char keyhex[2 * RT_JOB_KEY_LEN + 1];
	const char *xvars[256]; /* -x names, passed through the agent */
	int nxvars;
	int refused;
} job = { .gone_rank = -1, .kill_at = -1, .lfd = -1 };

long long ptlrun_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	fflush(stdout);
	fprintf(stderr, "ptlrun: %.*s\n", n, buf);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ptlrun -n N [options] program [args...]\n"
		"  -n, --np N          start N ranks (1..%d)\n"
		"      --hosts A,B,... place the ranks on these hosts, in blocks\n"
		"      --hostfile FILE one host per line (# starts a comment)\n"
		"      --agent CMD     how to run on a host: \"ssh {host}\" (default),\n"
		"                      or e.g. \"ip netns exec {host}\"\n"
		"      --kvs-addr IP   address the ranks reach ptlrun at (default:\n"
		"                      this host's first non-loopback IPv4)\n"
		"      --tag-output    prefix each output line with \"[rank] \"\n"
		"      --timeout S     end the job after S seconds (0: never)\n"
		"      --bind-to WHAT  core: pin rank r to core r mod ncores;"
		" none (default)\n"
		"  -x VAR[=VALUE]      pass VAR to the ranks (set it to VALUE)\n"
		"  -v, --verbose       say what ptlrun does (job id, cleanup)\n"
		"  -h, --help          show this help\n"
		"  -V, --version       show the version\n"
		"See ptlrun(1).\n", PTLRUN_MAX_RANKS);
}

static void die_usage(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("ptlrun: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage(stderr);
	exit(PTLRUN_EXIT_USAGE);
}

/* "rank 3" or "ranks 0-2,5" for the ranks with flag set; "" if none. */
static void fmt_ranks(char *buf, size_t len, const int *flag, int n)
{
	size_t off = 0;
	int count = 0, first = 1;

	for (int i = 0; i < n; i++)
		count += flag[i] != 0;
	off = (size_t)snprintf(buf, len, "%s", count == 1 ? "rank " : "ranks ");
	for (int i = 0; i < n && off < len; i++) {
		int j = i;

		if (!flag[i])
			continue;
		while (j + 1 < n && flag[j + 1])
			j++;
		if (j == i)
			off += (size_t)snprintf(buf + off, len - off, "%s%d",
						first ? "" : ",", i);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%d-%d",
						first ? "" : ",", i, j);
		first = 0;
		i = j;
	}
	if (count == 0)
		buf[0] = '\0';
}

/* ---------------------------------------------------------------- sockets */

static void blob_put(struct blob *b)
{
	if (b != NULL && --b->refs == 0)
		free(b);
}

static struct blob *blob_new(const char *data, size_t len)
{
	struct blob *b = malloc(sizeof(*b) + len);

	if (b == NULL) {
		msg("out of memory");
		exit(1);
	}
	b->refs = 1;
	b->len = len;
	memcpy(b->data, data, len);
	return b;
}

static void rank_flush(struct rank *rk)
{
	while (rk->ob != NULL) {
		ssize_t n = send(rk->sock, rk->ob->data + rk->ooff,
				 rk->ob->len - rk->ooff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return; /* poll for POLLOUT */
		if (n < 0) {
			/* The rank is gone; its exit tells the story. */
			blob_put(rk->ob);
			rk->ob = NULL;
			return;
		}
		rk->ooff += (size_t)n;
		if (rk->ooff == rk->ob->len) {
			blob_put(rk->ob);
			rk->ob = NULL;
		}
	}
}

/* Queues b (taking a reference) for rk. */
static void rank_send_blob(struct rank *rk, struct blob *b)
{
	if (rk->sock < 0)
		return;
	if (rk->ob != NULL) {
		/* Rare: join what is still owed with the new bytes. */
		size_t rest = rk->ob->len - rk->ooff;
		struct blob *nb = malloc(sizeof(*nb) + rest + b->len);

		if (nb == NULL) {
			msg("out of memory");
			exit(1);
		}
		nb->refs = 1;
		nb->len = rest + b->len;
		memcpy(nb->data, rk->ob->data + rk->ooff, rest);
		memcpy(nb->data + rest, b->data, b->len);
		blob_put(rk->ob);
		rk->ob = nb;
	} else {
		b->refs++;
		rk->ob = b;
	}
	rk->ooff = 0;
	rank_flush(rk);
}

static void rank_send_str(struct rank *rk, const char *s)
{
	struct blob *b = blob_new(s, strlen(s));

	rank_send_blob(rk, b);
	blob_put(b);
}

static void rank_err(struct rank *rk, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rank_err(struct rank *rk, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n = snprintf(line, sizeof(line), "ERR ");

	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	rank_send_str(rk, line);
}

/* ------------------------------------------------------------- stopping */

static void stop_job(int code, int sig)
{
	if (job.failed)
		return;
	job.failed = 1;
	job.exit_code = code;
	for (int i = 0; i < job.n; i++)
		if (job.ranks[i].alive)
			kill(job.ranks[i].pid, sig);
	job.kill_at = ptlrun_now_ms() + PTLRUN_GRACE_MS;
}

static void kill_stragglers(void)
{
	for (int i = 0; i < job.n; i++) {
		struct rank *rk = &job.ranks[i];

		if (!rk->alive)
			continue;
		msg("rank %d (pid %ld) still running %d ms after SIGTERM; "
		    "sending SIGKILL", rk->r, (long)rk->pid, PTLRUN_GRACE_MS);
		kill(rk->pid, SIGKILL);
	}
	job.killed = 1;
}

/* ---------------------------------------------------------- collectives */

static void coll_reset(void)
{
	for (int i = 0; i < job.n; i++)
		job.ranks[i].arrived = 0;
	job.coll = COLL_NONE;
	job.narrived = 0;
}

static void coll_complete(void)
{
	struct blob *b;
	const char *done = job.coll == COLL_FENCE ? "FENCE_DONE\n"
						  : "BARRIER_DONE\n";
	size_t dlen = strlen(done);

	/* A barrier does not publish: values wait for the next fence. */
	if (job.coll == COLL_FENCE) {
		b = malloc(sizeof(*b) + job.kvlen + dlen);
		if (b == NULL) {
			msg("out of memory");
			exit(1);
		}
		b->refs = 1;
		b->len = job.kvlen + dlen;
		if (job.kvlen != 0)
			memcpy(b->data, job.kv, job.kvlen);
		memcpy(b->data + job.kvlen, done, dlen);
		job.kvlen = 0;
	} else {
		b = blob_new(done, dlen);
	}
	for (int i = 0; i < job.n; i++)
		rank_send_blob(&job.ranks[i], b);
	blob_put(b);
	coll_reset();
}

static void coll_arrive(struct rank *rk, enum coll kind)
{
	if (job.failed)
		return; /* the rank is about to be stopped */
	if (job.gone_rank >= 0) {
		struct rank *g = &job.ranks[job.gone_rank];

		rank_err(rk, "rank %d (pid %ld) exited before reaching the %s",
			 g->r, (long)g->pid, coll_name[kind]);
		return;
	}
	if (job.coll != COLL_NONE && job.coll != kind) {
		/* Collectives are one sequence; a rank in a barrier while
		 * another is in a fence is a program error. */
		for (int i = 0; i < job.n; i++)
			if (job.ranks[i].arrived)
				rank_err(&job.ranks[i], "rank %d entered a %s "
					 "while this rank was in a %s",
					 rk->r, coll_name[kind],
					 coll_name[job.coll]);
		rank_err(rk, "this rank entered a %s while other ranks were in"
			 " a %s", coll_name[kind], coll_name[job.coll]);
		coll_reset();
		return;
	}
	if (rk->arrived)
		return;
	job.coll = kind;
	rk->arrived = 1;
	if (++job.narrived == job.n)
		coll_complete();
}

/* A rank left while the job still runs: no collective can complete now. */
static void coll_rank_gone(struct rank *rk)
{
	if (job.gone_rank < 0)
		job.gone_rank = rk->r;
	if (job.coll == COLL_NONE || rk->arrived)
		return;
	for (int i = 0; i < job.n; i++)
		if (job.ranks[i].arrived)
			rank_err(&job.ranks[i], "rank %d (pid %ld) exited "
				 "before reaching the %s", rk->r,
				 (long)rk->pid, coll_name[job.coll]);
	coll_reset();
}

/* ---------------------------------------------------------- rank input */

static void kv_append(const char *s, size_t len)
{
	if (job.kvcap - job.kvlen < len) {
		size_t cap = job.kvcap != 0 ? job.kvcap : 65536;
		char *p;

		while (cap - job.kvlen < len)
			cap *= 2;
		p = realloc(job.kv, cap);
		if (p == NULL) {
			msg("out of memory");
			exit(1);
		}
		job.kv = p;
		job.kvcap = cap;
	}
	memcpy(job.kv + job.kvlen, s, len);
	job.kvlen += len;
}

static void rank_bad_request(struct rank *rk, const char *line)
{
	msg("rank %d (pid %ld) sent a malformed request '%.60s'; ending the "
	    "job", rk->r, (long)rk->pid, line);
	stop_job(1, SIGTERM);
}

static void rank_line(struct rank *rk, char *line)
{
	if (strncmp(line, "PUT ", 4) == 0) {
		char *key = line + 4, *hex = strchr(key, ' ');
		char head[RT_KEY_MAX + 32];
		size_t hl;

		if (hex == NULL)
			goto bad;
		*hex++ = '\0';
		hl = strlen(hex);
		if (!rt_key_valid(key) || hl % 2 != 0 || hl > 2 * RT_VAL_MAX ||
		    strspn(hex, "0123456789abcdef") != hl) {
			hex[-1] = ' ';
			goto bad;
		}
		snprintf(head, sizeof(head), "KV %d %s ", rk->r, key);
		kv_append(head, strlen(head));
		kv_append(hex, hl);
		kv_append("\n", 1);
	} else if (strcmp(line, "FENCE") == 0) {
		coll_arrive(rk, COLL_FENCE);
	} else if (strcmp(line, "BARRIER") == 0) {
		coll_arrive(rk, COLL_BARRIER);
	} else if (strncmp(line, "ABORT ", 6) == 0) {
		char *end;
		long code = strtol(line + 6, &end, 10);
		const char *why = *end == ' ' ? end + 1 : "";

		if (end == line + 6)
			goto bad;
		if (!job.failed)
			msg("rank %d (pid %ld) aborted the job with code %ld: %s",
			    rk->r, (long)rk->pid, code, why);
		stop_job(code > 0 && code < 256 ? (int)code : 1, SIGTERM);
	} else {
		goto bad;
	}
	return;
bad:
	rank_bad_request(rk, line);
}

/* Reads what the rank sent; drain: until EAGAIN/EOF (at exit). */
static void rank_read(struct rank *rk)
{
	for (;;) {
		char *nl;
		ssize_t n;

		if (rk->incap - rk->inlen < 4096) {
			size_t cap = rk->incap != 0 ? rk->incap * 2 : 8192;
			char *p = realloc(rk->in, cap);

			if (p == NULL) {
				msg("out of memory");
				exit(1);
			}
			rk->in = p;
			rk->incap = cap;
		}
		n = recv(rk->sock, rk->in + rk->inlen, rk->incap - rk->inlen,
			 MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			/* EOF or reset: the rank closed it or exited. */
			close(rk->sock);
			rk->sock = -1;
			blob_put(rk->ob);
			rk->ob = NULL;
			return;
		}
		rk->inlen += (size_t)n;
		while ((nl = memchr(rk->in, '\n', rk->inlen)) != NULL) {
			size_t used = (size_t)(nl - rk->in) + 1;

			*nl = '\0';
			rank_line(rk, rk->in);
			memmove(rk->in, rk->in + used, rk->inlen - used);
			rk->inlen -= used;
		}
		if (rk->inlen > RT_LINE_MAX) {
			rk->in[60] = '\0';
			rank_bad_request(rk, rk->in);
			rk->inlen = 0;
		}
	}
}

/* -------------------------------------------------------------- output */

static void write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* nobody reads our output; keep running */
		p += n;
		len -= (size_t)n;
	}
}

static void tag_write(int r, struct linebuf *lb, const char *p, size_t len)
{
	char tag[32];
	int tl = snprintf(tag, sizeof(tag), "[%d] ", r);

	write_all(lb->out, tag, (size_t)tl);
	write_all(lb->out, p, len);
	if (len == 0 || p[len - 1] != '\n')
		write_all(lb->out, "\n", 1);
}

/* Reads a rank's pipe and forwards complete lines, tagged. */
static void pipe_read(struct rank *rk, struct linebuf *lb)
{
	for (;;) {
		size_t start = 0;
		char *nl;
		ssize_t n;

		if (lb->len == PTLRUN_TAG_LINE_MAX) {
			tag_write(rk->r, lb, lb->buf, lb->len);
			lb->len = 0;
		}
		n = read(lb->fd, lb->buf + lb->len, PTLRUN_TAG_LINE_MAX - lb->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			if (lb->len != 0)
				tag_write(rk->r, lb, lb->buf, lb->len);
			lb->len = 0;
			close(lb->fd);
			lb->fd = -1;
			return;
		}
		lb->len += (size_t)n;
		while ((nl = memchr(lb->buf + start, '\n', lb->len - start)) != NULL) {
			size_t end = (size_t)(nl - lb->buf) + 1;

			tag_write(rk->r, lb, lb->buf + start, end - start);
			start = end;
		}
		memmove(lb->buf, lb->buf + start, lb->len - start);
		lb->len -= start;
	}
}

/* -------------------------------------------------------------- reaping */

static void rank_exited(struct rank *rk, int status)
{
	rk->alive = 0;
	job.nalive--;
	/* Whatever it sent before dying (an ABORT, say) comes first. */
	if (rk->sock >= 0)
		rank_read(rk);
	if (job.verbose)
		msg("rank %d (pid %ld) ended (wait status 0x%x)", rk->r,
		    (long)rk->pid, status);
	if (job.failed)
		return; /* stopped by us, or after the job already failed */
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		msg("rank %d (pid %ld) killed by signal %d (%s)%s", rk->r,
		    (long)rk->pid, sig, strsignal(sig),
		    WCOREDUMP(status) ? ", core dumped" : "");
		stop_job(128 + sig, SIGTERM);
	} else if (WEXITSTATUS(status) != 0) {
		msg("rank %d (pid %ld) exited with status %d", rk->r,
		    (long)rk->pid, WEXITSTATUS(status));
		stop_job(WEXITSTATUS(status), SIGTERM);
	} else {
		coll_rank_gone(rk);
	}
}

static void reap(void)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid <= 0)
			return;
		for (int i = 0; i < job.n; i++)
			if (job.ranks[i].pid == pid && job.ranks[i].alive)
				rank_exited(&job.ranks[i], status);
	}
}

/* -------------------------------------------------------------- timeout */

/* What the ranks still running were doing, before they are stopped. */
static void report_stuck(void)
{
	int *ranks = calloc((size_t)job.n, sizeof(*ranks));
	pid_t *pids = calloc((size_t)job.n, sizeof(*pids));
	int n = 0;

	for (int i = 0; ranks != NULL && pids != NULL && i < job.n; i++)
		if (job.ranks[i].alive) {
			ranks[n] = job.ranks[i].r;
			pids[n++] = job.ranks[i].pid;
		}
	ptlrun_stuck_report(ranks, pids, n);
	free(ranks);
	free(pids);
}

static void job_timeout(void)
{
	int *flag = calloc((size_t)job.n, sizeof(*flag));
	char *list = malloc(16 * (size_t)job.n + 32);
	size_t ll = 16 * (size_t)job.n + 32;

	if (flag == NULL || list == NULL) {
		msg("timeout after %ld s", job.timeout_s);
		stop_job(PTLRUN_EXIT_TIMEOUT, SIGTERM);
		free(flag);
		free(list);
		return;
	}
	for (int i = 0; i < job.n; i++)
		flag[i] = job.ranks[i].alive;
	fmt_ranks(list, ll, flag, job.n);
	msg("timeout after %ld s; %s still running", job.timeout_s, list);
	if (job.coll != COLL_NONE) {
		char *list2 = malloc(ll);

		for (int i = 0; i < job.n; i++)
			flag[i] = job.ranks[i].arrived;
		fmt_ranks(list, ll, flag, job.n);
		for (int i = 0; i < job.n; i++)
			flag[i] = !job.ranks[i].arrived;
		if (list2 != NULL) {
			fmt_ranks(list2, ll, flag, job.n);
			msg("%s reached the %s; %s had not", list,
			    coll_name[job.coll], list2);
		}
		free(list2);
	}
	free(flag);
	free(list);
	report_stuck();
	stop_job(PTLRUN_EXIT_TIMEOUT, SIGTERM);
}

/* -------------------------------------------------------------- cleanup */

/* Unlinks /dev/shm/ptl.<jobid>{,.*} and ptl.view.<pid>{,.*} of each rank
 * whose view's lock we can take (rt_shm_view_lock_dead): a rank reaped long
 * before the job ends may have its pid reused by a live process by then,
 * whose view is not ours to remove. */
static void cleanup_shm(void)
{
	char job_pfx[64], view[64];
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	int *vfd;

	if (d == NULL)
		return;
	vfd = calloc((size_t)job.n + 1, sizeof(*vfd));
	for (int i = 0; vfd != NULL && i < job.n; i++) {
		vfd[i] = -1;
		if (job.ranks[i].pid > 0 &&
		    rt_shm_view_name(view, sizeof(view), (long)job.ranks[i].pid, NULL) > 0)
			vfd[i] = rt_shm_view_lock_dead(dirfd(d), view + 1);
	}
	while ((e = readdir(d)) != NULL) {
		const char *name = e->d_name;
		int match = 0;
		long pid;

		/* Each host names its objects with its own id (hosts that
		 * are network namespaces share this /dev/shm). */
		for (int h = 0; !match && h < (job.nhosts ? job.nhosts : 1); h++) {
			size_t pl;

			rt_shm_name(job_pfx, sizeof(job_pfx), job.jobid + (uint64_t)h, NULL);
			pl = strlen(job_pfx + 1);
			if (strncmp(name, job_pfx + 1, pl) == 0 &&
			    (name[pl] == '\0' || name[pl] == '.'))
				match = 1;
		}
		pid = rt_shm_view_parse(name, NULL);
		for (int i = 0; !match && pid != 0 && vfd != NULL && i < job.n; i++)
			match = vfd[i] >= 0 && (long)job.ranks[i].pid == pid;
		if (!match)
			continue;
		if (unlinkat(dirfd(d), name, 0) == 0) {
			if (job.verbose)
				msg("removed /dev/shm/%s", name);
		} else if (errno != ENOENT) {
			msg("cannot remove /dev/shm/%s: %s", name,
			    strerror(errno));
		}
	}
	for (int i = 0; vfd != NULL && i < job.n; i++)
		if (vfd[i] >= 0)
			close(vfd[i]);
	free(vfd);
	closedir(d);
}

/* ------------------------------------------------------------- starting */

/* Finds prog as execvp would; exits 2 with a message if it cannot run. */
static void check_program(const char *prog)
{
	struct stat st;

	if (strchr(prog, '/') == NULL) {
		const char *path = getenv("PATH");
		char buf[PATH_MAX];

		if (path == NULL)
			path = "/usr/local/bin:/usr/bin:/bin";
		while (*path != '\0') {
			size_t dl = strcspn(path, ":");

			snprintf(buf, sizeof(buf), "%.*s%s%s", (int)dl, path,
				 dl != 0 ? "/" : "", prog);
			if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
			    access(buf, X_OK) == 0)
				return;
			path += dl;
			if (*path == ':')
				path++;
		}
		fprintf(stderr, "ptlrun: program '%s' not found in PATH\n", prog);
		exit(PTLRUN_EXIT_USAGE);
	}
	if (stat(prog, &st) != 0) {
		fprintf(stderr, "ptlrun: cannot run '%s': %s\n", prog,
			strerror(errno));
		exit(PTLRUN_EXIT_USAGE);
	}
	if (!S_ISREG(st.st_mode) || access(prog, X_OK) != 0) {
		fprintf(stderr, "ptlrun: cannot run '%s': not an executable "
			"file\n", prog);
		exit(PTLRUN_EXIT_USAGE);
	}
}

static void set_env_int(const char *name, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	setenv(name, buf, 1);
}

/* Appends s to the argv being built, quoted for a remote shell when q. */
static void argv_add(char **av, int *ac, const char *s, int q)
{
	char *w;

	if (!q) {
		av[(*ac)++] = (char *)s;
		return;
	}
	w = malloc(4 * strlen(s) + 3);
	if (w == NULL)
		_exit(127);
	av[*ac] = w;
	*w++ = '\'';
	for (; *s != '\0'; s++) {
		if (*s == '\'') {
			memcpy(w, "'\\''", 4);
			w += 4;
		} else {
			*w++ = *s;
		}
	}
	*w++ = '\'';
	*w = '\0';
	(*ac)++;
}

static char *fmt_var(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *fmt_var(const char *name, const char *fmt, ...)
{
	char val[256], *out;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	if (asprintf(&out, "%s=%s", name, val) < 0)
		_exit(127);
	return out;
}

/* In the child, with --hosts: runs the agent, which runs the rank on its
 * host with the PTL_RT_* environment (and -x variables) given by env(1),
 * since an agent such as ssh does not pass ours on. Never returns. */
static void agent_exec(struct rank *rk)
{
	const char *host = job.hosts[rk->host];
	char *tmpl = strdup(job.agent), *save = NULL, **av;
	int ac = 0, nargs = 0, quote;

	while (job.argv[nargs] != NULL)
		nargs++;
	av = calloc((size_t)(strlen(job.agent) + 32 + job.nxvars + nargs), sizeof(*av));
	if (tmpl == NULL || av == NULL)
		_exit(127);
	for (char *t = strtok_r(tmpl, " \t", &save); t != NULL; t = strtok_r(NULL, " \t", &save)) {
		char *at = strstr(t, "{host}");

		if (at != NULL) {
			char *w;

			*at = '\0';
			if (asprintf(&w, "%s%s%s", t, host, at + 6) < 0)
				_exit(127);
			t = w;
		}
		av[ac++] = t;
	}
	/* ssh hands the rest to a remote shell: quote each word. */
	quote = ac > 0 && (strcmp(av[0], "ssh") == 0 ||
			   (strlen(av[0]) > 4 && strcmp(av[0] + strlen(av[0]) - 4, "/ssh") == 0));
	argv_add(av, &ac, "env", 0);
	argv_add(av, &ac, fmt_var(RT_ENV_RANK, "%d", rk->r), quote);
	argv_add(av, &ac, fmt_var(RT_ENV_SIZE, "%d", job.n), quote);
	argv_add(av, &ac, fmt_var(RT_ENV_LOCAL_RANK, "%d", rk->local_rank), quote);
	argv_add(av, &ac, fmt_var(RT_ENV_LOCAL_SIZE, "%d", rk->local_size), quote);
	argv_add(av, &ac, fmt_var(RT_ENV_JOBID, "%016" PRIx64, job.jobid), quote);
	argv_add(av, &ac, fmt_var(RT_ENV_SHM_JOBID, "%016" PRIx64, job.jobid + (uint64_t)rk->host), quote);
	argv_add(av, &ac, fmt_var(RT_ENV_NID, "%" PRIu32, rt_name_nid(host)), quote);
	argv_add(av, &ac, fmt_var(RT_ENV_JOB_KEY, "%s", job.keyhex), quote);
	argv_add(av, &ac, fmt_var(RT_ENV_ADDR, "%s", job.kvs_ep), quote);
	for (int i = 0; i < job.nxvars; i++) {
		const char *v = getenv(job.xvars[i]);

		if (v != NULL)
			argv_add(av, &ac, fmt_var(job.xvars[i], "%s", v), quote);
	}
	for (int i = 0; i < nargs; i++)
		argv_add(av, &ac, job.argv[i], quote);
	av[ac] = NULL;
	unsetenv(RT_ENV_FD);
	execvp(av[0], av);
	fprintf(stderr, "ptlrun: rank %d: cannot run the agent '%s' for host %s: %s\n",
		rk->r, av[0], host, strerror(errno));
	_exit(127);
}

/* In the child: becomes rank rk, never returns. */
static void child_exec(struct rank *rk, int csock, int pout[2], int perr[2],
		       const sigset_t *oldmask, const int *cpus, int ncpus)
{
	char buf[64];

	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	if (job.tag_output) {
		dup2(pout[1], 1);
		dup2(perr[1], 2);
	}
	if (rk->r != 0) {
		int nul = open("/dev/null", O_RDONLY);

		if (nul >= 0 && nul != 0) {
			dup2(nul, 0);
			close(nul);
		}
	}
	fcntl(csock, F_SETFD, 0); /* the one fd a rank inherits */
	if (job.bind_core && ncpus > 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpus[rk->r % ncpus], &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0)
			fprintf(stderr, "ptlrun: rank %d: cannot bind to cpu "
				"%d: %s\n", rk->r, cpus[rk->r % ncpus],
				strerror(errno));
	}
	if (rk->host >= 0)
		agent_exec(rk);
	set_env_int(RT_ENV_RANK, rk->r);
	set_env_int(RT_ENV_SIZE, job.n);
	set_env_int(RT_ENV_LOCAL_RANK, rk->r);
	set_env_int(RT_ENV_LOCAL_SIZE, job.n);
	set_env_int(RT_ENV_FD, csock);
	snprintf(buf, sizeof(buf), "%016" PRIx64, job.jobid);
	setenv(RT_ENV_JOBID, buf, 1);
	snprintf(buf, sizeof(buf), "%" PRIu32, rt_host_nid());
	setenv(RT_ENV_NID, buf, 1);
	execvp(job.argv[0], job.argv);
	fprintf(stderr, "ptlrun: rank %d: cannot run '%s': %s\n", rk->r,
		job.argv[0], strerror(errno));
	_exit(127);
}

static int make_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	return 0;
}

/* Blocks of ranks per host, in host order; the first n % nhosts hosts
 * get one more. Then the listener the ranks connect to. */
static void hosts_layout(void)
{
	int per = job.n / job.nhosts, extra = job.n % job.nhosts, r = 0;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	char ip[INET_ADDRSTRLEN];

	for (int h = 0; h < job.nhosts; h++) {
		int cnt = per + (h < extra);

		for (int l = 0; l < cnt; l++, r++) {
			job.ranks[r].host = h;
			job.ranks[r].local_rank = l;
			job.ranks[r].local_size = cnt;
		}
	}
	if (job.kvs_addr != NULL) {
		if (inet_pton(AF_INET, job.kvs_addr, &sa.sin_addr) != 1) {
			msg("--kvs-addr '%s' is not an IPv4 address", job.kvs_addr);
			exit(PTLRUN_EXIT_USAGE);
		}
	} else {
		struct ifaddrs *ifa0;

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (getifaddrs(&ifa0) == 0) {
			for (struct ifaddrs *ifa = ifa0; ifa != NULL; ifa = ifa->ifa_next)
				if (ifa->ifa_addr != NULL && ifa->ifa_addr->sa_family == AF_INET &&
				    (ifa->ifa_flags & IFF_UP) && !(ifa->ifa_flags & IFF_LOOPBACK)) {
					sa.sin_addr = ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr;
					break;
				}
			freeifaddrs(ifa0);
		}
	}
	job.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (job.lfd < 0 || bind(job.lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(job.lfd, 128) != 0 || getsockname(job.lfd, (struct sockaddr *)&sa, &sl) != 0) {
		msg("cannot listen for ranks on other hosts at %s: %s",
		    inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip)), strerror(errno));
		exit(1);
	}
	inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
	snprintf(job.kvs_ep, sizeof(job.kvs_ep), "%s:%u", ip, ntohs(sa.sin_port));
	if (job.verbose)
		msg("ranks on other hosts reach ptlrun at %s", job.kvs_ep);
}

/* A rank started by the agent connects: "HELLO <rank> <job key hex>". A
 * connection without the job key, or for a rank already connected, is
 * refused and counted. */
static void accept_rank(void)
{
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	int fd = accept4(job.lfd, (struct sockaddr *)&from, &fl, SOCK_CLOEXEC);
	struct timeval tv = { .tv_sec = 5 };
	char line[128], ip[INET_ADDRSTRLEN] = "?", *end;
	size_t len = 0;
	long r = -1;
	int one = 1, ok = 0;

	if (fd < 0)
		return;
	inet_ntop(AF_INET, &from.sin_addr, ip, sizeof(ip));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* Byte by byte: what follows the line belongs to rank_read. */
	while (len < sizeof(line) - 1 && recv(fd, line + len, 1, 0) == 1 && line[len] != '\n')
		len++;
	line[len] = '\0';
	if (strncmp(line, "HELLO ", 6) == 0) {
		r = strtol(line + 6, &end, 10);
		if (end != line + 6 && *end == ' ' && r >= 0 && r < job.n) {
			unsigned diff = strlen(end + 1) != strlen(job.keyhex);

			for (size_t i = 0; !diff && i < strlen(job.keyhex); i++)
				diff |= (unsigned)(end[1 + i] ^ job.keyhex[i]);
			ok = !diff && job.ranks[r].host >= 0 && job.ranks[r].sock < 0 &&
			     job.ranks[r].alive;
		}
	}
	if (!ok) {
		job.refused++;
		msg("refused a connection from %s: %s (%d refused so far)", ip,
		    strncmp(line, "HELLO ", 6) != 0 ? "no ptlrun handshake"
						   : "wrong job key or rank", job.refused);
		close(fd);
		return;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	job.ranks[r].sock = fd;
}

static void start_ranks(const sigset_t *oldmask)
{
	uint8_t key[RT_JOB_KEY_LEN];
	char keyhex[2 * RT_JOB_KEY_LEN + 1];
	int cpus[CPU_SETSIZE], ncpus = 0;
	cpu_set_t set;

	if (rt_random_bytes(key, sizeof(key)) != 0 ||
	    rt_random_bytes(&job.jobid, sizeof(job.jobid)) != 0) {
		msg("getrandom: %s", strerror(errno));
		exit(1);
	}
	if (job.jobid == 0)
		job.jobid = 1;
	rt_hex_encode(keyhex, key, sizeof(key));
	memcpy(job.keyhex, keyhex, sizeof(keyhex));
	/* Same for every rank: set once, inherited. */
	setenv(RT_ENV_JOB_KEY, keyhex, 1);
	if (job.nhosts > 0)
		hosts_layout();
	if (job.bind_core && sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cpus[ncpus++] = c;
	if (job.verbose)
		msg("job %016" PRIx64 ": starting %d ranks of %s", job.jobid,
		    job.n, job.argv[0]);

	for (int i = 0; i < job.n; i++) {
		struct rank *rk = &job.ranks[i];
		int sv[2], pout[2] = { -1, -1 }, perr[2] = { -1, -1 };

		rk->r = i;
		rk->sock = -1;
		rk->lb[0].fd = rk->lb[1].fd = -1;
		if (job.nhosts == 0)
			rk->host = -1;
		/* Ranks started by an agent connect to job.lfd instead. */
		if (rk->host >= 0) {
			sv[0] = sv[1] = -1;
		} else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
			sv[0] = -1;
		}
		if (sv[0] < 0 && rk->host < 0) {
			msg("cannot start rank %d: %s (too many ranks for the "
			    "open-file limit?)", i, strerror(errno));
			stop_job(1, SIGTERM);
			return;
		}
		if (job.tag_output && (make_pipe(pout) != 0 || make_pipe(perr) != 0)) {
			msg("cannot start rank %d: %s (too many ranks for the "
			    "open-file limit?)", i, strerror(errno));
			stop_job(1, SIGTERM);
			return;
		}
		fflush(stdout);
		fflush(stderr);
		rk->pid = fork();
		if (rk->pid < 0) {
			msg("cannot start rank %d: fork: %s", i, strerror(errno));
			if (sv[0] >= 0) {
				close(sv[0]);
				close(sv[1]);
			}
			stop_job(1, SIGTERM);
			return;
		}
		if (rk->pid == 0)
			child_exec(rk, sv[1], pout, perr, oldmask, cpus, ncpus);
		rk->alive = 1;
		job.nalive++;
		if (sv[1] >= 0)
			close(sv[1]);
		rk->sock = sv[0];
		if (job.tag_output) {
			close(pout[1]);
			close(perr[1]);
			rk->lb[0] = (struct linebuf){ pout[0], 1,
				malloc(PTLRUN_TAG_LINE_MAX), 0 };
			rk->lb[1] = (struct linebuf){ perr[0], 2,
				malloc(PTLRUN_TAG_LINE_MAX), 0 };
			if (rk->lb[0].buf == NULL || rk->lb[1].buf == NULL) {
				msg("out of memory");
				exit(1);
			}
		}
	}
}

/* ----------------------------------------------------------------- loop */

static void handle_signals(void)
{
	struct signalfd_siginfo si;

	while (read(job.sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGCHLD)
			continue; /* reap() runs every iteration */
		if (job.failed) {
			if (!job.killed) {
				msg("received signal %d (%s) again; killing the"
				    " ranks", sig, strsignal(sig));
				kill_stragglers();
			}
			continue;
		}
		msg("received signal %d (%s); stopping the job", sig,
		    strsignal(sig));
		stop_job(128 + sig, sig);
	}
}

static void run_loop(void)
{
	size_t cap = 2 + 3 * (size_t)job.n;
	struct pollfd *pfd = malloc(cap * sizeof(*pfd));
	/* what each pollfd is: -1 the signalfd; rank*3 + {0 sock, 1 out, 2 err} */
	int *who = malloc(cap * sizeof(*who));
	long long deadline = job.timeout_s > 0 ? ptlrun_now_ms() + job.timeout_s * 1000
					       : -1;

	if (pfd == NULL || who == NULL) {
		msg("out of memory");
		exit(1);
	}
	while (job.nalive > 0) {
		long long t = ptlrun_now_ms(), wake = -1;
		int np = 0, timeout;

		pfd[np] = (struct pollfd){ .fd = job.sigfd, .events = POLLIN };
		who[np++] = -1;
		if (job.lfd >= 0) {
			pfd[np] = (struct pollfd){ .fd = job.lfd, .events = POLLIN };
			who[np++] = -2;
		}
		for (int i = 0; i < job.n; i++) {
			struct rank *rk = &job.ranks[i];

			if (rk->sock >= 0) {
				pfd[np] = (struct pollfd){ .fd = rk->sock,
					.events = POLLIN |
						  (rk->ob != NULL ? POLLOUT : 0) };
				who[np++] = i * 3;
			}
			for (int s = 0; s < 2; s++)
				if (rk->lb[s].fd >= 0) {
					pfd[np] = (struct pollfd){
						.fd = rk->lb[s].fd,
						.events = POLLIN };
					who[np++] = i * 3 + 1 + s;
				}
		}
		if (!job.failed && deadline >= 0)
			wake = deadline;
		if (job.failed && !job.killed)
			wake = job.kill_at;
		timeout = wake < 0 ? -1 : wake <= t ? 0
			: wake - t > INT_MAX ? INT_MAX : (int)(wake - t);
		if (poll(pfd, (nfds_t)np, timeout) < 0 && errno != EINTR) {
			msg("poll: %s", strerror(errno));
			exit(1);
		}
		for (int k = 0; k < np; k++) {
			struct rank *rk;

			if (pfd[k].revents == 0)
				continue;
			if (who[k] == -2) {
				accept_rank();
				continue;
			}
			if (who[k] < 0) {
				handle_signals();
				continue;
			}
			rk = &job.ranks[who[k] / 3];
			if (who[k] % 3 == 0) {
				if (rk->sock >= 0 && (pfd[k].revents & POLLOUT))
					rank_flush(rk);
				if (rk->sock >= 0 &&
				    (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
					rank_read(rk);
			} else {
				struct linebuf *lb = &rk->lb[who[k] % 3 - 1];

				if (lb->fd >= 0)
					pipe_read(rk, lb);
			}
		}
		reap();
		t = ptlrun_now_ms();
		if (!job.failed && deadline >= 0 && t >= deadline && job.nalive > 0)
			job_timeout();
		else if (job.failed && !job.killed && t >= job.kill_at &&
			 job.nalive > 0)
			kill_stragglers();
	}
	/* Every rank is gone: what they wrote is in the pipes already.
	 * Stop at EAGAIN too, in case a rank's child keeps a pipe open. */
	for (int i = 0; i < job.n; i++)
		for (int s = 0; s < 2; s++)
			if (job.ranks[i].lb[s].fd >= 0) {
				pipe_read(&job.ranks[i], &job.ranks[i].lb[s]);
				if (job.ranks[i].lb[s].len != 0)
					tag_write(i, &job.ranks[i].lb[s],
						  job.ranks[i].lb[s].buf,
						  job.ranks[i].lb[s].len);
			}
	free(pfd);
	free(who);
}

/* -------------------------------------------------------------- options */

static void add_host(const char *h)
{
	char **nh;

	if (*h == '\0')
		return;
	if (strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:@") != strlen(h))
		die_usage("host name '%s' has characters a host name cannot have", h);
	nh = realloc(job.hosts, (size_t)(job.nhosts + 1) * sizeof(*nh));
	if (nh == NULL || (nh[job.nhosts] = strdup(h)) == NULL) {
		msg("out of memory");
		exit(1);
	}
	job.hosts = nh;
	job.nhosts++;
}

/* One host per line; blank lines and text after # are skipped. */
static void read_hostfile(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];

	if (f == NULL) {
		fprintf(stderr, "ptlrun: cannot read host file '%s': %s\n", path,
			strerror(errno));
		exit(PTLRUN_EXIT_USAGE);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line, *e;

		line[strcspn(line, "#\n")] = '\0';
		p += strspn(p, " \t");
		e = p + strcspn(p, " \t");
		*e = '\0';
		add_host(p);
	}
	fclose(f);
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "np", required_argument, NULL, 'n' },
		{ "tag-output", no_argument, NULL, 't' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "bind-to", required_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "hostfile", required_argument, NULL, 'F' },
		{ "agent", required_argument, NULL, 'A' },
		{ "kvs-addr", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	long v;
	int c;

	opterr = 0;
	/* '+': options end at the program; ':': we report missing values. */
	while ((c = getopt_long(argc, argv, "+:n:x:vhV", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (rt_parse_int(optarg, 1, PTLRUN_MAX_RANKS, &v) != 0)
				die_usage("-n needs a number of ranks from 1 to "
					  "%d, not '%s'", PTLRUN_MAX_RANKS,
					  optarg);
			job.n = (int)v;
			break;
		case 't':
			job.tag_output = 1;
			break;
		case 'T':
			if (rt_parse_int(optarg, 0, INT_MAX / 1000, &v) != 0)
				die_usage("--timeout needs a whole number of "
					  "seconds, not '%s'", optarg);
			job.timeout_s = v;
			break;
		case 'b':
			if (strcmp(optarg, "core") == 0)
				job.bind_core = 1;
			else if (strcmp(optarg, "none") == 0)
				job.bind_core = 0;
			else
				die_usage("--bind-to takes 'core' or 'none', "
					  "not '%s'", optarg);
			break;
		case 'H': {
			char *save = NULL, *list = strdup(optarg);

			for (char *t = strtok_r(list, ",", &save); t != NULL;
			     t = strtok_r(NULL, ",", &save))
				add_host(t);
			break;
		}
		case 'F':
			read_hostfile(optarg);
			break;
		case 'A':
			if (strstr(optarg, "{host}") == NULL && strcmp(optarg, "ssh") != 0)
				die_usage("--agent needs {host} in it, as in "
					  "'ip netns exec {host}', not '%s'", optarg);
			job.agent = strcmp(optarg, "ssh") == 0 ? "ssh {host}" : optarg;
			break;
		case 'K':
			job.kvs_addr = optarg;
			break;
		case 'x': {
			char *eq = strchr(optarg, '=');

			/* Ranks inherit our environment; -x VAR=VALUE sets. */
			if (eq == optarg || *optarg == '\0')
				die_usage("-x needs VAR or VAR=VALUE, not '%s'",
					  optarg);
			if (eq != NULL) {
				*eq = '\0';
				setenv(optarg, eq + 1, 1);
			}
			/* Agents (ssh) do not pass our environment on. */
			if (job.nxvars < (int)(sizeof(job.xvars) / sizeof(job.xvars[0])))
				job.xvars[job.nxvars++] = strdup(optarg);
			if (eq != NULL)
				*eq = '=';
			break;
		}
		case 'v':
			job.verbose = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("ptlrun (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
			exit(0);
		case ':':
			die_usage("option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt != 0)
				die_usage("unknown option '-%c'", optopt);
			die_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (job.n == 0 && job.nhosts > 0)
		job.n = job.nhosts;
	if (job.n == 0)
		die_usage("-n N (the number of ranks) is required");
	if (job.agent == NULL)
		job.agent = "ssh {host}";
	if (optind >= argc)
		die_usage("no program to run");
	job.argv = argv + optind;
}

int main(int argc, char **argv)
{
	sigset_t mask, oldmask;

	parse_args(argc, argv);
	check_program(job.argv[0]);

	job.ranks = calloc((size_t)job.n, sizeof(*job.ranks));
	if (job.ranks == NULL) {
		msg("out of memory");
		return 1;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, &oldmask);
	job.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (job.sigfd < 0) {
		msg("signalfd: %s", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);

	start_ranks(&oldmask);
	run_loop();
	cleanup_shm();

	for (int i = 0; i < job.n; i++) {
		struct rank *rk = &job.ranks[i];

		if (rk->sock >= 0)
			close(rk->sock);
		blob_put(rk->ob);
		free(rk->in);
		free(rk->lb[0].buf);
		free(rk->lb[1].buf);
	}
	free(job.ranks);
	free(job.kv);
	return job.failed ? job.exit_code : 0;
}
