/* mpi_inter.c: intercommunicators (MPI-3.1 6.6): MPI_Intercomm_create,
 * MPI_Intercomm_merge, MPI_Comm_remote_size, MPI_Comm_remote_group, and
 * MPI_Comm_dup, MPI_Comm_split and MPI_Comm_create of an intercommunicator.
 *
 * An intercommunicator is a struct mpi_comm whose group, world and size
 * are the REMOTE group's and whose rank is this process's rank in its
 * LOCAL group. Point-to-point then runs unchanged: a destination or source
 * names a remote rank, and the match bits carry the sender's local rank,
 * which is the rank its receiver names it by. The local group and a private
 * intracommunicator over it (local), for agreements among the local
 * members, hang off it. MPI_Comm_split and MPI_Comm_create of an
 * intercommunicator are here too; its collectives are in mpi_intercoll.c.
 *
 * The context id is agreed by both groups: each group's largest next free
 * id (an allreduce over its members), swapped by the two leaders, the
 * larger given to every member; so, as for intracommunicators, no process
 * holds two communicators with one id. After creation the leaders (local
 * rank 0 of each side) swap on the intercommunicator's collective context,
 * which nothing else uses. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

/* Swaps ints with the remote leader over ic's collective context. It
 * gives up after half of PTL_COLL_TIMEOUT: the local members wait for the
 * leader's word in a broadcast with the whole deadline, so they hear of
 * the failure from it before their own wait ends. */
static int leaders_swap(struct mpi_comm *ic, int *mine, int nmine, int *theirs, int ntheirs, const char *fn,
			MPI_Comm comm)
{
	struct mpi_req *rr, *sr;
	int rc = mpi_irecv(theirs, ntheirs, MPI_INT, 0, 0, ic, ic->ctx + 1, &rr);
	if (rc)
		return mpi_err(comm, rc, fn, "cannot post the leaders' exchange");
	rc = mpi_isend(mine, nmine, MPI_INT, 0, 0, ic, ic->ctx + 1, MPI_MODE_STD, &sr);
	if (rc) {
		mpi_req_give_up(rr);
		return mpi_err(comm, rc, fn, "cannot start the leaders' exchange");
	}
	double t0 = mpi_now(), limit = mpi_g.coll_timeout / 2;
	int w1 = mpi_wait_req(sr, limit);
	double left = limit - (mpi_now() - t0);
	int w2 = rr->done ? MPI_SUCCESS
		 : mpi_g.coll_timeout <= 0 ? mpi_wait_req(rr, 0) /* no deadline */
		 : left > 0 ? mpi_wait_req(rr, left) : MPI_ERR_TIMEOUT;
	rc = w1 ? w1 : w2 ? w2 : rr->err ? rr->err : sr->err;
	mpi_req_give_up(rr);
	mpi_req_give_up(sr);
	if (rc == MPI_ERR_TIMEOUT)
		return mpi_err(comm, rc, fn, "the remote leader (world rank %d) did not answer within %.1f s "
			       "(half of PTL_COLL_TIMEOUT)", ic->world[0], limit);
	return rc ? mpi_err(comm, rc, fn, "the exchange with the remote leader (world rank %d) failed", ic->world[0])
		  : MPI_SUCCESS;
}

/* An intercommunicator with context ctx to the remote group (n members,
 * world ranks rw), over the local intracommunicator lc, which it takes. */
static int inter_new(int ctx, MPI_Comm lc, int n, const int *rw, MPI_Errhandler errh, const char *fn,
		     MPI_Comm comm, MPI_Comm *newcomm)
{
	struct mpi_comm *l = mpi_comm_get(lc);
	MPI_Group g = mpi_group_new(n, rw);
	*newcomm = g ? mpi_comm_new(ctx, g, "") : MPI_COMM_NULL;
	if (*newcomm == MPI_COMM_NULL) {
		PMPI_Comm_free(&lc);
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "too many communicators");
	}
	struct mpi_comm *c = mpi_comm_get(*newcomm);
	c->inter = true;
	c->rank = l->rank;
	c->local = lc;
	c->local_size = l->size;
	c->errh = errh;
	snprintf(c->name, sizeof c->name, "intercommunicator of %d and %d ranks (context %d)", l->size, n, ctx);
	return MPI_SUCCESS;
}

/* One round of a context id agreement over two groups (mpi_comm.c): the
 * maxima of the local group's offers, swapped by the leaders for the other
 * group's, the leader's result told to the rest. */
