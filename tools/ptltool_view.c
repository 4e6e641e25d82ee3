/* Read-only access to the views in /dev/shm (see ptltool_view.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptltool_view.h"
#include "rt/rt.h"
#include "rt/rt_proc.h"

static const void *ptltool_map_ro(const char *name, size_t *len)
{
	/* Without blocking: anyone may make a FIFO under a view's name. */
	int fd = shm_open(name, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *p = MAP_FAILED;
	errno = EPROTO;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		*len = (size_t)st.st_size;
		p = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0);
	}
	int e = errno;
	close(fd);
	errno = e;
	return p == MAP_FAILED ? NULL : p;
}

void ptltool_view_unmap(const void *p, size_t len)
{
	munmap((void *)p, len);
}

const struct ptl_view_proc *ptltool_view_map(pid_t pid)
{
	char name[64];
	size_t len = 0;
	rt_shm_view_name(name, sizeof name, (long)pid, NULL);
	const struct ptl_view_proc *v = ptltool_map_ro(name, &len);
	if (!v)
		return NULL;
	if (len < sizeof *v || __atomic_load_n(&v->magic, __ATOMIC_ACQUIRE) != PTL_VIEW_MAGIC ||
	    v->version != PTL_VIEW_VERSION) {
		ptltool_view_unmap(v, len);
		errno = EPROTO;
		return NULL;
	}
	return v;
}

const struct ptl_view_eq *ptltool_view_map_eq(pid_t pid, unsigned i, size_t *len)
{
	char name[96];
	rt_shm_view_eq_name(name, sizeof name, (long)pid, i);
	const struct ptl_view_eq *e = ptltool_map_ro(name, len);
	if (!e)
		return NULL;
	if (*len < sizeof *e || e->magic != PTL_VIEW_MAGIC ||
	    *len < sizeof *e + e->count * sizeof(ptl_event_t)) {
		ptltool_view_unmap(e, *len);
		errno = EPROTO;
		return NULL;
	}
	return e;
}

static int ptltool_cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

int ptltool_view_each(void (*fn)(pid_t pid, const struct ptl_view_proc *v, void *arg), void *arg)
{
	DIR *d = opendir("/dev/shm");
	if (!d)
		return 0;
	pid_t *pids = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *rest;
		long pid = rt_shm_view_parse(de->d_name, &rest);
		if (!pid || *rest)
			continue; /* not a process view: another object, or an EQ */
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			pid_t *np = realloc(pids, cap * sizeof *pids);
			if (!np)
				break;
			pids = np;
		}
		pids[n++] = (pid_t)pid;
	}
	closedir(d);
	qsort(pids, n, sizeof *pids, ptltool_cmp_pid);
	int count = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ptl_view_proc *v = ptltool_view_map(pids[i]);
		if (!v)
			continue;
		/* A view whose process is gone is left over, not live: one
		 * whose pid no process has, or a zombie, or another process
		 * given the pid since (its start time is not the view's). */
		if (!rt_proc_is(pids[i], v->start)) {
			ptltool_view_unmap(v, sizeof *v);
			continue;
		}
		fn(pids[i], v, arg);
		ptltool_view_unmap(v, sizeof *v);
		count++;
	}
	free(pids);
	return count;
}
