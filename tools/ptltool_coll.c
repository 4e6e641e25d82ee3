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
	        "                    [--rndv-min SIZE] [--rndv-cost TIME] [--split-min SIZE]\n"
	        "                    [--split-cost TIME] [--recv-post TIME] [--lazy-max SIZE]\n"
	        "                    [--cmd-cost TIME] [--cores C] [--switch-cost TIME] [--cpu-copies]\n"
	        "                    [--inline-max SIZE] [--recv-copy-cost TIME] [--small-max SIZE]\n"
	        "                    [--small-overhead TIME] [--small-alpha TIME] [--copy-rates LIST]\n"
	        "                    [--small-recv-costs LIST] [--recv-costs LIST]\n"
	        "                    [--local-copy-rates LIST]\n"
	        "                    [--wake-cost TIME] [--core-wait TIME] [--switch-shift TIME]\n"
	        "                    [--switch-exchange TIME] [--calls K] [--unexpected]\n"
	        "                    [--bound] [--poll-window TIME] [--switch-jitter J]\n"
	        "                    [--same-core-rates LIST]\n"
	        "                    [--cross-costs LIST] [--small-cross-costs LIST]\n"
	        "                    [--read-rates LIST] [--move-rates LIST]\n"
	        "                    [--move-piece SIZE] [--move-gaps LIST] [--xch-gaps LIST]\n"
	        "                    [--bulk-methods LIST]\n"
	        "                    [--read-methods LIST] [--eager-rates LIST]\n"
	        "                    [--one-host] [--shared-cores] [--counts LIST] [--show] [--steps]\n"
	        "                    [--json]\n"
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
	        "  --input        allreduce, reduce and reduce_scatter, every algorithm: the input\n"
	        "                 apart, read where it is by the first sends and reductions (as\n"
	        "                 ptl's MPI_Allreduce, MPI_Reduce and MPI_Reduce_scatter_block)\n"
	        "  --one-host     every rank on one host, as ptl's MPI tells its schedules (auto:\n"
	        "                 short allreduces recursive doubling up to 16K, not 8K; so a\n"
	        "                 2-rank one of up to 64K; halving-doubling past the short ones;\n"
	        "                 bcast of up to 8 ranks binomial and allgather of 4 or 8\n"
	        "                 recursive doubling at any size; gather, scatter and alltoall\n"
	        "                 of up to 8 ranks linear)\n"
	        "  --shared-cores with --one-host: the ranks outnumber the cores (auto, 4 ranks\n"
	        "                 past the short ones: ring_bidir up to 64K, recursive doubling\n"
	        "                 to below 192K, halving-doubling to below 640K, ring_bidir from\n"
	        "                 there; scan and exscan along the chain from 16K up to 4\n"
	        "                 ranks, 256K up to 8)\n"
	        "  --counts LIST  the v-variants, comma-separated sizes (--bytes may be left out):\n"
	        "                 gather, scatter, allgather, reduce_scatter: each rank's block\n"
	        "                 (--ranks of them; reduce_scatter: whole elements, ring family);\n"
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
	        "  --split-min SIZE  with --rndv-min: copies of SIZE bytes and up are split, the\n"
	        "                 second half on the receiver's CPU (ptl's shm NAL's CMA moves\n"
	        "                 from 64K, where it picks CMA: see --bulk-methods)\n"
	        "  --split-cost TIME  with --split-min: the receiver's CPU per split copy beyond\n"
	        "                 its half's bytes (bare: us), default 0\n"
	        "  --recv-post TIME  CPU time to post a receive of more than --lazy-max bytes\n"
	        "                 (ptl's MPI posts an ME for it; bare: us), default 0\n"
	        "  --lazy-max SIZE  receives up to SIZE bytes post nothing (their message is\n"
	        "                 copied out of the unexpected buffer), default 0\n"
	        "  --cmd-cost TIME  CPU time per send and receive a rank posts, beyond the\n"
	        "                 others (the collective's bookkeeping; bare: us), default 0\n"
	        "  --cores C      the ranks share C cores (fewer than the ranks): CPU work is\n"
	        "                 scheduled on them, each piece where it starts first, instead\n"
	        "                 of stretched (--ranks-per-core is then ignored)\n"
	        "  --switch-cost TIME  with --cores: what a rank that waited pays to get a core\n"
	        "                 back (the yield and the switch; bare: us), default 0\n"
	        "  --core-wait TIME  with --cores: a waiting rank sees its message TIME after it\n"
	        "                 came (its core passing round the waiting ranks at every\n"
	        "                 poll), a switch after the core's work at the earliest (bare:\n"
	        "                 us); default: each rank that waited pays --switch-cost\n"
	        "  --switch-shift TIME  with --cores: the switch in a step where every rank\n"
	        "                 sends one message and receives one (a shift: a ring's steps;\n"
	        "                 bare: us), default --switch-cost\n"
	        "  --switch-exchange TIME  with --cores: the switch in a step whose every\n"
	        "                 message has one coming back (pair exchanges: recursive\n"
	        "                 doubling's, halving-doubling's; bare: us), default --switch-cost\n"
	        "  --bound        with --cores: rank r runs on core r mod C only (ptlrun\n"
	        "                 --bind-to core), a core's ranks taking turns: the rank with\n"
	        "                 the core keeps it while it has work, then the core passes\n"
	        "                 round its ranks, --switch-cost a turn; prints the switches a\n"
	        "                 core makes a call (--switch-shift, --switch-exchange and\n"
	        "                 --core-wait are not used)\n"
	        "  --poll-window TIME  with --bound: work that comes this soon after the\n"
	        "                 holder's last keeps it on its core (bare: us), default 0\n"
	        "  --switch-jitter J  with --bound: each switch takes --switch-cost times\n"
	        "                 1 + u, u from [-J, J] (a fixed sequence; J below 1), so the\n"
	        "                 cores' turns drift apart as real ones do; default 0\n"
	        "  --same-core-rates LIST  with --bound: a rendezvous copy, an eager read or\n"
	        "                 an eager copy between two ranks of one core at this rate by\n"
	        "                 message size (its lines stay in the core's caches),\n"
	        "                 SIZE:RATE,... as --copy-rates, instead of --copy-rates,\n"
	        "                 --read-rates and --eager-rates, each copy whole (no moves,\n"
	        "                 no methods); default none: as between cores\n"
	        "  --calls K      K calls back to back (1 to %d), each rank entering the next\n"
	        "                 when its part of the last is done; predicts the period\n"
	        "  --unexpected   a send goes when its sender is ready; a message that comes\n"
	        "                 before its receive is ready waits for it (an eager one is\n"
	        "                 copied out then, at --local-copy-rates)\n"

	        "  --cpu-copies   the sender's CPU copies an eager message's bytes (shm), so\n"
	        "                 the copy takes turns with its other work; the port holds alpha\n"
	        "  --inline-max SIZE  with --cpu-copies: eager messages above SIZE are copied by\n"
	        "                 the receiver's CPU on arrival instead (shm reads a put that does\n"
	        "                 not fit its ring inline), default 0: none\n"
	        "  --recv-copy-cost TIME  with --inline-max: the receiver's CPU per such copy\n"
	        "                 beyond its bytes (bare: us), default 0\n"
	        "  --read-rates LIST  with --inline-max: the rate of such a copy by message\n"
	        "                 size, SIZE:RATE,... as --copy-rates (default: those, else\n"
	        "                 --beta)\n"
	        "  --read-methods LIST  with --inline-max: how such a read goes by size,\n"
	        "                 SIZE:HOW,... as --bulk-methods, HOW copy (the receiver's\n"
	        "                 CPU, default), split (half on the receiver's, half plus\n"
	        "                 --split-cost on the sender's once asked), move (through the\n"
	        "                 segment: the sender's CPU copies out, the receiver's in from\n"
	        "                 the first --move-piece on) or ring (still inline: the\n"
	        "                 sender's CPU copies it into the ring as it sends, the\n"
	        "                 receiver's out as it takes it); each copy at --read-rates\n"
	        "  --move-rates LIST  with --rndv-min: a rendezvous copy that goes one way (its\n"
	        "                 receiver sends none back at once) is shm's move through the\n"
	        "                 segment (bounce or non-temporal, where it picks that): the\n"
	        "                 sender's CPU copies out, the receiver's copies in from the\n"
	        "                 first piece on, each at this rate by message size,\n"
	        "                 SIZE:RATE,... as --copy-rates; an exchange's copies keep\n"
	        "                 --copy-rates (default: none, every copy the sender's)\n"
	        "  --move-piece SIZE  with --move-rates: bytes per hand-over, default 64K\n"
	        "  --move-gaps LIST  with --move-rates: what a move takes beyond its copies by\n"
	        "                 size (its hand-overs; latency, no CPU), SIZE:TIME,... as\n"
	        "                 --small-recv-costs, default none\n"
	        "  --xch-gaps LIST  with --rndv-min: what an exchange's copy (its receiver has a\n"
	        "                 rendezvous send of its own in flight to the sender; each\n"
	        "                 side's whole at --copy-rates) takes beyond itself by size\n"
	        "                 (hand-overs; latency, no CPU), SIZE:TIME,... as\n"
	        "                 --small-recv-costs; none for a split copy or a bound pair\n"
	        "                 of one core with --same-core-rates. Default none\n"
	        "  --bulk-methods LIST  with --rndv-min: how a rendezvous copy goes by size,\n"
	        "                 SIZE:HOW,... sizes ascending, each from SIZE up to the next\n"
	        "                 (below the first: as the first), HOW copy (the sender's CPU),\n"
	        "                 split (as --split-min's) or move (one way: as --move-rates');\n"
	        "                 the picks shm's chooser reports (PTL_SHM_BULK_REPORT=1).\n"
	        "                 Instead of --split-min and --move-rates deciding (default)\n"
	        "  --small-max SIZE  messages of up to SIZE bytes go request-free (ptl's MPI:\n"
	        "                 short allreduce rounds, a schedule's short messages):\n"
	        "                 --small-overhead at each end and --small-alpha between,\n"
	        "                 instead of --overhead and --alpha; no --cmd-cost\n"
	        "  --small-overhead TIME, --small-alpha TIME  (bare: us), default 0\n"
	        "  --copy-rates LIST  with --rndv-min: a rendezvous copy's rate by message size,\n"
	        "                 SIZE:RATE,... sizes ascending (at most %d; between two, the\n"
	        "                 rate is interpolated; beyond the ends, the end's), instead of\n"
	        "                 --beta\n"
	        "  --small-recv-costs LIST  what taking a request-free message costs its\n"
	        "                 receiver beyond --small-overhead, by size: SIZE:TIME,... sizes\n"
	        "                 ascending (bare: us; interpolated as --copy-rates), default none\n"
	        "  --recv-costs LIST  the same for an inline message with requests (not\n"
	        "                 request-free, not read: --inline-max), beyond --overhead, up\n"
	        "                 to the largest size given, default none\n"
	        "  --eager-rates LIST  with --cpu-copies: the sender's copy of an eager message\n"
	        "                 by its size, SIZE:RATE,... as --copy-rates (default: --beta);\n"
	        "                 a rank's first eager send of a step pays it, the rest --beta\n"
	        "  --local-copy-rates LIST  a rank's local copy (an eager message out of the\n"
	        "                 unexpected buffer, a block) moves at this rate by its size on\n"
	        "                 the rank's CPU: SIZE:RATE,...\n"
	        "                 as --copy-rates; default none: local copies are free\n"
	        "  --wake-cost TIME  CPU a rank pays for each message it takes (the way back\n"
	        "                 from the collective's wait; bare: us), default 0\n"
	        "  --cross-costs LIST  what an eager message costs its receiver beyond the rest\n"
	        "                 when it crossed one the receiver sent back (an exchange) and\n"
	        "                 came inline (not read: --inline-max; not by rendezvous), by\n"
	        "                 size up to the largest given: SIZE:TIME,... as\n"
	        "                 --small-recv-costs, default none\n"
	        "  --small-cross-costs LIST  the same for a request-free message (up to\n"
	        "                 --small-max), when given; default: --cross-costs\n"
	        "  --show         draw the step-by-rank grid of sends (up to %d ranks)\n"
	        "  --steps        the model's per-step breakdown: when each rank's last\n"
	        "                 command of each step finished (of the last call, from the\n"
	        "                 call before's end), and when the step was done\n"
	        "  --json         print one JSON object\n",
	        COLL_MAX_RANKS, COLL_MAX_CHUNKS, COLL_COST_MAX_CALLS, COLL_COST_RATES, SHOW_MAX_RANKS);
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

