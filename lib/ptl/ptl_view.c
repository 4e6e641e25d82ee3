/* The shared read-only view for ptltool (layout in ptl_view.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ptl/ptl_internal.h"
#include "rt/rt_proc.h"

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

/* Maps the object fd names (opened read-write, emptied), sized len. */
static void *ptl_view_map_fd(int fd, const char *name, size_t len, bool populate)
{
	/* A populated EQ is given its pages first: MAP_POPULATE cannot say
	 * that /dev/shm ran out, and the stores that follow would then die
	 * of SIGBUS where PtlEQAlloc can answer PTL_NO_SPACE. */
	void *p = MAP_FAILED;
	if (ftruncate(fd, (off_t)len) == 0 && (!populate || posix_fallocate(fd, 0, (off_t)len) == 0))
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
	if (p == MAP_FAILED) {
		shm_unlink(name);
		return NULL;
	}
	if (populate)
		ptl_view_touch(p, len);
	return p;
}

static void *ptl_view_map(const char *name, size_t len, bool populate)
{
	int fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return NULL;
	void *p = ptl_view_map_fd(fd, name, len, populate);
	close(fd);
	return p;
}

/* The process whose view ptl_lib.view is (its pid names the view's EQ
 * objects, in a forked child too): a child forked after PtlInit
 * inherits the mapping, the locked fd and the atexit handler, and must not
 * remove its parent's view when it exits, nor keep a dead parent's view
 * looking alive. */
static pid_t ptl_view_owner;

/* Whether we are that process (not a child forked after PtlInit): only it
 * removes the view's objects or marks its EQs free. */
static bool ptl_view_mine(void)
{
	return getpid() == ptl_view_owner;
}

static void ptl_view_atexit(void)
{
	/* A process that exits without PtlFini leaves nothing behind. */
	if (ptl_lib.view_name[0])
		ptl_view_close();
}

/* In a forked child (ptl_init.c's ptl_atfork_child): let the parent's
 * lock go with the parent (closing our copy of the fd does not release
 * it; flock(LOCK_UN) would). */
void ptl_view_atfork_child(void)
{
	if (ptl_lib.view_fd >= 0)
		close(ptl_lib.view_fd);
	ptl_lib.view_fd = -1;
}

/* Whether the process view whose lock fd holds was written by this
 * protocol: a view of a library before it (version 1, 2) has no lock to
 * tell whether its process lives; PTL_VIEW_VERSION_LOCKED on do (the
 * sweep goes by names, not by the layout that later versions changed).
 * One too short to say (being created, or cut short) is swept: its
 * creator checks the name after locking. */
static bool ptl_view_ours(int fd)
{
	struct ptl_view_proc head;
	ssize_t n = pread(fd, &head, offsetof(struct ptl_view_proc, pid), 0);
	return n < (ssize_t)offsetof(struct ptl_view_proc, pid) ||
	       (head.magic == PTL_VIEW_MAGIC && head.version >= PTL_VIEW_VERSION_LOCKED &&
		head.version <= PTL_VIEW_VERSION);
}

/* Removes the views of processes that died without PtlFini or exit (a
 * signal): ptlrun does it for its ranks, but a process started alone or
 * under another launcher leaves them, and MPI's EQ alone is 10 MB of
 * /dev/shm. A view is a dead process's when its lock can be taken
 * (rt_shm_view_lock_dead: our own user's regular files only), up to 64 per
 * sweep; its EQ objects and then it are unlinked under the lock. We hold
 * our own view's lock already, so any other object named for our pid is a
 * dead predecessor's (we have made no EQ yet). */
static void ptl_view_sweep(void)
{
	DIR *d = opendir("/dev/shm");
	if (!d)
		return;
	int dir = dirfd(d);
	pid_t self = getpid();
	struct ptl_view_dead {
		pid_t pid;
		int fd; /* its process view, locked by us */
	} dead[64];
	size_t ndead = 0;
	struct dirent *e;
	const char *rest;
	while (ndead < sizeof dead / sizeof dead[0] && (e = readdir(d)) != NULL) {
		pid_t pid = (pid_t)rt_shm_view_parse(e->d_name, &rest);
		if (!pid || *rest || pid == self)
			continue;
		int fd = rt_shm_view_lock_dead(dir, e->d_name);
		if (fd >= 0 && ptl_view_ours(fd))
			dead[ndead++] = (struct ptl_view_dead){ pid, fd };
		else if (fd >= 0)
			close(fd);
	}
	rewinddir(d);
	while ((e = readdir(d)) != NULL) {
		pid_t pid = (pid_t)rt_shm_view_parse(e->d_name, &rest);
		if (!pid || !*rest)
			continue;
		bool gone = pid == self;
		for (size_t i = 0; i < ndead && !gone; i++)
			gone = dead[i].pid == pid;
		if (gone)
			unlinkat(dir, e->d_name, 0);
	}
	for (size_t i = 0; i < ndead; i++) {
		char name[32]; /* "/ptl.view.<pid>": unlinked without the slash */
		if (rt_shm_view_name(name, sizeof name, (long)dead[i].pid, NULL) > 0)
			unlinkat(dir, name + 1, 0);
		close(dead[i].fd);
	}
	closedir(d);
}