struct both_round {
	struct mpi_comm *l; /* the local group's communicator */
	int leader;         /* its rank in l */
	int (*swap)(struct both_round *b, int *mine, int *theirs); /* 3 ints, on the leader */
	MPI_Comm comm;      /* the call's, for its errors */
	const char *fn;
	struct mpi_comm *ic;               /* inter_swap: over this intercommunicator */
	MPI_Comm peer;                     /* peer_swap: over peer to remote_leader */
	int remote_leader, tag;
	int extra, their_extra;
};

static int inter_swap(struct both_round *b, int *mine, int *theirs)
{
	return leaders_swap(b->ic, mine, 3, theirs, 3, b->fn, b->comm);
}

static int peer_swap(struct both_round *b, int *mine, int *theirs)
{
	MPI_Status st;
	return PMPI_Sendrecv(mine, 3, MPI_INT, b->remote_leader, b->tag, theirs, 3, MPI_INT, b->remote_leader, b->tag,
			     b->peer, &st);
}

static int both_round(void *arg, int *v)
{
	struct both_round *b = arg;
	int rc = mpi_allreduce_int_max(b->l, v, 2);
	int mine[3] = { v[0], v[1], b->extra }, theirs[3] = { 0, 0, 0 };
	bool leader = b->l->rank == b->leader;
	if (!rc && leader)
		rc = b->swap(b, mine, theirs);
	/* the leader's view: both sides' maxima, the other side's extra, and
	 * whether it failed */
	int got[4] = { mine[0] > theirs[0] ? mine[0] : theirs[0], mine[1] > theirs[1] ? mine[1] : theirs[1], theirs[2],
		       rc != MPI_SUCCESS };
	if (!rc || leader) {
		int brc = PMPI_Bcast(got, 4, MPI_INT, b->leader, mpi_comm_handle(b->l));
		rc = rc ? rc : brc;
	}
	if (!rc && got[3])
		rc = mpi_err(b->comm, MPI_ERR_OTHER, b->fn, "the local leader could not reach the remote group");
	v[0] = got[0];
	v[1] = got[1];
	b->their_extra = got[2];
	return rc;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
			  MPI_Comm *newintercomm)
{
	const char *fn = "MPI_Intercomm_create";
	MPI_CHECK_INIT(fn);
	struct mpi_comm *l = mpi_comm_get(local_comm);
	if (!l || l->inter)
		return mpi_err(local_comm, MPI_ERR_COMM, fn, "local_comm %d is %s", local_comm,
			       l ? "an intercommunicator" : "invalid");
	if (local_leader < 0 || local_leader >= l->size)
		return mpi_err(local_comm, MPI_ERR_RANK, fn, "local_leader %d is not a rank of %s (0 to %d)",
			       local_leader, l->name, l->size - 1);
	if (!newintercomm)
		return mpi_err(local_comm, MPI_ERR_ARG, fn, "newintercomm is NULL");
	struct mpi_comm *p = NULL;
	if (l->rank == local_leader) {	/* only the leader needs peer_comm */
		p = mpi_comm_get(peer_comm);
		if (!p)
			return mpi_err(local_comm, MPI_ERR_COMM, fn, "peer_comm %d is invalid", peer_comm);
		if (remote_leader < 0 || remote_leader >= p->size || remote_leader == p->rank)
			return mpi_err(local_comm, MPI_ERR_RANK, fn, "remote_leader %d is not another rank of %s",
				       remote_leader, p->name);
		if (tag < 0 || tag > MPI_TAG_MAX)
			return mpi_err(local_comm, MPI_ERR_TAG, fn, "invalid tag %d (0 to %d)", tag, MPI_TAG_MAX);
	}
	MPI_Comm lc;
	int rc = PMPI_Comm_dup(local_comm, &lc);
	if (rc)
		return rc;
	struct mpi_comm *lp = mpi_comm_get(lc);
	/* the remote size, then the remote group's world ranks */
	int info = l->size, *rw = NULL;
	if (l->rank == local_leader) {
		int theirs;
		MPI_Status st;
		rc = PMPI_Sendrecv(&info, 1, MPI_INT, remote_leader, tag, &theirs, 1, MPI_INT, remote_leader, tag,
				   peer_comm, &st);
		if (!rc) {
			rw = malloc(sizeof(int) * (size_t)(theirs > 0 ? theirs : 1));
			rc = rw ? PMPI_Sendrecv(l->world, l->size, MPI_INT, remote_leader, tag, rw, theirs, MPI_INT,
						remote_leader, tag, peer_comm, &st)
				: mpi_err(local_comm, MPI_ERR_NO_MEM, fn, "out of memory");
			info = theirs;
		}
		if (rc)
			info = -1;	/* tell the others it failed */
	}
	if (!rc || l->rank == local_leader) {
		int brc = PMPI_Bcast(&info, 1, MPI_INT, local_leader, lc);
		rc = rc ? rc : brc;
	}
	if (!rc && info < 0)
		rc = mpi_err(local_comm, MPI_ERR_OTHER, fn, "the leader (rank %d) could not reach the remote group",
			     local_leader);
	if (!rc && l->rank != local_leader) {
		rw = malloc(sizeof(int) * (size_t)(info > 0 ? info : 1));
		if (!rw)
			rc = mpi_err(local_comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	if (!rc)
		rc = PMPI_Bcast(rw, info, MPI_INT, local_leader, lc);
	for (int i = 0; !rc && i < info; i++)
		for (int j = 0; j < l->size; j++)
			if (rw[i] == l->world[j]) {
				rc = mpi_err(local_comm, MPI_ERR_COMM, fn, "world rank %d is in both groups", rw[i]);
				break;
			}
	struct both_round b = { .l = lp, .leader = local_leader, .swap = peer_swap, .comm = local_comm, .fn = fn,
				.peer = peer_comm, .remote_leader = remote_leader, .tag = tag };
	int ctx;
	if (!rc)
		rc = mpi_comm_ctx_agree(both_round, &b, local_comm, fn, &ctx);
	if (!rc)
		rc = inter_new(ctx, lc, info, rw, l->errh, fn, local_comm, newintercomm);
	else
		PMPI_Comm_free(&lc);
	free(rw);
	return rc;
}

/* A context id for a new communicator over both groups of c; extra (an
 * int of this side's) is swapped for the other side's on the way. */
static int both_ctx(struct mpi_comm *c, MPI_Comm comm, const char *fn, int *extra, int *ctx, int *their_extra)
{
	struct both_round b = { .l = mpi_comm_get(c->local), .leader = 0, .swap = inter_swap, .comm = comm, .fn = fn,
				.ic = c, .extra = *extra };
	int rc = mpi_comm_ctx_agree(both_round, &b, comm, fn, ctx);
	*their_extra = b.their_extra;
	return rc;
}

/* comm as an intercommunicator, or the error to return. */
static int inter_arg(const char *fn, MPI_Comm comm, struct mpi_comm **c)
{
	MPI_CHECK_INIT(fn);
	*c = mpi_comm_get(comm);
	if (!*c || !(*c)->inter)
		return mpi_err(comm, MPI_ERR_COMM, fn, "communicator %d is %s", comm,
			       *c ? "not an intercommunicator" : "invalid");
	return MPI_SUCCESS;
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
	const char *fn = "MPI_Intercomm_merge";
	struct mpi_comm *c;
	int rc = inter_arg(fn, intercomm, &c);
	if (rc)
		return rc;
	if (!newintracomm)
		return mpi_err(intercomm, MPI_ERR_ARG, fn, "newintracomm is NULL");
	struct mpi_comm *l = mpi_comm_get(c->local);
	/* the side with high false comes first; on a tie, the side whose
	 * leader has the lower world rank */
	int key = (high ? 1 << 30 : 0) | l->world[0], their_key, ctx;
	rc = both_ctx(c, intercomm, fn, &key, &ctx, &their_key);
	if (rc)
		return rc;
	int n = l->size + c->size, *w = malloc(sizeof(int) * (size_t)n);
	if (!w)
		return mpi_err(intercomm, MPI_ERR_NO_MEM, fn, "out of memory");
	bool first = key < their_key;
	memcpy(w + (first ? 0 : c->size), l->world, sizeof(int) * (size_t)l->size);
	memcpy(w + (first ? l->size : 0), c->world, sizeof(int) * (size_t)c->size);
	MPI_Group g = mpi_group_new(n, w);
	free(w);
	char name[MPI_MAX_OBJECT_NAME];
	snprintf(name, sizeof name, "merge of %.100s", c->name);
	*newintracomm = g ? mpi_comm_new(ctx, g, name) : MPI_COMM_NULL;
	if (*newintracomm == MPI_COMM_NULL)
		return mpi_err(intercomm, MPI_ERR_NO_MEM, fn, "too many communicators");
	mpi_comm_get(*newintracomm)->errh = c->errh;
	return MPI_SUCCESS;
}

int mpi_inter_dup(struct mpi_comm *c, MPI_Comm comm, MPI_Comm *newcomm)
{
	MPI_Comm lc;
	int rc = PMPI_Comm_dup(c->local, &lc);
	if (rc)
		return rc;
	int none = 0, their, ctx;
	rc = both_ctx(c, comm, "MPI_Comm_dup", &none, &ctx, &their);
	if (!rc)
		rc = inter_new(ctx, lc, c->size, c->world, c->errh, "MPI_Comm_dup", comm, newcomm);
	else
		PMPI_Comm_free(&lc);
	return rc;
}

void mpi_inter_free(struct mpi_comm *c)
{
	if (c->inter && c->local != MPI_COMM_NULL)
		PMPI_Comm_free(&c->local);
}

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
	struct mpi_comm *c;
	int rc = inter_arg("MPI_Comm_remote_size", comm, &c);
	if (!rc)
		*size = c->size;
	return rc;
}

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
	struct mpi_comm *c;
	int rc = inter_arg("MPI_Comm_remote_group", comm, &c);
	if (rc)
		return rc;
	mpi_group_get(c->group)->refs++;
	*group = c->group;
	return MPI_SUCCESS;
}