/* "16K:5.6GB/s,1M:9e9" (rates: > 0) or "8:0.05,1K:80ns" (times): at most
 * COLL_COST_RATES points, sizes strictly ascending, into len[] and val[]
 * (bare values in units of scale). The number of points, or -1. */
static int parse_points(const char *s, const struct unit *u, double scale, bool positive, size_t *len, double *val)
{
	char *dup = strdup(s), *save = NULL;
	int n = 0, rc = dup ? 0 : -1;
	for (char *tok = dup ? strtok_r(dup, ",", &save) : NULL; tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		if (!colon || n >= COLL_COST_RATES) {
			rc = -1;
			break;
		}
		*colon = 0;
		if (parse_size(tok, &len[n]) || parse_unit(colon + 1, u, scale, &val[n]) || (positive && val[n] <= 0)
		    || (n > 0 && len[n] <= len[n - 1]))
			rc = -1;
		n++;
	}
	free(dup);
	return rc || !n ? -1 : n;
}

/* into a rate table of COLL_COST_RATES points and its count */
static int parse_rates(const char *s, struct coll_copy_rate *rates, int *nrates)
{
	size_t len[COLL_COST_RATES];
	double val[COLL_COST_RATES];
	int n = parse_points(s, rate_units, 1, true, len, val);
	*nrates = n > 0 ? n : 0;
	for (int i = 0; i < n; i++)
		rates[i] = (struct coll_copy_rate){ len[i], val[i] };
	return n > 0 ? 0 : -1;
}

