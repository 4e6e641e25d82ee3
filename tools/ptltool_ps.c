/* ptltool ps: the ptl processes on this host. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptltool.h"
#include "ptltool_view.h"

static void ptltool_ps_row(pid_t pid, const struct ptl_view_proc *v, void *arg)
{
	(void)arg;
	unsigned eqs = 0;
	for (uint32_t i = 0; i < v->neqs && i < PTL_VIEW_MAX_EQS; i++)
		eqs += v->eqs[i].in_use != 0;
	printf("%8d %016" PRIx64 " %5d %5d %-3s %4u %-8s %-12s %s\n", (int)pid, v->jobid, v->rank,
	       v->size, v->ni_up ? "up" : "-", eqs, v->waiting ? "waiting" : "running", v->nals, v->prog);
}

int ptltool_ps_main(int argc, char **argv)
{
	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			printf("usage: ptltool ps\n  lists the ptl processes on this host\n");
			return 0;
		}
		fprintf(stderr, "ptltool ps: unexpected argument '%s'\nusage: ptltool ps\n", argv[1]);
		return 2;
	}
	printf("%8s %-16s %5s %5s %-3s %4s %-8s %-12s %s\n", "PID", "JOB", "RANK", "SIZE", "NI",
	       "EQS", "STATE", "NALS", "PROGRAM");
	ptltool_view_each(ptltool_ps_row, NULL);
	return 0;
}
