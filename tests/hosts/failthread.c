/*
 * tests/hosts/failthread.c - LD_PRELOAD'ed by tests/hosts/netns.sh: the
 * FAILTHREAD_AT-th pthread_create of the process fails (EAGAIN), as one
 * does where the threads or the memory for a stack have run out, after
 * 50 ms, so that the threads started before it are running (and waiting
 * for whatever their creator holds); every other goes through. With FAILTHREAD_SAY set, each call says on stderr
 * which it was, so the test finds the call it wants to fail.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
	static int calls;
	create_fn *real = (create_fn *)dlsym(RTLD_NEXT, "pthread_create");
	const char *at = getenv("FAILTHREAD_AT");
	int n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (getenv("FAILTHREAD_SAY"))
		fprintf(stderr, "failthread: pthread_create %d\n", n);
	if (!real)
		return EAGAIN;
	if (at && atoi(at) == n) {
		nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
		return EAGAIN;
	}
	return real(t, attr, start, arg);
}