/* "8:0.05,64:40ns": a time by message size (bare: us) */
static int parse_times(const char *s, struct coll_cost_table *t)
{
	size_t len[COLL_COST_RATES];
	double val[COLL_COST_RATES];
	int n = parse_points(s, time_units, 1e-6, false, len, val);
	t->n = n > 0 ? n : 0;
	for (int i = 0; i < n; i++)
		t->pt[i] = (struct coll_cost_point){ len[i], val[i] };
	return n > 0 ? 0 : -1;
}

/* the names of the COLL_BULK_* methods, as options and --json spell them */
static const char *const bulk_names[] = { [COLL_BULK_COPY] = "copy", [COLL_BULK_SPLIT] = "split",
					  [COLL_BULK_MOVE] = "move", [COLL_BULK_RING] = "ring" };

/* "0:move,256K:split": how a rendezvous copy (or an eager read, which
 * may go through the ring: read) goes by its size, sizes ascending, into
 * the n steps at b */
static int parse_bulk(const char *s, struct coll_bulk_step *b, int *nb, bool read)
{
	char buf[512], *save = NULL;
	int n = 0;

	if (!s || strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *c = strchr(t, ':');
		size_t len;
		int h = -1;

		if (!c || n >= COLL_COST_RATES)
			return -1;
		*c++ = '\0';
		if (parse_size(t, &len) || (n > 0 && len <= b[n - 1].len))
			return -1;
		for (int k = 0; k <= (read ? COLL_BULK_RING : COLL_BULK_MOVE); k++)
			if (strcmp(c, bulk_names[k]) == 0)
				h = k;
		if (h < 0)
			return -1;
		b[n++] = (struct coll_bulk_step){ len, h };
	}
	*nb = n;
	return n > 0 ? 0 : -1;
}

