/*
 * rt.c - picks the bootstrap backend and serializes calls into it.
 *
 * The core may call into the runtime from any thread (PtlRtBarrier), and the
 * backends keep one socket and one table each, so every wrapper holds one
 * mutex. Nothing here is on a fast path.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"
#include "rt_proto.h"

static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct rt_ops *rt_backend;
static struct rt_info rt_info_self;
static int rt_refs;

/* The backend the environment asks for: ptlrun's variables first (they
 * are ours), then the launchers' own. */
static const struct rt_ops *rt_choose(void)
{
	if (getenv(RT_ENV_FD) != NULL || getenv(RT_ENV_ADDR) != NULL)
		return &rt_ptlrun_ops;
#ifdef PTL_HAVE_PMIX
	if (getenv("PMIX_NAMESPACE") != NULL)
		return &rt_pmix_ops;
#endif
	if (getenv("PMI_FD") != NULL || getenv("PMI_PORT") != NULL)
		return &rt_pmi_ops;
	return &rt_singleton_ops;
}

/* A launcher that started n ranks, by its own variables; 0 if none says.
 * The innermost launcher first: ranks of an mpirun or mpiexec started
 * inside a Slurm allocation inherit the allocation's (or the daemons'
 * step's) SLURM_* variables. SLURM_STEP_NUM_TASKS, not SLURM_NTASKS: only
 * srun's tasks have it, while a batch script or salloc's command (one
 * process, rightly a singleton) has SLURM_NTASKS of the whole allocation. */
static long rt_launcher_size(const char **who)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
					    "SLURM_STEP_NUM_TASKS" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v != NULL && atol(v) > 0) {
			*who = vars[i];
			return atol(v);
		}
	}
	return 0;
}

/* Started by a launcher whose plugin we do not speak, each rank would be a
 * job of its own: say what to use instead. Only the singleton can be that:
 * a job found through PMI or PMIx has the size the launcher itself gave. */
static int rt_check_size(const struct rt_ops *ops, const struct rt_info *info)
{
	const char *who = NULL, *fix;
	long n;

	if (ops != &rt_singleton_ops)
		return 0;
	n = rt_launcher_size(&who);
	if (n == 0 || n == info->size)
		return 0;
	if (strncmp(who, "SLURM_", 6) == 0)
#ifdef PTL_HAVE_PMIX
		fix = "srun --mpi=pmix (or --mpi=pmi2)";
#else
		fix = "srun --mpi=pmi2 (this libptl has no PMIx)";
#endif
	else if (strcmp(who, "OMPI_COMM_WORLD_SIZE") == 0)
		fix = "Open MPI's mpirun with a libptl built with PMIx (libpmix-dev), "
		      "or mpiexec.hydra";
	else
		fix = "a launcher with PMIx or PMI-1 (mpiexec.hydra, srun --mpi=pmi2)";
	fprintf(stderr, "ptl: the launcher started %ld ranks (%s) but the %s bootstrap "
		"found a job of %d: its PMI plugin is not one ptl speaks; use %s\n",
		n, who, ops->name, info->size, fix);
	return -1;
}

int rt_init(struct rt_info *info)
{
	const struct rt_ops *ops;
	int rc = 0;

	pthread_mutex_lock(&rt_lock);
	if (rt_refs == 0) {
		/* PTL_RT_FD is what makes a process a ptlrun rank; the other
		 * PTL_RT_* variables are checked by the backend. */
		ops = rt_choose();
		memset(&rt_info_self, 0, sizeof(rt_info_self));
		rc = ops->init(&rt_info_self);
		if (rc == 0 && rt_check_size(ops, &rt_info_self) != 0) {
			ops->fini();
			rc = -1;
		}
		if (rc == 0) {
			rt_info_self.backend = ops->name;
			rt_backend = ops;
		}
	}
	if (rc == 0) {
		rt_refs++;
		if (info != NULL)
			*info = rt_info_self;
	}
	pthread_mutex_unlock(&rt_lock);
	return rc == 0 ? 0 : -1;
}

const struct rt_info *rt_self(void)
{
	const struct rt_info *p;

	pthread_mutex_lock(&rt_lock);
	p = rt_refs > 0 ? &rt_info_self : NULL;
	pthread_mutex_unlock(&rt_lock);
	return p;
}

/* Runs op under the lock, or fails with a message before rt_init. */
#define RT_CALL(what, call)                                                  \
	do {                                                                 \
		int rc_;                                                     \
		pthread_mutex_lock(&rt_lock);                                \
		if (rt_backend == NULL || rt_refs == 0) {                    \
			pthread_mutex_unlock(&rt_lock);                      \
			fprintf(stderr, "ptl: %s called before rt_init\n",  \
				what);                                       \
			return -1;                                           \
		}                                                            \
		rc_ = (call);                                                \
		pthread_mutex_unlock(&rt_lock);                              \
		return rc_;                                                  \
	} while (0)

/* Keys and values are checked here, once for every backend; a backend
 * adds only its own limits (PMI-1's text format). */
