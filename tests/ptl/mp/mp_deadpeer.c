/*
 * Answers for a dead target (driven by deadpeer.sh, 4 ranks, with and
 * without a progress thread): rank 0 has an operation in flight to each
 * other rank when it dies, and gets the ACK or REPLY that libptl makes in
 * the target's stead (ptl_peer_fail). Those name the target, so they
 * carry its uid and jid, as its own answers would have. Ranks 1 to 3 are
 * each another user (PTL_TEST_UID: our uid + rank, set before PtlInit) so
 * that the uid tells whose it is.
 *
 * Each target dies in its EQ handler at the START of rank 0's request,
 * before it answers (_exit without PtlFini: ptlrun lets the job run on):
 * rank 1 an ACK'd put of large data (its SEND_END waits for the answer,
 * and is rank 0's own event, with rank 0's uid), rank 2 a get, rank 3 a
 * get-put, rank 3 only DELAY_S after the START, so that it dies while
 * rank 0 already waits for it. Rank 0 simply waits in PtlEQWait: the shm
 * NAL sees a death only when it looks, and libptl must look while answers
 * from it are due (once a second, ptl_peers_probe), so each answer must
 * come within prompt_s of the wait's start; a watchdog ends a wait that
 * hangs after hang_s, saying what it waited for. Then the events, and
 * PtlRtRankFailed says each target gone without having been asked before.
 */
#include <portals3.h>
#include <ptl_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mp_plain.h"

#define PT 6
#define AC 1 /* the targets' entry for rank 0's uid (entry 0 admits their own) */
#define BITS 0x5eedull
#define DELAY_S 1.5 /* rank 3 dies this long after its request's START */

/* A target's EQ handler: its first event is the START of rank 0's
 * request, and it dies there (rank 3 DELAY_S later), the answer never
 * sent. */
static void die(ptl_event_t *ev)
{
	(void)ev;
	mp_plain_die(me == 3 ? DELAY_S : 0);
}

/* Whether ev names `who` (its id, uid, jid) and failed as `fail` says;
 * prints the first difference. */
static int names(const ptl_event_t *ev, ptl_process_id_t who, ptl_uid_t uid, ptl_jid_t jid, ptl_ni_fail_t fail)
{
	if (ev->initiator.nid == who.nid && ev->initiator.pid == who.pid && ev->uid == uid && ev->jid == jid &&
	    ev->ni_fail_type == fail)
		return 1;
	fprintf(stderr,
		"rank %d: %s: initiator %u/%u uid %u jid %u fail %d, expected %u/%u uid %u jid %u fail %d\n", me,
		PtlEventKindStr(ev->type), (unsigned)ev->initiator.nid, (unsigned)ev->initiator.pid,
		(unsigned)ev->uid, (unsigned)ev->jid, (int)ev->ni_fail_type, (unsigned)who.nid, (unsigned)who.pid,
		(unsigned)uid, (unsigned)jid, (int)fail);
	return 0;
}

