/*
 * ptltool eq: a live process's NI, status registers and event queues, read
 * from the view it keeps in shared memory - the process is neither stopped
 * nor slowed, and may be blocked in PtlEQWait meanwhile.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptltool.h"
#include "ptltool_view.h"
#include "rt/rt.h"
#include "rt/rt_proc.h"

static const char *const ptltool_sr_names[PTL_SR_COUNT] = {
	"drops", "permission violations", "answers for vanished MDs", "peer failures", "requests refused for now",
	"match entries in use",
};

static void ptltool_eq_usage(FILE *out)
{
	fprintf(out, "usage: ptltool eq PID\n"
		     "       ptltool eq --job JOB --rank R\n"
		     "  shows a live ptl process's NI, status registers and event queues\n"
		     "  (JOB as 'ptltool ps' prints it, in hex); by PID also what one that\n"
		     "  was killed or crashed left behind (exit status 3)\n");
}

static void ptltool_eq_event(const ptl_event_t *e)
{
	printf("      seq %-6u %-22s initiator %u/%u pt %u bits 0x%016" PRIx64
	       " rlength %" PRIu64 " mlength %" PRIu64 " offset %" PRIu64 "%s%s\n",
	       e->sequence, PtlEventKindStr(e->type), e->initiator.nid, e->initiator.pid,
	       e->pt_index, e->match_bits, e->rlength, e->mlength, e->offset,
	       e->link ? " unlinked" : "", e->ni_fail_type == PTL_NI_OK ? "" : " FAILED");
}

static void ptltool_eq_one(pid_t pid, const struct ptl_view_eqref *ref)
{
	size_t len;
	const struct ptl_view_eq *q = ptltool_view_map_eq(pid, ref->index, &len);
	if (!q) {
		printf("  EQ 0x%016" PRIx64 ": gone (%s)\n", ref->handle, strerror(errno));
		return;
	}
	uint64_t w = __atomic_load_n(&q->write_seq, __ATOMIC_ACQUIRE);
	uint64_t r = __atomic_load_n(&q->read_seq, __ATOMIC_ACQUIRE);
	uint64_t pending = w - r;
	uint64_t overwritten = pending > q->count ? pending - q->count : 0;
	printf("  EQ 0x%016" PRIx64 ": size %" PRIu64 ", next sequence %" PRIu64
	       ", events pending %" PRIu64 ", dropped %" PRIu64 "\n",
	       ref->handle, q->count, w, pending - overwritten,
	       __atomic_load_n(&q->dropped, __ATOMIC_RELAXED) + overwritten);
	const ptl_event_t *ev = PTL_VIEW_EQ_EVENTS(q);
	for (uint64_t s = r + overwritten; s < w; s++) {
		ptl_event_t e = ev[s % q->count];
		/* The process may overwrite a slot while we read it: show only
		 * events whose sequence says they are the one we expect. */
		if (e.sequence != (ptl_seq_t)s)
			continue;
		ptltool_eq_event(&e);
	}
	ptltool_view_unmap(q, len);
}

static int ptltool_eq_show(pid_t pid)
{
	const struct ptl_view_proc *v = ptltool_view_map(pid);
	if (!v) {
		int err = errno;
		char view[64];
		rt_shm_view_name(view, sizeof view, (long)pid, NULL);
		if (err == ENOENT)
			fprintf(stderr, "ptltool eq: no ptl process %d on this host (no /dev/shm%s)\n",
				(int)pid, view);
		else
			fprintf(stderr, "ptltool eq: no ptl process %d on this host (%s)\n", (int)pid,
				strerror(err));
		return 1;
	}
	/* A view its process left behind (killed, crashed: no PtlFini to
	 * remove it) still says what it held when it ended, which is worth
	 * seeing; but not as a live process's: its waiting flag is stale. */
	bool gone = !rt_proc_is(pid, v->start);
	printf("process %d (%s): rank %d of %d, job %016" PRIx64 ", NALs %s%s\n", (int)pid, v->prog,
	       v->rank, v->size, v->jobid, v->nals,
	       !gone && v->waiting ? ", blocked in PtlEQWait/PtlEQPoll" : "");
	if (gone)
		printf("  NOT RUNNING: the process ended without PtlFini (killed or crashed) and left this view;\n"
		       "  what follows is its state when it ended\n");
	if (!v->ni_up) {
		printf("  no NI initialized\n");
	} else {
		const ptl_ni_limits_t *l = &v->limits;
		printf("  NI id %u/%u, limits: mes %d mds %d eqs %d ac %d pt %d iovecs %d me_list %d getput %d\n",
		       v->id.nid, v->id.pid, l->max_mes, l->max_mds, l->max_eqs, l->max_ac_index,
		       l->max_pt_index, l->max_md_iovecs, l->max_me_list, l->max_getput_md);
		printf("  status registers:");
		for (int i = 0; i < PTL_SR_COUNT; i++)
			printf("%s %s %" PRId64, i ? "," : "", ptltool_sr_names[i],
			       __atomic_load_n(&v->sr[i], __ATOMIC_RELAXED));
		printf("\n");
	}
	for (uint32_t i = 0; i < v->neqs && i < PTL_VIEW_MAX_EQS; i++)
		if (__atomic_load_n(&v->eqs[i].in_use, __ATOMIC_ACQUIRE))
			ptltool_eq_one(pid, &v->eqs[i]);
	ptltool_view_unmap(v, sizeof *v);
	return gone ? 3 : 0;
}

struct ptltool_find {
	uint64_t job;
	int rank;
	pid_t found;
};

static void ptltool_eq_find(pid_t pid, const struct ptl_view_proc *v, void *arg)
{
	struct ptltool_find *f = arg;
	if (v->jobid == f->job && v->rank == f->rank)
		f->found = pid;
}

int ptltool_eq_main(int argc, char **argv)
{
	char *end;
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		ptltool_eq_usage(stdout);
		return 0;
	}
	if (argc == 2) {
		long pid = strtol(argv[1], &end, 10);
		if (*end || pid <= 0) {
			fprintf(stderr, "ptltool eq: '%s' is not a process id\n", argv[1]);
			ptltool_eq_usage(stderr);
			return 2;
		}
		return ptltool_eq_show((pid_t)pid);
	}
	if (argc == 5 && !strcmp(argv[1], "--job") && !strcmp(argv[3], "--rank")) {
		struct ptltool_find f = { .found = 0 };
		f.job = strtoull(argv[2], &end, 16);
		if (*end || !*argv[2]) {
			fprintf(stderr, "ptltool eq: '%s' is not a job id (hex, as ptltool ps prints it)\n", argv[2]);
			return 2;
		}
		long r = strtol(argv[4], &end, 10);
		if (*end || r < 0) {
			fprintf(stderr, "ptltool eq: '%s' is not a rank\n", argv[4]);
			return 2;
		}
		f.rank = (int)r;
		ptltool_view_each(ptltool_eq_find, &f);
		if (!f.found) {
			fprintf(stderr, "ptltool eq: no live rank %d of job %s on this host\n", f.rank, argv[2]);
			return 1;
		}
		return ptltool_eq_show(f.found);
	}
	ptltool_eq_usage(stderr);
	return 2;
}