int rt_put(const char *key, const void *val, size_t len)
{
	if (!rt_key_valid(key)) {
		fprintf(stderr, "ptl: rt_put: invalid key (1..%d printable "
			"characters, no spaces)\n", RT_KEY_MAX - 1);
		return -1;
	}
	if (len > RT_VAL_MAX || (val == NULL && len != 0)) {
		fprintf(stderr, "ptl: rt_put: value of key '%s' is %zu bytes; "
			"the limit is %d\n", key, len, RT_VAL_MAX);
		return -1;
	}
	RT_CALL("rt_put", rt_backend->put(key, val, len));
}

int rt_fence(void)
{
	RT_CALL("rt_fence", rt_backend->fence());
}

/* Without rt_lock: after a fence the values are in the backend's own
 * table (locked on its own), and a progress thread answering a peer must
 * not wait for a barrier another thread sits in. */
int rt_get(int rank, const char *key, void *val, size_t *len)
{
	const struct rt_ops *ops = __atomic_load_n(&rt_backend, __ATOMIC_ACQUIRE);
	if (ops == NULL) {
		fprintf(stderr, "ptl: rt_get called before rt_init\n");
		return -1;
	}
	return ops->get(rank, key, val, len);
}

int rt_barrier(void)
{
	RT_CALL("rt_barrier", rt_backend->barrier());
}

void rt_abort(int code, const char *why)
{
	/* No lock: abort must work even from a thread that interrupted
	 * another one inside the runtime. The backends' abort paths only
	 * write one message and exit. */
	const struct rt_ops *ops = rt_backend;

	if (ops == NULL)
		ops = &rt_singleton_ops;
	ops->abort(code, why != NULL ? why : "");
	_exit(code > 0 && code < 256 ? code : 1); /* not reached */
}

void rt_fini(void)
{
	pthread_mutex_lock(&rt_lock);
	if (rt_refs > 0 && --rt_refs == 0) {
		rt_backend->fini();
		rt_backend = NULL;
	}
	pthread_mutex_unlock(&rt_lock);
}

int rt_shm_name(char *buf, size_t len, uint64_t jobid, const char *suffix)
{
	int n;

	if (suffix != NULL)
		n = snprintf(buf, len, "/ptl.%016" PRIx64 ".%s", jobid, suffix);
	else
		n = snprintf(buf, len, "/ptl.%016" PRIx64, jobid);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

/* The one spelling of view names: rt_shm_view_name writes it,
 * rt_shm_view_parse reads it. */
#define RT_SHM_VIEW_PREFIX "ptl.view."

int rt_shm_view_name(char *buf, size_t len, long pid, const char *suffix)
{
	int n;

	if (suffix != NULL)
		n = snprintf(buf, len, "/" RT_SHM_VIEW_PREFIX "%ld.%s", pid, suffix);
	else
		n = snprintf(buf, len, "/" RT_SHM_VIEW_PREFIX "%ld", pid);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

int rt_shm_view_eq_name(char *buf, size_t len, long pid, unsigned eq)
{
	char suffix[16]; /* "eq" and up to 10 digits */

	snprintf(suffix, sizeof(suffix), "eq%u", eq);
	return rt_shm_view_name(buf, len, pid, suffix);
}

long rt_shm_view_parse(const char *name, const char **rest)
{
	const char *p;
	long pid = 0;

	/* Digits by hand, not strtol: no sign, space or leading zero gets in
	 * (each would give a second name for one pid), and a pid too large
	 * is refused before it overflows, whatever the width of long. */
	if (strncmp(name, RT_SHM_VIEW_PREFIX, strlen(RT_SHM_VIEW_PREFIX)) != 0)
		return 0;
	p = name + strlen(RT_SHM_VIEW_PREFIX);
	if (*p < '1' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (pid > (INT32_MAX - (*p - '0')) / 10)
			return 0;
		pid = pid * 10 + (*p - '0');
	}
	/* "<pid>." with nothing after it is neither a process view nor an EQ:
	 * taken for either, a sweep would unlink a name no process made. */
	if (*p != '\0' && (*p != '.' || p[1] == '\0'))
		return 0;
	if (rest != NULL)
		*rest = *p != '\0' ? p + 1 : p;
	return pid;
}

int rt_shm_view_lock_dead(int dir, const char *name)
{
	/* Without blocking: anyone may make a FIFO under a view's name. */
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat locked, named;

	if (fd < 0)
		return -1;
	if (fstat(fd, &locked) == 0 && S_ISREG(locked.st_mode) && locked.st_uid == geteuid() &&
	    flock(fd, LOCK_EX | LOCK_NB) == 0 &&
	    fstatat(dir, name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
	    named.st_ino == locked.st_ino && named.st_dev == locked.st_dev)
		return fd;
	close(fd);
	return -1;
}

uint32_t rt_name_nid(const char *name)
{
	uint32_t h = 2166136261u;

	for (const char *p = name; *p != '\0'; p++) {
		h ^= (uint8_t)*p;
		h *= 16777619u;
	}
	return h != 0 ? h : 1;
}

uint32_t rt_host_nid(void)
{
	char host[256];

	if (gethostname(host, sizeof(host)) != 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	return rt_name_nid(host);
}

int rt_random_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
