/* mpi_collbuf: the temporaries collectives need (Alltoall's MPI_IN_PLACE
 * input, Reduce's input away from the root, a non-contiguous image, a
 * non-commutative combination's copy) are reused from call to call and
 * size to size on each communicator, without a page fault per call, the
 * results exact and the same bits every time, and a communicator's buffers
 * go with MPI_Comm_free; an Alltoall of a contiguous sendbuf reads it where
 * it is, with no temporary.
 *   ptlrun -n N mpi_collbuf */
#include "mpi_test.h"

#include <sys/resource.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static long minflt(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* inout = in op inout with a op b = b: associative, not commutative; the
 * result is the last rank's */
static void first(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)in;
	(void)inout;
	(void)len;
	(void)dt;
}

/* One round of every collective that takes a temporary, n elements a rank
 * (ints, doubles), checked. */
static void round_of(MPI_Comm comm, int n, MPI_Op op_first)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	int *sa = malloc(sizeof(int) * (size_t)n * (size_t)size), *ra = malloc(sizeof(int) * (size_t)n * (size_t)size);
	for (int j = 0; j < size; j++)
		for (int i = 0; i < n; i++)
			sa[j * n + i] = rank * 1000003 + j * 7919 + i;
	OK(MPI_Alltoall(sa, n, MPI_INT, ra, n, MPI_INT, comm));
	int bad = 0;
	for (int j = 0; j < size; j++)
		for (int i = 0; i < n; i++)
			bad += ra[j * n + i] != j * 1000003 + rank * 7919 + i;
	CHECK(!bad, "Alltoall of %d ints: %d wrong", n, bad);
	bad = 0;
	for (int j = 0; j < size; j++)
		for (int i = 0; i < n; i++)
			bad += sa[j * n + i] != rank * 1000003 + j * 7919 + i;
	CHECK(!bad, "Alltoall of %d ints: %d written in sendbuf", n, bad);
	/* in place (a packed copy of ra goes out): each block goes back */
	OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ra, n, MPI_INT, comm));
	bad = 0;
	for (int j = 0; j < size; j++)
		for (int i = 0; i < n; i++)
			bad += ra[j * n + i] != sa[j * n + i];
	CHECK(!bad, "Alltoall in place of %d ints: %d wrong", n, bad);

	double *d = malloc(sizeof(double) * (size_t)n), *r = malloc(sizeof(double) * (size_t)n);
	for (int i = 0; i < n; i++)
		d[i] = (double)(rank + 1) * (i % 1024);
	OK(MPI_Reduce(d, r, n, MPI_DOUBLE, MPI_SUM, size - 1, comm));
	bad = 0;
	for (int i = 0; rank == size - 1 && i < n; i++)
		bad += r[i] != (double)size * (size + 1) / 2 * (i % 1024);
	CHECK(!bad, "Reduce of %d doubles: %d wrong", n, bad);

	OK(MPI_Allreduce(d, r, n, MPI_DOUBLE, op_first, comm));
	bad = 0;
	for (int i = 0; i < n; i++)
		bad += r[i] != (double)size * (i % 1024);
	CHECK(!bad, "Allreduce of %d doubles, non-commutative op: %d wrong", n, bad);

	/* every other int of a 2n vector: a packed image each way */
	MPI_Datatype vec;
	OK(MPI_Type_vector(n, 1, 2, MPI_INT, &vec));
	OK(MPI_Type_commit(&vec));
	int *vs = malloc(sizeof(int) * 2 * (size_t)n), *vr = malloc(sizeof(int) * 2 * (size_t)n);
	for (int i = 0; i < 2 * n; i++) {
		vs[i] = i & 1 ? -1 : rank + i;
		vr[i] = -7;
	}
	OK(MPI_Allreduce(vs, vr, 1, vec, MPI_SUM, comm));
	bad = 0;
	for (int i = 0; i < 2 * n; i++)
		bad += vr[i] != (i & 1 ? -7 : size * (size - 1) / 2 + size * i);
	CHECK(!bad, "Allreduce of a vector type, %d ints: %d wrong", n, bad);
	OK(MPI_Type_free(&vec));
	free(vs);
	free(vr);
	free(sa);
	free(ra);
	free(d);
	free(r);
}

