/*
 * mpi_allreduce: MPI_Allreduce (double, sum) time per call, 8 B - 1 MiB,
 * plain MPI for any implementation. Prints "allreduce <bytes> <median us>
 * <min> <max>" (medians over trials of the slowest rank's mean), and first
 * "gamma 0 <ns per byte>": what adding a vector of doubles into another
 * costs here, by MPI_Reduce_local of 1 MiB (the reduction term of the
 * cost model; bench/mpi_bench.sh feeds it to ptltool coll), and "gamma
 * <bytes> ..." the same at 4, 32 and 256 KiB, "overhead 8 <us>": the CPU time one 8-byte message costs a
 * rank (LogP's o, the mean of the send and the receive side, between ranks
 * 0 and 1), "post 8 <us>": what posting a receive costs before its message
 * came, "pingpong 8 <us>": half an 8-byte round trip between ranks 0
 * and 1 (alpha + 2 o, in the same process as the rows it calibrates),
 * "pingpong 20480" and "pingpong 122880": the same above the eager limit
 * and above what shm carries inline (16 KiB and a header: nal.h's
 * NAL_HDR_ROOM), each copied whole by one CMA call (or moved through the
 * segment where shm picks that) from a buffer the other core wrote last,
 * as a collective's steps copy (the rendezvous: one core's copy rate and
 * its fixed cost), "pingpong 131072" and "pingpong 1048576":
 * split CMA copies or moves through the segment, as shm picked them
 * (PTL_SHM_BULK_REPORT=1 says which; CMA splits from 64 KiB), and
 * "barrier 0 <us>": an MPI_Barrier, which carries no data, so
 * beside the ping-pong it gives the per-call cost of a collective; "bcast
 * <bytes> <us>" at 8 B and 1 MiB: the rate at which a collective moves
 * bytes (one transfer on 2 ranks, no reduction), and per
 * size "self <bytes> <us>": MPI_Allreduce on MPI_COMM_SELF, the part of the
 * call before any schedule runs (the checks) and, one rank's result being
 * its input, a copy of the input into the output, which ptl's schedules on
 * more ranks no longer make (they read sendbuf where it is, every
 * algorithm).
 *   ptlrun -n 2 bench/mpi_allreduce [trials]
 *   ptlrun -n 4 bench/mpi_allreduce [trials] 131072,1048576
 *   ptlrun -n 2 bench/mpi_allreduce [trials] rows
 *   ptlrun -n 2 bench/mpi_allreduce [trials] rows ring,ring_bidir:2,tree
 * The second form times only the allreduce rows of the sizes listed (bytes,
 * multiples of 8): a short A/B run at the sizes a change is about. The
 * third all but the ping-pongs above 8 B and the 1 MiB bcast, whose moves
 * go through shm's bulk path: bench/mpi_bench.sh's launches of one
 * algorithm each, so that what shm's chooser picked there
 * (PTL_SHM_BULK_REPORT, counted over the process) describes the rows'
 * own moves (a 2-rank 256 KiB allreduce's two 128 KiB reads share their
 * size class with the 128 KiB ping-pong, whose moves were most of the
 * class's count). The small figures stay: the model takes each one's
 * best trial of all launches, and one launch that another tenant slowed
 * (8-byte half round trip 1.04 us against 0.14) would be all it has. The
 * fourth: the third with each allreduce row timed per algorithm named
 * (ALGO[:PORTS]: ptl's communicator hints ptl_coll_algo "allreduce=ALGO"
 * and ptl_coll_ports), their trials in turns, each row printed as "ALGO
 * allreduce <bytes> ...": every algorithm in the same launches; on 2
 * ranks "pingpong 1024" and "pingpong 8192" too, and beside each row, in
 * its turns, exchanges by the collectives' path (row_call): on 2 ranks
 * from 4 KiB "ringsteps <bytes>" and "allgather <bytes>" of half the
 * vector each way (struct xchg says how they differ), from 32 KiB
 * "allgather <bytes>" of all of it; on 4 ranks from 4 KiB "allgather
 * <bytes>", the ring's MPI_Allgather of a quarter of the vector each,
 * and at 32 KiB of half of it too.
 * After each allreduce row, "[ALGO ]switches <bytes> <per rank per call>":
 * the context switches (getrusage: voluntary and involuntary, of every
 * thread: a progress thread's switch takes the core from the ranks as
 * much as a rank's) its timed calls cost a rank, the mean of the ranks.
 * Where ranks outnumber cores the cost model (collectives/coll_cost.c,
 * bound cores) counts its own, each a switch_cost: bench/mpi_bench.sh
 * prints the two side by side, per core.
 * A row's trial (each entry's, in its turn) with any rank's core slow
 * right before or after it is run again, as mpi_pingpong's trials are
 * (bench_slow.h; PTL_BENCH_SLOW), where the ranks do not outnumber the
 * online CPUs; the last line, "slowrows <trials run again> <kept slow>
 * <trials>", counts them. The figures besides the rows take no probes.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_slow.h"

#define GAMMA_PASS (1u << 17) /* doubles */

