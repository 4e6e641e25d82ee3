/*
 * ptl_pingpong: Portals put ping-pong half round trip (0 B - 64 KiB) and
 * streaming put bandwidth (up to 16 MiB) between ranks 0 and 1.
 *
 *   ptlrun -n 2 --bind-to core bench/ptl_pingpong [options] [trials]
 *     --max-lat BYTES  largest latency size (default 65536)
 *     --max-bw BYTES   largest bandwidth size (default 16 MiB; < 4096: none)
 *     --iters N        round trips per latency trial (default 20000, 2000
 *                      above 4 KiB)
 *     --bw-rounds N    windows of 32 puts per bandwidth trial (default
 *                      32 MiB a trial, at least 20 windows up to 64 KiB,
 *                      4 up to 1 MiB, 1 above; and an unmeasured 4 KiB
 *                      stream before the first)
 *     --sizes A,B,..   latency rows of these sizes only (each at most
 *                      --max-lat), e.g. 256..2048 in 128-byte steps to see
 *                      where a copy or layout threshold sits
 *     --per-rtt        also time every round trip on its own (the cycle
 *                      counter, as perftest's ib_*_lat do) and print
 *                      "rtt <bytes> <median us> <min> <max>" over all of
 *                      them: perftest's t_typical is that median, so
 *                      bench/verbs_vm.sh compares like with like; and
 *                      "rttmid <bytes> <us>", the mean of their middle
 *                      half (finer than the median where the counter
 *                      ticks coarsely; both ignore the round trips a
 *                      loaded machine preempts)
 *
 * Prints one line per figure: "lat <bytes> <median us> <min> <max>" (and
 * "mean <bytes> <mean us>" over the trials) and
 * "bw <bytes> <median GB/s> <min> <max>", medians over the trials; bench/
 * pingpong.sh runs it interleaved with MPI and prints ratios.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <portals3.h>
#include <ptl_runtime.h>

#include "bench_bw.h"
#include "bench_clock.h"

#define PT 3
#define BITS 0x5150ull
#define MAX_LAT (64 * 1024)
#define MAX_BW (16 * 1024 * 1024)
#define WINDOW 32

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;
static ptl_handle_md_t send_md;
static ptl_process_id_t peer;

static void check(int rc, const char *what)
{
	if (rc != PTL_OK) {
		fprintf(stderr, "ptl_pingpong: rank %d: %s: %s\n", PtlRtRank(), what, PtlErrorStr((unsigned)rc));
		exit(1);
	}
}

/* A cheap per-round-trip stamp: the cycle counter where there is one (a
 * clock_gettime in a TCG guest is a syscall reading an emulated timer,
 * which would be most of what it times); scaled to us by the trial's
 * clock_gettime span. */
static uint64_t stamp(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* Waits for the next PUT_END on our receive buffer (10 s at most). */
static void wait_put(void)
{
	for (;;) {
		ptl_event_t ev;
		int which;
		int rc = PtlEQPoll(&eq, 1, 10000, &ev, &which);
		if (rc == PTL_EQ_EMPTY) {
			fprintf(stderr, "ptl_pingpong: rank %d: no put from rank %u within 10 s\n",
				PtlRtRank(), peer.pid);
			exit(1);
		}
		if (rc != PTL_OK)
			check(rc, "PtlEQPoll");
		if (ev.type == PTL_EVENT_PUT_END)
			return;
	}
}

static void put(size_t len)
{
	check(PtlPutRegion(send_md, 0, len, PTL_NO_ACK_REQ, peer, PT, 0, BITS, 0, 0), "PtlPutRegion");
}

/* rounds windows of WINDOW puts of len bytes, each answered by the
 * receiver's 0-byte "got them all". */
static void bw_windows(int rank, size_t len, int rounds)
{
	for (int k = 0; k < rounds; k++) {
		if (rank == 0) {
			for (int w = 0; w < WINDOW; w++)
				put(len);
			wait_put();
		} else {
			for (int w = 0; w < WINDOW; w++)
				wait_put();
			put(0);
		}
	}
}

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

/* The mean over all trials: with many short trials (bench/verbs_vm.sh) the
 * mean of every round trip, to set beside the median trial. */
static void report_mean(const char *kind, size_t len, const double *v, int n)
{
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += v[i];
	printf("%s %zu %.3f\n", kind, len, sum / n);
	fflush(stdout);
}

/* The mean of the middle half of v (sorted by report): finer than the
 * median where the cycle counter ticks coarsely (a guest's), and as
 * deaf to the preempted round trips of a loaded machine. */
static void report_mid(const char *kind, size_t len, const double *v, int n)
{
	double sum = 0;
	for (int i = n / 4; i < n - n / 4; i++)
		sum += v[i];
	printf("%s %zu %.4f\n", kind, len, sum / (n - 2 * (n / 4)));
	fflush(stdout);
}

#define MAX_SIZES 64

static bool size_arg(const char *s, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || *end || v > (1ull << 30))
		return false;
	*out = (size_t)v;
	return true;
}