/* --steps: per step and rank, when the rank's last command of the step
 * finished in the last call (ends), and when the call before ended */
struct step_times {
	int nranks, last;
	uint32_t steps;
	double *ends;  /* steps x nranks, < 0: none */
	double before;
};

static void step_finished(void *ctx, int call, int rank, const struct coll_cmd *c, double t)
{
	struct step_times *st = ctx;
	if (call == st->last - 1 && t > st->before)
		st->before = t;
	if (call != st->last || c->step >= st->steps)
		return;
	double *e = &st->ends[(size_t)c->step * (size_t)st->nranks + (size_t)rank];
	if (t > *e)
		*e = t;
}

static void show_steps(const struct step_times *st)
{
	printf("\nwhen each rank's last command of each step finished, us (the last of %d calls, from the "
	       "call before's end)\n%-5s", st->last + 1, "step");
	for (int r = 0; r < st->nranks; r++)
		printf(" %8d", r);
	printf(" %8s\n", "done");
	for (uint32_t s = 0; s < st->steps; s++) {
		double done = -1;
		printf("%-5u", s);
		for (int r = 0; r < st->nranks; r++) {
			double e = st->ends[(size_t)s * (size_t)st->nranks + (size_t)r];
			if (e < 0)
				printf(" %8s", ".");
			else
				printf(" %8.3f", (e - st->before) * 1e6);
			if (e > done)
				done = e;
		}
		if (done < 0) /* a step without commands (the v-variants' empty blocks) */
			printf(" %8s\n", ".");
		else
			printf(" %8.3f\n", (done - st->before) * 1e6);
	}
}

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

/* How an option's value is read and where it goes: one row per option
 * (opt_defs), so getopt's table, the short options and the parsing all
 * come from the same place. */
enum opt_kind {
	OPT_FLAG,   /* no value: *(bool *)dst = true */
	OPT_OP,     /* enum coll_op */
	OPT_ALGO,   /* enum coll_algo */
	OPT_INT,    /* int in [lo, hi] */
	OPT_SIZE,   /* size_t, K/M/G suffixes; at least lo */
	OPT_TIME,   /* seconds; a bare number is in units of scale */
	OPT_RATE,   /* bytes per second, > 0 */
	OPT_NUM,    /* a bare number, at most hi */
	OPT_FRAC,   /* a bare number in [0, 1) */
	OPT_COUNTS, /* comma-separated sizes (the v-variants) */
	OPT_RATES,  /* comma-separated SIZE:RATE (struct coll_cost_params *): copy rates */
	OPT_LOCAL,  /* the same: local copy rates */
	OPT_READ,   /* the same: eager read rates */
	OPT_MOVE,   /* the same: one-way move rates (through the segment) */
	OPT_EAGER,  /* the same: eager copy rates (the sender's, with --cpu-copies) */
	OPT_SAME,   /* the same: copy, read and eager rates between two ranks of one core */
	OPT_TIMES,  /* comma-separated SIZE:TIME (struct coll_cost_table *) */
	OPT_BULK,   /* comma-separated SIZE:copy|split|move (struct coll_cost_params *) */
	OPT_RBULK,  /* the same for eager reads, or ring */
	OPT_HELP,
};

struct opt_def {
	const char *name;
	char short_name; /* 0: long only */
	enum opt_kind kind;
	void *dst;
	bool *given;     /* set true when the option is seen (NULL: none) */
	long lo, hi;     /* OPT_INT bounds; OPT_SIZE: lo; OPT_NUM: hi */
	double scale;    /* OPT_TIME: a bare number's unit */
	bool optional;   /* the value may be left out (--acked-sends[=TIME]) */
};

/* Reads one option's value (arg may be NULL for optional values). 0, or
 * the exit status after saying what was wrong; -1: --help was printed. */
