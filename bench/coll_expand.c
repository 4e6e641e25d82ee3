/* bench/coll_expand: how fast schedules expand (one rank's part and the
 * whole schedule) and what the cost model predicts per algorithm as N grows.
 *
 *   bench/coll_expand            default sweep, a few seconds
 *   bench/coll_expand --full     one-rank expansion up to 2^20 ranks and a
 *                                longer model sweep
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "coll.h"

struct algo {
	const char *label;
	enum coll_algo algo;
	int ports;
};

static const struct algo algos[] = {
	{ "ring(1p)", COLL_ALGO_RING, 1 },
	{ "ring_bidir(2p)", COLL_ALGO_RING_BIDIR, 2 },
	{ "halving_doubling", COLL_ALGO_HALVING_DOUBLING, 2 },
	{ "tree(2p)", COLL_ALGO_TREE, 2 },
};
#define NALGOS (sizeof algos / sizeof algos[0])

static struct coll_req req_for(const struct algo *a, int n, size_t bytes)
{
	struct coll_req r;
	memset(&r, 0, sizeof r);
	r.op = COLL_OP_ALLREDUCE;
	r.algo = a->algo;
	r.nranks = n;
	r.bytes = bytes;
	r.elem_size = 4;
	r.num_chunks = 1;
	r.ports = a->ports;
	return r;
}

/* seconds per call of coll_expand_rank for the middle rank */
static double time_rank(const struct coll_req *r, size_t *ncmds)
{
	int iters = 0;
	double t0 = bench_now_ns(), t;
	char msg[200];
	do {
		struct coll_sched *s;
		if (coll_expand_rank(r, r->nranks / 2, &s, msg, sizeof msg)) {
			fprintf(stderr, "coll_expand: %s\n", msg);
			exit(1);
		}
		*ncmds = s->ranks[0].ncmds;
		coll_free(s);
		iters++;
		t = (bench_now_ns() - t0) * 1e-9;
	} while (t < 0.02 && iters < 100000);
	return t / iters;
}

int main(int argc, char **argv)
{
	bool full = argc > 1 && !strcmp(argv[1], "--full");
	if (argc > 1 && !full) {
		fprintf(stderr, "usage: coll_expand [--full]\n");
		return 2;
	}
	char msg[200];

	printf("# one rank's part (coll_expand_rank, middle rank), allreduce 64 MiB, 1 chunk\n");
	printf("%-18s %9s %10s %12s\n", "algorithm", "N", "commands", "us/expand");
	int rank_ns[] = { 8, 64, 512, 4096, 65536, 1 << 20 };
	int nrank_ns = full ? 6 : 5;
	for (size_t a = 0; a < NALGOS; a++)
		for (int i = 0; i < nrank_ns; i++) {
			int n = rank_ns[i];
			if (algos[a].algo == COLL_ALGO_RING_BIDIR && n > 65536 && !full)
				continue;
			struct coll_req r = req_for(&algos[a], n, (size_t)64 << 20);
			size_t nc;
			double t = time_rank(&r, &nc);
			printf("%-18s %9d %10zu %12.2f\n", algos[a].label, n, nc, t * 1e6);
		}

	printf("\n# whole schedule (coll_expand), allreduce 64 MiB, 1 chunk\n");
	printf("%-18s %9s %12s %12s %12s\n", "algorithm", "N", "commands", "ms/expand", "ns/command");
	int whole_ns[] = { 8, 64, 512, 4096 };
	for (size_t a = 0; a < NALGOS; a++)
		for (int i = 0; i < 4; i++) {
			int n = whole_ns[i];
			struct coll_req r = req_for(&algos[a], n, (size_t)64 << 20);
			struct coll_info info;
			/* the rings at N=4096 are ~67M commands (~6 GB): not by default */
			bool ring = algos[a].algo == COLL_ALGO_RING || algos[a].algo == COLL_ALGO_RING_BIDIR;
			if (ring && n > 512 && !full) {
				coll_summarize(&r, &info, NULL, msg, sizeof msg);
				printf("%-18s %9d %12llu %12s %12s\n", algos[a].label, n,
				       (unsigned long long)info.entries, "skipped", "(--full)");
				continue;
			}
			double t0 = bench_now_ns();
			struct coll_sched *s;
			if (coll_expand(&r, &s, msg, sizeof msg)) {
				printf("%-18s %9d failed: %s\n", algos[a].label, n, msg);
				continue;
			}
			double t = (bench_now_ns() - t0) * 1e-9;
			printf("%-18s %9d %12llu %12.2f %12.1f\n", algos[a].label, n,
			       (unsigned long long)s->info.entries, t * 1e3,
			       t * 1e9 / (double)(s->info.entries ? s->info.entries : 1));
			coll_free(s);
		}

	struct coll_cost_params p = { .alpha = 1.5e-6, .beta = 10e9, .gamma = 0.1e-9 };
	printf("\n# predicted allreduce time (us): alpha 1.5 us, beta 10 GB/s, gamma 0.1 ns/B;\n"
	       "# ports as labelled; halving_doubling falls back to ring_bidir for N not 2^k;\n"
	       "# * marks the fastest for each N and M\n");
	size_t sizes[] = { 1024, (size_t)1 << 20, (size_t)64 << 20 };
	int model_ns[] = { 4, 6, 8, 12, 16, 32, 64, 128, 256, 512 };
	int nmodel = full ? 10 : 9;
	for (int m = 0; m < 3; m++) {
		printf("\nM = %zu bytes\n%6s", sizes[m], "N");
		for (size_t a = 0; a < NALGOS; a++)
			printf(" %18s", algos[a].label);
		printf("\n");
		for (int i = 0; i < nmodel; i++) {
			int n = model_ns[i];
			double t[NALGOS];
			size_t best = 0;
			for (size_t a = 0; a < NALGOS; a++) {
				struct coll_req r = req_for(&algos[a], n, sizes[m]);
				struct coll_sched *s;
				struct coll_cost c = { 0 };
				t[a] = -1;
				if (coll_expand(&r, &s, msg, sizeof msg) == 0) {
					if (coll_cost(s, &p, &c) == 0)
						t[a] = c.time * 1e6;
					coll_free(s);
				}
				if (t[a] >= 0 && (t[best] < 0 || t[a] < t[best]))
					best = a;
			}
			printf("%6d", n);
			for (size_t a = 0; a < NALGOS; a++)
				printf(" %17.2f%c", t[a], a == best ? '*' : ' ');
			printf("\n");
		}
	}
	return 0;
}
