/* mpi_noalloc: once warm, a blocking collective allocates nothing per call
 * (its schedule and engine are the communicator's cached ones, a v form's
 * by its sizes, a non-commutative reduction's owner schedule too), and
 * the cached engine follows each call's buffers and sizes: loops of every
 * collective, 64 B and 4 KiB blocks, roots 0 and the last rank, two
 * buffers in turn; the v forms' sizes and layouts change from call to
 * call (two shapes in turn, one with the blocks in rank order, one in
 * reverse); results checked each call. And an Alltoallv whose sizes change
 * at every call (more shapes than the cache keeps) does not push out a
 * Bcast called between them; and the nonblocking ones keep theirs too.
 * A flood of small MPI_Sends ahead of their receives allocates nothing
 * per message either, once warm.
 * The program's own malloc, calloc and realloc count the library's calls
 * (glibc's, through __libc_malloc: elsewhere the counts stay 0 and only
 * the results are checked).
 *   ptlrun -n N mpi_noalloc */
#define _GNU_SOURCE
#include "mpi_test.h"

#include <stdatomic.h>

static _Atomic unsigned long t_allocs; /* the progress thread may allocate too */

#ifdef __GLIBC__
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
void *malloc(size_t n)
{
	t_allocs++;
	return __libc_malloc(n);
}
void *calloc(size_t n, size_t m)
{
	t_allocs++;
	return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n)
{
	t_allocs++;
	return __libc_realloc(p, n);
}
#endif

enum { OPS = 18, ROUNDS = 24, MAXN = 512 /* doubles a block */ };
static const char *const op_name[OPS] = { "MPI_Bcast",	  "MPI_Reduce",	 "MPI_Allreduce", "MPI_Gather",
					  "MPI_Scatter",  "MPI_Allgather", "MPI_Alltoall",  "MPI_Reduce_scatter_block",
					  "MPI_Scan",	  "MPI_Exscan",	 "MPI_Barrier",	  "MPI_Gatherv",
					  "MPI_Scatterv", "MPI_Allgatherv", "MPI_Alltoallv", "MPI_Reduce_scatter",
					  "MPI_Reduce (a non-commutative op)", "MPI_Allreduce (a non-commutative op)" };
static MPI_Op t_nc; /* a sum declared non-commutative: the owner schedule */

static void nc_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		((double *)inout)[i] += ((const double *)in)[i];
}

/* rank r's element i in round k */
static double val(int r, int i, int k)
{
	return (double)(r * 1000 + i + k * 7);
}

/* The sum of ranks 0..nr-1's element i in round k: a reduction's, or a
 * scan's over the ranks before. */
static double sum(int nr, int i, int k)
{
	double want = 0;
	for (int r = 0; r < nr; r++)
		want += val(r, i, k);
	return want;
}

/* The v forms' shapes: what rank i sends rank j in round k (Alltoallv;
 * the others take f(j, j, k) as rank j's block), at most n; the blocks
 * laid out in rank order in even rounds, in reverse in odd ones. */
static int f(int i, int j, int n, int k)
{
	return n - ((i + 2 * j + k) & 1) * (1 + j % 3);
}

static void layout(int *cnt, int *dsp, int from, int n, int k, int to_me)
{
	int off = 0;
	for (int u = 0; u < t_size; u++) {
		int j = k & 1 ? t_size - 1 - u : u;
		cnt[j] = to_me ? f(j, from, n, k) : f(from, j, n, k);
		dsp[j] = off;
		off += cnt[j];
	}
}