static int opt_apply(const struct opt_def *d, const char *arg, size_t **countsp, int *ncounts)
{
	char what[40];
	snprintf(what, sizeof what, "--%s", d->name);
	if (d->given)
		*d->given = true;
	if (!arg && d->kind != OPT_FLAG && d->kind != OPT_HELP)
		return d->optional ? 0 : bad(what, "");
	size_t sz;
	switch (d->kind) {
	case OPT_FLAG:
		*(bool *)d->dst = true;
		return 0;
	case OPT_HELP:
		usage(stdout);
		return -1;
	case OPT_OP:
		return coll_op_parse(arg, d->dst) ? bad(what, arg) : 0;
	case OPT_ALGO:
		if (coll_algo_parse(arg, d->dst) == 0)
			return 0;
		fprintf(stderr, "ptltool coll: unknown algorithm '%s'\n\n", arg);
		usage(stderr);
		return 2;
	case OPT_INT:
		return parse_int(arg, (int)d->lo, (int)d->hi, d->dst) ? bad(what, arg) : 0;
	case OPT_SIZE:
		if (parse_size(arg, &sz) || sz < (size_t)d->lo)
			return bad(what, arg);
		*(size_t *)d->dst = sz;
		return 0;
	case OPT_TIME:
		return parse_unit(arg, time_units, d->scale, d->dst) ? bad(what, arg) : 0;
	case OPT_RATE:
		return parse_unit(arg, rate_units, 1, d->dst) || *(double *)d->dst <= 0 ? bad(what, arg) : 0;
	case OPT_NUM:
		return parse_unit(arg, no_units, 1, d->dst) || *(double *)d->dst > (double)d->hi ? bad(what, arg) : 0;
	case OPT_FRAC:
		return parse_unit(arg, no_units, 1, d->dst) || !(*(double *)d->dst >= 0 && *(double *)d->dst < 1)
			       ? bad(what, arg)
			       : 0;
	case OPT_RATES:
	case OPT_LOCAL:
	case OPT_READ:
	case OPT_MOVE:
	case OPT_EAGER:
	case OPT_SAME: {
		struct coll_cost_params *cp = d->dst;
		struct coll_copy_rate *r = d->kind == OPT_LOCAL  ? cp->local
					   : d->kind == OPT_READ  ? cp->read
					   : d->kind == OPT_MOVE  ? cp->move
					   : d->kind == OPT_EAGER ? cp->eager
					   : d->kind == OPT_SAME  ? cp->same
								  : cp->rates;
		int *n = d->kind == OPT_LOCAL   ? &cp->nlocal
			 : d->kind == OPT_READ  ? &cp->nread
			 : d->kind == OPT_MOVE  ? &cp->nmove
			 : d->kind == OPT_EAGER ? &cp->neager
			 : d->kind == OPT_SAME  ? &cp->nsame
						: &cp->nrates;
		return parse_rates(arg, r, n) ? bad(what, arg) : 0;
	}
	case OPT_TIMES:
		return parse_times(arg, d->dst) ? bad(what, arg) : 0;
	case OPT_BULK:
	case OPT_RBULK: {
		struct coll_cost_params *cp = d->dst;
		bool rd = d->kind == OPT_RBULK;
		return parse_bulk(arg, rd ? cp->read_bulk : cp->bulk, rd ? &cp->nread_bulk : &cp->nbulk, rd) ? bad(what, arg)
													     : 0;
	}
	case OPT_COUNTS:
		free(*countsp);
		*countsp = NULL;
		return parse_counts(arg, countsp, ncounts) ? bad(what, arg) : 0;
	}
	return bad(what, arg);
}

/* "KEY": [[size, rate], ...], */
static void json_rates(const char *key, const struct coll_copy_rate *r, int n)
{
	printf("\"%s\": [", key);
	for (int i = 0; i < n; i++)
		printf("%s[%zu, %.6g]", i ? ", " : "", r[i].len, r[i].rate);
	printf("], ");
}

/* "KEY": [[size, us], ...], */
static void json_times(const char *key, const struct coll_cost_table *t)
{
	printf("\"%s\": [", key);
	for (int i = 0; i < t->n; i++)
		printf("%s[%zu, %.6g]", i ? ", " : "", t->pt[i].len, t->pt[i].time * 1e6);
	printf("], ");
}

/* "KEY": [[size, "copy|split|move|ring"], ...], */
static void json_steps(const char *key, const struct coll_bulk_step *b, int n)
{
	printf("\"%s\": [", key);
	for (int i = 0; i < n; i++)
		printf("%s[%zu, \"%s\"]", i ? ", " : "", b[i].len, bulk_names[b[i].how]);
	printf("], ");
}

