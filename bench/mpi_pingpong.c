/*
 * mpi_pingpong: the same figures as ptl_pingpong, with plain MPI, to be
 * built against the system's MPICH or Open MPI (bench/pingpong.sh does).
 * Output lines: "lat <bytes> <median us> <min> <max>", "bw <bytes> <GB/s> ...".
 *
 * mpi_pingpong TRIALS ux [N]: instead, the 8-byte half round trip with 0
 * and N (default 20000) unexpected messages of another tag queued at each
 * rank, which a receive must not have to walk past: "uxlat <queued> ..."
 * (MPI_Recv) and "uxpost <queued> ..." (MPI_Irecv posted before the
 * send, then MPI_Wait); then the 8-byte nonblocking exchange ("nbx 8",
 * below) and what a call that finds nothing costs, in ns ("testany 0",
 * "test 0", "iprobe 0": poll_rows).
 *
 * mpi_pingpong TRIALS sizes SIZE...: only the rows of the sizes named
 * ("4096": latency, "b4096": bandwidth), each trial short (1,000 round
 * trips, 10 windows), for A/B runs on a shared machine: many short trials
 * make the best and the median less hostage to other tenants' time
 * slices than a few long ones. "f64": a flood, "flood <bytes> <us a
 * message> ...": 200,000 blocking MPI_Sends one way, the receiver's
 * MPI_Recvs behind them (a sender that outruns its receiver). "x64": an
 * exchange, "xch <bytes> <us an exchange> ...": both ranks in
 * MPI_Sendrecv with each other at once, 1,000 a trial. "n64": nonblocking
 * exchanges, "nbx <bytes> <us a message> ...": each rank posts two
 * MPI_Irecv from the other, makes two MPI_Isend to it and an MPI_Waitall
 * (len bytes each; the buffers hold two), 1,000 a trial.
 *
 * Either way the first row comes after unmeasured round trips (warm_up),
 * or exchanges where it is one.
 *
 * A trial with either rank's core slow right before or after it (a probe
 * over PTL_BENCH_SLOW times the process's fastest, default 1.15:
 * bench_speed.h says why; "off": no probes) is run again once both cores
 * read fast, up to SLOW_RETRIES times, SLOW_BUDGET times in a launch
 * (bench_slow.h); the last line, "slow <trials run again> <kept slow>
 * <trials>", counts them.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_bw.h"
#include "bench_clock.h"
#include "bench_slow.h"

#define MAX_LAT (4 * 1024 * 1024)
#define MAX_BW (16 * 1024 * 1024)
#define WINDOW 32

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void report(const char *kind, size_t len, double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	printf("%s %zu %.3f %.3f %.3f\n", kind, len, v[n / 2], v[0], v[n - 1]);
	fflush(stdout);
}

/* Half round trips of 8 bytes with tag 1, with `queued` messages of tag 99
 * sitting unreceived at each rank. */