/* Ranks by key, ties by rank: for qsort over (color, key, rank, world). */
static int by_key(const void *a, const void *b)
{
	const int *x = a, *y = b;
	return x[1] != y[1] ? (x[1] > y[1]) - (x[1] < y[1]) : (x[2] > y[2]) - (x[2] < y[2]);
}

/* MPI_Comm_split of an intercommunicator (MPI-3.1 6.4.2): the local
 * members of one color, ordered by key, with the remote members of the
 * same color; MPI_COMM_NULL where either side has none. The local part is
 * a split of the local intracommunicator; each group's (color, key, rank,
 * world rank) list crosses between the leaders; the context id is agreed
 * by both groups as for MPI_Comm_dup. */
int mpi_inter_split(struct mpi_comm *c, MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *fn)
{
	struct mpi_comm *l = mpi_comm_get(c->local);
	int nl = l->size, nr = c->size, me[4] = { color, key, l->rank, l->world[l->rank] };
	int *loc = malloc(sizeof(int) * 4 * (size_t)nl), *rem = malloc(sizeof(int) * 4 * (size_t)nr);
	int *rw = malloc(sizeof(int) * (size_t)nr);
	MPI_Comm lc = MPI_COMM_NULL;
	int rc = loc && rem && rw ? MPI_SUCCESS : mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	if (!rc)
		rc = PMPI_Comm_split(c->local, color, key, &lc);
	if (!rc)
		rc = PMPI_Allgather(me, 4, MPI_INT, loc, 4, MPI_INT, c->local);
	if (!rc && l->rank == 0)
		rc = leaders_swap(c, loc, 4 * nl, rem, 4 * nr, fn, comm);
	int ok = !rc; /* the leader's word on the swap */
	if (!rc || l->rank == 0) {
		int brc = PMPI_Bcast(&ok, 1, MPI_INT, 0, c->local);
		rc = rc ? rc : brc;
	}
	if (!rc && !ok)
		rc = mpi_err(comm, MPI_ERR_OTHER, fn, "the local leader could not reach the remote group");
	if (!rc)
		rc = PMPI_Bcast(rem, 4 * nr, MPI_INT, 0, c->local);
	int none = 0, their, ctx;
	if (!rc)
		rc = both_ctx(c, comm, fn, &none, &ctx, &their);
	int n = 0;
	if (!rc && color != MPI_UNDEFINED) {
		qsort(rem, (size_t)nr, 4 * sizeof(int), by_key);
		for (int i = 0; i < nr; i++)
			if (rem[4 * i] == color)
				rw[n++] = rem[4 * i + 3];
	}
	*newcomm = MPI_COMM_NULL;
	if (!rc && n > 0 && lc != MPI_COMM_NULL) {
		rc = inter_new(ctx, lc, n, rw, c->errh, fn, comm, newcomm);
		lc = MPI_COMM_NULL; /* taken, or freed on failure */
	}
	if (lc != MPI_COMM_NULL)
		PMPI_Comm_free(&lc);
	free(loc);
	free(rem);
	free(rw);
	return rc;
}
