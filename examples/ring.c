/*
 * ring: a token goes around the ranks with PtlPut into match lists, then
 * every rank fetches its left neighbour's greeting with PtlGet and prints
 * what its event queue saw.
 *
 *   ptlrun -n 4 examples/ring
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <portals3.h>
#include <ptl_runtime.h>

#define TOKEN_PT 4
#define GREETING_PT 5
#define TOKEN_BITS 0x70c3e1ull
#define GREETING_BITS 0x9ee7ull

static void check(int rc, const char *what)
{
	if (rc != PTL_OK) {
		fprintf(stderr, "ring: rank %d: %s: %s\n", PtlRtRank(), what, PtlErrorStr((unsigned)rc));
		exit(1);
	}
}

/* Every event is logged; wait_for returns once an event of the wanted kind
 * has arrived that no earlier wait_for took (events may come in any order
 * relative to each other, e.g. our own ACK and a neighbour's put). */
static char log_buf[8192];
static size_t log_used;
static unsigned seen[PTL_EVENT_UNLINK + 1], taken[PTL_EVENT_UNLINK + 1];

static void wait_for(ptl_handle_eq_t eq, ptl_event_kind_t want)
{
	while (seen[want] == taken[want]) {
		ptl_event_t ev;
		int rc = PtlEQWait(eq, &ev);
		if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
			check(rc, "PtlEQWait");
		log_used += (size_t)snprintf(log_buf + log_used, sizeof log_buf - log_used,
					     "  seq %2u %-22s initiator %u/%u rlength %3" PRIu64
					     " mlength %3" PRIu64 " offset %" PRIu64 "%s\n",
					     ev.sequence, PtlEventKindStr(ev.type), ev.initiator.nid,
					     ev.initiator.pid, ev.rlength, ev.mlength, ev.offset,
					     ev.ni_fail_type == PTL_NI_OK ? "" : " FAILED");
		if (ev.type <= PTL_EVENT_UNLINK)
			seen[ev.type]++;
	}
	taken[want]++;
}

int main(void)
{
	int nif;
	check(PtlInit(&nif), "PtlInit");
	int rank = PtlRtRank(), size = PtlRtSize();
	ptl_handle_ni_t ni;
	check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni), "PtlNIInit");
	ptl_handle_eq_t eq;
	check(PtlEQAlloc(ni, 64, PTL_EQ_HANDLER_NONE, &eq), "PtlEQAlloc");

	/* Where the token lands: one 8-byte slot, any sender, kept. */
	uint64_t token = 0;
	ptl_process_id_t any = { PTL_NID_ANY, PTL_PID_ANY };
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	check(PtlMEAttach(ni, TOKEN_PT, any, TOKEN_BITS, 0, PTL_RETAIN, PTL_INS_AFTER, &me), "PtlMEAttach");
	ptl_md_t tmd = { .start = &token, .length = sizeof token, .threshold = PTL_MD_THRESH_INF,
			 .options = PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, .eq_handle = eq };
	check(PtlMDAttach(me, tmd, PTL_RETAIN, &md), "PtlMDAttach(token)");

	/* What the right neighbour fetches. */
	char greeting[64];
	snprintf(greeting, sizeof greeting, "hello from rank %d of %d", rank, size);
	ptl_handle_me_t gme;
	ptl_handle_md_t gmd;
	check(PtlMEAttach(ni, GREETING_PT, any, GREETING_BITS, 0, PTL_RETAIN, PTL_INS_AFTER, &gme), "PtlMEAttach");
	ptl_md_t gd = { .start = greeting, .length = sizeof greeting, .threshold = PTL_MD_THRESH_INF,
			.options = PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE, .eq_handle = eq };
	check(PtlMDAttach(gme, gd, PTL_RETAIN, &gmd), "PtlMDAttach(greeting)");
	check(PtlRtBarrier(), "PtlRtBarrier");

	ptl_process_id_t right, left;
	check(PtlRtId((rank + 1) % size, &right), "PtlRtId");
	check(PtlRtId((rank + size - 1) % size, &left), "PtlRtId");

	uint64_t out = 0;
	ptl_md_t omd = { .start = &out, .length = sizeof out, .threshold = PTL_MD_THRESH_INF,
			 .options = 0, .eq_handle = eq };
	ptl_handle_md_t omd_h;
	check(PtlMDBind(ni, omd, PTL_RETAIN, &omd_h), "PtlMDBind");
	if (rank != 0) {
		wait_for(eq, PTL_EVENT_PUT_END);
		out = token + 1;
	} else {
		out = 1;
	}
	check(PtlPut(omd_h, PTL_ACK_REQ, right, TOKEN_PT, 0, TOKEN_BITS, 0, 0), "PtlPut");
	wait_for(eq, PTL_EVENT_ACK);
	if (rank == 0)
		wait_for(eq, PTL_EVENT_PUT_END);

	char fetched[64] = "";
	ptl_md_t fmd = { .start = fetched, .length = sizeof fetched, .threshold = 2,
			 .options = 0, .eq_handle = eq };
	ptl_handle_md_t fmd_h;
	check(PtlMDBind(ni, fmd, PTL_UNLINK, &fmd_h), "PtlMDBind");
	check(PtlGet(fmd_h, left, GREETING_PT, 0, GREETING_BITS, 0), "PtlGet");
	wait_for(eq, PTL_EVENT_REPLY_END);
	/* Our greeting is fetched by the right neighbour: wait for that too,
	 * so every rank's log shows both sides. */
	wait_for(eq, PTL_EVENT_GET_END);
	check(PtlRtBarrier(), "PtlRtBarrier");

	for (int r = 0; r < size; r++) {
		if (r == rank) {
			printf("rank %d: token %" PRIu64 "%s; fetched \"%s\"\n%s", rank, token,
			       rank == 0 ? (token == (uint64_t)size ? " (went all the way round)" : " (WRONG)") : "",
			       fetched, log_buf);
			fflush(stdout);
		}
		check(PtlRtBarrier(), "PtlRtBarrier");
	}
	int ok = strncmp(fetched, "hello from rank", 15) == 0 && (rank != 0 || token == (uint64_t)size);
	PtlNIFini(ni);
	PtlFini();
	return ok ? 0 : 1;
}
