/* Who a process is: pid and start time (rt_proc.h says why both). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_proc.h"

int rt_proc_stat(pid_t pid, char *state, uint64_t *start)
{
	char path[64], buf[1024], *s;
	int field = 3; /* s then at the state, the third field */
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	s = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* The name in parentheses may hold spaces and ')': the fields
	 * count from the last ')'. */
	if (!s || !(s = strrchr(buf, ')')) || s[1] != ' ') {
		errno = EINVAL;
		return -1;
	}
	s += 2;
	*state = *s;
	while (field < 22 && (s = strchr(s, ' ')))
		s++, field++;
	if (!s || *s < '0' || *s > '9') {
		errno = EINVAL;
		return -1;
	}
	*start = strtoull(s, NULL, 10);
	return 0;
}

int rt_proc_is(pid_t pid, uint64_t start)
{
	uint64_t now_start;
	char state;

	if (pid <= 0)
		return 0;
	/* EPERM: someone's, another user's perhaps: /proc says whose */
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return 0;
	if (rt_proc_stat(pid, &state, &now_start) == 0)
		return state != 'Z' && state != 'X' && (!start || now_start == start);
	/* a process that read its own entry had one: gone since (ENOENT) */
	return !(start && errno == ENOENT);
}

int rt_proc_pidfd(pid_t pid, uint64_t start)
{
	int fd = -1, err = ENOSYS;

	if (pid <= 0) {
		errno = EINVAL;
		return -1;
	}
#ifdef SYS_pidfd_open
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	err = errno;
#endif
	if ((fd < 0 && err == ESRCH) || !rt_proc_is(pid, start)) {
		if (fd >= 0)
			close(fd);
		errno = ESRCH;
		return -1;
	}
	if (fd < 0)
		errno = err;
	return fd;
}

int rt_proc_exited(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP));
}