/* The same sum twice, with other collectives (other temporaries) between:
 * the same bits. */
static void same_bits(MPI_Comm comm, int n, MPI_Op op_first)
{
	int rank;
	MPI_Comm_rank(comm, &rank);
	double *d = malloc(sizeof(double) * (size_t)n), *a = malloc(sizeof(double) * (size_t)n),
	       *b = malloc(sizeof(double) * (size_t)n);
	for (int i = 0; i < n; i++)
		d[i] = 1.0 / (1 + rank + i % 977) + 1e-9 * i;
	OK(MPI_Allreduce(d, a, n, MPI_DOUBLE, MPI_SUM, comm));
	round_of(comm, n / 3 + 1, op_first);
	OK(MPI_Allreduce(d, b, n, MPI_DOUBLE, MPI_SUM, comm));
	CHECK(!memcmp(a, b, sizeof(double) * (size_t)n), "Allreduce of %d doubles: other bits the second time", n);
	/* and the same bits on every rank (short vectors take recursive
	 * doubling without a schedule: still one order of additions) */
	int size;
	MPI_Comm_size(comm, &size);
	double *all = malloc(sizeof(double) * (size_t)n * (size_t)size);
	OK(MPI_Allgather(a, n, MPI_DOUBLE, all, n, MPI_DOUBLE, comm));
	for (int j = 0; j < size; j++)
		CHECK(!memcmp(all + (size_t)j * (size_t)n, a, sizeof(double) * (size_t)n),
		      "Allreduce of %d doubles: rank %d has other bits", n, j);
	free(all);
	free(d);
	free(a);
	free(b);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	MPI_Op op_first;
	OK(MPI_Op_create(first, 0, &op_first));
	MPI_Comm dup;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	/* up and down in size, on two communicators in turn */
	static const int sizes[] = { 1, 300, 65536, 16, 262144, 1024, 65536, 3, 8, 32 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		round_of(MPI_COMM_WORLD, sizes[k], op_first);
		round_of(dup, sizes[k], op_first);
		same_bits(k & 1 ? dup : MPI_COMM_WORLD, sizes[k] * 2, op_first);
	}

	/* steady state: 1 MiB temporaries on every call, no page faults for
	 * them (a malloc'd MiB would be 256 of them per call) */
	enum { CALLS = 40, N = 1 << 18 };
	int *s = calloc((size_t)N, sizeof(int)), *r = calloc((size_t)N, sizeof(int));
	double *d = calloc((size_t)N / 2, sizeof(double)), *e = calloc((size_t)N / 2, sizeof(double));
	int per = N / t_size;
	OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, per, MPI_INT, dup));
	OK(MPI_Reduce(d, e, N / 2, MPI_DOUBLE, MPI_SUM, 0, dup));
	long f0 = minflt();
	for (int i = 0; i < CALLS; i++) {
		OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, per, MPI_INT, dup));
		OK(MPI_Reduce(d, e, N / 2, MPI_DOUBLE, MPI_SUM, 0, dup));
	}
	long faults = minflt() - f0;
	CHECK(faults < CALLS * 16, "%d calls with 1 MiB temporaries took %ld page faults", 2 * CALLS, faults);