/* The v forms, round k, blocks of up to n doubles; true if all came right. */
static int one_v(int op, int n, int root, int k, double *s, double *d)
{
	int me = t_rank, p = t_size, bad = 0;
	int sc[64] = { 0 }, sd[64] = { 0 }, rc[64] = { 0 }, rd[64] = { 0 };
	/* every rank's block j: f(j, j); Alltoallv: rank me's row and column */
	layout(sc, sd, me, n, k, 0);
	layout(rc, rd, me, n, k, 1);
	if (op != 14)
		for (int j = 0; j < p; j++) {
			sc[j] = rc[j] = f(j, j, n, k);
		}
	if (op != 14) { /* the same layout of those sizes for both */
		int off = 0;
		for (int u = 0; u < p; u++) {
			int j = k & 1 ? p - 1 - u : u;
			sd[j] = rd[j] = off;
			off += sc[j];
		}
	}
	for (int j = 0; j < p; j++)
		for (int i = 0; i < sc[j]; i++)
			s[sd[j] + i] = val(op == 12 ? j + me * 100 : op == 14 ? me * 100 + j : me, i, k);
	switch (op) {
	case 11:
		OK(MPI_Gatherv(s + sd[me], sc[me], MPI_DOUBLE, d, rc, rd, MPI_DOUBLE, root, MPI_COMM_WORLD));
		for (int j = 0; j < p && me == root; j++)
			for (int i = 0; i < rc[j]; i++)
				bad += d[rd[j] + i] != val(j, i, k);
		break;
	case 12:
		OK(MPI_Scatterv(s, sc, sd, MPI_DOUBLE, d, rc[me], MPI_DOUBLE, root, MPI_COMM_WORLD));
		for (int i = 0; i < rc[me]; i++)
			bad += d[i] != val(me + root * 100, i, k);
		break;
	case 13:
		OK(MPI_Allgatherv(s + sd[me], sc[me], MPI_DOUBLE, d, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD));
		for (int j = 0; j < p; j++)
			for (int i = 0; i < rc[j]; i++)
				bad += d[rd[j] + i] != val(j, i, k);
		break;
	case 14:
		OK(MPI_Alltoallv(s, sc, sd, MPI_DOUBLE, d, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD));
		for (int j = 0; j < p; j++)
			for (int i = 0; i < rc[j]; i++)
				bad += d[rd[j] + i] != val(j * 100 + me, i, k);
		break;
	default: {
		/* the vector: the blocks in rank order; rank me keeps block me */
		int off = 0, at = 0;
		for (int j = 0; j < p; j++) {
			for (int i = 0; i < sc[j]; i++)
				s[off + i] = val(me, off + i, k);
			if (j == me)
				at = off;
			off += sc[j];
		}
		OK(MPI_Reduce_scatter(s, d, rc, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
		for (int i = 0; i < rc[me]; i++)
			bad += d[i] != sum(p, at + i, k);
	}
	}
	return bad;
}

/* One call of op on blocks of n doubles (buffers s, d: size blocks each),
 * root root, round k; its result checked. */
static void one(int op, int n, int root, int k, double *s, double *d)
{
	int me = t_rank, p = t_size, bad = 0;
	for (int j = 0; j < p; j++)
		for (int i = 0; i < n; i++)
			s[j * n + i] = val(op == 4 || op == 6 ? j + me * 100 : me, i, k);
	memset(d, 0, sizeof(double) * (size_t)(n * p));
	if (op > 10 && op < 16) {
		bad = one_v(op, n, root, k, s, d);
		CHECK(!bad, "%s of up to %d doubles, root %d, round %d: %d wrong", op_name[op], n, root, k, bad);
		return;
	}
	switch (op) {
	case 0:
		if (me != root)
			memset(s, 0, sizeof(double) * (size_t)n);
		OK(MPI_Bcast(s, n, MPI_DOUBLE, root, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			bad += s[i] != val(root, i, k);
		break;
	case 1:
	case 2:
	case 16:
	case 17:
		if (op == 1 || op == 16)
			OK(MPI_Reduce(s, d, n, MPI_DOUBLE, op == 1 ? MPI_SUM : t_nc, root, MPI_COMM_WORLD));
		else
			OK(MPI_Allreduce(s, d, n, MPI_DOUBLE, op == 2 ? MPI_SUM : t_nc, MPI_COMM_WORLD));
		for (int i = 0; i < n && (op == 2 || op == 17 || me == root); i++)
			bad += d[i] != sum(p, i, k);
		break;
	case 3:
		OK(MPI_Gather(s, n, MPI_DOUBLE, d, n, MPI_DOUBLE, root, MPI_COMM_WORLD));
		for (int j = 0; j < p && me == root; j++)
			for (int i = 0; i < n; i++)
				bad += d[j * n + i] != val(j, i, k);
		break;
	case 4:
		/* the root's block j is j + root * 100's */
		OK(MPI_Scatter(s, n, MPI_DOUBLE, d, n, MPI_DOUBLE, root, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			bad += d[i] != val(me + root * 100, i, k);
		break;
	case 5:
		OK(MPI_Allgather(s, n, MPI_DOUBLE, d, n, MPI_DOUBLE, MPI_COMM_WORLD));
		for (int j = 0; j < p; j++)
			for (int i = 0; i < n; i++)
				bad += d[j * n + i] != val(j, i, k);
		break;
	case 6:
		/* block j of rank r holds j + r * 100's: we get me + j * 100's */
		OK(MPI_Alltoall(s, n, MPI_DOUBLE, d, n, MPI_DOUBLE, MPI_COMM_WORLD));
		for (int j = 0; j < p; j++)
			for (int i = 0; i < n; i++)
				bad += d[j * n + i] != val(me + j * 100, i, k);
		break;
	case 7:
		OK(MPI_Reduce_scatter_block(s, d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			bad += d[i] != sum(p, i, k);
		break;
	case 8:
	case 9:
		if (op == 8)
			OK(MPI_Scan(s, d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
		else
			OK(MPI_Exscan(s, d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
		for (int i = 0; i < n && (op == 8 || me > 0); i++)
			bad += d[i] != sum(me + (op == 8), i, k);
		break;
	default:
		OK(MPI_Barrier(MPI_COMM_WORLD));
	}
	CHECK(!bad, "%s of %d doubles, root %d, round %d: %d wrong", op_name[op], n, root, k, bad);
}

/* An Alltoallv of 64 B blocks whose sizes change at every call (nine
 * shapes in turn, more than the cache's entries), each followed by a Bcast
 * of 64 B: the Bcasts, once warm, allocate nothing. */
static void lru(double *s, double *d)
{
	unsigned long bcast_allocs = 0;
	for (int k = 0; k < 9 * 4; k++) {
		int sc[64], sd[64], rc[64], rd[64], so = 0, ro = 0, me = t_rank, bad = 0;
		for (int j = 0; j < t_size; j++) {
			sc[j] = 1 + (k % 9 + me + j) % 8;
			rc[j] = 1 + (k % 9 + j + me) % 8;
			sd[j] = so;
			rd[j] = ro;
			so += sc[j];
			ro += rc[j];
		}
		for (int j = 0; j < t_size; j++)
			for (int i = 0; i < sc[j]; i++)
				s[sd[j] + i] = val(me * 100 + j, i, k);
		OK(MPI_Alltoallv(s, sc, sd, MPI_DOUBLE, d, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD));
		for (int j = 0; j < t_size; j++)
			for (int i = 0; i < rc[j]; i++)
				bad += d[rd[j] + i] != val(j * 100 + me, i, k);
		CHECK(!bad, "MPI_Alltoallv of shape %d, round %d: %d wrong", k % 9, k, bad);
		unsigned long a0 = t_allocs;
		OK(MPI_Bcast(s, 8, MPI_DOUBLE, 0, MPI_COMM_WORLD));
		if (k >= 9) /* one turn of the shapes warms */
			bcast_allocs += t_allocs - a0;
	}
	CHECK(bcast_allocs <= 2, "MPI_Bcast between Alltoallvs of changing sizes: %lu allocations in 27 calls",
	      bcast_allocs);
}

/* Nonblocking: MPI_Ibcast, MPI_Iallreduce and MPI_Igather started
 * together, waited for, checked, in a loop: kept schedules and engines
 * (two calls of one shape at once take two engines) and temporaries
 * (was some 14 allocations a call); then more calls of other
 * shapes under way at once than the schedules kept (the rest expand their
 * own). */
static void nonblocking(double *s, double *d)
{
	int me = t_rank, p = t_size, bad = 0;
	double g[8 * 64], b2[8];
	unsigned long a0 = 0;
	for (int k = 0; k < 2 + ROUNDS; k++) {
		if (k == 2)
			a0 = t_allocs;
		MPI_Request rq[4];
		for (int i = 0; i < 8; i++) {
			s[i] = me == 0 ? val(0, i, k) : -1;
			b2[i] = me == 0 ? val(0, i, k + 1) : -1;
			d[i] = val(me, i, k);
		}
		OK(MPI_Ibcast(s, 8, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq[0]));
		OK(MPI_Ibcast(b2, 8, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq[1]));
		OK(MPI_Iallreduce(d, d + 8, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[2]));
		OK(MPI_Igather(d, 8, MPI_DOUBLE, g, 8, MPI_DOUBLE, p - 1, MPI_COMM_WORLD, &rq[3]));
		OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
		for (int i = 0; i < 8; i++) {
			bad += s[i] != val(0, i, k) || b2[i] != val(0, i, k + 1) || d[8 + i] != sum(p, i, k);
			for (int r = 0; r < p && me == p - 1; r++)
				bad += g[r * 8 + i] != val(r, i, k);
		}
	}
	unsigned long got = t_allocs - a0;
	CHECK(!bad, "nonblocking Ibcast, Iallreduce, Igather: %d wrong", bad);
	/* the Iallreduce's and the Igather's small temporaries come from
	 * slots of their own (mpi_coll_req_tmp_get): 0 here at 2-4 ranks,
	 * up to 10 on some ranks of 5 and 8 (left to find); malloc'd, they
	 * were one each a round and more at the gather's root; expanded per
	 * call it was 1,272 */
	CHECK(got <= ROUNDS / 2, "nonblocking: %lu allocations in %d calls", got, 4 * ROUNDS);
	/* twelve shapes under way at once, twice */
	for (int k = 0; k < 2; k++) {
		MPI_Request rq[12];
		for (int j = 0; j < 12; j++) {
			for (int i = 0; i <= j; i++)
				s[j * 16 + i] = val(me, i + j, k);
			OK(MPI_Iallreduce(s + j * 16, d + j * 16, j + 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[j]));
		}
		OK(MPI_Waitall(12, rq, MPI_STATUSES_IGNORE));
		bad = 0;
		for (int j = 0; j < 12; j++)
			for (int i = 0; i <= j; i++)
				bad += d[j * 16 + i] != sum(p, i + j, k);
		CHECK(!bad, "12 MPI_Iallreduce of 12 sizes at once, round %d: %d wrong", k, bad);
	}
}

/* A sender that outruns its receiver: rank 0's 64-byte MPI_Sends to rank
 * 1, which starts receiving them late (50 ms in the floods that warm up,
 * 20 in the one counted, so that one's backlog is no deeper). Past the
 * slots and the ACK-free credits each send is copied and returns; the
 * copies, their requests and the receiver's unexpected records come from
 * pools the first floods grow, so a later flood of the same length
 * allocates (nearly) nothing. With each copy malloc'd it was a few
 * thousand. */
static void flood(double *s, double *d)
{
	enum { N = 4096, WARM = 3 };
	int me = t_rank, bad = 0;
	unsigned long a0 = 0;
	for (int k = 0; k <= WARM; k++) {
		OK(MPI_Barrier(MPI_COMM_WORLD));
		if (k == WARM)
			a0 = t_allocs;
		if (me == 1)
			for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < (k < WARM ? 0.05 : 0.02);)
				;
		for (int i = 0; i < N && me < 2; i++) {
			if (me == 0) {
				for (int j = 0; j < 8; j++)
					s[j] = val(0, j, i + k);
				OK(MPI_Send(s, 8, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD));
			} else {
				OK(MPI_Recv(d, 8, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
				for (int j = 0; j < 8; j++)
					bad += d[j] != val(0, j, i + k);
			}
		}
	}
	unsigned long got = t_allocs - a0;
	CHECK(!bad, "a flood of %d 64-byte MPI_Sends: %d values wrong", N, bad);
	CHECK(got <= 8, "a flood of %d 64-byte MPI_Sends, rank %d: %lu allocations", N, me, got);
	OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
#ifdef __GLIBC__
	CHECK(t_allocs > 0, "malloc is not this program's: nothing counted");
#endif
	OK(MPI_Op_create(nc_sum, 0, &t_nc));
	double *buf[2][2];
	for (int b = 0; b < 2; b++)
		for (int j = 0; j < 2; j++)
			buf[b][j] = malloc(sizeof(double) * MAXN * (size_t)t_size);
	static const int sizes[] = { 8, MAXN }; /* 64 B, 4 KiB */
	/* (the v forms' sizes are arrays of 64 here) */
	for (int op = 0; op < OPS; op++)
		for (int z = 0; z < 2 && !(t_size > 64 && op > 10 && op < 16); z++)
			for (int root = 0; root < t_size; root += t_size > 1 ? t_size - 1 : 1) {
				/* warm: the schedule, its engine, the temporaries */
				for (int k = 0; k < 2; k++)
					one(op, sizes[z], root, k, buf[k][0], buf[k][1]);
				OK(MPI_Barrier(MPI_COMM_WORLD));
				/* a barrier after each call: no rank runs ahead into
				 * the copies that hold back a flood (not this test's) */
				unsigned long a0 = t_allocs;
				for (int k = 0; k < ROUNDS; k++) {
					one(op, sizes[z], root, k, buf[k & 1][0], buf[k & 1][1]);
					OK(MPI_Barrier(MPI_COMM_WORLD));
				}
				/* At most a pool's first growth (the request table's,
				 * a queue's for sends that wait for ring space), once;
				 * a schedule expanded per call was 11 a call. */
				unsigned long got = t_allocs - a0;
				CHECK(got <= 2, "%s of %d bytes, root %d: %lu allocations in %d calls", op_name[op],
				      sizes[z] * 8, root, got, ROUNDS);
			}
	if (t_size <= 8)
		lru(buf[0][0], buf[0][1]);
	if (t_size <= 64)
		nonblocking(buf[0][0], buf[0][1]);
	if (t_size >= 2)
		flood(buf[0][0], buf[0][1]);
	OK(MPI_Op_free(&t_nc));
	for (int b = 0; b < 2; b++)
		for (int j = 0; j < 2; j++)
			free(buf[b][j]);
	return t_finish("mpi_noalloc");
}
