/* ptltool coll: expand, choose and cost one collective schedule. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "ptltool.h"

/* Beyond this many commands the cost model is not run (it holds the whole
 * schedule in memory, about 100 bytes a command). */
#define COLL_TOOL_MAX_ENTRIES 20000000ull
/* coll_summarize expands every rank (O(N * steps)); at about 40M commands a
 * second, beyond this many it would run for minutes to hours (a ring at 64Ki
 * ranks is 17G commands), so the tool says so instead of hanging. */
#define COLL_TOOL_MAX_COUNT 400000000ull
#define SHOW_MAX_RANKS 32
#define SHOW_MAX_STEPS 256

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: ptltool coll --op OP --ranks N --bytes SIZE [--ports P] [--algo NAME]\n"
	        "                    [--chunks C] [--elem SIZE] [--root R] [--input] [--alpha TIME]\n"
	        "                    [--beta RATE] [--gamma TIME] [--overhead TIME] [--call TIME]\n"
	        "                    [--ranks-per-core K] [--acked-sends[=TIME]] [--noack-max SIZE]\n"
	        "                    [--rndv-min SIZE] [--rndv-cost TIME]\n"
	        "                    [--counts LIST] [--show] [--json]\n"
	        "\n"
	        "Expand a collective into its schedule, print the algorithm chosen, steps,\n"
	        "commands, link slots, bytes and the time the alpha-beta-gamma model (with the\n"
	        "software terms, when given) predicts.\n"
	        "\n"
	        "  --op OP        allreduce reduce_scatter allgather alltoall bcast reduce barrier\n"
	        "                 gather scatter scan exscan\n"
	        "  --ranks N      group size (1 to %d)\n"
	        "  --bytes SIZE   message size, with K, M or G (powers of 1024); alltoall, gather,\n"
	        "                 scatter: per rank\n"
	        "  --ports P      ports (concurrent transfers) per rank, default 1\n"
	        "  --algo NAME    auto (default) ring ring_sendrecv ring_bidir halving_doubling\n"
	        "                 tree pairwise binomial scatter_allgather dissemination owner\n"
	        "                 chain recursive_doubling linear bruck\n"
	        "  --chunks C     chunks per block for the ring algorithms (1 to %d), default 1\n"
	        "  --elem SIZE    element size in bytes, default 4\n"
	        "  --root R       root of bcast, reduce, gather and scatter, default 0\n"
	        "  --input        allreduce, recursive_doubling: the input apart, read by the first\n"
	        "                 round (as ptl's MPI_Allreduce up to 4 KiB)\n"
	        "  --counts LIST  the v-variants, comma-separated sizes (--bytes may be left out):\n"
	        "                 gather, scatter, allgather: each rank's block (--ranks of them);\n"
	        "                 alltoall: what rank i sends to rank j, row by row (ranks^2)\n"
	        "  --alpha TIME   per-transfer latency (s, ms, us, ns; bare: us), default 1.5us\n"
	        "  --beta RATE    bandwidth (B/s, KB/s, MB/s, GB/s, KiB/s..; bare: B/s), default 10GB/s\n"
	        "  --gamma TIME   reduction time per byte (bare: ns), default 0.1ns\n"
	        "  --overhead TIME  CPU time per message at the sender and at the receiver (LogP o;\n"
	        "                 a ping-pong's half round trip is alpha + 2 o; bare: us), default 0\n"
	        "  --call TIME    CPU time per call on every rank (bare: us), default 0\n"
	        "  --ranks-per-core K  ranks sharing a core: CPU work and copies take K times\n"
	        "                 as long (default 1: a core each)\n"
	        "  --acked-sends[=TIME]  a send of data is done when the receiver's ACK is back\n"
	        "                 (TIME, default alpha; and o at each end), as in ptl's MPI layer\n"
	        "  --noack-max SIZE  with --acked-sends: sends up to SIZE bytes need no ACK\n"
	        "  --rndv-min SIZE  sends of more than SIZE bytes go by rendezvous: header, the\n"
	        "                 receiver's request, then the sender's CPU copies (ptl's MPI\n"
	        "                 above its eager limit, on shm)\n"
	        "  --rndv-cost TIME  with --rndv-min: the sender's CPU per rendezvous beyond\n"
	        "                 the bytes (bare: us), default 0\n"
	        "  --show         draw the step-by-rank grid of sends (up to %d ranks)\n"
	        "  --json         print one JSON object\n",
	        COLL_MAX_RANKS, COLL_MAX_CHUNKS, SHOW_MAX_RANKS);
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "ptltool coll: bad %s '%s'\n\n", what, arg);
	usage(stderr);
	return 2;
}