#ifdef __GLIBC__
	/* a communicator's cached MiB is given back when it is freed (bytes
	 * in use, from the heap or mapped: glibc's mmap threshold moves);
	 * a contiguous sendbuf takes none */
	MPI_Comm big;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &big));
	struct mallinfo2 m0 = mallinfo2();
	OK(MPI_Alltoall(s, per, MPI_INT, r, per, MPI_INT, big));
	struct mallinfo2 mc = mallinfo2();
	size_t uc = mc.uordblks + mc.hblkhd;
	OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, per, MPI_INT, big));
	struct mallinfo2 m1 = mallinfo2();
	OK(MPI_Comm_free(&big));
	struct mallinfo2 m2 = mallinfo2();
	size_t u0 = m0.uordblks + m0.hblkhd, u1 = m1.uordblks + m1.hblkhd, u2 = m2.uordblks + m2.hblkhd;
	size_t img = (size_t)per * (size_t)t_size * sizeof(int); /* the packed input: per ints a block */
	CHECK(uc < u0 + img, "Alltoall of a contiguous sendbuf copied it (%zu -> %zu bytes in use)",
	      u0, uc);
	CHECK(u1 >= u0 + img, "Alltoall in place kept no buffer (%zu -> %zu bytes in use)", u0, u1);
	CHECK(u2 + img <= u1, "Comm_free kept its buffer (%zu -> %zu bytes in use)", u1, u2);

	/* Ialltoallv and Iallgatherv of blocks back to back hold no copy of
	 * either side while under way (they once packed sendbuf into one
	 * temporary and received into another); blocks laid out backwards
	 * take temporaries, kept for the next call (one malloc'd per call
	 * faulted its pages in every time) */
	int g = per / t_size, *cnt = malloc(sizeof(int) * 5 * (size_t)t_size), *fwd = cnt + t_size,
	    *rev = fwd + t_size, *one = rev + t_size, *gfwd = one + t_size;
	for (int j = 0; j < t_size; j++) {
		cnt[j] = per;
		fwd[j] = j * per;
		rev[j] = (t_size - 1 - j) * per;
		one[j] = g;
		gfwd[j] = j * g;
	}
	size_t used[3];
	for (int k = 0; k < 3; k++) {
		MPI_Request rq;
		struct mallinfo2 a = mallinfo2();
		if (k == 0)
			OK(MPI_Ialltoallv(s, cnt, fwd, MPI_INT, r, cnt, fwd, MPI_INT, MPI_COMM_WORLD, &rq));
		else if (k == 1)
			OK(MPI_Iallgatherv(s, g, MPI_INT, r, one, gfwd, MPI_INT, MPI_COMM_WORLD, &rq));
		else
			OK(MPI_Ialltoallv(s, cnt, rev, MPI_INT, r, cnt, rev, MPI_INT, MPI_COMM_WORLD, &rq));
		struct mallinfo2 b = mallinfo2();
		OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
		struct mallinfo2 w = mallinfo2();
		/* while under way, then (reversed) kept after */
		used[k] = (k < 2 ? b.uordblks + b.hblkhd : w.uordblks + w.hblkhd) - (a.uordblks + a.hblkhd);
	}
	size_t gimg = (size_t)g * (size_t)t_size * sizeof(int);
	CHECK(used[0] < img / 2, "Ialltoallv of packed blocks took %zu bytes (%zu a side)", used[0], img);
	CHECK(used[1] < gimg / 2, "Iallgatherv of packed blocks took %zu bytes (%zu received)", used[1], gimg);
	CHECK(t_size == 1 || used[2] >= 2 * img, "Ialltoallv of reversed blocks kept %zu bytes (%zu a side)", used[2],
	      img);
#else
	int *cnt = malloc(sizeof(int) * 2 * (size_t)t_size), *rev = cnt + t_size;
	for (int j = 0; j < t_size; j++) {
		cnt[j] = per;
		rev[j] = (t_size - 1 - j) * per;
	}
#endif
	MPI_Request wq; /* warm: the pool's buffers in place */
	OK(MPI_Ialltoallv(s, cnt, rev, MPI_INT, r, cnt, rev, MPI_INT, MPI_COMM_WORLD, &wq));
	OK(MPI_Wait(&wq, MPI_STATUS_IGNORE));
	long g0 = minflt();
	for (int i = 0; i < CALLS; i++) {
		MPI_Request rq;
		OK(MPI_Ialltoallv(s, cnt, rev, MPI_INT, r, cnt, rev, MPI_INT, MPI_COMM_WORLD, &rq));
		OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	}
	faults = minflt() - g0;
	CHECK(faults < CALLS * 16, "%d Ialltoallv calls with 1 MiB temporaries took %ld page faults", CALLS, faults);
	free(cnt);
	free(s);
	free(r);
	free(d);
	free(e);
	OK(MPI_Comm_free(&dup));
	OK(MPI_Op_free(&op_first));
	return t_finish("mpi_collbuf");
}
