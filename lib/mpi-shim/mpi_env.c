/* mpi_env.c: Init/Finalize, time, names, the predefined attributes, Abort
 * (error codes and handlers: mpi_err.c). */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_impl.h"

struct mpi_state mpi_g = { .stall_rank = -1 };

/* ---------------------------------------------------------------- environment */

static int env_int(const char *n, int def)
{
	const char *v = getenv(n);
	if (!v || !*v)
		return def;
	char *end;
	long x = strtol(v, &end, 10);
	if (*end) {
		fprintf(stderr, "ptl-mpi: ignoring %s=%s (want an integer)\n", n, v);
		return def;
	}
	return (int)x;
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	(void)argc;
	(void)argv;
	if (mpi_g.initialized)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Init", "MPI is already initialized");
	int nif;
	int rc = PtlInit(&nif);
	if (rc != PTL_OK) {
		fprintf(stderr, "ptl-mpi: PtlInit failed: %s\n", PtlErrorStr((unsigned)rc));
		_exit(1);
	}
	mpi_g.wrank = PtlRtRank();
	mpi_g.wsize = PtlRtSize();
	if (mpi_g.wsize > (1 << MPI_SRC_BITS)) {
		fprintf(stderr, "ptl-mpi: %d ranks: at most %d supported\n", mpi_g.wsize, 1 << MPI_SRC_BITS);
		_exit(1);
	}
	mpi_g.thread_level = required > MPI_THREAD_FUNNELED ? MPI_THREAD_FUNNELED : required;
	if (mpi_g.thread_level < MPI_THREAD_SINGLE)
		mpi_g.thread_level = MPI_THREAD_SINGLE;
	if (provided)
		*provided = mpi_g.thread_level;
	const char *t = getenv("PTL_COLL_TIMEOUT");
	mpi_g.coll_timeout = t && *t ? atof(t) : 300;
	mpi_g.stall_rank = env_int("PTL_TEST_STALL_RANK", -1);
	mpi_g.coll_ports = env_int("PTL_COLL_PORTS", 1);
	const char *a = getenv("PTL_COLL_ALGO");
	snprintf(mpi_g.coll_algo, sizeof mpi_g.coll_algo, "%s", a ? a : "");
	mpi_dtype_init();
	mpi_op_init();
	mpi_comm_init();
	mpi_pt2pt_init();
	if (mpi_fail_init() != MPI_SUCCESS)
		mpi_fatal(MPI_ERR_NO_MEM, "out of memory for %d ranks", mpi_g.wsize);
	mpi_coll_init();
	/* Nobody may send before everyone's entries are in place. */
	rc = PtlRtBarrier();
	if (rc != PTL_OK)
		mpi_fatal(MPI_ERR_OTHER, "the job's start-up barrier failed: %s", PtlErrorStr((unsigned)rc));
	mpi_g.initialized = true;
	return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
	int provided;
	return PMPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

int PMPI_Query_thread(int *provided)
{
	*provided = mpi_g.thread_level;
	return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int *flag)
{
	*flag = 1;
	return MPI_SUCCESS;
}

int PMPI_Finalize(void)
{
	MPI_CHECK_INIT("MPI_Finalize");
	/* First, as if MPI_COMM_SELF were freed (MPI-3.1 8.7.1), then
	 * MPI_COMM_WORLD: the delete functions may still call MPI. */
	int rc = mpi_attr_drop(false, MPI_COMM_SELF, "MPI_Finalize");
	if (!rc)
		rc = mpi_attr_drop(false, MPI_COMM_WORLD, "MPI_Finalize");
	if (rc)
		return rc;
	/* With a rank known dead the barrier could only fail (and, with
	 * MPI_ERRORS_ARE_FATAL, end the job the program chose to keep). */
	if (mpi_comm_dead(mpi_comm_get(MPI_COMM_WORLD), false) < 0)
		PMPI_Barrier(MPI_COMM_WORLD);
	mpi_drain_internal();
	PtlRtBarrier();
	mpi_g.finalized = true;
	mpi_pt2pt_fini();
	mpi_fail_fini();
	mpi_comm_fini();
	mpi_icoll_fini();
	mpi_coll_req_tmp_fini();
	mpi_dtype_fini();
	mpi_persist_fini();
	mpi_info_fini();
	mpi_attr_fini();
	mpi_err_fini();
	PtlFini();
	return MPI_SUCCESS;
}

int PMPI_Initialized(int *flag)
{
	*flag = mpi_g.initialized;
	return MPI_SUCCESS;
}

int PMPI_Finalized(int *flag)
{
	*flag = mpi_g.finalized;
	return MPI_SUCCESS;
}

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
	char why[128];
	snprintf(why, sizeof why, "MPI_Abort(%s, %d)", mpi_comm_get(comm) ? mpi_comm_name(comm) : "?", errorcode);
	PtlRtAbort(errorcode & 255 ? errorcode & 255 : 1, why);
}