/* "1M" -> 1048576; K/M/G are powers of 1024, an optional trailing B. */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	unsigned long long mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	default: break;
	}
	if (mul > 1 && *end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || (v && mul > SIZE_MAX / v) || v * mul > SIZE_MAX)
		return -1;
	*out = (size_t)(v * mul);
	return 0;
}

/* "4,0,1K": one size per rank; *n is how many */
static int parse_counts(const char *s, size_t **out, int *n)
{
	int cnt = 1;
	for (const char *p = s; *p; p++)
		cnt += *p == ',';
	if (cnt > COLL_MAX_RANKS)
		return -1;
	size_t *c = calloc((size_t)cnt, sizeof *c);
	char *dup = strdup(s);
	if (!c || !dup) {
		free(c);
		free(dup);
		return -1;
	}
	int i = 0;
	char *save = NULL;
	for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (i >= cnt || parse_size(tok, &c[i++]))
			i = cnt + 1;
	free(dup);
	if (i != cnt) {
		free(c);
		return -1;
	}
	*out = c;
	*n = cnt;
	return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

/* a number and a unit from the table; bare numbers take def_scale */
struct unit { const char *name; double scale; };

static int parse_unit(const char *s, const struct unit *u, double def_scale, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || v > 1e30)
		return -1;
	if (!*end) {
		*out = v * def_scale;
		return 0;
	}
	for (; u->name; u++)
		if (!strcmp(end, u->name)) {
			*out = v * u->scale;
			return 0;
		}
	return -1;
}

static const struct unit time_units[] = {
	{ "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "ns", 1e-9 }, { NULL, 0 },
};
static const struct unit no_units[] = { { NULL, 0 } };
static const struct unit rate_units[] = {
	{ "B/s", 1 }, { "KB/s", 1e3 }, { "MB/s", 1e6 }, { "GB/s", 1e9 }, { "TB/s", 1e12 },
	{ "KiB/s", 1024.0 }, { "MiB/s", 1048576.0 }, { "GiB/s", 1073741824.0 }, { NULL, 0 },
};

static void show_grid(const struct coll_sched *s)
{
	int n = s->req.nranks;
	uint32_t steps = s->info.steps;
	if (n > SHOW_MAX_RANKS || steps > SHOW_MAX_STEPS) {
		printf("\n(--show draws up to %d ranks and %d steps; this schedule has %d ranks, "
		       "%u steps)\n", SHOW_MAX_RANKS, SHOW_MAX_STEPS, n, steps);
		return;
	}
	/* cell text per (step, rank): ">p" a send to p in direction 0, "<p" in 1 */
	size_t cellsz = 64;
	char *cells = calloc((size_t)steps * (size_t)n, cellsz);
	if (!cells)
		return;
	int width = 4;
	for (int r = 0; r < n; r++) {
		size_t cnt;
		const struct coll_cmd *c = coll_rank_cmds(s, r, &cnt);
		for (size_t i = 0; i < cnt; i++) {
			if (c[i].kind != COLL_SEND)
				continue;
			char *cell = cells + ((size_t)c[i].step * (size_t)n + (size_t)r) * cellsz;
			size_t used = strlen(cell);
			char item[24];
			snprintf(item, sizeof item, "%c%d", c[i].dir ? '<' : '>', c[i].peer);
			if (strstr(cell, item))
				continue; /* several chunks to the same peer: draw once */
			if (used + strlen(item) + 1 < cellsz)
				strcat(cell, item);
			if ((int)strlen(cell) > width)
				width = (int)strlen(cell);
		}
	}
	printf("\nsends by step (rows) and rank (columns); >p: to p in direction 0 "
	       "(clockwise), <p: direction 1\n%-5s", "step");
	for (int r = 0; r < n; r++)
		printf(" %*d", width, r);
	printf("\n");
	for (uint32_t st = 0; st < steps; st++) {
		printf("%-5u", st);
		for (int r = 0; r < n; r++) {
			const char *cell = cells + ((size_t)st * (size_t)n + (size_t)r) * cellsz;
			printf(" %*s", width, *cell ? cell : ".");
		}
		printf("\n");
	}
	free(cells);
}

/* Commands of the whole schedule, from up to three ranks' parts: N times
 * the fewest, so a root with O(N) commands (reduce by owner) does not make a
 * small schedule look huge. One rank's part can itself be large (alltoall:
 * 2N commands), so sampling stops as soon as the answer is known. */
static int estimate_entries(const struct coll_req *req, uint64_t *out, char *msg, size_t msglen)
{
	int sample[3] = { 0, req->nranks / 2, req->nranks - 1 };
	uint64_t fewest = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		struct coll_sched *one;
		int rc = coll_expand_rank(req, sample[i], &one, msg, msglen);
		if (rc)
			return rc;
		if (one->ranks[0].ncmds < fewest)
			fewest = one->ranks[0].ncmds;
		coll_free(one);
		if (fewest * (uint64_t)req->nranks <= COLL_TOOL_MAX_COUNT)
			break;  /* small enough already: the other samples cannot raise it */
	}
	*out = fewest * (uint64_t)req->nranks;
	return 0;
}