/* Best of a few passes of the implementation's own sum of n doubles into
 * n (MPI_Reduce_local), in ns per byte: the loop the rows' reductions
 * run. Not a loop of ours: inlined with its length known, the compiler
 * builds it its own way (vectorized at -O2 while ptl's were still
 * scalar: 0.016-0.021 against 0.030-0.034 ns/B, half the time). */
static double gamma_ns(double *in, double *out, size_t n)
{
	double best = 1e30;
	/* a pass of at least 1 MiB of sums: a 4 KiB one alone is ~0.1 us */
	size_t reps = n >= GAMMA_PASS ? 1 : GAMMA_PASS / n;
	for (int pass = 0; pass < 8; pass++) {
		double t0 = MPI_Wtime();
		for (size_t r = 0; r < reps; r++)
			MPI_Reduce_local(in, out, (int)n, MPI_DOUBLE, MPI_SUM);
		double t = (MPI_Wtime() - t0) * 1e9 / (double)(reps * n * sizeof(double));
		if (t < best)
			best = t;
	}
	return best;
}

/* The core's clock first: the gamma passes come first in the process,
 * and a core that had been idle runs slow for its first milliseconds.
 * Without this, 1 MiB read 0.038-0.041 ns/B (0.042 at 4 KiB) where the
 * same process after 10 ms or more of sums read 0.030 (0.023), and the
 * 2-rank 1 MiB ring's own reductions of 512 KiB, timed inside ptl's
 * MPI_Allreduce, 0.028-0.031 (Zen 3 guest, 2026-12-05): every 2-rank
 * 1 MiB row the model predicted was 1.09-1.19x over the measured one.
 * WARM_S of sums, whatever the implementation. */