int main(void)
{
	/* Another user per target, before PtlInit reads it (the launcher's
	 * rank variable, as libptl's runtime reads it). */
	const char *rank = getenv("PTL_RT_RANK");
	const ptl_uid_t real = (ptl_uid_t)getuid();
	if (rank && strcmp(rank, "0")) {
		char uid[16];
		snprintf(uid, sizeof uid, "%u", (unsigned)real + (unsigned)atoi(rank));
		setenv("PTL_TEST_UID", uid, 1);
	} else {
		unsetenv("PTL_TEST_UID");
	}
	ptl_handle_ni_t ni;
	if (mp_plain_init(&ni, 4))
		return 1;
	const int size = PtlRtSize();
	ptl_jid_t jid;
	ptl_uid_t uid;
	ptl_process_id_t self;
	CHECK(PtlGetJid(ni, &jid) == PTL_OK);
	CHECK(PtlGetUid(ni, &uid) == PTL_OK);
	CHECK(PtlGetId(ni, &self) == PTL_OK);
	CHECK(uid == real + (ptl_uid_t)me); /* the option took */

	/* Large enough that rank 1's put goes as a bulk request. */
	const size_t big = PtlRtMaxInline() + 64;
	char *buf = calloc(1, big);
	CHECK(buf);
	const ptl_process_id_t any = { PTL_NID_ANY, PTL_PID_ANY };
	if (me != 0) {
		ptl_handle_eq_t eq;
		ptl_handle_me_t mh;
		ptl_handle_md_t md;
		ptl_md_t t = { .start = buf, .length = big, .threshold = PTL_MD_THRESH_INF,
			       .options = PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE };
		CHECK(PtlEQAlloc(ni, 8, die, &eq) == PTL_OK);
		t.eq_handle = eq;
		CHECK(PtlACEntry(ni, AC, any, real, jid, PT) == PTL_OK);
		CHECK(PtlMEAttach(ni, PT, any, BITS, 0, PTL_RETAIN, PTL_INS_AFTER, &mh) == PTL_OK);
		CHECK(PtlMDAttach(mh, t, PTL_RETAIN, &md) == PTL_OK);
		return mp_plain_await_death(eq, "request");
	}

	/* Rank 0: one EQ per target; START events off (not under test). */
	ptl_handle_eq_t eq[4];
	ptl_process_id_t id[4];
	for (int r = 1; r < size; r++) {
		CHECK(PtlEQAlloc(ni, 8, PTL_EQ_HANDLER_NONE, &eq[r]) == PTL_OK);
		CHECK(PtlRtId(r, &id[r]) == PTL_OK);
	}
	uint64_t word = 1, old = 0;
	ptl_md_t m = { .start = buf, .length = big, .threshold = PTL_MD_THRESH_INF,
		       .options = PTL_MD_EVENT_START_DISABLE, .eq_handle = eq[1] };
	ptl_handle_md_t putmd, getmd, swapmd, oldmd;
	CHECK(PtlMDBind(ni, m, PTL_RETAIN, &putmd) == PTL_OK);
	m.length = 8;
	m.eq_handle = eq[2];
	CHECK(PtlMDBind(ni, m, PTL_RETAIN, &getmd) == PTL_OK);
	m.start = &word;
	m.eq_handle = eq[3];
	CHECK(PtlMDBind(ni, m, PTL_RETAIN, &swapmd) == PTL_OK);
	m.start = &old;
	CHECK(PtlMDBind(ni, m, PTL_RETAIN, &oldmd) == PTL_OK);
	CHECK(PtlRtBarrier() == PTL_OK);
	CHECK(PtlPut(putmd, PTL_ACK_REQ, id[1], PT, AC, BITS, 0, 0) == PTL_OK);
	CHECK(PtlGet(getmd, id[2], PT, AC, BITS, 0) == PTL_OK);
	CHECK(PtlGetPut(oldmd, swapmd, id[3], PT, AC, BITS, 0, 0) == PTL_OK);

	/* Per target: our SEND_END (the get's and get-put's logged by the
	 * call, the bulk put's with the failure), then the answer made for
	 * the dead target, in its name. Nothing asks PtlRtRankFailed. */
	static const char *const what[4] = { "", "the SEND_END and ACK of the large put to rank 1",
					     "the REPLY of the get from rank 2",
					     "the REPLY of the get-put with rank 3" };
	const struct mp_dead_limits lim = mp_dead_limits();
	const double t0 = now_s();
	for (int r = 1; r < size; r++) {
		ptl_event_t ev;
		mp_watch(lim.hang_s,
			 "rank 0: still waiting in PtlEQWait after %u s for %s: libptl did not notice that the "
			 "target died\n",
			 lim.hang_s, what[r]);
		CHECK(PtlEQWait(eq[r], &ev) == PTL_OK);
		CHECK(ev.type == PTL_EVENT_SEND_END);
		CHECK(names(&ev, self, real, jid, r == 1 ? PTL_NI_FAIL : PTL_NI_OK));
		CHECK(PtlEQWait(eq[r], &ev) == PTL_OK);
		mp_unwatch();
		const double took = now_s() - t0;
		printf("rank 0: rank %d's answer came %.2f s into the wait\n", r, took);
		if (took > lim.prompt_s) {
			fprintf(stderr, "rank 0: %s came %.2f s into the wait, more than %.0f s\n", what[r], took,
				lim.prompt_s);
			return 1;
		}
		CHECK(ev.type == (r == 1 ? PTL_EVENT_ACK : PTL_EVENT_REPLY_END));
		CHECK(names(&ev, id[r], real + (ptl_uid_t)r, jid, PTL_NI_FAIL));
		CHECK(ev.mlength == 0);
		CHECK(PtlEQGet(eq[r], &ev) == PTL_EQ_EMPTY);
		int failed = 0;
		CHECK(PtlRtRankFailed(r, &failed) == PTL_OK);
		CHECK(failed == 1);
	}
	CHECK(old == 0); /* nothing came back */
	printf("rank 0: the dead targets' answers carry their uid and jid\n");
	free(buf);
	PtlNIFini(ni);
	PtlFini();
	return 0;
}