/* *counts is the caller's to free, whatever this returns */
static int coll_main(int argc, char **argv, size_t **countsp)
{
	static const struct option opts[] = {
		{ "op", required_argument, NULL, 'o' },
		{ "ranks", required_argument, NULL, 'n' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "ports", required_argument, NULL, 'p' },
		{ "algo", required_argument, NULL, 'a' },
		{ "chunks", required_argument, NULL, 'c' },
		{ "elem", required_argument, NULL, 'e' },
		{ "root", required_argument, NULL, 'r' },
		{ "input", no_argument, NULL, 'i' },
		{ "alpha", required_argument, NULL, 'A' },
		{ "beta", required_argument, NULL, 'B' },
		{ "gamma", required_argument, NULL, 'G' },
		{ "overhead", required_argument, NULL, 'O' },
		{ "call", required_argument, NULL, 'L' },
		{ "ranks-per-core", required_argument, NULL, 'K' },
		{ "acked-sends", optional_argument, NULL, 'Q' },
		{ "noack-max", required_argument, NULL, 'N' },
		{ "rndv-min", required_argument, NULL, 'R' },
		{ "rndv-cost", required_argument, NULL, 'V' },
		{ "counts", required_argument, NULL, 'C' },
		{ "show", no_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct coll_req req;
	memset(&req, 0, sizeof req);
	req.algo = COLL_ALGO_AUTO;
	req.elem_size = 4;
	req.num_chunks = 1;
	req.ports = 1;
	bool have_op = false, have_ranks = false, have_bytes = false, show = false, json = false;
	struct coll_cost_params cp = { .alpha = 1.5e-6, .beta = 10e9, .gamma = 0.1e-9 };
	int ch, ncounts = 0;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":n:b:p:a:c:hsj", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			if (coll_op_parse(optarg, &req.op))
				return bad("--op", optarg);
			have_op = true;
			break;
		case 'n':
			if (parse_int(optarg, 1, COLL_MAX_RANKS, &req.nranks))
				return bad("--ranks", optarg);
			have_ranks = true;
			break;
		case 'b':
			if (parse_size(optarg, &req.bytes))
				return bad("--bytes", optarg);
			have_bytes = true;
			break;
		case 'p':
			if (parse_int(optarg, 1, 64, &req.ports))
				return bad("--ports", optarg);
			break;
		case 'a':
			if (coll_algo_parse(optarg, &req.algo)) {
				fprintf(stderr, "ptltool coll: unknown algorithm '%s'\n\n", optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'c':
			if (parse_int(optarg, 1, COLL_MAX_CHUNKS, &req.num_chunks))
				return bad("--chunks", optarg);
			break;
		case 'e':
			if (parse_size(optarg, &req.elem_size) || req.elem_size == 0)
				return bad("--elem", optarg);
			break;
		case 'r':
			if (parse_int(optarg, 0, COLL_MAX_RANKS, &req.root))
				return bad("--root", optarg);
			break;
		case 'A':
			if (parse_unit(optarg, time_units, 1e-6, &cp.alpha))
				return bad("--alpha", optarg);
			break;
		case 'B':
			if (parse_unit(optarg, rate_units, 1, &cp.beta) || cp.beta <= 0)
				return bad("--beta", optarg);
			break;
		case 'G':
			if (parse_unit(optarg, time_units, 1e-9, &cp.gamma))
				return bad("--gamma", optarg);
			break;
		case 'O':
			if (parse_unit(optarg, time_units, 1e-6, &cp.o))
				return bad("--overhead", optarg);
			break;
		case 'L':
			if (parse_unit(optarg, time_units, 1e-6, &cp.call))
				return bad("--call", optarg);
			break;
		case 'i':
			req.input = true;
			break;
		case 'N':
			if (parse_size(optarg, &cp.noack_max))
				return bad("--noack-max", optarg);
			break;
		case 'R':
			if (parse_size(optarg, &cp.rndv_min))
				return bad("--rndv-min", optarg);
			cp.rndv = true;
			break;
		case 'V':
			if (parse_unit(optarg, time_units, 1e-6, &cp.rndv_cost))
				return bad("--rndv-cost", optarg);
			break;
		case 'Q':
			cp.acked_sends = true;
			if (optarg && parse_unit(optarg, time_units, 1e-6, &cp.ack_alpha))
				return bad("--acked-sends", optarg);
			break;
		case 'K':
			if (parse_unit(optarg, no_units, 1, &cp.ranks_per_core) || cp.ranks_per_core > 1024)
				return bad("--ranks-per-core", optarg);
			break;
		case 'C':
			free(*countsp);
			*countsp = NULL;
			if (parse_counts(optarg, countsp, &ncounts))
				return bad("--counts", optarg);
			break;
		case 's':
			show = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "ptltool coll: option '%s' needs a value\n\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		default:
			fprintf(stderr, "ptltool coll: unknown option '%s'\n\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ptltool coll: unexpected argument '%s'\n\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (*countsp) {
		bool matrix = req.op == COLL_OP_ALLTOALL;
		if (req.op != COLL_OP_GATHER && req.op != COLL_OP_SCATTER
		    && req.op != COLL_OP_ALLGATHER && !matrix) {
			fprintf(stderr, "ptltool coll: --counts is for gather, scatter, allgather "
			        "and alltoall\n\n");
			usage(stderr);
			return 2;
		}
		long long want = matrix ? (long long)req.nranks * req.nranks : req.nranks;
		if (have_ranks && ncounts != want) {
			fprintf(stderr, "ptltool coll: --counts gives %d sizes for %d ranks (%s %lld)\n\n",
			        ncounts, req.nranks, matrix ? "alltoall takes ranks x ranks:" : "want",
			        want);
			usage(stderr);
			return 2;
		}
		req.counts = *countsp;
		have_bytes = true;
	}
	if (!have_op || !have_ranks || (!have_bytes && req.op != COLL_OP_BARRIER)) {
		fprintf(stderr, "ptltool coll: --op, --ranks and --bytes are required\n\n");
		usage(stderr);
		return 2;
	}

	if (req.op == COLL_OP_BARRIER)
		req.bytes = 0;  /* a barrier carries nothing, whatever --bytes said */

	char msg[256] = "";
	uint64_t estimate = 0;
	int rc = estimate_entries(&req, &estimate, msg, sizeof msg);
	if (!rc && estimate > COLL_TOOL_MAX_COUNT) {
		fprintf(stderr, "ptltool coll: about %llu commands over %d ranks, too many to "
		        "count (the limit is %llu): use fewer ranks\n",
		        (unsigned long long)estimate, req.nranks,
		        (unsigned long long)COLL_TOOL_MAX_COUNT);
		return 1;
	}
	struct coll_info info;
	struct coll_choice choice;
	if (!rc)
		rc = coll_summarize(&req, &info, &choice, msg, sizeof msg);
	if (rc) {
		fprintf(stderr, "ptltool coll: %s\n", msg);
		if (rc == -EINVAL || rc == -ENOTSUP) {
			fprintf(stderr, "\n");
			usage(stderr);
			return 2;
		}
		return 1;
	}

	struct coll_sched *s = NULL;
	struct coll_cost cost = { 0 };
	bool have_cost = false;
	if (info.entries <= COLL_TOOL_MAX_ENTRIES) {
		rc = coll_expand(&req, &s, msg, sizeof msg);
		if (!rc && coll_cost(s, &cp, &cost) == 0)
			have_cost = true;
	}
	const char *warning = choice.warning[0] ? choice.warning : NULL;
	if (warning && !json)
		fprintf(stderr, "ptltool coll: warning: %s\n", warning);

	if (json) {
		printf("{\"op\": \"%s\", \"requested\": \"%s\", \"algorithm\": \"%s\", "
		       "\"ranks\": %d, \"bytes\": %zu, \"elem\": %zu, \"ports\": %d, \"chunks\": %d, "
		       "\"steps\": %u, \"directions\": %d, \"commands\": %llu, \"link_slots\": %llu, "
		       "\"entries\": %llu, \"bytes_per_command_min\": %zu, "
		       "\"bytes_per_command_max\": %zu, \"total_bytes\": %llu, ",
		       coll_op_name(req.op), coll_algo_name(req.algo), coll_algo_name(info.algo),
		       req.nranks, req.bytes, req.elem_size, req.ports, info.num_chunks, info.steps,
		       info.ndirs, (unsigned long long)info.commands,
		       (unsigned long long)info.link_slots, (unsigned long long)info.entries,
		       info.min_transfer, info.max_transfer, (unsigned long long)info.total_bytes);
		if (have_cost)
			printf("\"predicted_us\": %.6f, ", cost.time * 1e6);
		else
			printf("\"predicted_us\": null, ");
		printf("\"alpha_us\": %.6g, \"beta_Bps\": %.6g, \"gamma_ns\": %.6g, \"overhead_us\": %.6g, "
		       "\"call_us\": %.6g, \"ranks_per_core\": %.6g, \"acked_sends\": %s, \"ack_us\": %.6g, ",
		       cp.alpha * 1e6, cp.beta, cp.gamma * 1e9, cp.o * 1e6, cp.call * 1e6,
		       cp.ranks_per_core > 1 ? cp.ranks_per_core : 1, cp.acked_sends ? "true" : "false",
		       (cp.ack_alpha > 0 ? cp.ack_alpha : cp.alpha) * 1e6);
		if (cp.rndv)
			printf("\"rndv_min\": %zu, \"rndv_us\": %.6g, ", cp.rndv_min, cp.rndv_cost * 1e6);
		else
			printf("\"rndv_min\": null, \"rndv_us\": null, ");
		printf("\"warning\": ");
		if (warning) {
			putchar('"');
			for (const char *p = warning; *p; p++) {
				if (*p == '"' || *p == '\\')
					putchar('\\');
				putchar(*p);
			}
			printf("\"}\n");
		} else {
			printf("null}\n");
		}
	} else {
		printf("op            %s\n", coll_op_name(req.op));
		printf("ranks         %d\n", req.nranks);
		printf("bytes         %zu (element %zu)\n", req.bytes, req.elem_size);
		printf("ports         %d\n", req.ports);
		printf("algorithm     %s%s%s%s\n", coll_algo_name(info.algo),
		       req.algo != info.algo ? " (asked: " : "",
		       req.algo != info.algo ? coll_algo_name(req.algo) : "",
		       req.algo != info.algo ? ")" : "");
		printf("warning       %s\n", warning ? warning : "none");
		printf("steps         %u\n", info.steps);
		printf("directions    %d\n", info.ndirs);
		printf("chunks        %d\n", info.num_chunks);
		printf("commands      %llu (transfers carrying data)\n",
		       (unsigned long long)info.commands);
		printf("link slots    %llu (steps x ranks x directions)\n",
		       (unsigned long long)info.link_slots);
		if (info.min_transfer == info.max_transfer)
			printf("bytes/command %zu\n", info.max_transfer);
		else
			printf("bytes/command %zu to %zu\n", info.min_transfer, info.max_transfer);
		printf("total bytes   %llu\n", (unsigned long long)info.total_bytes);
		if (have_cost) {
			printf("predicted     %.3f us (alpha %.4g us, beta %.4g GB/s, gamma %.4g ns/B)\n",
			       cost.time * 1e6, cp.alpha * 1e6, cp.beta / 1e9, cp.gamma * 1e9);
			if (cp.o > 0 || cp.call > 0 || cp.ranks_per_core > 1 || cp.acked_sends || cp.rndv)
				printf("software      overhead %.4g us/message, call %.4g us, %.3g ranks/core%s%s; "
				       "busiest CPU %.3f us\n", cp.o * 1e6, cp.call * 1e6,
				       cp.ranks_per_core > 1 ? cp.ranks_per_core : 1,
				       cp.acked_sends ? ", acked sends" : "",
				       cp.rndv ? ", rendezvous copies by the sender" : "", cost.busiest_cpu * 1e6);
		} else
			printf("predicted     n/a (%llu commands: too many to simulate)\n",
			       (unsigned long long)info.entries);
		if (show) {
			if (s)
				show_grid(s);
			else
				printf("\n(--show: schedule too large to hold)\n");
		}
	}
	coll_free(s);
	return 0;
}

int ptltool_coll_main(int argc, char **argv)
{
	size_t *counts = NULL;
	int rc = coll_main(argc, argv, &counts);
	free(counts);
	return rc;
}