static void ux_rows(int rank, int trials, int queued)
{
	int peer = 1 - rank, iters = 2000;
	char sb[8] = { 0 }, rb[8];
	double v[1000];
	for (int i = 0; i < queued; i++)
		MPI_Send(sb, 8, MPI_CHAR, peer, 99, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int posted = 0; posted < 2; posted++) {
		for (int t = 0; t < trials; t++) {
			int slow = trial_begin();
			for (int i = -100; i < iters; i++) {
				if (i == 0) {
					MPI_Barrier(MPI_COMM_WORLD);
					v[t] = MPI_Wtime();
				}
				MPI_Request r;
				if (posted)
					MPI_Irecv(rb, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &r);
				if (rank == 0) {
					MPI_Send(sb, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
					if (posted)
						MPI_Wait(&r, MPI_STATUS_IGNORE);
					else
						MPI_Recv(rb, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				} else {
					if (posted)
						MPI_Wait(&r, MPI_STATUS_IGNORE);
					else
						MPI_Recv(rb, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					MPI_Send(sb, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
				}
			}
			v[t] = (MPI_Wtime() - v[t]) * 1e6 / iters / 2;
			if (trial_again(slow))
				t--;
		}
		if (rank == 0)
			report(posted ? "uxpost" : "uxlat", (size_t)queued, v, trials);
	}
	for (int i = 0; i < queued; i++)
		MPI_Recv(rb, 8, MPI_CHAR, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* n round trips of len bytes (rank 0 sends first). */
static void round_trips(int rank, size_t len, int n, char *sbuf, char *rbuf)
{
	int peer = 1 - rank;
	for (int i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(sbuf, (int)len, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(rbuf, (int)len, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, (int)len, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(sbuf, (int)len, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
		}
	}
}

/* n exchanges of len bytes: both ranks in MPI_Sendrecv with each other. */
static void exchanges(int rank, size_t len, int n, char *sbuf, char *rbuf)
{
	int peer = 1 - rank;
	for (int i = 0; i < n; i++)
		MPI_Sendrecv(sbuf, (int)len, MPI_CHAR, peer, 6, rbuf, (int)len, MPI_CHAR, peer, 6, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
}

/* n nonblocking exchanges of len bytes with the peer, each way twice (a
 * halo exchange, HPCC's b_eff ring on 2 ranks): MPI_Irecv, MPI_Irecv,
 * MPI_Isend, MPI_Isend, MPI_Waitall. */
static void nb_exchanges(int rank, size_t len, int n, char *sbuf, char *rbuf)
{
	int peer = 1 - rank;
	MPI_Request q[4];
	MPI_Status st[4]; /* MPI_STATUSES_IGNORE: MPICH's header makes gcc warn */
	for (int i = 0; i < n; i++) {
		MPI_Irecv(rbuf, (int)len, MPI_CHAR, peer, 7, MPI_COMM_WORLD, &q[0]);
		MPI_Irecv(rbuf + len, (int)len, MPI_CHAR, peer, 8, MPI_COMM_WORLD, &q[1]);
		MPI_Isend(sbuf, (int)len, MPI_CHAR, peer, 7, MPI_COMM_WORLD, &q[2]);
		MPI_Isend(sbuf + len, (int)len, MPI_CHAR, peer, 8, MPI_COMM_WORLD, &q[3]);
		MPI_Waitall(4, q, st);
	}
}

/* What a call that finds nothing costs, ns a call (a program polling
 * while it computes, HPCC's RandomAccess): MPI_Testany and MPI_Test of a
 * receive whose message has not come, MPI_Iprobe of a tag nothing has
 * (rows "testany 0", "test 0", "iprobe 0"). Both ranks poll at once. */
static void poll_rows(int rank, int trials)
{
	const char *name[] = { "testany", "test", "iprobe" };
	int peer = 1 - rank, iters = 200000, flag, idx;
	long in = 0, out = 0;
	double v[1000];
	MPI_Request r;
	MPI_Irecv(&in, 1, MPI_LONG, peer, 77, MPI_COMM_WORLD, &r);
	for (int k = 0; k < 3; k++) {
		for (int t = 0; t < trials; t++) {
			int slow = trial_begin();
			MPI_Barrier(MPI_COMM_WORLD);
			v[t] = MPI_Wtime();
			for (int i = 0; i < iters; i++) {
				if (k == 0)
					MPI_Testany(1, &r, &idx, &flag, MPI_STATUS_IGNORE);
				else if (k == 1)
					MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
				else
					MPI_Iprobe(peer, 78, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
			}
			v[t] = (MPI_Wtime() - v[t]) * 1e9 / iters;
			if (trial_again(slow))
				t--;
		}
		if (rank == 0)
			report(name[k], 0, v, trials);
	}
	MPI_Send(&out, 1, MPI_LONG, peer, 77, MPI_COMM_WORLD);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* One row of iters runs of len bytes a trial (round_trips: "lat", us a
 * half round trip, per 2; exchanges: "xch", us an exchange, per 1), each
 * trial after 100 unmeasured ones. */
static void timed_row(const char *name, void (*run)(int, size_t, int, char *, char *), int per, int rank,
		      int trials, size_t len, int iters, char *sbuf, char *rbuf)
{
	double v[1000];
	for (int t = 0; t < trials; t++) {
		int slow = trial_begin();
		run(rank, len, 100, sbuf, rbuf);
		MPI_Barrier(MPI_COMM_WORLD);
		v[t] = MPI_Wtime();
		run(rank, len, iters, sbuf, rbuf);
		v[t] = (MPI_Wtime() - v[t]) * 1e6 / iters / per;
		if (trial_again(slow))
			t--;
	}
	if (rank == 0)
		report(name, len, v, trials);
}

/* Unmeasured round trips before a run's first row, the same for every
 * implementation: the first messages after MPI_Init pay first touches
 * (rings, buffers, entries made on first use) and a core's clock may
 * still be ramping up, so the first row read slow (0 B 1.16x MPICH where
 * 1 B read 1.01x; its first trial 0.39 us against 0.17). 10,000 round
 * trips (a few ms) of the first row's size; later rows have their
 * trials' 100 each. Only that size, so bench/ptl_pingpong_cost.sh's
 * averages per call stay those of the size it names. */
static void warm_up(int rank, size_t first, char *sbuf, char *rbuf)
{
	round_trips(rank, first, 10000, sbuf, rbuf);
}

/* One bandwidth row: rounds windows of WINDOW sends of len bytes per trial. */
static void bw_row(int rank, int trials, size_t len, int rounds, char *sbuf, char *rbuf, int print)
{
	int peer = 1 - rank;
	double v[1000];
	MPI_Request req[WINDOW];
	MPI_Status st[WINDOW];
	for (int t = 0; t < trials; t++) {
		/* an unprinted stream (a warm-up) is neither probed nor counted */
		int slow = print ? trial_begin() : 0;
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (int k = 0; k < rounds; k++) {
			if (rank == 0) {
				for (int w = 0; w < WINDOW; w++)
					MPI_Isend(sbuf, (int)len, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[w]);
				MPI_Waitall(WINDOW, req, st);
				MPI_Recv(rbuf, 0, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				/* One receive buffer, as the ptl benchmark's one MD. */
				for (int w = 0; w < WINDOW; w++)
					MPI_Irecv(rbuf, (int)len, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[w]);
				MPI_Waitall(WINDOW, req, st);
				MPI_Send(sbuf, 0, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
			}
		}
		v[t] = (double)len * WINDOW * rounds / ((MPI_Wtime() - t0) * 1e9);
		if (print && trial_again(slow))
			t--;
	}
	if (rank == 0 && print)
		report("bw", len, v, trials);
}

/* One flood row: msgs blocking sends of len bytes from rank 0, received
 * one by one by rank 1, then a 0-byte answer; us a message at rank 0. */
static void flood_row(int rank, int trials, size_t len, int msgs, char *sbuf, char *rbuf)
{
	int peer = 1 - rank;
	double v[1000];
	for (int t = 0; t < trials; t++) {
		int slow = trial_begin();
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (int i = 0; i < msgs; i++) {
			if (rank == 0)
				MPI_Send(sbuf, (int)len, MPI_CHAR, peer, 4, MPI_COMM_WORLD);
			else
				MPI_Recv(rbuf, (int)len, MPI_CHAR, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		if (rank == 0)
			MPI_Recv(rbuf, 0, MPI_CHAR, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else
			MPI_Send(sbuf, 0, MPI_CHAR, peer, 5, MPI_COMM_WORLD);
		v[t] = (MPI_Wtime() - t0) * 1e6 / msgs;
		if (trial_again(slow))
			t--;
	}
	if (rank == 0)
		report("flood", len, v, trials);
}

static size_t arg_len(const char *a)
{
	size_t len = strtoul(a, NULL, 0);
	return len > MAX_LAT ? MAX_LAT : len;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, trials = argc > 1 ? atoi(argv[1]) : 5;
	if (trials < 1 || trials > 1000)
		trials = 5;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_pingpong: run with exactly 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	slow_init(0);
	if (argc > 2 && strcmp(argv[2], "ux") == 0) {
		int n = argc > 3 ? atoi(argv[3]) : 20000;
		char sb[16] = { 0 }, rb[16];
		ux_rows(rank, trials, 0);
		ux_rows(rank, trials, n > 0 ? n : 20000);
		nb_exchanges(rank, 8, 10000, sb, rb);
		timed_row("nbx", nb_exchanges, 2, rank, trials, 8, 1000, sb, rb);
		poll_rows(rank, trials);
		slow_report(rank, "slow");
		MPI_Finalize();
		return 0;
	}
	char *rbuf = calloc(1, MAX_BW), *sbuf = calloc(1, MAX_BW);
	memset(sbuf, rank + 1, MAX_BW);
	if (argc > 2 && strcmp(argv[2], "sizes") == 0) {
		/* An exchange row first: exchanges of its size before it.
		 * After 0-byte round trips, 5 of 8 launches read 0-byte
		 * exchanges at 0.31 - 0.33 us where the rest read 0.17; after
		 * exchanges, 1 of 8. */
		if (argc > 3 && argv[3][0] == 'x')
			exchanges(rank, arg_len(argv[3] + 1), 10000, sbuf, rbuf);
		else if (argc > 3 && argv[3][0] == 'n')
			nb_exchanges(rank, arg_len(argv[3] + 1), 10000, sbuf, rbuf);
		else if (argc > 3)
			warm_up(rank, argv[3][0] == 'b' ? 0 : arg_len(argv[3]), sbuf, rbuf);
		for (int a = 3; a < argc; a++) {
			size_t len = arg_len(argv[a] + (argv[a][0] == 'b' || argv[a][0] == 'f' || argv[a][0] == 'x' ||
							argv[a][0] == 'n'));
			if (argv[a][0] == 'x')
				timed_row("xch", exchanges, 1, rank, trials, len, 1000, sbuf, rbuf);
			else if (argv[a][0] == 'n')
				timed_row("nbx", nb_exchanges, 2, rank, trials, len, 1000, sbuf, rbuf);
			else if (argv[a][0] == 'f')
				flood_row(rank, trials, len, 200000, sbuf, rbuf);
			else if (argv[a][0] == 'b')
				bw_row(rank, trials, len, 10, sbuf, rbuf, 1);
			else
				timed_row("lat", round_trips, 2, rank, trials, len, 1000, sbuf, rbuf);
		}
	} else {
		warm_up(rank, 0, sbuf, rbuf);
		for (size_t len = 0; len <= MAX_LAT; len = len ? len * 2 : 1) {
			int iters = len <= 4096 ? 20000 : len <= 65536 ? 2000 : 200;
			timed_row("lat", round_trips, 2, rank, trials, len, iters, sbuf, rbuf);
		}
		/* A stream first, unmeasured, as warm_up does for the round trips
		 * (the ~1 ms after a ping-pong phase: bench_bw.h). */
		bw_row(rank, 1, 4096, bench_bw_rounds(4096, WINDOW), sbuf, rbuf, 0);
		for (size_t len = 4096; len <= MAX_BW; len *= 4)
			bw_row(rank, trials, len, bench_bw_rounds(len, WINDOW), sbuf, rbuf, 1);
	}
	slow_report(rank, "slow");
	free(rbuf);
	free(sbuf);
	MPI_Finalize();
	return 0;
}