#define WARM_S 0.05
static void warm_core(double *in, double *out, size_t n)
{
	double t0 = MPI_Wtime();
	while (MPI_Wtime() - t0 < WARM_S)
		MPI_Reduce_local(in, out, (int)n, MPI_DOUBLE, MPI_SUM);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* o, in us, median of 9 passes. Receive side: rank 1 sends OV_MSGS
 * messages, and once a barrier says they are there rank 0 times receiving
 * them. Send side: rank 1 posts its receives first, and rank 0 times
 * sending them and completing the sends. Neither side waits on the wire, so
 * what is timed is the software's cost per message. *post: rank 1's time
 * to post one of those receives before anything came (an implementation
 * that matches in hardware or lazily may do little there), the median. */
static double overhead_us(int rank, double *post)
{
	enum { OV_MSGS = 64, OV_PASSES = 9 };
	double buf[OV_MSGS] = { 0 }, v[OV_PASSES], pv[OV_PASSES];
	MPI_Request rq[OV_MSGS];
	/* A real array: MPICH's MPI_STATUSES_IGNORE is (MPI_Status *)1, which gcc
	 * takes for a zero-sized region and warns about. */
	MPI_Status st[OV_MSGS];
	for (int pass = 0; pass < OV_PASSES; pass++) {
		double ts = 0, tr = 0, tp = 0;
		if (rank == 1)
			for (int k = 0; k < OV_MSGS; k++)
				MPI_Send(&buf[k], 1, MPI_DOUBLE, 0, k, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			double t0 = MPI_Wtime();
			for (int k = 0; k < OV_MSGS; k++)
				MPI_Recv(&buf[k], 1, MPI_DOUBLE, 1, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			tr = MPI_Wtime() - t0;
		}
		if (rank == 1) {
			double t0 = MPI_Wtime();
			for (int k = 0; k < OV_MSGS; k++)
				MPI_Irecv(&buf[k], 1, MPI_DOUBLE, 0, k, MPI_COMM_WORLD, &rq[k]);
			tp = MPI_Wtime() - t0;
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			double t0 = MPI_Wtime();
			for (int k = 0; k < OV_MSGS; k++)
				MPI_Isend(&buf[k], 1, MPI_DOUBLE, 1, k, MPI_COMM_WORLD, &rq[k]);
			MPI_Waitall(OV_MSGS, rq, st);
			ts = MPI_Wtime() - t0;
		}
		if (rank == 1)
			MPI_Waitall(OV_MSGS, rq, st);
		MPI_Bcast(&tp, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
		v[pass] = (ts + tr) / 2 / OV_MSGS * 1e6;
		pv[pass] = tp / OV_MSGS * 1e6;
	}
	qsort(v, OV_PASSES, sizeof *v, cmp_double);
	qsort(pv, OV_PASSES, sizeof *pv, cmp_double);
	*post = pv[OV_PASSES / 2];
	return v[OV_PASSES / 2];
}

/* The sends are nonblocking, as a collective schedule's are: ptl's MPI
 * sends a blocking MPI_Send eagerly further (up to 64 KiB) than the
 * rendezvous this calibrates. */
static void round_trip(int rank, double *b, size_t n)
{
	MPI_Request rq;
	if (rank == 0) {
		MPI_Isend(b, (int)n, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		MPI_Recv(b, (int)n, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (rank == 1) {
		MPI_Recv(b, (int)n, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Isend(b, (int)n, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
	}
}

/* Half a round trip of n doubles between ranks 0 and 1, us, per trial,
 * sorted (the other ranks wait in the barrier). As bench/mpi_pingpong.c
 * does: 100 round trips before the barrier, then many: right after a wait
 * a round trip is slower for a while (2000 of them gave 0.6-2 us at 8 B
 * where mpi_pingpong gives 0.33). */
static void pingpong_us(int rank, int trials, double *b, size_t n, double *v)
{
	int iters = n <= 1 ? 20000 : n <= 8192 ? 2000 : 200;
	for (int t = 0; t < trials; t++) {
		for (int i = 0; i < 100; i++)
			round_trip(rank, b, n);
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			round_trip(rank, b, n);
		v[t] = (MPI_Wtime() - t0) / iters / 2 * 1e6;
	}
	qsort(v, (size_t)trials, sizeof *v, cmp_double);
}

/* MPI_Barrier (n 0) or MPI_Bcast of n doubles, us per call: the slowest
 * rank's mean over iters, per trial, sorted. The bcast's root alternates
 * between ranks 0 and 1, so each call waits for the one before, as an
 * allreduce does (from one root, calls would overlap and time throughput). */
static void coll_us(double *buf, size_t n, int trials, int iters, double *v)
{
	for (int t = 0; t < trials; t++) {
		for (int w = 0; w < 10; w++)
			n ? MPI_Bcast(buf, (int)n, MPI_DOUBLE, w & 1, MPI_COMM_WORLD) : MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime(), slowest;
		for (int i = 0; i < iters; i++)
			n ? MPI_Bcast(buf, (int)n, MPI_DOUBLE, i & 1, MPI_COMM_WORLD) : MPI_Barrier(MPI_COMM_WORLD);
		double dt = (MPI_Wtime() - t0) / iters * 1e6;
		MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		v[t] = slowest;
	}
	qsort(v, (size_t)trials, sizeof *v, cmp_double);
}

/* The communicators the rows run on: MPI_COMM_WORLD, or one duplicate per
 * algorithm named ("rows ALGO[:PORTS],..."), whose hints (ptl's
 * ptl_coll_algo, ptl_coll_ports; other implementations ignore them) make
 * each one's allreduce that algorithm. */
#define MAX_ALGOS 8
static MPI_Comm row_comm[MAX_ALGOS] = { MPI_COMM_WORLD };
static char row_name[MAX_ALGOS][32];
static int row_comms = 1;

/* A duplicate of base with ptl's hints ptl_coll_algo algo and, unless
 * NULL, ptl_coll_ports ports. */
static MPI_Comm hinted(MPI_Comm base, const char *algo, const char *ports)
{
	MPI_Info info;
	MPI_Comm c;
	MPI_Info_create(&info);
	MPI_Info_set(info, "ptl_coll_algo", algo);
	if (ports)
		MPI_Info_set(info, "ptl_coll_ports", ports);
	MPI_Comm_dup_with_info(base, info, &c);
	MPI_Info_free(&info);
	return c;
}

static void row_comms_make(const char *list, int rank)
{
	row_comms = 0;
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ",");
		if (!l) {
			p++;
			continue;
		}
		if (row_comms == MAX_ALGOS) {
			if (rank == 0)
				fprintf(stderr, "mpi_allreduce: more than %d algorithms: '%s' left out\n", MAX_ALGOS, p);
			break;
		}
		char *name = row_name[row_comms], *ports, v[64];
		snprintf(name, sizeof row_name[0], "%.*s", (int)l, p);
		p += l + (p[l] == ',');
		if ((ports = strchr(name, ':')))
			*ports++ = 0;
		snprintf(v, sizeof v, "allreduce=%s", name);
		row_comm[row_comms++] = hinted(MPI_COMM_WORLD, v, ports);
	}
	if (!row_comms) { /* no name in the list: MPI_COMM_WORLD's rows */
		row_comm[0] = MPI_COMM_WORLD;
		row_comms = 1;
	}
}

/* With algorithms named, on 2 or 4 ranks: a duplicate whose hint makes
 * MPI_Allgather the ring (ptl's ptl_coll_algo), for the exchanges timed
 * beside the rows (MPI_COMM_NULL: none), and on 2 ranks x_swap, the same
 * with the two ranks' places swapped. */
static MPI_Comm x_comm = MPI_COMM_NULL, x_swap = MPI_COMM_NULL;

/* The entries past a row's communicators: exchanges, MPI_Allgather in
 * place of X bytes each way, on 2 ranks one exchange each way through the
 * collectives' path (a 2-rank allreduce's step less the reduction). Why
 * two kinds: an exchange reads what the peer's core last wrote, or lines
 * the reader's own cache kept from the last time it read them, and
 * these differ (a 512 KiB exchange 66-72 us against 49-51 back to back
 * on the same data, 2026-12-02). The 2-rank ring (halving-doubling and
 * the tree expand to the same schedule) makes one of each: its first
 * step reads the peer's input, unchanged since the call before, its
 * second the half the peer has just reduced. X_TURNS, "ringsteps X":
 * calls i with i & 2 on x_swap, the others on x_comm, so that the two
 * kinds take turns, a peer's block read again unchanged (x_comm's
 * second), then one the peer wrote (x_swap's first: its block is now
 * the other one, which it received in the call before); timed in runs
 * of 4 calls. X_SAME, "allgather X": always x_comm, every read of data
 * the reader read the call before (recursive doubling's one exchange of
 * the peer's input; on 4 ranks the ring's blocks, and at 32 KiB the
 * halves of halving-doubling's first step and of the tree's). */
enum { X_TURNS, X_SAME };
struct xchg {
	int kind;
	size_t bytes;
};

/* The communicator a row's entry k reports its time on (an X_TURNS
 * exchange runs on x_swap too: the same ranks). */
static MPI_Comm row_entry_comm(int k)
{
	return k < row_comms ? row_comm[k] : x_comm;
}

/* This process's context switches so far, voluntary and involuntary
 * (a rank waiting on shared cores yields: involuntary ones) */
static long ctx_switches(void)
{
	struct rusage u;
	return getrusage(RUSAGE_SELF, &u) ? 0 : u.ru_nvcsw + u.ru_nivcsw;
}

/* Call i of entry k of a row: the allreduce of n doubles on row_comm[k],
 * or past them the exchange xs[k - row_comms]. */
static void row_call(int k, int i, double *in, double *out, size_t n, const struct xchg *xs)
{
	if (k < row_comms) {
		MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, row_comm[k]);
		return;
	}
	const struct xchg *x = &xs[k - row_comms];
	MPI_Comm c = x->kind == X_TURNS && (i & 2) ? x_swap : x_comm;
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, (int)x->bytes, MPI_BYTE, c);
}

/* One allreduce row: n doubles, MPI_SUM; prints "self" (MPI_COMM_SELF, the
 * call's part before any schedule) and per communicator "allreduce" (the
 * slowest rank's mean per call, median [min max] over trials) and
 * "switches" (the ranks' mean context switches a call), after the
 * algorithm's name where there are several. Their trials take turns, in
 * an order that turns too, so that each algorithm's are timed in the
 * same stretch of the launch as the others' (a launch's speed differs
 * from the next one's by 2x on some hosts: one algorithm's launches alone
 * and another's could differ by that for the same schedule). With
 * x_comm, the exchanges (the file's header comment) take their turns
 * too: the rows' messages timed in the same stretch as the rows. */
static void allreduce_row(int rank, int trials, double *in, double *out, size_t n)
{
	/* calls before each timed run: whole turns of an X_TURNS exchange */
	enum { WARM = 12 };
	struct xchg xs[3];
	int nx = 0, xsize = 0;
	if (x_comm != MPI_COMM_NULL)
		MPI_Comm_size(x_comm, &xsize);
	/* 4 ranks: the ring's allgather of the row's blocks (a quarter of
	 * the vector each), the 4-rank ring's second half: its steps'
	 * messages timed in the rows' turns (from the 4 KiB row: 1 KiB
	 * blocks, eager, up to 256 KiB blocks by rendezvous) */
	if (xsize == 4 && n * sizeof(double) >= 4096)
		xs[nx++] = (struct xchg){ X_SAME, n * sizeof(double) / 4 };
	/* and at 32 KiB a half of the vector each: the messages of the
	 * 32 KiB rows' halving-doubling (its first step) and tree (its two
	 * trees of halves) */
	if (xsize == 4 && n * sizeof(double) == 32768)
		xs[nx++] = (struct xchg){ X_SAME, n * sizeof(double) / 2 };
	if (xsize == 2 && n * sizeof(double) >= 4096) {
		xs[nx++] = (struct xchg){ X_TURNS, n * sizeof(double) / 2 };
		xs[nx++] = (struct xchg){ X_SAME, n * sizeof(double) / 2 };
	}
	if (xsize == 2 && n * sizeof(double) >= 32768)
		xs[nx++] = (struct xchg){ X_SAME, n * sizeof(double) };
	int ne = row_comms + nx;
	double v[MAX_ALGOS + 3][100];
	int iters[MAX_ALGOS + 3];
	/* the allreduce entries' context switches and timed calls, all trials */
	long sw[MAX_ALGOS] = { 0 }, swcalls[MAX_ALGOS] = { 0 };
	for (int k = 0; k < ne; k++) {
		MPI_Comm c = row_entry_comm(k);
		iters[k] = n <= 128 ? 2000 : n <= 8192 ? 200 : 20;
		/* At most about 0.2 s a trial: an implementation that spins
		 * on oversubscribed cores takes milliseconds a call. */
		double tw = MPI_Wtime(), slow;
		for (int w = 0; w < WARM; w++)
			row_call(k, w, in, out, n, xs);
		tw = (MPI_Wtime() - tw) / WARM;
		MPI_Allreduce(&tw, &slow, 1, MPI_DOUBLE, MPI_MAX, c);
		if (slow * iters[k] > 0.2)
			iters[k] = slow > 0.2 / 5 ? 5 : (int)(0.2 / slow);
		/* whole turns of an X_TURNS exchange's two kinds */
		if (k >= row_comms && xs[k - row_comms].kind == X_TURNS)
			iters[k] = (iters[k] + 3) / 4 * 4;
	}
	for (int t = 0; t < trials; t++) {
		double t0 = MPI_Wtime();
		for (int i = 0; i < iters[0]; i++)
			MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
		v[0][t] = (MPI_Wtime() - t0) / iters[0] * 1e6;
	}
	qsort(v[0], (size_t)trials, sizeof v[0][0], cmp_double);
	if (rank == 0)
		printf("self %zu %.3f %.3f %.3f\n", n * sizeof(double), v[0][trials / 2], v[0][0], v[0][trials - 1]);
	for (int t = 0; t < trials; t++) {
		for (int j = 0; j < ne; j++) {
			int k = (t + j) % ne;
			MPI_Comm c = row_entry_comm(k);
			for (int w = 0; w < WARM && (t > 0 || ne > 1); w++)
				row_call(k, w, in, out, n, xs);
			int slow = trial_begin();
			MPI_Barrier(c);
			long s0 = ctx_switches();
			double t0 = MPI_Wtime();
			for (int i = 0; i < iters[k]; i++)
				row_call(k, i, in, out, n, xs);
			double dt = (MPI_Wtime() - t0) / iters[k] * 1e6, slowest;
			long s1 = ctx_switches();
			MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, c);
			/* the entry's trial again, in the same turn (bench_slow.h) */
			if (trial_again(slow)) {
				j--;
				continue;
			}
			if (k < row_comms) {
				sw[k] += s1 - s0;
				swcalls[k] += iters[k];
			}
			v[k][t] = slowest;
		}
	}
	for (int k = 0; k < ne; k++) {
		long swsum = 0;
		int csize = 1;
		if (k < row_comms) {
			MPI_Allreduce(&sw[k], &swsum, 1, MPI_LONG, MPI_SUM, row_comm[k]);
			MPI_Comm_size(row_comm[k], &csize);
		}
		qsort(v[k], (size_t)trials, sizeof v[k][0], cmp_double);
		if (rank != 0)
			continue;
		if (k < row_comms) {
			printf("%s%sallreduce %zu %.3f %.3f %.3f\n", row_name[k], row_name[k][0] ? " " : "",
			       n * sizeof(double), v[k][trials / 2], v[k][0], v[k][trials - 1]);
			printf("%s%sswitches %zu %.3f\n", row_name[k], row_name[k][0] ? " " : "", n * sizeof(double),
			       swcalls[k] ? (double)swsum / csize / (double)swcalls[k] : 0.0);
		} else {
			printf("%s %zu %.3f %.3f %.3f\n", xs[k - row_comms].kind == X_TURNS ? "ringsteps" : "allgather",
			       xs[k - row_comms].bytes, v[k][trials / 2], v[k][0], v[k][trials - 1]);
		}
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, trials = argc > 1 ? atoi(argv[1]) : 5;
	if (trials < 1 || trials > 100)
		trials = 5;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	slow_init(size > sysconf(_SC_NPROCESSORS_ONLN));
	size_t max = 1 << 17; /* doubles: 1 MiB */
	/* out twice the rows' largest: a 2-rank allgather of 1 MiB each */
	double *in = calloc(max, sizeof(double)), *out = calloc(2 * max, sizeof(double)), v[100];
	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 1);
	/* written, as a program's data is: pages calloc never touched all map
	 * the one zero page, whose lines every read finds in cache */
	for (size_t i = 0; i < max; i++)
		in[i] = rank + 1.0 / (double)(i % 7 + 1);
	const char *only = argc > 2 ? argv[2] : NULL;
	if (only && only[0] >= '0' && only[0] <= '9') {
		/* the rows listed alone */
		for (const char *p = only; *p;) {
			char *e;
			size_t b = strtoul(p, &e, 10);
			if (b >= sizeof(double) && b / sizeof(double) <= max)
				allreduce_row(rank, trials, in, out, b / sizeof(double));
			for (p = e; *p && !strchr("0123456789", *p); p++)
				;
		}
		slow_report(rank, "slowrows");
		free(in);
		free(out);
		MPI_Finalize();
		return 0;
	}
	bool rows = only && strcmp(only, "rows") == 0;
	if (rows && argc > 3)
		row_comms_make(argv[3], rank);
	warm_core(in, out, max);
	double g = gamma_ns(in, out, max);
	if (rank == 0)
		printf("gamma 0 %.4f %.4f %.4f\n", g, g, g);
	/* and at the rows' sizes from 4 KiB, whose vectors stay in a cache
	 * that 1 MiB's do not (Zen 3 guest, 512 KiB L2, the core warm: 0.023
	 * ns/B at 4 KiB against 0.030 at 1 MiB): "gamma <bytes>" */
	for (size_t b = 4096; b < max * sizeof(double); b *= 8) {
		g = gamma_ns(in, out, b / sizeof(double));
		if (rank == 0)
			printf("gamma %zu %.4f %.4f %.4f\n", b, g, g, g);
	}
	if (size >= 2) {
		double post, o = overhead_us(rank, &post);
		if (rank == 0)
			printf("overhead 8 %.4f %.4f %.4f\npost 8 %.4f %.4f %.4f\n", o, o, o, post, post, post);
		/* 8 B; 20 KiB and 120 KiB: rendezvous copied whole by CMA
		 * (above what shm carries inline, below its split), whose
		 * slope is one core's copy rate and whose intercept the
		 * rendezvous' own cost; 128 KiB and 1 MiB: split CMA copies
		 * or moves through the segment, as shm picked them (a
		 * split's cost beyond its bytes, or the move rate). One buffer per
		 * rank, sent from and received into: its lines move between
		 * the cores each round trip, as a collective's do (a send
		 * from a buffer only ever read copied twice as fast). */
		/* "rows": 8 B alone, and with algorithms named on 2 ranks
		 * 1 KiB and 8 KiB too (eager: the rate of their copies) */
		static const size_t pp[] = { 1, 2560, 15360, 16384, 1 << 17 }, pp_rows[] = { 1, 128, 1024 };
		const size_t *ps = rows ? pp_rows : pp;
		size_t nps = !rows ? sizeof pp / sizeof pp[0] : row_comm[0] != MPI_COMM_WORLD && size == 2 ? 3 : 1;
		for (size_t i = 0; i < nps; i++) {
			pingpong_us(rank, trials, out, ps[i], v);
			if (rank == 0)
				printf("pingpong %zu %.3f %.3f %.3f\n", ps[i] * sizeof(double), v[trials / 2], v[0],
				       v[trials - 1]);
		}
	}
	/* 2000 barriers are 2 ms uncontended; on shared cores an implementation
	 * that sleeps takes ms each, so the count comes from a first look */
	double tb = MPI_Wtime(), slowb;
	for (int w = 0; w < 10; w++)
		MPI_Barrier(MPI_COMM_WORLD);
	tb = (MPI_Wtime() - tb) / 10;
	MPI_Allreduce(&tb, &slowb, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	int biters = slowb * 2000 > 0.2 ? (slowb > 0.2 / 5 ? 5 : (int)(0.2 / slowb)) : 2000;
	coll_us(out, 0, trials, biters, v);
	if (rank == 0)
		printf("barrier 0 %.3f %.3f %.3f\n", v[trials / 2], v[0], v[trials - 1]);
	for (size_t n = 1; n <= (rows ? 1 : max); n *= max) {
		coll_us(out, n, trials, n == 1 ? biters : biters > 20 ? 20 : biters, v);
		if (rank == 0)
			printf("bcast %zu %.3f %.3f %.3f\n", n * sizeof(double), v[trials / 2], v[0], v[trials - 1]);
	}
	/* rows with algorithms named, 2 or 4 ranks: the exchanges of the
	 * rows' messages come with the rows (x_comm) */
	if (rows && row_comm[0] != MPI_COMM_WORLD && (size == 2 || size == 4))
		x_comm = hinted(MPI_COMM_WORLD, "allgather=ring", NULL);
	if (x_comm != MPI_COMM_NULL && size == 2) {
		MPI_Comm swapped;
		MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &swapped);
		x_swap = hinted(swapped, "allgather=ring", NULL);
		MPI_Comm_free(&swapped);
	}
	/* 8 B, x8 up to 256 KiB, then 1 MiB */
	for (size_t n = 1; n <= max; n = n < max && n * 8 > max ? max : n * 8)
		allreduce_row(rank, trials, in, out, n);
	for (int k = 0; k < row_comms; k++)
		if (row_comm[k] != MPI_COMM_WORLD)
			MPI_Comm_free(&row_comm[k]);
	if (x_comm != MPI_COMM_NULL)
		MPI_Comm_free(&x_comm);
	if (x_swap != MPI_COMM_NULL)
		MPI_Comm_free(&x_swap);
	slow_report(rank, "slowrows");
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