/* Opens our process view's object, locked and empty: fd, or -1 with errno
 * set. The lock is taken before the name is used: a sweeper holding it
 * (a pass over /dev/shm; longer if it is preempted: we wait up to
 * PTL_VIEW_LOCK_TRIES ms) may unlink the name under us, and then we open
 * anew. A predecessor's file (a dead process with our pid) is unlinked and
 * replaced, not emptied: a ptltool may still have it mapped. EBUSY: a live
 * process holds the name (one of another pid namespace sharing /dev/shm,
 * or a forked child of a dead process, with our pid). */
#define PTL_VIEW_LOCK_TRIES 2000
static int ptl_view_lock(const char *name)
{
	char path[96];
	snprintf(path, sizeof path, "/dev/shm%s", name);
	for (int tries = 0; tries < PTL_VIEW_LOCK_TRIES; tries++) {
		int fd = shm_open(name, O_RDWR | O_CREAT | O_NONBLOCK, 0600);
		if (fd < 0)
			return -1;
		struct stat mine, named;
		if (fstat(fd, &mine) != 0 || !S_ISREG(mine.st_mode) || mine.st_uid != geteuid()) {
			close(fd);
			errno = EPERM;
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			int err = errno;
			close(fd);
			if (err != EWOULDBLOCK) {
				errno = err;
				return -1;
			}
			struct timespec ms = { 0, 1000000 };
			nanosleep(&ms, NULL);
			continue;
		}
		bool still = stat(path, &named) == 0 && mine.st_ino == named.st_ino && mine.st_dev == named.st_dev;
		if (still && mine.st_size == 0)
			return fd;
		if (still)
			shm_unlink(name); /* a predecessor's: a fresh one instead */
		close(fd);
	}
	errno = EBUSY;
	return -1;
}

int ptl_view_open(void)
{
	rt_shm_view_name(ptl_lib.view_name, sizeof ptl_lib.view_name, (long)getpid(), NULL);
	int fd = ptl_view_lock(ptl_lib.view_name);
	if (fd >= 0)
		ptl_view_sweep();
	/* Mapped through an open file of its own: a mapping holds its file,
	 * and through the locked one it would keep the lock for a forked
	 * child that outlives us (the name is ours while we hold the lock). */
	int mfd = fd < 0 ? -1 : shm_open(ptl_lib.view_name, O_RDWR, 0);
	struct ptl_view_proc *v = mfd < 0 ? NULL : ptl_view_map_fd(mfd, ptl_lib.view_name, sizeof *v, false);
	if (mfd >= 0)
		close(mfd);
	if (!v) {
		if (errno == EBUSY)
			fprintf(stderr, "ptl: /dev/shm%s is held by another live process (of another pid namespace "
				"sharing /dev/shm, or a forked child of a dead process with our pid): no view, no EQs\n",
				ptl_lib.view_name);
		else if (errno == EPERM)
			fprintf(stderr, "ptl: /dev/shm%s is not a regular file of ours: no view, no EQs\n",
				ptl_lib.view_name);
		else
			fprintf(stderr, "ptl: cannot create %s in /dev/shm: %s\n", ptl_lib.view_name, strerror(errno));
		if (fd >= 0)
			close(fd);
		ptl_lib.view_name[0] = 0;
		return -1;
	}
	ptl_lib.view_fd = fd;
	ptl_view_owner = getpid();
	v->version = PTL_VIEW_VERSION;
	v->pid = (int32_t)getpid();
	char state;
	if (rt_proc_stat(getpid(), &state, &v->start) != 0)
		v->start = 0;
	v->rank = ptl_lib.rt.rank;
	v->size = ptl_lib.rt.size;
	v->jobid = ptl_lib.rt.jobid;
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
	bool mine = ptl_view_mine();
	for (uint32_t i = 0; mine && i < ptl_lib.view->neqs; i++) {
		if (!ptl_lib.view->eqs[i].in_use)
			continue;
		char name[96];
		if (rt_shm_view_eq_name(name, sizeof name, (long)ptl_view_owner, i) > 0)
			shm_unlink(name);
	}
	munmap(ptl_lib.view, sizeof *ptl_lib.view);
	if (mine)
		shm_unlink(ptl_lib.view_name);
	if (ptl_lib.view_fd >= 0)
		close(ptl_lib.view_fd); /* the lock goes with it, after the names */
	ptl_lib.view_fd = -1;
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
	if (rt_shm_view_eq_name(name, sizeof name, (long)ptl_view_owner, idx) < 0)
		return -1;
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
	/* A forked child's copy of an EQ maps its parent's object, listed in
	 * its parent's view: it lets go of its mapping and leaves both alone. */
	if (ptl_view_mine()) {
		char name[96];
		__atomic_store_n(&ptl_lib.view->eqs[eq->view_index].in_use, 0, __ATOMIC_RELEASE);
		if (rt_shm_view_eq_name(name, sizeof name, (long)ptl_view_owner, eq->view_index) > 0)
			shm_unlink(name);
	}
	munmap(eq->ring, eq->map_len);
	eq->ring = NULL;
}
