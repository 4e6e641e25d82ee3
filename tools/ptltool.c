/* ptltool: inspect ptl processes, traces and schedules. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ptltool.h"

struct ptltool_cmd {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *summary;
};

static const struct ptltool_cmd ptltool_cmds[] = {
	{ "info", ptltool_info_main, "version, NALs, topology and RDMA devices of this host" },
	{ "ps", ptltool_ps_main, "list ptl processes on this host" },
	{ "eq", ptltool_eq_main, "show a live process's NIs, status registers and event queues" },
	{ "coll", ptltool_coll_main, "expand, choose and cost a collective schedule" },
	{ "trace", ptltool_trace_main, "show, summarize, expand and compare MPI traces" },
};

static void ptltool_usage(FILE *out)
{
	fprintf(out, "usage: ptltool COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof ptltool_cmds / sizeof ptltool_cmds[0]; i++)
		fprintf(out, "  %-6s %s\n", ptltool_cmds[i].name, ptltool_cmds[i].summary);
	fprintf(out, "\n'ptltool COMMAND --help' describes one command; see ptltool(1).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		ptltool_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		ptltool_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ptltool (ptl) %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof ptltool_cmds / sizeof ptltool_cmds[0]; i++)
		if (!strcmp(argv[1], ptltool_cmds[i].name))
			return ptltool_cmds[i].main(argc - 1, argv + 1);
	fprintf(stderr, "ptltool: unknown command '%s'\n\n", argv[1]);
	ptltool_usage(stderr);
	return 2;
}
