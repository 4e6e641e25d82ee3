/*
 * tests/rt/proc_stat_test.h - a test's own reading of /proc/<pid>/stat
 * (the start time and the state), apart from lib/rt's reader under test:
 * rt_proc_unit and test_shm check that reader and the shm NAL's view of
 * a peer against it; and the reaping of the stand-in processes they
 * fork for it.
 */
#ifndef PTL_TESTS_PROC_STAT_TEST_H
#define PTL_TESTS_PROC_STAT_TEST_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Field 22 of /proc/<pid>/stat and the state; 0 if unreadable. */
static inline uint64_t proc_start(pid_t pid, char *state)
{
	char path[64], buf[1024], *s;
	unsigned long long t;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	s = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!s || !(s = strrchr(buf, ')')) ||
	    sscanf(s + 2, "%c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu", state, &t) != 2)
		return 0;
	return t;
}

/* Polls /proc until pid's state is want (5 s at most). */
static inline int proc_wait_state(pid_t pid, char want)
{
	char st = 0;

	for (int i = 0; i < 5000; i++) {
		if (proc_start(pid, &st) && st == want)
			return 0;
		usleep(1000);
	}
	return -1;
}

/* A test's stand-in process killed and reaped, whatever became of the
 * test (a teardown's work); *pid is -1 after. */
static inline void proc_reap(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

#endif
