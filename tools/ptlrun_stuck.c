/*
 * ptlrun_stuck.c - what the ranks still running at a job's timeout were
 * doing, said before they are stopped: a timeout seen only as "rank 0
 * still running" (a CI log, a job that hung once in hundreds) leaves
 * nothing to go on once the ranks are killed.
 *
 * For each such rank, each thread's name, scheduler state, the kernel
 * function it sleeps in (wchan), the system call it is in and the CPU it
 * used over a short sample (a spinning rank and a sleeping one look alike
 * from outside otherwise). Then the stacks of all its threads, through
 * eu-stack (elfutils) or gdb when one is installed and PTLRUN_STACKS is not
 * 0 (a rank started through a launch agent is described by the agent's
 * process on this host). The stacks of at most PTLRUN_STUCK_STACKS ranks:
 * a thousand ranks' stacks would take minutes and bury the first ones.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptlrun_stuck.h"

#define PTLRUN_STUCK_STACKS 8
#define PTLRUN_STUCK_THREADS 16      /* threads described per rank */
#define PTLRUN_STUCK_SAMPLE_MS 200   /* CPU sampled over this long */
#define PTLRUN_STUCK_TOOL_MS 20000   /* a stack tool gets this long */

struct stuck_thread {
	pid_t tid;
	char state;
	unsigned long long ticks; /* utime + stime */
};

/* One line of /proc/PID/task/TID/FILE, its newline dropped; "" if none. */
static void read_line(pid_t pid, pid_t tid, const char *file, char *buf, size_t len)
{
	char path[96];
	snprintf(path, sizeof path, "/proc/%ld/task/%ld/%s", (long)pid, (long)tid, file);
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* A thread's state and CPU ticks from its stat line (after the name in
 * parentheses, which may hold spaces: parsed from the last ')'). */
static int read_stat(pid_t pid, struct stuck_thread *t)
{
	char buf[1024];
	read_line(pid, t->tid, "stat", buf, sizeof buf);
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	unsigned long long ut = 0, st = 0;
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &t->state, &ut, &st) != 3)
		return -1;
	t->ticks = ut + st;
	return 0;
}