/* *counts is the caller's to free, whatever this returns */
static int coll_main(int argc, char **argv, size_t **countsp)
{
	struct coll_req req;
	memset(&req, 0, sizeof req);
	req.algo = COLL_ALGO_AUTO;
	req.elem_size = 4;
	req.num_chunks = 1;
	req.ports = 1;
	bool have_op = false, have_ranks = false, have_bytes = false, show = false, json = false, steps = false;
	struct coll_cost_params cp = { .alpha = 1.5e-6, .beta = 10e9, .gamma = 0.1e-9 };
	int ncounts = 0;
	const struct opt_def defs[] = {
		{ "op", 0, OPT_OP, &req.op, &have_op, 0, 0, 0, false },
		{ "ranks", 'n', OPT_INT, &req.nranks, &have_ranks, 1, COLL_MAX_RANKS, 0, false },
		{ "bytes", 'b', OPT_SIZE, &req.bytes, &have_bytes, 0, 0, 0, false },
		{ "ports", 'p', OPT_INT, &req.ports, NULL, 1, 64, 0, false },
		{ "algo", 'a', OPT_ALGO, &req.algo, NULL, 0, 0, 0, false },
		{ "chunks", 'c', OPT_INT, &req.num_chunks, NULL, 1, COLL_MAX_CHUNKS, 0, false },
		{ "elem", 0, OPT_SIZE, &req.elem_size, NULL, 1, 0, 0, false },
		{ "root", 0, OPT_INT, &req.root, NULL, 0, COLL_MAX_RANKS, 0, false },
		{ "input", 0, OPT_FLAG, &req.input, NULL, 0, 0, 0, false },
		{ "alpha", 0, OPT_TIME, &cp.alpha, NULL, 0, 0, 1e-6, false },
		{ "beta", 0, OPT_RATE, &cp.beta, NULL, 0, 0, 0, false },
		{ "gamma", 0, OPT_TIME, &cp.gamma, NULL, 0, 0, 1e-9, false },
		{ "overhead", 0, OPT_TIME, &cp.o, NULL, 0, 0, 1e-6, false },
		{ "call", 0, OPT_TIME, &cp.call, NULL, 0, 0, 1e-6, false },
		{ "ranks-per-core", 0, OPT_NUM, &cp.ranks_per_core, NULL, 0, 1024, 0, false },
		{ "acked-sends", 0, OPT_TIME, &cp.ack_alpha, &cp.acked_sends, 0, 0, 1e-6, true },
		{ "noack-max", 0, OPT_SIZE, &cp.noack_max, NULL, 0, 0, 0, false },
		{ "rndv-min", 0, OPT_SIZE, &cp.rndv_min, &cp.rndv, 0, 0, 0, false },
		{ "rndv-cost", 0, OPT_TIME, &cp.rndv_cost, NULL, 0, 0, 1e-6, false },
		{ "split-min", 0, OPT_SIZE, &cp.split_min, NULL, 0, 0, 0, false },
		{ "split-cost", 0, OPT_TIME, &cp.split_cost, NULL, 0, 0, 1e-6, false },
		{ "recv-post", 0, OPT_TIME, &cp.recv_post, NULL, 0, 0, 1e-6, false },
		{ "lazy-max", 0, OPT_SIZE, &cp.lazy_max, NULL, 0, 0, 0, false },
		{ "cmd-cost", 0, OPT_TIME, &cp.cmd_cost, NULL, 0, 0, 1e-6, false },
		{ "cores", 0, OPT_INT, &cp.cores, NULL, 0, 1 << 20, 0, false },
		{ "switch-cost", 0, OPT_TIME, &cp.switch_cost, NULL, 0, 0, 1e-6, false },
		{ "core-wait", 0, OPT_TIME, &cp.core_wait, &cp.core_wait_set, 0, 0, 1e-6, false },
		{ "switch-shift", 0, OPT_TIME, &cp.switch_shift, &cp.switch_shift_set, 0, 0, 1e-6, false },
		{ "switch-exchange", 0, OPT_TIME, &cp.switch_exch, &cp.switch_exch_set, 0, 0, 1e-6, false },
		{ "calls", 0, OPT_INT, &cp.calls, NULL, 1, COLL_COST_MAX_CALLS, 0, false },
		{ "unexpected", 0, OPT_FLAG, &cp.unexpected, NULL, 0, 0, 0, false },
		{ "bound", 0, OPT_FLAG, &cp.bound, NULL, 0, 0, 0, false },
		{ "poll-window", 0, OPT_TIME, &cp.poll_window, NULL, 0, 0, 1e-6, false },
		{ "switch-jitter", 0, OPT_FRAC, &cp.switch_jitter, NULL, 0, 0, 0, false },
		{ "same-core-rates", 0, OPT_SAME, &cp, NULL, 0, 0, 0, false },
		{ "cpu-copies", 0, OPT_FLAG, &cp.cpu_copies, NULL, 0, 0, 0, false },
		{ "inline-max", 0, OPT_SIZE, &cp.inline_max, NULL, 0, 0, 0, false },
		{ "recv-copy-cost", 0, OPT_TIME, &cp.recv_copy_cost, NULL, 0, 0, 1e-6, false },
		{ "read-rates", 0, OPT_READ, &cp, NULL, 0, 0, 0, false },
		{ "move-rates", 0, OPT_MOVE, &cp, NULL, 0, 0, 0, false },
		{ "move-piece", 0, OPT_SIZE, &cp.move_piece, NULL, 0, 1, 0, false },
		{ "move-gaps", 0, OPT_TIMES, &cp.move_gap, NULL, 0, 0, 0, false },
		{ "xch-gaps", 0, OPT_TIMES, &cp.xch_gap, NULL, 0, 0, 0, false },
		{ "bulk-methods", 0, OPT_BULK, &cp, NULL, 0, 0, 0, false },
		{ "read-methods", 0, OPT_RBULK, &cp, NULL, 0, 0, 0, false },
		{ "small-max", 0, OPT_SIZE, &cp.small_max, NULL, 0, 0, 0, false },
		{ "small-overhead", 0, OPT_TIME, &cp.small_o, NULL, 0, 0, 1e-6, false },
		{ "small-alpha", 0, OPT_TIME, &cp.small_alpha, NULL, 0, 0, 1e-6, false },
		{ "copy-rates", 0, OPT_RATES, &cp, NULL, 0, 0, 0, false },
		{ "small-recv-costs", 0, OPT_TIMES, &cp.small_recv, NULL, 0, 0, 0, false },
		{ "recv-costs", 0, OPT_TIMES, &cp.recv, NULL, 0, 0, 0, false },
		{ "local-copy-rates", 0, OPT_LOCAL, &cp, NULL, 0, 0, 0, false },
		{ "eager-rates", 0, OPT_EAGER, &cp, NULL, 0, 0, 0, false },
		{ "wake-cost", 0, OPT_TIME, &cp.wake_cost, NULL, 0, 0, 1e-6, false },
		{ "cross-costs", 0, OPT_TIMES, &cp.cross, NULL, 0, 0, 0, false },
		{ "small-cross-costs", 0, OPT_TIMES, &cp.small_cross, NULL, 0, 0, 0, false },
		{ "one-host", 0, OPT_FLAG, &req.one_host, NULL, 0, 0, 0, false },
		{ "shared-cores", 0, OPT_FLAG, &req.shared_cores, NULL, 0, 0, 0, false },
		{ "counts", 0, OPT_COUNTS, NULL, NULL, 0, 0, 0, false },
		{ "show", 's', OPT_FLAG, &show, NULL, 0, 0, 0, false },
		{ "steps", 0, OPT_FLAG, &steps, NULL, 0, 0, 0, false },
		{ "json", 'j', OPT_FLAG, &json, NULL, 0, 0, 0, false },
		{ "help", 'h', OPT_HELP, NULL, NULL, 0, 0, 0, false },
	};
	enum { NDEFS = sizeof defs / sizeof defs[0], OPT_BASE = 256 };
	struct option opts[NDEFS + 1];
	char shorts[2 * NDEFS + 2] = ":";
	size_t ns = 1;
	for (int i = 0; i < NDEFS; i++) {
		bool takes = defs[i].kind != OPT_FLAG && defs[i].kind != OPT_HELP;
		opts[i] = (struct option){ defs[i].name,
					   !takes ? no_argument : defs[i].optional ? optional_argument : required_argument,
					   NULL, OPT_BASE + i };
		if (defs[i].short_name) {
			shorts[ns++] = defs[i].short_name;
			if (takes)
				shorts[ns++] = ':';
		}
	}
	opts[NDEFS] = (struct option){ NULL, 0, NULL, 0 };
	shorts[ns] = 0;

	int ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		int i = ch >= OPT_BASE && ch < OPT_BASE + NDEFS ? ch - OPT_BASE : -1;
		for (int k = 0; k < NDEFS && i < 0 && ch != ':' && ch != '?'; k++)
			if (defs[k].short_name == ch)
				i = k;
		if (i >= 0) {
			int rc = opt_apply(&defs[i], optarg, countsp, &ncounts);
			if (rc)
				return rc < 0 ? 0 : rc;
			continue;
		}
		if (ch == ':')
			fprintf(stderr, "ptltool coll: option '%s' needs a value\n\n", argv[optind - 1]);
		else
			fprintf(stderr, "ptltool coll: unknown option '%s'\n\n", argv[optind - 1]);
		usage(stderr);
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "ptltool coll: unexpected argument '%s'\n\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (*countsp) {
		bool matrix = req.op == COLL_OP_ALLTOALL;
		if (req.op != COLL_OP_GATHER && req.op != COLL_OP_SCATTER && req.op != COLL_OP_ALLGATHER
		    && req.op != COLL_OP_REDUCE_SCATTER && !matrix) {
			fprintf(stderr, "ptltool coll: --counts is for gather, scatter, allgather, "
			        "alltoall and reduce_scatter\n\n");
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
	struct step_times st = { 0 };
	bool have_cost = false;
	if (info.entries <= COLL_TOOL_MAX_ENTRIES) {
		rc = coll_expand(&req, &s, msg, sizeof msg);
		if (!rc && steps && !json && req.nranks <= SHOW_MAX_RANKS && s->info.steps <= SHOW_MAX_STEPS) {
			st.nranks = req.nranks;
			st.steps = s->info.steps;
			st.last = cp.calls > 1 ? cp.calls - 1 : 0;
			st.ends = malloc((size_t)st.steps * (size_t)st.nranks * sizeof *st.ends + 1);
			for (size_t i = 0; st.ends && i < (size_t)st.steps * (size_t)st.nranks; i++)
				st.ends[i] = -1;
			if (st.ends) {
				cp.on_finish = step_finished;
				cp.on_finish_ctx = &st;
			}
		}
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
		if (cp.rndv && cp.split_min)
			printf("\"split_min\": %zu, \"split_us\": %.6g, ", cp.split_min, cp.split_cost * 1e6);
		else
			printf("\"split_min\": null, \"split_us\": null, ");
		printf("\"recv_post_us\": %.6g, \"lazy_max\": %zu, \"cmd_us\": %.6g, ", cp.recv_post * 1e6, cp.lazy_max,
		       cp.cmd_cost * 1e6);
		if (cp.cores > 0 && cp.cores < req.nranks)
			printf("\"cores\": %d, \"switch_us\": %.6g, ", cp.cores, cp.switch_cost * 1e6);
		else
			printf("\"cores\": null, \"switch_us\": null, ");
		printf("\"cpu_copies\": %s, \"inline_max\": %zu, \"recv_copy_us\": %.6g, ", cp.cpu_copies ? "true" : "false",
		       cp.inline_max, cp.recv_copy_cost * 1e6);
		printf("\"small_max\": %zu, \"small_overhead_us\": %.6g, \"small_alpha_us\": %.6g, ",
		       cp.small_max, cp.small_o * 1e6, cp.small_alpha * 1e6);
		json_rates("copy_rates", cp.rates, cp.nrates);
		json_rates("read_rates", cp.read, cp.nread);
		json_rates("move_rates", cp.move, cp.nmove);
		printf("\"move_piece\": %zu, ", cp.move_piece);
		json_times("move_gap_us", &cp.move_gap);
		json_times("xch_gap_us", &cp.xch_gap);
		json_steps("bulk_methods", cp.bulk, cp.nbulk);
		json_steps("read_methods", cp.read_bulk, cp.nread_bulk);
		printf("\"wake_us\": %.6g, ", cp.wake_cost * 1e6);
		if (cp.cores > 0 && cp.cores < req.nranks && cp.bound)
			printf("\"bound\": true, \"poll_window_us\": %.6g, \"switch_jitter\": %.6g, \"turns\": %.6g, ",
			       cp.poll_window * 1e6, cp.switch_jitter, cost.turns);
		else
			printf("\"bound\": false, ");
		if (cp.cores > 0 && cp.cores < req.nranks && cp.core_wait_set)
			printf("\"core_wait_us\": %.6g, ", cp.core_wait * 1e6);
		else
			printf("\"core_wait_us\": null, ");
		printf("\"calls\": %d, \"unexpected\": %s, ", cp.calls > 1 ? cp.calls : 1, cp.unexpected ? "true" : "false");
		json_rates("local_copy_rates", cp.local, cp.nlocal);
		json_rates("eager_rates", cp.eager, cp.neager);
		json_rates("same_core_rates", cp.same, cp.nsame);
		json_times("small_recv_us", &cp.small_recv);
		json_times("recv_us", &cp.recv);
		json_times("cross_us", &cp.cross);
		json_times("small_cross_us", &cp.small_cross);
		printf("\"one_host\": %s, \"shared_cores\": %s, ", req.one_host ? "true" : "false",
		       req.shared_cores ? "true" : "false");
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
		if (req.counts) {
			size_t sum = 0;
			for (int i = 0; i < ncounts; i++)
				sum += req.counts[i];
			printf("bytes         by --counts, %zu in all (element %zu)\n", sum, req.elem_size);
		} else {
			printf("bytes         %zu (element %zu)\n", req.bytes, req.elem_size);
		}
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
			if (cp.cores > 0 && cp.cores < req.nranks)
				printf("cores         %d shared by %d ranks, %.4g us a switch\n", cp.cores, req.nranks,
				       cp.switch_cost * 1e6);
			if (cp.cores > 0 && cp.cores < req.nranks && cp.bound)
				printf("bound         rank r on core r %% %d; poll window %.4g us, switches jittered by %.3g: "
				       "%.3f switches a core a call\n", cp.cores, cp.poll_window * 1e6, cp.switch_jitter, cost.turns);
			if (cp.cores > 0 && cp.cores < req.nranks && cp.core_wait_set)
				printf("core wait     a waiting rank sees its message %.4g us after it came\n", cp.core_wait * 1e6);
			if (cp.cores > 0 && cp.cores < req.nranks && (cp.switch_shift_set || cp.switch_exch_set))
				printf("step switches %.4g us in a shift's steps, %.4g us in a pair exchange's\n",
				       (cp.switch_shift_set ? cp.switch_shift : cp.switch_cost) * 1e6,
				       (cp.switch_exch_set ? cp.switch_exch : cp.switch_cost) * 1e6);
			if (cp.calls > 1 || cp.unexpected)
				printf("calls         %d back to back (the period)%s\n", cp.calls > 1 ? cp.calls : 1,
				       cp.unexpected ? ", sends go before their receives" : "");
			if (cp.o > 0 || cp.call > 0 || cp.ranks_per_core > 1 || cp.acked_sends || cp.rndv)
				printf("software      overhead %.4g us/message, call %.4g us, %.3g ranks/core%s%s; "
				       "busiest CPU %.3f us\n", cp.o * 1e6, cp.call * 1e6,
				       cp.ranks_per_core > 1 ? cp.ranks_per_core : 1,
				       cp.acked_sends ? ", acked sends" : "",
				       !cp.rndv ? "" : cp.split_min ? ", rendezvous copies by the sender (split with the receiver)"
				       : ", rendezvous copies by the sender", cost.busiest_cpu * 1e6);
		} else
			printf("predicted     n/a (%llu commands: too many to simulate)\n",
			       (unsigned long long)info.entries);
		if (show) {
			if (s)
				show_grid(s);
			else
				printf("\n(--show: schedule too large to hold)\n");
		}
		if (steps && have_cost && st.ends)
			show_steps(&st);
		else if (steps)
			printf("\n(--steps: up to %d ranks and %d steps, with a prediction)\n", SHOW_MAX_RANKS, SHOW_MAX_STEPS);
	}
	free(st.ends);
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
