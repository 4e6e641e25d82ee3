/*
 * lib/rt: bootstrap. Tells a process its rank, the job's size and id, which
 * ranks share its host, and exchanges small per-rank blobs (NAL addresses)
 * through the launcher. One backend per launcher behind struct rt_ops:
 * singleton (no launcher), ptlrun (rt_ptlrun.c); PMIx and PMI-1 plug in the
 * same way. Nothing here is on a fast path.
 */
#ifndef PTL_RT_H
#define PTL_RT_H

#include <stddef.h>
#include <stdint.h>

#define RT_KEY_MAX 64      /* bytes of a key, including the NUL */
#define RT_VAL_MAX 1024    /* bytes of a value */
#define RT_JOB_KEY_LEN 16  /* bytes of the per-job secret */

struct rt_info {
	int rank;          /* 0..size-1 */
	int size;          /* ranks in the job */
	int local_rank;    /* index among the ranks on this host */
	int local_size;    /* ranks on this host */
	uint64_t jobid;    /* unique per job on this host; names shm objects */
	uint64_t shm_jobid; /* if not 0, names shm objects instead: ptlrun
			      --hosts gives each host its own, since hosts
			      that are network namespaces share /dev/shm */
	uint32_t nid;      /* this host's node id */
	uint8_t job_key[RT_JOB_KEY_LEN]; /* secret shared by the job's processes */
	const char *backend; /* "singleton", "ptlrun", ... */
};

struct rt_ops {
	const char *name;
	/* Fills *info; returns 0, or -1 after printing why on stderr. */
	int (*init)(struct rt_info *info);
	/* Publishes this rank's value under key (visible after the next fence). */
	int (*put)(const char *key, const void *val, size_t len);
	/* Collective: every rank's puts so far become visible to all. */
	int (*fence)(void);
	/* Reads rank's value of key; *len is the buffer size in, value size out.
	 * Returns 0, or -1 (missing key or launcher gone: *len untouched; a
	 * value larger than the buffer: *len its size). */
	int (*get)(int rank, const char *key, void *val, size_t *len);
	/* Collective: waits for every rank. */
	int (*barrier)(void);
	/* Ends the whole job with code, telling the launcher why. Does not return. */
	void (*abort)(int code, const char *why);
	void (*fini)(void);
};

/* Chooses the backend from the environment (PTL_RT_* from ptlrun, then
 * PMIX_NAMESPACE, then PMI_FD/PMI_PORT, else singleton) and initializes
 * it. A job size that disagrees with what the launcher announced
 * (SLURM_NTASKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE) stops with a message
 * naming the --mpi= to use. Returns 0 or -1. */
int rt_init(struct rt_info *info);
const struct rt_info *rt_self(void);
int rt_put(const char *key, const void *val, size_t len);
int rt_fence(void);
int rt_get(int rank, const char *key, void *val, size_t *len);
int rt_barrier(void);
void rt_abort(int code, const char *why) __attribute__((noreturn));
void rt_fini(void);

extern const struct rt_ops rt_singleton_ops;
extern const struct rt_ops rt_ptlrun_ops;
extern const struct rt_ops rt_pmi_ops;  /* PMI-1 wire protocol: PMI_FD or PMI_PORT */
extern const struct rt_ops rt_pmix_ops; /* PMIx (when built with it): PMIX_NAMESPACE */

/* ---- Additions shared by the library and ptlrun ---- */

/* Details of the calls above, as both backends implement them:
 * - rt_init nests: each successful call needs one rt_fini; the job (and
 *   under ptlrun the connection) stays between rt_fini and a later rt_init.
 * - rt_put: key is 1..RT_KEY_MAX-1 printable characters without spaces,
 *   len at most RT_VAL_MAX; -1 otherwise (printed).
 * - rt_get: when *len is too small it returns -1 and sets *len to the
 *   value's size; for a missing key it returns -1 and leaves *len alone
 *   (PtlInit tells a rank of another libptl by its rank info's size). It
 *   never talks to the launcher.
 * - rt_barrier does not publish puts; only rt_fence does. Fences and
 *   barriers are one sequence every rank must call in the same order.
 * - Under ptlrun, fence and barrier return -1 with a message if a rank
 *   exited before reaching them, if ptlrun is gone, or after PTL_RT_TIMEOUT
 *   seconds (default 600).
 * - rt_abort exits with code (1 if code is outside 1..255); under ptlrun
 *   the job ends with that status and ptlrun prints why. */

