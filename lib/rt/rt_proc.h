/*
 * lib/rt/rt_proc.h - who a process is: its pid and its start time.
 *
 * A pid alone does not name a process for long: once it exits (and is
 * reaped) the kernel may give the pid to any new process, of any user, and
 * with pid_max at 32768 that comes round quickly. The start time (field 22
 * of /proc/<pid>/stat, clock ticks since boot) tells them apart: no later
 * process with that pid started at the same time. So a process that others
 * must recognise later publishes both (the shm NAL's segment, the ptltool
 * view), and whoever looks takes the pid for that process only while both
 * match (rt_proc_is). Used by lib/nal/shm (peers) and by ptltool (live
 * views); nothing here is on a fast path but rt_proc_exited, one poll().
 *
 * A pidfd (Linux 5.3) names one process for good, whoever has its pid
 * later: one opened while the pid still names the process that started
 * at T (rt_proc_pidfd checks that after opening it) says at the cost of
 * a poll() whether that process has exited since (rt_proc_exited), with
 * no /proc read.
 */
#ifndef PTL_RT_PROC_H
#define PTL_RT_PROC_H

#include <stdint.h>
#include <sys/types.h>

/* What /proc/<pid>/stat says of process pid: its state letter (R, S, Z,
 * ...) and start time. 0, or -1 with errno set (ENOENT: no such process,
 * or no /proc). A system call and a file read. */
int rt_proc_stat(pid_t pid, char *state, uint64_t *start);

/* Whether pid still names the process that started at start (as
 * rt_proc_stat read it when that process was known): 1, or 0 when it is
 * gone: no process has the pid, the one that has it is a zombie (exited,
 * not yet reaped: it still answers kill(0)), or another process started
 * since has it. start 0 (that process could not read its own entry: no
 * /proc, or not its pid namespace's) leaves kill(0) alone to decide, and
 * a missing /proc entry then is no proof of death. */
int rt_proc_is(pid_t pid, uint64_t start);

/* A pidfd (close-on-exec) of the process that started at start and has
 * pid: >= 0; -1 with errno ESRCH when that process is gone (rt_proc_is,
 * checked after the open: the pidfd names whoever had the pid then, and
 * that was this process if it has the pid still); -1 with another errno
 * where there are no pidfds (ENOSYS before Linux 5.3 or without the
 * system call's number at build time, EPERM under a seccomp filter,
 * EMFILE): then the caller has only rt_proc_is. */
int rt_proc_pidfd(pid_t pid, uint64_t start);

/* Whether the process of pidfd fd has exited (the pidfd is readable):
 * one poll() that does not wait. A zombie has exited. */
int rt_proc_exited(int fd);

#endif
