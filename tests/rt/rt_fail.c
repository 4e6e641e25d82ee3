/*
 * rt_fail: ranks that fail on purpose, for ptlrun's tests.
 *   rt_fail exit R CODE   all barrier; rank R exits with CODE, the others
 *                         wait in a second barrier (ptlrun stops them)
 *   rt_fail kill R        every rank creates /dev/shm/ptl.<jobid>.seg.<rank>
 *                         and ptl.view.<pid>, prints "jobid J pid P", then
 *                         rank R kills itself with SIGKILL
 *   rt_fail abort R CODE  rank R calls rt_abort(CODE, ...)
 *   rt_fail hang [R]      everybody (or only rank R, the others fence)
 *                         sleeps
 *   rt_fail early R       rank R exits 0 at once; the others fence and
 *                         must be told the fence cannot complete
 *   rt_fail noterm        ignore SIGTERM and sleep (rank 0 exits 1)
 *   rt_fail cpu           print "rank R cpus LIST" (the affinity mask)
 *   rt_fail env VAR       print "rank R VAR=value"
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rt.h"

static struct rt_info me;

static void die(const char *what)
{
	fprintf(stderr, "rt_fail rank %d: %s failed\n", me.rank, what);
	exit(1);
}

static void make_shm(const char *name)
{
	int fd = shm_open(name, O_CREAT | O_RDWR, 0600);

	if (fd < 0)
		die(name);
	close(fd);
}

static void sleep_forever(void)
{
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int r = argc > 2 ? atoi(argv[2]) : -1;
	int code = argc > 3 ? atoi(argv[3]) : 0;

	if (rt_init(&me) != 0)
		die("rt_init");
	if (strcmp(mode, "exit") == 0) {
		if (rt_barrier() != 0)
			die("barrier");
		if (me.rank == r)
			exit(code);
		if (rt_barrier() != 0)
			die("second barrier");
	} else if (strcmp(mode, "kill") == 0) {
		char name[128], suffix[32];

		snprintf(suffix, sizeof(suffix), "seg.%d", me.rank);
		if (rt_shm_name(name, sizeof(name), me.jobid, suffix) < 0)
			die("rt_shm_name");
		make_shm(name);
		rt_shm_view_name(name, sizeof(name), (long)getpid(), NULL);
		make_shm(name);
		rt_shm_view_name(name, sizeof(name), (long)getpid(), "eq0");
		make_shm(name);
		printf("jobid %016" PRIx64 " pid %ld\n", me.jobid, (long)getpid());
		fflush(stdout);
		if (rt_barrier() != 0)
			die("barrier");
		if (me.rank == r)
			raise(SIGKILL);
		if (rt_barrier() != 0)
			die("second barrier");
	} else if (strcmp(mode, "abort") == 0) {
		if (rt_barrier() != 0)
			die("barrier");
		if (me.rank == r) {
			char why[64];

			snprintf(why, sizeof(why), "rank %d gives up", me.rank);
			rt_abort(code, why);
		}
		if (rt_barrier() != 0)
			die("second barrier");
	} else if (strcmp(mode, "hang") == 0) {
		if (r < 0 || me.rank == r)
			sleep_forever();
		if (rt_fence() != 0)
			die("fence");
	} else if (strcmp(mode, "early") == 0) {
		if (me.rank == r)
			return 0;
		if (rt_fence() != 0) {
			fprintf(stderr, "rt_fail rank %d: fence failed as "
				"expected\n", me.rank);
			return 4;
		}
	} else if (strcmp(mode, "noterm") == 0) {
		signal(SIGTERM, SIG_IGN);
		if (rt_barrier() != 0)
			die("barrier");
		if (me.rank == 0)
			exit(1);
		sleep_forever();
	} else if (strcmp(mode, "cpu") == 0) {
		cpu_set_t set;
		char list[256] = "";

		if (sched_getaffinity(0, sizeof(set), &set) != 0)
			die("sched_getaffinity");
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				snprintf(list + strlen(list),
					 sizeof(list) - strlen(list), "%s%d",
					 list[0] != '\0' ? "," : "", c);
		printf("rank %d cpus %s\n", me.rank, list);
	} else if (strcmp(mode, "env") == 0 && argc > 2) {
		const char *v = getenv(argv[2]);

		printf("rank %d %s=%s\n", me.rank, argv[2], v != NULL ? v : "(unset)");
	} else {
		fprintf(stderr, "rt_fail: unknown mode '%s'\n", mode);
		return 2;
	}
	rt_fini();
	return 0;
}