static int list_threads(pid_t pid, struct stuck_thread *ts, int max)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while (n < max && (e = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		ts[n].tid = (pid_t)tid;
		if (read_stat(pid, &ts[n]) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* The x86-64 and aarch64 numbers of the calls a waiting rank is found in;
 * others are printed as numbers. */
static const char *syscall_name(long nr)
{
#if defined(__x86_64__)
	switch (nr) {
	case 0: return "read";
	case 7: return "poll";
	case 23: return "select";
	case 24: return "sched_yield";
	case 34: return "pause";
	case 35: return "nanosleep";
	case 202: return "futex";
	case 230: return "clock_nanosleep";
	case 232: return "epoll_wait";
	case 271: return "ppoll";
	case 281: return "epoll_pwait";
	}
#elif defined(__aarch64__)
	switch (nr) {
	case 63: return "read";
	case 73: return "ppoll";
	case 98: return "futex";
	case 101: return "nanosleep";
	case 115: return "clock_nanosleep";
	case 124: return "sched_yield";
	}
#endif
	(void)nr;
	return NULL;
}

/* The system call tid is in by name ("futex"), "none (running)", its
 * number where it has no name here, or "?" where /proc does not say. */
static void describe_syscall(pid_t pid, pid_t tid, char *out, size_t len)
{
	char buf[256];
	read_line(pid, tid, "syscall", buf, sizeof buf);
	if (!buf[0]) {
		snprintf(out, len, "?");
		return;
	}
	if (!strncmp(buf, "running", 7)) {
		snprintf(out, len, "none (running)");
		return;
	}
	char *end;
	long nr = strtol(buf, &end, 10);
	if (end == buf) {
		snprintf(out, len, "%.40s", buf);
		return;
	}
	const char *name = syscall_name(nr);
	if (name)
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "%ld", nr);
}

static void describe_threads(int rank, pid_t pid, const struct stuck_thread *before, int n, long ms)
{
	long hz = sysconf(_SC_CLK_TCK);
	for (int i = 0; i < n; i++) {
		struct stuck_thread now = { .tid = before[i].tid };
		if (read_stat(pid, &now) != 0)
			continue;
		char comm[64], wchan[128], sc[64];
		read_line(pid, now.tid, "comm", comm, sizeof comm);
		read_line(pid, now.tid, "wchan", wchan, sizeof wchan);
		describe_syscall(pid, now.tid, sc, sizeof sc);
		unsigned long long used = now.ticks - before[i].ticks;
		long pct = hz > 0 && ms > 0 ? (long)(used * 100000ULL / (unsigned long long)hz / (unsigned long long)ms) : -1;
		fprintf(stderr, "ptlrun: rank %d (pid %ld) thread %ld %s: state %c, in %s, wchan %s, %ld%% CPU\n", rank,
			(long)pid, (long)now.tid, comm[0] ? comm : "?", now.state, sc,
			wchan[0] && strcmp(wchan, "0") ? wchan : "-", pct);
	}
}

/* name's path on PATH, in buf; NULL if it is not there. */
static const char *find_tool(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t k = strcspn(path, ":");
		if (k && (size_t)snprintf(buf, len, "%.*s/%s", (int)k, path, name) < len && access(buf, X_OK) == 0)
			return buf;
		path += k + (path[k] == ':');
	}
	return NULL;
}

/* Runs the stack tool (eu-stack, or gdb when gdb is set; NULL: none
 * installed) on pid, its output on our stderr, for at most
 * PTLRUN_STUCK_TOOL_MS; the child is waited for here, so the launcher's
 * own reaping never sees it. */
static void run_stack_tool(int rank, pid_t pid, const char *tool, bool gdb)
{
	char pidarg[32];
	if (!tool) {
		fprintf(stderr, "ptlrun: rank %d: no stacks (install elfutils' eu-stack or gdb to see them)\n", rank);
		return;
	}
	snprintf(pidarg, sizeof pidarg, "%ld", (long)pid);
	fprintf(stderr, "ptlrun: rank %d (pid %ld): the stacks of its threads (%s):\n", rank, (long)pid, tool);
	fflush(stderr);
	pid_t c = fork();
	if (c < 0) {
		fprintf(stderr, "ptlrun: rank %d: cannot fork %s: %s\n", rank, tool, strerror(errno));
		return;
	}
	if (c == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(2, 1);
		if (gdb)
			execl(tool, "gdb", "-p", pidarg, "-batch", "-nx", "-q", "-ex", "thread apply all bt 32",
			      (char *)NULL);
		else
			execl(tool, "eu-stack", "-p", pidarg, "-n", "32", (char *)NULL);
		_exit(127);
	}
	long long end = ptlrun_now_ms() + PTLRUN_STUCK_TOOL_MS;
	for (;;) {
		int status;
		pid_t w = waitpid(c, &status, WNOHANG);
		if (w == c || (w < 0 && errno != EINTR))
			break;
		if (ptlrun_now_ms() >= end) {
			fprintf(stderr, "ptlrun: rank %d: %s took over %d s; stopped\n", rank, tool,
				PTLRUN_STUCK_TOOL_MS / 1000);
			kill(c, SIGKILL);
			waitpid(c, &status, 0);
			break;
		}
		nanosleep(&(struct timespec){ 0, 10 * 1000000L }, NULL);
	}
}

void ptlrun_stuck_report(const int *ranks, const pid_t *pids, int n)
{
	if (n <= 0)
		return;
	struct stuck_thread(*ts)[PTLRUN_STUCK_THREADS] = calloc((size_t)n, sizeof *ts);
	int *nt = calloc((size_t)n, sizeof *nt);
	if (!ts || !nt) {
		free(ts);
		free(nt);
		return;
	}
	for (int i = 0; i < n; i++)
		nt[i] = list_threads(pids[i], ts[i], PTLRUN_STUCK_THREADS);
	long long t0 = ptlrun_now_ms();
	nanosleep(&(struct timespec){ 0, PTLRUN_STUCK_SAMPLE_MS * 1000000L }, NULL);
	long ms = (long)(ptlrun_now_ms() - t0);
	for (int i = 0; i < n; i++)
		describe_threads(ranks[i], pids[i], ts[i], nt[i], ms);
	const char *e = getenv("PTLRUN_STACKS");
	if (!e || strcmp(e, "0")) {
		char path[512];
		const char *tool = find_tool("eu-stack", path, sizeof path);
		bool gdb = !tool && (tool = find_tool("gdb", path, sizeof path)) != NULL;
		for (int i = 0; i < n && i < PTLRUN_STUCK_STACKS; i++)
			run_stack_tool(ranks[i], pids[i], tool, gdb);
		if (n > PTLRUN_STUCK_STACKS)
			fprintf(stderr, "ptlrun: the stacks of the first %d ranks only\n", PTLRUN_STUCK_STACKS);
	}
	fflush(stderr);
	free(ts);
	free(nt);
}
