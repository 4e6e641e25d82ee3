/* ptltool trace: show, summarize, expand and compare MPI traces written
 * by the ptl tracer (tracer/). Reads compressed and flat trace files. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ptltool.h"
#include "trc.h"

static void trace_usage(FILE *out)
{
	fprintf(out,
		"usage: ptltool trace show FILE\n"
		"       ptltool trace stats FILE\n"
		"       ptltool trace expand FILE [--rank R] [--times]\n"
		"       ptltool trace diff [--sig] A B\n"
		"\n"
		"show    the compressed structure: loops, nesting, parameter lists, participants\n"
		"stats   ranks, events represented, nodes, loops, bytes, compression ratio\n"
		"expand  the exact flat event sequence of rank R (default: the file's own rank, or 0)\n"
		"diff    exit 0 when both traces expand to the same events on every rank,\n"
		"        else print the first difference and exit 1 (--sig: call sites must match too)\n"
		"Exit status 2 on a usage error or an unreadable file. See ptltool-trace(1).\n");
}

static int load(struct trc_trace *t, const char *path)
{
	char err[512];
	if (trc_read_file(t, path, err, sizeof err)) {
		fprintf(stderr, "ptltool trace: %s\n", err);
		return -1;
	}
	return 0;
}

static int parse_rank(const char *s, int32_t *r)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > INT32_MAX)
		return -1;
	*r = (int32_t)v;
	return 0;
}

struct pctx {
	FILE *out;
	int times;
};

static int print_one(const struct trc_flat *e, void *ctx)
{
	struct pctx *p = ctx;
	char line[4096];
	trc_flat_format(e, line, sizeof line);
	if (p->times)
		fprintf(p->out, "%s t=%" PRIu64 "ns\n", line, e->tns);
	else
		fprintf(p->out, "%s\n", line);
	return 0;
}

static int cmd_expand(int argc, char **argv)
{
	const char *path = NULL;
	int32_t rank = -1;
	struct pctx p = { stdout, 0 };
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rank") && i + 1 < argc) {
			if (parse_rank(argv[++i], &rank)) {
				fprintf(stderr, "ptltool trace expand: --rank wants a rank number, not '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--times")) {
			p.times = 1;
		} else if (!path && argv[i][0] != '-') {
			path = argv[i];
		} else {
			trace_usage(stderr);
			return 2;
		}
	}
	if (!path) {
		trace_usage(stderr);
		return 2;
	}
	struct trc_trace t;
	if (load(&t, path))
		return 2;
	if (rank < 0)
		rank = t.rank >= 0 ? t.rank : 0;
	if (rank >= t.nranks) {
		fprintf(stderr, "ptltool trace expand: %s has ranks 0-%d, not %d\n", path, t.nranks - 1, rank);
		trc_trace_free(&t);
		return 2;
	}
	if (!trc_rset_has(&t.all, rank))
		fprintf(stderr, "ptltool trace expand: %s holds no events of rank %d\n", path, rank);
	trc_expand(&t, rank, print_one, &p);
	trc_trace_free(&t);
	return 0;
}

static int cmd_show(int argc, char **argv)
{
	if (argc != 2) {
		trace_usage(stderr);
		return 2;
	}
	struct trc_trace t;
	if (load(&t, argv[1]))
		return 2;
	trc_print(&t, stdout);
	trc_trace_free(&t);
	return 0;
}

static int cmd_stats(int argc, char **argv)
{
	if (argc != 2) {
		trace_usage(stderr);
		return 2;
	}
	struct trc_trace t;
	struct stat sb;
	if (load(&t, argv[1]))
		return 2;
	struct trc_stats st;
	trc_stats(&t, &st);
	struct trc_buf b = { 0 };
	trc_serialize(&t, &b);
	char rs[256];
	trc_rset_format(&t.all, rs, sizeof rs);
	static const char *const lv[] = { "dump", "node", "glob" };
	printf("file:               %s (%lld bytes)\n", argv[1],
	       stat(argv[1], &sb) ? -1LL : (long long)sb.st_size);
	printf("level:              %s%s%s\n", lv[t.level], t.flags & TRC_FL_LOSSY ? ", lossy (histograms)" : "",
	       t.flags & TRC_FL_INCOMPLETE ? ", INCOMPLETE" : "");
	printf("ranks:              %s of %d\n", rs, t.nranks);
	printf("events represented: %" PRIu64 "\n", st.events);
	printf("nodes:              %" PRIu64 " (%" PRIu64 " events, %" PRIu64 " loops)\n", st.nodes,
	       st.events_nodes, st.loops);
	printf("compressed bytes:   %zu\n", b.len);
	printf("flat bytes:         %" PRIu64 "\n", st.flat_bytes);
	printf("compression ratio:  %.1f\n", b.len ? (double)st.flat_bytes / (double)b.len : 0.0);
	trc_buf_free(&b);
	trc_trace_free(&t);
	return 0;
}

/* diff: expand A per rank into lines, then walk B's expansion against them. */
struct lines {
	char **l;
	size_t n, cap;
	int sigs;	/* compare call-site signatures too */
};

