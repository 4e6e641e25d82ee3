/* mpi_fail.c: dead peers become errors instead of hangs.
 *
 * libptl fails the transfers it has in flight to a peer it finds dead (the
 * ACK or REPLY comes back with PTL_NI_FAIL), but much of what MPI waits on
 * is no transfer at all: a posted receive, a rendezvous send whose buffer
 * waits for the receiver's get, a send queued for credits. Nothing would
 * ever end those, so the waits look: when one has brought nothing for
 * MPI_DEAD_CHECK_S, it asks PtlRtRankFailed about the peers it depends on.
 * A rank found dead is remembered (operations to it then fail when they
 * start, without asking again) and every pending operation that depends on
 * it fails at once, wherever it is waited on.
 *
 * An MPI_ANY_SOURCE receive depends on every member of its communicator: it
 * fails when it has waited that long with a member dead, as ULFM's pending
 * wildcard receives do, since the message might have been the dead rank's;
 * once matched to an unexpected message whose data is still to be pulled
 * or got, it depends on that message's sender alone (one matched at its
 * posted entry ends through its transfer: its failed REPLY, or
 * defer_run). A message the rank sent before it died is still received.
 * A receive whose pull waits for a landing depends on the senders of the
 * pulls that hold them too. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

bool mpi_idle_due_clock(struct mpi_idle *w, bool empty)
{
	w->passes = 0;
	double now = mpi_now();
	/* An empty pass of a wait has waited its slice (100 ms) for nothing:
	 * look at once. A test or an eventful pass only starts the period. */
	if (w->next == 0 && !empty) {
		w->next = now + MPI_DEAD_CHECK_S;
		return false;
	}
	if (now < w->next)
		return false;
	w->next = now + MPI_DEAD_CHECK_S;
	return true;
}

int mpi_fail_init(void)
{
	mpi_g.dead = calloc((size_t)mpi_g.wsize, 1);
	mpi_g.ndead = 0;
	return mpi_g.dead ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

void mpi_fail_fini(void)
{
	free(mpi_g.dead);
	mpi_g.dead = NULL;
	mpi_g.ndead = 0;
}

static bool depends_on(const struct mpi_req *r, int w)
{
	if (r->kind == MPI_REQ_SEND)
		return r->busy && r->wpeer == w;
	/* MPI_ANY_SOURCE receives are left to their waits (see above) until
	 * they match: one whose message's data is still to be pulled or got
	 * depends on its sender (r->wpeer, set by mpi_pt2pt.c's ux_deliver) */
	return r->kind == MPI_REQ_RECV && !r->done && (r->peer >= 0 || r->matched) && r->wpeer == w;
}

static void fail_if_depends(struct mpi_req *r, void *arg)
{
	int w = *(int *)arg;
	if (depends_on(r, w))
		mpi_req_fail_dead(r, w);
}

bool mpi_rank_dead(int w, bool ask)
{
	if (w < 0 || w >= mpi_g.wsize || w == mpi_g.wrank || !mpi_g.dead)
		return false;
	if (mpi_g.dead[w] || !ask)
		return mpi_g.dead[w];
	int failed = 0;
	if (PtlRtRankFailed(w, &failed) != PTL_OK || !failed)
		return false;
	mpi_g.dead[w] = 1;
	mpi_g.ndead++;
	mpi_req_each(fail_if_depends, &w);
	return true;
}

int mpi_comm_dead(const struct mpi_comm *c, bool ask)
{
	if (!ask && !mpi_g.ndead)
		return -1;
	for (int i = 0; i < c->size; i++)
		if (mpi_rank_dead(c->world[i], ask))
			return c->world[i];
	return -1;
}

void mpi_req_check(struct mpi_req *r)
{
	if (r->kind == MPI_REQ_SEND) {
		if (r->busy && mpi_rank_dead(r->wpeer, true))
			mpi_req_fail_dead(r, r->wpeer);
		return;
	}
	if (r->kind != MPI_REQ_RECV || r->done)
		return;
	if (r->matched && r->stage == MPI_SS_LANDQ)
		mpi_landings_check();
	if (r->done)
		return;
	if (r->peer >= 0 || (r->matched && r->wpeer >= 0)) {
		if (mpi_rank_dead(r->wpeer, true))
			mpi_req_fail_dead(r, r->wpeer);
		return;
	}
	if (r->peer == MPI_ANY_SOURCE && !r->matched && r->comm && r->comm->in_use) {
		int w = mpi_comm_dead(r->comm, true);
		if (w >= 0)
			mpi_req_fail_dead(r, w);
	}
}

void mpi_dead_msg(char *buf, size_t n, const struct mpi_comm *c, int w)
{
	int cr = -1;
	for (int i = 0; c && c->in_use && i < c->size && cr < 0; i++)
		if (c->world[i] == w)
			cr = i;
	if (cr < 0 || mpi_comm_handle(c) == MPI_COMM_WORLD)
		snprintf(buf, n, "rank %d of MPI_COMM_WORLD died", w);
	else
		snprintf(buf, n, "rank %d of %s (rank %d of MPI_COMM_WORLD) died", cr, c->name, w);
}

int mpi_err_dead(const char *fn, const struct mpi_req *r)
{
	char m[200];
	mpi_dead_msg(m, sizeof m, r->comm, r->dead);
	MPI_Comm h = r->comm && r->comm->in_use ? mpi_comm_handle(r->comm) : MPI_COMM_WORLD;
	if (r->kind == MPI_REQ_RECV && r->peer == MPI_ANY_SOURCE && r->matched)
		return mpi_err(h, MPI_ERR_PROC_FAILED, fn,
			       "%s (the MPI_ANY_SOURCE receive had matched a message of it, whose data did not all come)", m);
	if (r->kind == MPI_REQ_RECV && r->peer == MPI_ANY_SOURCE)
		return mpi_err(h, MPI_ERR_PROC_FAILED, fn, "%s (the MPI_ANY_SOURCE receive may have waited for it)", m);
	return mpi_err(h, MPI_ERR_PROC_FAILED, fn, "%s", m);
}