double PMPI_Wtime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double PMPI_Wtick(void)
{
	struct timespec ts;
	clock_getres(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int PMPI_Get_processor_name(char *name, int *len)
{
	if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
		snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
	name[MPI_MAX_PROCESSOR_NAME - 1] = 0;
	*len = (int)strlen(name);
	return MPI_SUCCESS;
}

int PMPI_Get_version(int *version, int *subversion)
{
	*version = MPI_VERSION;
	*subversion = MPI_SUBVERSION;
	return MPI_SUCCESS;
}

int PMPI_Get_library_version(char *version, int *len)
{
	snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "ptl-mpi %s (MPI %d.%d subset over Portals 3.3)",
		 PACKAGE_VERSION, MPI_VERSION, MPI_SUBVERSION);
	*len = (int)strlen(version);
	return MPI_SUCCESS;
}

/* The predefined attributes of MPI_COMM_WORLD (mpi_attr.c keeps the
 * programs' own); every communicator answers them. */
int mpi_env_attr(int keyval, void *val, int *flag)
{
	static int tag_ub = MPI_TAG_MAX, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0, usize,
		   lastcode;
	usize = mpi_g.wsize;
	lastcode = mpi_err_lastused();
	int *p;
	switch (keyval) {
	case MPI_TAG_UB: p = &tag_ub; break;
	case MPI_HOST: p = &host; break;
	case MPI_IO: p = &io; break;
	case MPI_WTIME_IS_GLOBAL: p = &wtime_global; break;
	case MPI_UNIVERSE_SIZE: p = &usize; break;
	case MPI_LASTUSEDCODE: p = &lastcode; break;
	default:
		*flag = 0;
		return MPI_SUCCESS;
	}
	*(int **)val = p;
	*flag = 1;
	return MPI_SUCCESS;
}

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
	(void)info;
	void *p = malloc(size > 0 ? (size_t)size : 1);
	if (!p)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "no memory for %ld bytes", (long)size);
	*(void **)baseptr = p;
	return MPI_SUCCESS;
}

int PMPI_Free_mem(void *base)
{
	free(base);
	return MPI_SUCCESS;
}

/* The smallest r with r^k >= n. */
static int root_ceil(int n, int k)
{
	int r = 1;
	for (;;) {
		long p = 1;
		for (int i = 0; i < k && p < n; i++)
			p *= r;
		if (p >= n)
			return r;
		r++;
	}
}

struct divisors {
	int n;
	int v[1536]; /* ascending; an int has 1344 at most */
};

/* k factors of left (from divs), non-increasing, none above maxf, after
 * depth chosen ones in cur: keeps in best the factorization whose largest
 * and smallest factors are closest (MPI-3.1 7.5.2: "as close to each other
 * as possible"), then whose smallest factors are largest. The largest of k
 * factors is at least the k-th root and the smallest at most it, so the
 * search starts at the root and stops once nothing from there can be
 * closer than the best found. */

static void dims_search(const struct divisors *divs, int left, int k, int maxf, int *cur, int depth, int *best,
			int *spread)
{
	if (k == 1) {
		if (left > maxf)
			return;
		cur[depth] = left;
		int top = cur[0], gap = top - left, i = depth;
		/* among equally close ones: the larger smallest factor, then the
		 * larger next smallest, and so on */
		while (gap == *spread && i >= 0 && cur[i] == best[i])
			i--;
		if (gap < *spread || (gap == *spread && i >= 0 && cur[i] > best[i])) {
			*spread = gap;
			memcpy(best, cur, sizeof(int) * (size_t)(depth + 1));
		}
		return;
	}
	int r = root_ceil(left, k);
	if (depth && cur[0] - r > *spread)
		return;
	for (const int *f = divs->v; f < divs->v + divs->n && *f <= maxf && *f <= left; f++) {
		if (*f < r || left % *f)
			continue;
		if (!depth && *f - r > *spread)
			break;
		cur[depth] = *f;
		dims_search(divs, left / *f, k - 1, *f, cur, depth + 1, best, spread);
	}
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
	if (nnodes <= 0 || ndims < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_DIMS, "MPI_Dims_create", "nnodes %d, ndims %d", nnodes, ndims);
	int left = nnodes, free_dims = 0;
	for (int i = 0; i < ndims; i++) {
		if (dims[i] < 0)
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_DIMS, "MPI_Dims_create", "dims[%d] = %d", i, dims[i]);
		if (dims[i] > 0) {
			if (left % dims[i])
				return mpi_err(MPI_COMM_WORLD, MPI_ERR_DIMS, "MPI_Dims_create",
					       "%d nodes do not divide by dims[%d] = %d", nnodes, i, dims[i]);
			left /= dims[i];
		} else {
			free_dims++;
		}
	}
	if (!free_dims)
		return left == 1 ? MPI_SUCCESS
				 : mpi_err(MPI_COMM_WORLD, MPI_ERR_DIMS, "MPI_Dims_create", "dims do not multiply to %d", nnodes);
	int *d = malloc(sizeof(int) * 2 * (size_t)free_dims);
	if (!d)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Dims_create", "out of memory");
	/* Factors come from left's divisors, ascending (trial division up to
	 * the square root: a prime job size costs no more than its root). */
	struct divisors divs;
	int hi[768], nhi = 0;
	divs.n = 0;
	for (int f = 1; (long)f * f <= left; f++)
		if (left % f == 0) {
			divs.v[divs.n++] = f;
			if (f != left / f)
				hi[nhi++] = left / f;
		}
	while (nhi)
		divs.v[divs.n++] = hi[--nhi];
	int spread = INT_MAX;
	memset(d, 0, sizeof(int) * (size_t)free_dims);
	dims_search(&divs, left, free_dims, left, d + free_dims, 0, d, &spread);
	for (int i = 0, k = 0; i < ndims; i++)
		if (dims[i] == 0)
			dims[i] = d[k++];
	free(d);
	return MPI_SUCCESS;
}
