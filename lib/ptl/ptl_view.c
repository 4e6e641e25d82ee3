/* The shared read-only view for ptltool (layout in ptl_view.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptl/ptl_internal.h"

/* EQs up to this size are faulted in when allocated (MAP_POPULATE) and
 * then written, a store per page. An EQ is written once around its ring,
 * a new page every 25 events, and in a shared mapping each first touch is
 * a page fault that allocates and zeroes a page (microseconds in a VM):
 * MPI's 10 MB queue made the first 60000 ping-pong messages (its 0-2 byte
 * sizes) 1.5-2 times slower than the rest. MAP_POPULATE alone stopped
 * being enough on guests whose kernel leaves a page the host reported as
 * zero unwritten (pvm_no_zero_page): the host backs it at the first store,
 * a VM exit of 5-12 us per page, so the first lap of MPI's queue (65,000
 * 0-byte round trips) still read 0.63 us a half round trip against 0.39
 * after it; the stores pay that at PtlEQAlloc instead (10 MB: ~20 ms
 * there, ~1 ms where populating backs the pages). Above the cap (MPI's
 * queue past 3000 ranks) the first lap pays, rather than every rank
 * committing all of its queue's memory at once. */
#define PTL_VIEW_POPULATE_MAX (32u << 20)

/* One store per page of p[0, len), so that a page the kernel mapped but
 * never wrote is backed now, not on the fast path's first event there. */
static void ptl_view_touch(void *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t step = page > 0 ? (size_t)page : 4096;
	for (size_t off = 0; off < len; off += step)
		((volatile char *)p)[off] = 0;
}

static void *ptl_view_map(const char *name, size_t len, bool populate)
{
	int fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return NULL;
	/* A populated EQ is given its pages first: MAP_POPULATE cannot say
	 * that /dev/shm ran out, and the stores that follow would then die
	 * of SIGBUS where PtlEQAlloc can answer PTL_NO_SPACE. */
	void *p = MAP_FAILED;
	if (ftruncate(fd, (off_t)len) == 0 && (!populate || posix_fallocate(fd, 0, (off_t)len) == 0))
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		shm_unlink(name);
		return NULL;
	}
	if (populate)
		ptl_view_touch(p, len);
	return p;
}

static void ptl_view_atexit(void)
{
	/* A process that exits without PtlFini leaves nothing behind. */
	if (ptl_lib.view_name[0])
		ptl_view_close();
}

