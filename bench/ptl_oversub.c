/*
 * ptl_oversub: an 8-byte allreduce (recursive doubling over PtlPut) on as
 * many ranks as you start - meant for more ranks than cores, where a rank
 * that spins while it waits starves the one it waits for.
 *
 *   ptlrun -n 4 bench/ptl_oversub [iterations]
 *
 * Prints "allreduce <ranks> ranks 8 B: <median us> [min-max] per call".
 * Reference (issue 2): MPICH 4153 us (it spins), Open MPI 7.3 us, on 2 cores.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <portals3.h>
#include <ptl_runtime.h>

#include "bench_clock.h"

#define PT 5
#define MAX_STEPS 16

static void check(int rc, const char *what)
{
	if (rc != PTL_OK) {
		fprintf(stderr, "ptl_oversub: rank %d: %s: %s\n", PtlRtRank(), what, PtlErrorStr((unsigned)rc));
		exit(1);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 2000, nif;
	check(PtlInit(&nif), "PtlInit");
	int rank = PtlRtRank(), size = PtlRtSize();
	int steps = 0;
	while ((1 << steps) < size)
		steps++;
	if ((1 << steps) != size || steps > MAX_STEPS) {
		if (rank == 0)
			fprintf(stderr, "ptl_oversub: run with a power-of-two number of ranks\n");
		PtlFini();
		return 2;
	}
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni), "PtlNIInit");
	check(PtlEQAlloc(ni, 1024, PTL_EQ_HANDLER_NONE, &eq), "PtlEQAlloc");
	/* Slot (iteration parity, step): a partner may be one iteration ahead. */
	static uint64_t slots[2][MAX_STEPS], out;
	ptl_process_id_t any = { PTL_NID_ANY, PTL_PID_ANY };
	ptl_handle_me_t me;
	ptl_handle_md_t md, omd;
	check(PtlMEAttach(ni, PT, any, 0, ~0ull, PTL_RETAIN, PTL_INS_AFTER, &me), "PtlMEAttach");
	ptl_md_t m = { .start = slots, .length = sizeof slots, .threshold = PTL_MD_THRESH_INF,
		       .options = PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE,
		       .eq_handle = eq };
	check(PtlMDAttach(me, m, PTL_RETAIN, &md), "PtlMDAttach");
	ptl_md_t o = { .start = &out, .length = sizeof out, .threshold = PTL_MD_THRESH_INF,
		       .eq_handle = PTL_EQ_NONE };
	check(PtlMDBind(ni, o, PTL_RETAIN, &omd), "PtlMDBind");
	ptl_process_id_t partner[MAX_STEPS];
	for (int s = 0; s < steps; s++)
		check(PtlRtId(rank ^ (1 << s), &partner[s]), "PtlRtId");
	check(PtlRtBarrier(), "PtlRtBarrier");

	unsigned got[MAX_STEPS] = { 0 };
	double *t = malloc(sizeof(double) * (size_t)iters);
	for (int i = 0; i < iters; i++) {
		double t0 = bench_now_ns();
		uint64_t acc = (uint64_t)rank + (uint64_t)i;
		for (int s = 0; s < steps; s++) {
			out = acc;
			check(PtlPut(omd, PTL_NO_ACK_REQ, partner[s], PT, 0, (uint64_t)s, ((size_t)(i % 2) * MAX_STEPS + (size_t)s) * 8, 0), "PtlPut");
			while (got[s] < (unsigned)i + 1) {
				ptl_event_t ev;
				int which;
				int rc = PtlEQPoll(&eq, 1, 10000, &ev, &which);
				if (rc == PTL_EQ_EMPTY) {
					fprintf(stderr, "ptl_oversub: rank %d: step %d of iteration %d: nothing from rank %u in 10 s\n",
						rank, s, i, partner[s].pid);
					return 1;
				}
				check(rc, "PtlEQPoll");
				if (ev.type == PTL_EVENT_PUT_END)
					got[ev.match_bits]++;
			}
			acc += slots[i % 2][s];
		}
		/* sum over ranks of (rank + i) */
		if (acc != (uint64_t)size * (uint64_t)(size - 1) / 2 + (uint64_t)size * (uint64_t)i) {
			fprintf(stderr, "ptl_oversub: rank %d: wrong sum %" PRIu64 " in iteration %d\n", rank, acc, i);
			return 1;
		}
		t[i] = (bench_now_ns() - t0) / 1e3;
	}
	qsort(t, (size_t)iters, sizeof *t, cmp_double);
	if (rank == 0)
		printf("allreduce %d ranks 8 B: %.2f us [%.2f-%.2f] per call (median of %d)\n", size,
		       t[iters / 2], t[0], t[iters - 1], iters);
	check(PtlRtBarrier(), "PtlRtBarrier");
	free(t);
	PtlNIFini(ni);
	PtlFini();
	return 0;
}