/* "A,B,C" into sizes[] (at most MAX_SIZES); the count, or -1. */
static int sizes_arg(const char *s, size_t *sizes)
{
	char buf[1024], *save = NULL;
	int n = 0;
	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == MAX_SIZES || !size_arg(t, &sizes[n]))
			return -1;
		n++;
	}
	return n ? n : -1;
}

/* The next latency size after len: the listed ones, else 0, 1, 2, 4, ... */
static bool next_size(size_t *len, int *k, const size_t *sizes, int nsizes)
{
	if (nsizes) {
		if (*k >= nsizes)
			return false;
		*len = sizes[(*k)++];
		return true;
	}
	*len = *k == 0 ? 0 : *len ? *len * 2 : 1;
	(*k)++;
	return true;
}

int main(int argc, char **argv)
{
	int trials = 5, nif, iters_opt = 0, rounds_opt = 0, nsizes = 0;
	size_t sizes[MAX_SIZES];
	bool per_rtt = false;
	size_t max_lat = MAX_LAT, max_bw = MAX_BW;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--max-lat") && v && size_arg(v, &max_lat)) {
			i++;
		} else if (!strcmp(a, "--max-bw") && v && size_arg(v, &max_bw)) {
			i++;
		} else if (!strcmp(a, "--iters") && v && atoi(v) > 0) {
			iters_opt = atoi(v);
			i++;
		} else if (!strcmp(a, "--bw-rounds") && v && atoi(v) > 0) {
			rounds_opt = atoi(v);
			i++;
		} else if (!strcmp(a, "--sizes") && v && (nsizes = sizes_arg(v, sizes)) > 0) {
			i++;
		} else if (!strcmp(a, "--per-rtt")) {
			per_rtt = true;
		} else if (a[0] != '-') {
			trials = atoi(a);
		} else {
			fprintf(stderr, "usage: ptl_pingpong [--max-lat BYTES] [--max-bw BYTES] [--iters N]\n"
					"                    [--bw-rounds N] [--sizes A,B,..] [--per-rtt] [trials]\n");
			return 2;
		}
	}
	if (trials < 1 || trials > 1000)
		trials = 5;
	size_t buf_len = max_lat > max_bw ? max_lat : max_bw;
	if (buf_len == 0)
		buf_len = 1;
	check(PtlInit(&nif), "PtlInit");
	int rank = PtlRtRank();
	if (PtlRtSize() != 2) {
		if (rank == 0)
			fprintf(stderr, "ptl_pingpong: run with exactly 2 ranks (ptlrun -n 2)\n");
		PtlFini();
		return 2;
	}
	check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni), "PtlNIInit");
	check(PtlEQAlloc(ni, 4 * WINDOW, PTL_EQ_HANDLER_NONE, &eq), "PtlEQAlloc");
	check(PtlRtId(1 - rank, &peer), "PtlRtId");
	char *rbuf = calloc(1, buf_len), *sbuf = calloc(1, buf_len);
	if (!rbuf || !sbuf)
		return 1;
	memset(sbuf, rank + 1, buf_len);
	ptl_process_id_t any = { PTL_NID_ANY, PTL_PID_ANY };
	ptl_handle_me_t me;
	ptl_handle_md_t rmd;
	check(PtlMEAttach(ni, PT, any, BITS, 0, PTL_RETAIN, PTL_INS_AFTER, &me), "PtlMEAttach");
	ptl_md_t r = { .start = rbuf, .length = buf_len, .threshold = PTL_MD_THRESH_INF,
		       .options = PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE,
		       .eq_handle = eq };
	check(PtlMDAttach(me, r, PTL_RETAIN, &rmd), "PtlMDAttach");
	/* The sender logs nothing: ping-pong completion is the peer's put. */
	ptl_md_t s = { .start = sbuf, .length = buf_len, .threshold = PTL_MD_THRESH_INF,
		       .options = 0, .eq_handle = PTL_EQ_NONE };
	check(PtlMDBind(ni, s, PTL_RETAIN, &send_md), "PtlMDBind");
	check(PtlRtBarrier(), "PtlRtBarrier");

	double v[1000];
	int most_iters = iters_opt ? iters_opt : 20000;
	/* per_rtt: the stamps of a trial, then every half round trip of all */
	uint64_t *ts = per_rtt ? malloc(sizeof *ts * ((size_t)most_iters + 1)) : NULL;
	double *rtt = per_rtt ? malloc(sizeof *rtt * (size_t)most_iters * (size_t)trials) : NULL;
	if (per_rtt && (!ts || !rtt))
		return 1;
	size_t len = 0;
	for (int k = 0; next_size(&len, &k, sizes, nsizes);) {
		if (len > max_lat) {
			if (nsizes)
				continue;
			break;
		}
		int iters = iters_opt ? iters_opt : len <= 4096 ? 20000 : 2000;
		int warmup = iters < 100 ? iters : 100, nrtt = 0;
		for (int t = 0; t < trials; t++) {
			for (int warm = 0; warm < warmup; warm++) {
				if (rank == 0) { put(len); wait_put(); } else { wait_put(); put(len); }
			}
			double t0 = bench_now_ns();
			uint64_t c0 = stamp();
			for (int i = 0; i < iters; i++) {
				if (ts)
					ts[i] = stamp();
				if (rank == 0) { put(len); wait_put(); } else { wait_put(); put(len); }
			}
			double us = (bench_now_ns() - t0) / 1e3;
			v[t] = us / iters / 2;
			if (ts) {
				ts[iters] = stamp();
				double per_us = (double)(ts[iters] - c0) / us;
				for (int i = 0; i < iters; i++)
					rtt[nrtt++] = (double)(ts[i + 1] - ts[i]) / per_us / 2;
			}
		}
		if (rank == 0) {
			report("lat", len, v, trials);
			report_mean("mean", len, v, trials);
			if (rtt) {
				report("rtt", len, rtt, nrtt);
				report_mid("rttmid", len, rtt, nrtt);
			}
		}
	}
	free(ts);
	free(rtt);
	/* An unmeasured stream first, and 32 MiB a trial at least: bench_bw.h. */
	if (max_bw >= 4096 && !rounds_opt)
		bw_windows(rank, 4096, bench_bw_rounds(4096, WINDOW));
	for (len = 4096; len <= max_bw; len *= 4) {
		int rounds = rounds_opt ? rounds_opt : bench_bw_rounds(len, WINDOW);
		for (int t = 0; t < trials; t++) {
			double t0 = bench_now_ns();
			bw_windows(rank, len, rounds);
			v[t] = (double)len * WINDOW * rounds / (bench_now_ns() - t0);
		}
		if (rank == 0)
			report("bw", len, v, trials);
	}
	check(PtlRtBarrier(), "PtlRtBarrier");
	PtlNIFini(ni);
	PtlFini();
	free(rbuf);
	free(sbuf);
	return 0;
}