/* This process's pid namespace, 0 where /proc cannot say. */
static uint64_t ptl_view_pidns(void)
{
	struct stat st;
	return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* The pid a process view's name carries ("ptl.view.<pid>"), 0 for any
 * other name (an EQ object's, another library's). */
static pid_t ptl_view_name_pid(const char *name)
{
	if (strncmp(name, "ptl.view.", 9) != 0 || name[9] < '1' || name[9] > '9')
		return 0;
	char *end;
	long pid = strtol(name + 9, &end, 10);
	return *end == 0 && pid > 0 && pid <= INT32_MAX ? (pid_t)pid : 0;
}

/* Whether /dev/shm/<name> is the view of a process of namespace pidns
 * that is gone. Only a view written by this layout, naming that pid and
 * that namespace, counts: kill() cannot see another namespace's processes,
 * and a live one there must keep its view. */
static bool ptl_view_is_left_over(int dir, const char *name, pid_t pid, uint64_t pidns)
{
	if (pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
		return false;
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct ptl_view_proc head;
	ssize_t n = pread(fd, &head, offsetof(struct ptl_view_proc, prog), 0);
	close(fd);
	return n == (ssize_t)offsetof(struct ptl_view_proc, prog) && head.magic == PTL_VIEW_MAGIC &&
	       head.version == PTL_VIEW_VERSION && head.pid == (int32_t)pid && head.pidns == pidns;
}

/* Removes the views of processes that died without PtlFini or exit (a
 * signal): ptlrun does it for its ranks, but a process started alone or
 * under another launcher leaves them, and MPI's EQ alone is 10 MB of
 * /dev/shm. A process's EQ objects go before its process view, so one
 * stopped halfway is found again by the next. Another process sweeping at
 * the same time only makes some unlinks find nothing. */
static void ptl_view_sweep(void)
{
	uint64_t pidns = ptl_view_pidns();
	DIR *d = opendir("/dev/shm");
	if (!pidns || !d) {
		if (d)
			closedir(d);
		return;
	}
	pid_t dead[64];
	size_t ndead = 0;
	struct dirent *e;
	while (ndead < sizeof dead / sizeof dead[0] && (e = readdir(d)) != NULL) {
		pid_t pid = ptl_view_name_pid(e->d_name);
		if (pid && ptl_view_is_left_over(dirfd(d), e->d_name, pid, pidns))
			dead[ndead++] = pid;
	}
	for (size_t i = 0; i < ndead; i++) {
		char pfx[32];
		size_t pl = (size_t)snprintf(pfx, sizeof pfx, "ptl.view.%d.", (int)dead[i]);
		rewinddir(d);
		while ((e = readdir(d)) != NULL)
			if (strncmp(e->d_name, pfx, pl) == 0)
				unlinkat(dirfd(d), e->d_name, 0);
		pfx[pl - 1] = 0;
		unlinkat(dirfd(d), pfx, 0);
	}
	closedir(d);
}

int ptl_view_open(void)
{
	ptl_view_sweep();
	snprintf(ptl_lib.view_name, sizeof ptl_lib.view_name, "/ptl.view.%d", (int)getpid());
	struct ptl_view_proc *v = ptl_view_map(ptl_lib.view_name, sizeof *v, false);
	if (!v) {
		fprintf(stderr, "ptl: cannot create %s in /dev/shm: %s\n", ptl_lib.view_name, strerror(errno));
		ptl_lib.view_name[0] = 0;
		return -1;
	}
	v->version = PTL_VIEW_VERSION;
	v->pid = (int32_t)getpid();
	v->rank = ptl_lib.rt.rank;
	v->size = ptl_lib.rt.size;
	v->jobid = ptl_lib.rt.jobid;
	v->pidns = ptl_view_pidns();
	FILE *f = fopen("/proc/self/comm", "r");
	if (f) {
		if (fgets(v->prog, sizeof v->prog, f))
			v->prog[strcspn(v->prog, "\n")] = 0;
		fclose(f);
	}
	size_t off = 0;
	for (int i = 0; i < ptl_lib.nnals; i++)
		off += (size_t)snprintf(v->nals + off, sizeof v->nals - off, "%s%s", i ? "," : "",
					ptl_lib.nals[i].ops->name);
	__atomic_store_n(&v->magic, PTL_VIEW_MAGIC, __ATOMIC_RELEASE);
	ptl_lib.view = v;
	static bool registered;
	if (!registered) {
		atexit(ptl_view_atexit);
		registered = true;
	}
	return 0;
}

void ptl_view_close(void)
{
	if (!ptl_lib.view)
		return;
	for (uint32_t i = 0; i < ptl_lib.view->neqs; i++) {
		if (!ptl_lib.view->eqs[i].in_use)
			continue;
		char name[96];
		snprintf(name, sizeof name, "%s.eq%u", ptl_lib.view_name, i);
		shm_unlink(name);
	}
	munmap(ptl_lib.view, sizeof *ptl_lib.view);
	shm_unlink(ptl_lib.view_name);
	ptl_lib.view = NULL;
	ptl_lib.view_name[0] = 0;
}

void ptl_view_ni(struct ptl_ni *ni)
{
	ptl_lib.view->id = ni->id;
	ptl_lib.view->limits = ni->limits;
	ptl_lib.view->ni_up = 1;
}

int ptl_view_eq_create(struct ptl_eq *eq, uint64_t count)
{
	struct ptl_view_proc *v = ptl_lib.view;
	uint32_t idx = 0;
	while (idx < PTL_VIEW_MAX_EQS && v->eqs[idx].in_use)
		idx++;
	if (idx == PTL_VIEW_MAX_EQS)
		return -1;
	char name[96];
	snprintf(name, sizeof name, "%s.eq%u", ptl_lib.view_name, idx);
	size_t len = sizeof(struct ptl_view_eq) + count * sizeof(ptl_event_t);
	struct ptl_view_eq *r = ptl_view_map(name, len, len <= PTL_VIEW_POPULATE_MAX);
	if (!r)
		return -1;
	r->count = count;
	r->handle = eq->handle;
	r->magic = PTL_VIEW_MAGIC;
	eq->ring = r;
	eq->map_len = len;
	eq->view_index = idx;
	v->eqs[idx] = (struct ptl_view_eqref){ .index = idx, .handle = eq->handle, .count = count };
	__atomic_store_n(&v->eqs[idx].in_use, 1, __ATOMIC_RELEASE);
	if (idx >= v->neqs)
		v->neqs = idx + 1;
	return 0;
}

void ptl_view_eq_destroy(struct ptl_eq *eq)
{
	if (!eq->ring)
		return;
	char name[96];
	snprintf(name, sizeof name, "%s.eq%u", ptl_lib.view_name, eq->view_index);
	__atomic_store_n(&ptl_lib.view->eqs[eq->view_index].in_use, 0, __ATOMIC_RELEASE);
	munmap(eq->ring, eq->map_len);
	shm_unlink(name);
	eq->ring = NULL;
}