static int collect(const struct trc_flat *e, void *ctx)
{
	struct lines *L = ctx;
	char line[4096];
	trc_flat_format(e, line, sizeof line);
	/* A replay calls MPI from other call sites than the program did:
	 * by default the signature is not part of what must be equal. */
	char *at = strrchr(line, '@');
	if (!L->sigs && at && at > line)
		at[-1] = 0;
	if (L->n == L->cap) {
		size_t cap = L->cap ? 2 * L->cap : 256;
		char **l = realloc(L->l, cap * sizeof *l);
		if (!l)
			return -1;
		L->l = l;
		L->cap = cap;
	}
	if (!(L->l[L->n] = strdup(line)))
		return -1;
	L->n++;
	return 0;
}

static void lines_free(struct lines *L)
{
	for (size_t i = 0; i < L->n; i++)
		free(L->l[i]);
	free(L->l);
	memset(L, 0, sizeof *L);
}

static int cmd_diff(int argc, char **argv)
{
	int sigs = 0;
	if (argc == 4 && !strcmp(argv[1], "--sig")) {
		sigs = 1;
		argv++;
		argc--;
	}
	if (argc != 3) {
		trace_usage(stderr);
		return 2;
	}
	struct trc_trace a, b;
	if (load(&a, argv[1]))
		return 2;
	if (load(&b, argv[2])) {
		trc_trace_free(&a);
		return 2;
	}
	int rc = 0;
	if (a.nranks != b.nranks) {
		printf("job size differs: %s has %d ranks, %s has %d\n", argv[1], a.nranks, argv[2], b.nranks);
		rc = 1;
	}
	for (int32_t r = 0; r < a.nranks && !rc; r++) {
		struct lines la = { .sigs = sigs }, lb = { .sigs = sigs };
		if (trc_expand(&a, r, collect, &la) || trc_expand(&b, r, collect, &lb)) {
			fprintf(stderr, "ptltool trace diff: out of memory\n");
			rc = 2;
		}
		size_t n = la.n < lb.n ? la.n : lb.n;
		for (size_t i = 0; i < n && !rc; i++)
			if (strcmp(la.l[i], lb.l[i])) {
				printf("rank %d, event %zu differs:\n  %s: %s\n  %s: %s\n", r, i, argv[1], la.l[i],
				       argv[2], lb.l[i]);
				rc = 1;
			}
		if (!rc && la.n != lb.n) {
			printf("rank %d: %s has %zu events, %s has %zu; first extra: %s\n", r, argv[1], la.n, argv[2],
			       lb.n, la.n > lb.n ? la.l[n] : lb.l[n]);
			rc = 1;
		}
		lines_free(&la);
		lines_free(&lb);
	}
	trc_trace_free(&a);
	trc_trace_free(&b);
	return rc;
}

int ptltool_trace_main(int argc, char **argv)
{
	if (argc < 2) {
		trace_usage(stderr);
		return 2;
	}
	const char *sub = argv[1];
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
		trace_usage(stdout);
		return 0;
	}
	if (!strcmp(sub, "show"))
		return cmd_show(argc - 1, argv + 1);
	if (!strcmp(sub, "stats"))
		return cmd_stats(argc - 1, argv + 1);
	if (!strcmp(sub, "expand"))
		return cmd_expand(argc - 1, argv + 1);
	if (!strcmp(sub, "diff"))
		return cmd_diff(argc - 1, argv + 1);
	fprintf(stderr, "ptltool trace: unknown subcommand '%s'\n", sub);
	trace_usage(stderr);
	return 2;
}