/* The environment ptlrun gives each rank (see ptlrun(1)). A process that
 * has PTL_RT_FD or PTL_RT_ADDR in its environment is a ptlrun rank. */
#define RT_ENV_RANK       "PTL_RT_RANK"       /* decimal, 0..size-1 */
#define RT_ENV_SIZE       "PTL_RT_SIZE"       /* decimal, >= 1 */
#define RT_ENV_LOCAL_RANK "PTL_RT_LOCAL_RANK" /* decimal */
#define RT_ENV_LOCAL_SIZE "PTL_RT_LOCAL_SIZE" /* decimal */
#define RT_ENV_JOBID      "PTL_RT_JOBID"      /* 16 lowercase hex digits */
#define RT_ENV_NID        "PTL_RT_NID"        /* decimal uint32 */
#define RT_ENV_JOB_KEY    "PTL_RT_JOB_KEY"    /* 2*RT_JOB_KEY_LEN hex digits */
#define RT_ENV_FD         "PTL_RT_FD"         /* socket to ptlrun, decimal */
#define RT_ENV_ADDR       "PTL_RT_ADDR"       /* or ptlrun's TCP listener,
						 IPv4:port (ranks on other
						 hosts); the rank connects
						 and says HELLO <rank> <key> */
#define RT_ENV_SHM_JOBID  "PTL_RT_SHM_JOBID"  /* 16 hex digits, optional */
#define RT_ENV_TIMEOUT    "PTL_RT_TIMEOUT"    /* seconds a rank waits on
						 ptlrun; default 600 */

/* Formats the POSIX shared-memory name of a job's object:
 * "/ptl.<jobid as 16 lowercase hex>.<suffix>", or "/ptl.<16 hex>" when
 * suffix is NULL. ptlrun unlinks every /dev/shm/ptl.<16 hex>.* when the job
 * ends, so every per-job object must be named through this. Returns the
 * length, or -1 if buf (len bytes) is too small. */
int rt_shm_name(char *buf, size_t len, uint64_t jobid, const char *suffix);

/* The per-process read-only view (ptltool eq) is "/ptl.view.<pid>" and
 * "/ptl.view.<pid>.<suffix>"; ptlrun removes those of its ranks too.
 * Returns the length, or -1 if buf is too small. */
int rt_shm_view_name(char *buf, size_t len, long pid, const char *suffix);
/* Event queue eq's object of that view: "/ptl.view.<pid>.eq<eq>". */
int rt_shm_view_eq_name(char *buf, size_t len, long pid, unsigned eq);

/* Reads a /dev/shm entry's name (readdir's, without the slash) as a view
 * object's: its pid, and *rest (if rest is not NULL) after
 * "ptl.view.<pid>.": "" for the process view "ptl.view.<pid>", never ""
 * for one of its objects "ptl.view.<pid>.<suffix>". 0, *rest untouched,
 * for any other name. The pid is decimal, 1 to INT32_MAX, without a
 * leading zero, so that each pid has one name. libptl's sweep, ptlrun's
 * cleanup and ptltool find the views in /dev/shm through this; the process
 * view's lock (below) then says whether its process lives, and a dead
 * one's objects are those with its pid. */
long rt_shm_view_parse(const char *name, const char **rest);

/* A live process holds an exclusive flock on its process view
 * "/ptl.view.<pid>" (lib/ptl/ptl_view.c); the kernel lets it go when the
 * process dies. rt_shm_view_lock_dead takes that lock on dir/name (dir:
 * /dev/shm, name: a process view's, without the slash) if nobody holds it:
 * the fd holding it, or -1 (held, another user's, not a regular file, or
 * the name no longer the file locked). The caller unlinks name and its
 * "name.*" objects while it holds the fd, then closes it: then no process
 * can have taken the name meanwhile (one opening its view locks it first
 * and checks that the name is still its file). */
int rt_shm_view_lock_dead(int dir, const char *name);

/* This host's node id: the 32-bit FNV-1a hash of gethostname(), never 0.
 * Same value in every process on the host (ptlrun passes it as PTL_RT_NID;
 * the singleton computes it). */
uint32_t rt_host_nid(void);
/* The same hash of any host name (ptlrun --hosts gives each host this). */
uint32_t rt_name_nid(const char *name);

/* Fills buf with len random bytes (getrandom). Returns 0 or -1. */
int rt_random_bytes(void *buf, size_t len);

#endif /* PTL_RT_H */
