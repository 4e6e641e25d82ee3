/* mpi_comm.c: communicators and groups.
 *
 * A communicator is a group (world ranks in order) and a context id: point
 * to point uses ctx, collectives ctx + 1, so the two never match each
 * other's messages. Each process hands out ids from its own counter
 * (mpi_g.next_ctx, up by 2); a new context is agreed by rounds of an
 * allreduce (MPI_MAX) over the parent, so no process ever holds two
 * communicators with one id, and members agree without a central server.
 *
 * In a round every member offers an id it holds for this agreement: the
 * last round's maximum if it already holds it or its counter has not
 * reached it, else a fresh one from its counter. The maximum of a round
 * in which everyone offered the same id is agreed. A blocking call's first
 * round is enough when no member has an MPI_Comm_idup under way: nothing
 * moved a counter meanwhile, so the maximum is free everywhere. With one
 * under way its rounds run in the progress of other calls, and may take
 * ids while this agreement waits - hence the rounds (MPI_Comm_idup always
 * takes two or more). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ptl_runtime.h>

#include "mpi_impl.h"

#define COMM_MAX MPI_COMM_MAX
#define GROUP_MAX 8192
/* The last context id is kept for MPI_Comm_create_group's agreement among
 * the group's members (never a communicator's own id). */
#define COMM_GROUP_CTX MPI_MAX_CTX

struct mpi_comm mpi_comms[COMM_MAX];
static struct mpi_group groups[GROUP_MAX];

struct mpi_group *mpi_group_get(MPI_Group g)
{
	if (g <= 0 || g >= GROUP_MAX || !groups[g].in_use)
		return NULL;
	return &groups[g];
}

MPI_Comm mpi_comm_handle(const struct mpi_comm *c)
{
	return c ? (MPI_Comm)(c - mpi_comms) : MPI_COMM_NULL;
}

const char *mpi_comm_name(MPI_Comm c)
{
	struct mpi_comm *cm = mpi_comm_get(c);
	return cm ? cm->name : "MPI_COMM_NULL";
}

MPI_Group mpi_group_new(int size, const int *world)
{
	for (int g = 2; g < GROUP_MAX; g++) {
		if (groups[g].in_use)
			continue;
		struct mpi_group *p = &groups[g];
		p->world = malloc(sizeof(int) * (size_t)(size + 1));
		if (!p->world)
			return MPI_GROUP_NULL;
		memcpy(p->world, world, sizeof(int) * (size_t)size);
		p->size = size;
		p->rank = MPI_UNDEFINED;
		for (int i = 0; i < size; i++)
			if (world[i] == mpi_g.wrank)
				p->rank = i;
		p->refs = 1;
		p->in_use = true;
		return g;
	}
	return MPI_GROUP_NULL;
}

static void group_unref(MPI_Group g)
{
	struct mpi_group *p = mpi_group_get(g);
	if (!p || g == MPI_GROUP_EMPTY)
		return;
	if (--p->refs == 0) {
		free(p->world);
		p->world = NULL;
		p->in_use = false;
	}
}

MPI_Comm mpi_comm_new(int ctx, MPI_Group g, const char *name)
{
	for (int c = 3; c < COMM_MAX; c++) {
		if (mpi_comms[c].in_use)
			continue;
		struct mpi_comm *p = &mpi_comms[c];
		struct mpi_group *gp = mpi_group_get(g);
		memset(p, 0, sizeof *p);
		p->in_use = true;
		p->ctx = ctx;
		p->group = g;
		p->world = gp->world;
		p->size = gp->size;
		p->rank = gp->rank;
		p->errh = MPI_ERRORS_ARE_FATAL;
		snprintf(p->name, sizeof p->name, "%s", name);
		return c;
	}
	return MPI_COMM_NULL;
}

void mpi_comm_init(void)
{
	groups[MPI_GROUP_EMPTY] = (struct mpi_group){ .refs = 1, .in_use = true, .size = 0, .rank = MPI_UNDEFINED };
	groups[MPI_GROUP_EMPTY].world = calloc(1, sizeof(int));
	int *w = malloc(sizeof(int) * (size_t)mpi_g.wsize);
	if (!w || !groups[MPI_GROUP_EMPTY].world)
		mpi_fatal(MPI_ERR_NO_MEM, "out of memory for MPI_COMM_WORLD");
	for (int i = 0; i < mpi_g.wsize; i++)
		w[i] = i;
	MPI_Group gw = mpi_group_new(mpi_g.wsize, w);
	MPI_Group gs = mpi_group_new(1, &mpi_g.wrank);
	free(w);
	struct mpi_comm *c = &mpi_comms[MPI_COMM_WORLD];
	*c = (struct mpi_comm){ .in_use = true, .ctx = 0, .group = gw, .world = groups[gw].world,
				.size = mpi_g.wsize, .rank = mpi_g.wrank, .errh = MPI_ERRORS_ARE_FATAL };
	snprintf(c->name, sizeof c->name, "MPI_COMM_WORLD");
	c = &mpi_comms[MPI_COMM_SELF];
	*c = (struct mpi_comm){ .in_use = true, .ctx = 2, .group = gs, .world = groups[gs].world, .size = 1,
				.rank = 0, .errh = MPI_ERRORS_ARE_FATAL };
	snprintf(c->name, sizeof c->name, "MPI_COMM_SELF");
	mpi_g.next_ctx = 4;
}

void mpi_comm_fini(void)
{
	for (int c = 1; c < COMM_MAX; c++) {
		if (mpi_comms[c].in_use) {
			mpi_coll_comm_free(&mpi_comms[c]);
			mpi_topo_free(&mpi_comms[c]);
		}
		mpi_comms[c].in_use = false;
	}
	for (int g = 1; g < GROUP_MAX; g++) {
		if (groups[g].in_use)
			free(groups[g].world);
		groups[g].in_use = false;
	}
}

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
	MPI_COMM_ARG("MPI_Comm_rank", comm, c);
	*rank = c->rank;
	return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
	MPI_COMM_ARG("MPI_Comm_size", comm, c);
	*size = c->inter ? c->local_size : c->size;
	return MPI_SUCCESS;
}

struct ctx_agree {
	int held;  /* the id this process keeps for the agreement, or -1 */
	int cand;  /* the last round's maximum, or -1 before the first */
	int v[2];  /* the round's offer and whether an MPI_Comm_idup is under way here; then the maxima */
};

static unsigned ctx_idups; /* MPI_Comm_idup agreements under way here */

/* This process's offer for the next round. */
static void ctx_offer(struct ctx_agree *a)
{
	if (a->cand < 0 || a->cand != a->held) {
		a->held = a->cand >= mpi_g.next_ctx ? a->cand : mpi_g.next_ctx;
		mpi_g.next_ctx = a->held + 2;
	}
	a->v[0] = a->held;
	a->v[1] = ctx_idups > 0;
}

/* The round's maxima are in a->v: whether another round is needed. */
static bool ctx_again(struct ctx_agree *a)
{
	bool quiet = a->cand < 0 && !a->v[1];
	if (a->v[0] == a->cand)
		return false;
	a->cand = a->v[0];
	if (!quiet)
		return true;
	if (a->cand >= mpi_g.next_ctx)
		mpi_g.next_ctx = a->cand + 2;
	a->held = a->cand;
	return false;
}

/* The agreed id, refused past the last (every member refuses alike). */
static int ctx_agreed(const struct ctx_agree *a, MPI_Comm comm, const char *fn, int *ctx)
{
	*ctx = a->cand;
	if (a->cand >= COMM_GROUP_CTX)
		return mpi_err(comm, MPI_ERR_INTERN, fn, "out of context ids (%d communicators made)", a->cand / 2);
	return MPI_SUCCESS;
}

int mpi_comm_ctx_agree(int (*round)(void *arg, int *v), void *arg, MPI_Comm comm, const char *fn, int *ctx)
{
	struct ctx_agree a = { -1, -1, { 0, 0 } };
	do {
		ctx_offer(&a);
		int rc = round(arg, a.v);
		if (rc)
			return rc;
	} while (ctx_again(&a));
	return ctx_agreed(&a, comm, fn, ctx);
}

/* on failure its message names the step and the ranks that did not answer */
static int intra_round(void *c, int *v)
{
	return mpi_allreduce_int_max(c, v, 2);
}

/* A fresh context id agreed by every member of c. */
static int new_ctx(struct mpi_comm *c, int *ctx, const char *fn)
{
	return mpi_comm_ctx_agree(intra_round, c, mpi_comm_handle(c), fn, ctx);
}

/* The calls that make an intracommunicator from one refuse an
 * intercommunicator (dup, split, create and merge take one: mpi_inter.c). */
#define INTRA_ARG(fn, comm, c)                                                                      \
	MPI_COMM_ARG(fn, comm, c);                                                                    \
	if (c->inter)                                                                               \
		return mpi_err(comm, MPI_ERR_COMM, fn, "%s is an intercommunicator: not provided here", c->name)

/* The duplicate of c with context ctx. */
static int dup_make(struct mpi_comm *c, MPI_Comm comm, int ctx, MPI_Comm *newcomm, const char *fn)
{
	MPI_Group g = mpi_group_new(c->size, c->world);
	char name[MPI_MAX_OBJECT_NAME];
	snprintf(name, sizeof name, "dup of %.100s", c->name);
	*newcomm = g ? mpi_comm_new(ctx, g, name) : MPI_COMM_NULL;
	if (*newcomm == MPI_COMM_NULL)
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "too many communicators");
	struct mpi_comm *d = mpi_comm_get(*newcomm);
	d->errh = c->errh;
	if (mpi_topo_copy(d, c)) { /* a duplicate keeps the topology (MPI-3.1 6.4.2) */
		PMPI_Comm_free(newcomm);
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	return MPI_SUCCESS;
}

/* The duplicate gets the attributes their copy functions give it; one
 * that fails undoes the duplicate (MPI_COMM_NULL back). */
static int dup_attrs(MPI_Comm comm, MPI_Comm *newcomm, const char *fn)
{
	int rc = mpi_attr_copy(false, comm, *newcomm, fn);
	if (rc) {
		mpi_attr_forget(false, *newcomm);
		PMPI_Comm_free(newcomm);
		*newcomm = MPI_COMM_NULL;
	}
	return rc;
}

/* The duplicate of c with the hints ch (mpi_coll_hints_make's, NULL:
 * none; freed if no duplicate comes of it), then its attributes. */
static int dup_with(struct mpi_comm *c, MPI_Comm comm, MPI_Comm *newcomm, struct mpi_coll_choice *ch,
		    const char *fn)
{
	int ctx, rc = c->inter ? mpi_inter_dup(c, comm, newcomm) : new_ctx(c, &ctx, fn);
	if (!rc && !c->inter)
		rc = dup_make(c, comm, ctx, newcomm, fn);
	if (rc) {
		free(ch);
		return rc;
	}
	mpi_coll_hints_put(mpi_comm_get(*newcomm), ch);
	return dup_attrs(comm, newcomm, fn);
}

/* A duplicate's hints into *ch: c's (MPI-4.0 7.4.2), or with_info
 * info's instead (mpi_info.c; the info checked here), before the
 * duplicate is made. */
static int dup_hints(struct mpi_comm *c, MPI_Comm comm, bool with_info, MPI_Info info, const char *fn,
		     struct mpi_coll_choice **ch)
{
	const char *algo = NULL, *ports = NULL;
	if (with_info) {
		int rc = mpi_info_check(fn, info);
		if (rc)
			return rc;
		mpi_info_hints(info, &algo, &ports);
	}
	return mpi_coll_hints_make(with_info ? NULL : c, comm, algo, ports, fn, ch);
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	const char *fn = "MPI_Comm_dup";
	MPI_COMM_ARG(fn, comm, c);
	struct mpi_coll_choice *ch;
	int rc = dup_hints(c, comm, false, MPI_INFO_NULL, fn, &ch);
	return rc ? rc : dup_with(c, comm, newcomm, ch, fn);
}

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	const char *fn = "MPI_Comm_dup_with_info";
	MPI_COMM_ARG(fn, comm, c);
	struct mpi_coll_choice *ch;
	*newcomm = MPI_COMM_NULL;
	int rc = dup_hints(c, comm, true, info, fn, &ch);
	return rc ? rc : dup_with(c, comm, newcomm, ch, fn);
}

/* MPI_Comm_idup: the agreement's rounds run as a nonblocking collective
 * over comm (mpi_icoll_rounds); the duplicate is made, its attributes
 * copied and *newcomm written when they end, as the request completes. */
struct idup {
	struct ctx_agree a;
	MPI_Comm comm;
	MPI_Comm *newcomm;
	const char *fn;                 /* MPI_Comm_idup or MPI_Comm_idup_with_info, for errors */
	struct mpi_coll_choice *choice; /* the duplicate's hints, made at the call */
};

static int idup_step(void *arg, int *v, int rc)
{
	struct idup *d = arg;
	if (!rc) {
		memcpy(d->a.v, v, sizeof d->a.v);
		if (ctx_again(&d->a)) {
			ctx_offer(&d->a);
			memcpy(v, d->a.v, sizeof d->a.v);
			return MPI_ICOLL_AGAIN;
		}
	}
	ctx_idups--;
	const char *fn = d->fn;
	struct mpi_comm *c = mpi_comm_get(d->comm);
	int ctx;
	if (!rc && !c)
		rc = mpi_err(d->comm, MPI_ERR_COMM, fn, "communicator %d was freed before its duplicate was made",
			     d->comm);
	if (!rc)
		rc = ctx_agreed(&d->a, d->comm, fn, &ctx);
	if (!rc)
		rc = dup_make(c, d->comm, ctx, d->newcomm, fn);
	if (!rc) {
		mpi_coll_hints_put(mpi_comm_get(*d->newcomm), d->choice);
		d->choice = NULL;
		rc = dup_attrs(d->comm, d->newcomm, fn);
	}
	free(d->choice);
	free(d);
	return rc;
}

static int idup_start(MPI_Comm comm, MPI_Info info, bool with_info, MPI_Comm *newcomm, MPI_Request *request,
		      const char *fn)
{
	INTRA_ARG(fn, comm, c);
	if (!newcomm || !request)
		return mpi_err(comm, MPI_ERR_ARG, fn, "%s is NULL", newcomm ? "request" : "newcomm");
	*newcomm = MPI_COMM_NULL;
	/* the hints now, whatever set_info does before the rounds end */
	struct mpi_coll_choice *ch;
	int rc = dup_hints(c, comm, with_info, info, fn, &ch);
	if (rc)
		return rc;
	struct idup *d = malloc(sizeof *d);
	if (!d) {
		free(ch);
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	*d = (struct idup){ .a = { -1, -1, { 0, 0 } }, .comm = comm, .newcomm = newcomm, .fn = fn, .choice = ch };
	ctx_idups++;
	ctx_offer(&d->a);
	return mpi_icoll_rounds(c, fn, d->a.v, 2, idup_step, d, request);
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
	return idup_start(comm, MPI_INFO_NULL, false, newcomm, request, "MPI_Comm_idup");
}

/* As MPI_Comm_dup_with_info: info's hints instead of comm's. */
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
	return idup_start(comm, info, true, newcomm, request, "MPI_Comm_idup_with_info");
}

/* MPI_COMM_TYPE_SHARED: one communicator per host (the ranks whose
 * Portals ids share this one's nid), named by its lowest rank in comm. */
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
	(void)info;
	INTRA_ARG("MPI_Comm_split_type", comm, c);
	if (split_type == MPI_UNDEFINED)
		return PMPI_Comm_split(comm, MPI_UNDEFINED, key, newcomm);
	if (split_type != MPI_COMM_TYPE_SHARED)
		return mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_split_type", "split type %d (MPI_COMM_TYPE_SHARED is %d)",
			       split_type, MPI_COMM_TYPE_SHARED);
	ptl_process_id_t me, other;
	if (PtlRtId(c->world[c->rank], &me) != PTL_OK)
		return mpi_err(comm, MPI_ERR_INTERN, "MPI_Comm_split_type", "no Portals id for this rank");
	int color = c->rank;
	for (int i = 0; i < c->rank; i++)
		if (PtlRtId(c->world[i], &other) == PTL_OK && other.nid == me.nid) {
			color = i;
			break;
		}
	return PMPI_Comm_split(comm, color, key, newcomm);
}

struct split_ent {
	int key, rank, world;
};
static int split_cmp(const void *a, const void *b)
{
	const struct split_ent *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	MPI_COMM_ARG("MPI_Comm_split", comm, c);
	if (color < 0 && color != MPI_UNDEFINED)
		return mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_split", "color %d is negative", color);
	if (c->inter)
		return mpi_inter_split(c, comm, color, key, newcomm, "MPI_Comm_split");
	int mine[2] = { color, key };
	int *all = malloc(sizeof(int) * 2 * (size_t)c->size);
	struct split_ent *e = malloc(sizeof *e * (size_t)c->size);
	int *w = malloc(sizeof(int) * (size_t)c->size);
	if (!all || !e || !w) {
		free(all);
		free(e);
		free(w);
		return mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Comm_split", "out of memory");
	}
	int rc = mpi_allgather_ints(c, mine, 2, all);
	int ctx = 0;
	if (!rc)
		rc = new_ctx(c, &ctx, "MPI_Comm_split");
	*newcomm = MPI_COMM_NULL;
	if (!rc && color != MPI_UNDEFINED) {
		int n = 0;
		for (int i = 0; i < c->size; i++)
			if (all[2 * i] == color)
				e[n++] = (struct split_ent){ all[2 * i + 1], i, c->world[i] };
		qsort(e, (size_t)n, sizeof *e, split_cmp);
		for (int i = 0; i < n; i++)
			w[i] = e[i].world;
		MPI_Group g = mpi_group_new(n, w);
		char name[MPI_MAX_OBJECT_NAME];
		snprintf(name, sizeof name, "split of %.80s (color %d)", c->name, color);
		*newcomm = g ? mpi_comm_new(ctx, g, name) : MPI_COMM_NULL;
		if (*newcomm == MPI_COMM_NULL)
			rc = mpi_err(comm, MPI_ERR_NO_MEM, "MPI_Comm_split", "too many communicators");
		else
			mpi_comm_get(*newcomm)->errh = c->errh;
	}
	free(all);
	free(e);
	free(w);
	return rc;
}

/* The group's checks for MPI_Comm_create(_group): valid, within c. */
static int group_of(struct mpi_comm *c, MPI_Comm comm, MPI_Group group, const char *fn, struct mpi_group **out)
{
	struct mpi_group *g = mpi_group_get(group);
	if (!g)
		return mpi_err(comm, MPI_ERR_GROUP, fn, "invalid group %d", group);
	for (int i = 0; i < g->size; i++) {
		bool in = false;
		for (int j = 0; j < c->size && !in; j++)
			in = c->world[j] == g->world[i];
		if (!in)
			return mpi_err(comm, MPI_ERR_GROUP, fn, "the group is not a subset of %s", c->name);
	}
	*out = g;
	return MPI_SUCCESS;
}

/* The communicator of g's members with context ctx (on members only). */
static int comm_of_group(struct mpi_comm *c, MPI_Comm comm, struct mpi_group *g, int ctx, const char *fn,
			 MPI_Comm *newcomm)
{
	MPI_Group ng = mpi_group_new(g->size, g->world);
	char name[MPI_MAX_OBJECT_NAME];
	snprintf(name, sizeof name, "subset of %.100s", c->name);
	*newcomm = ng ? mpi_comm_new(ctx, ng, name) : MPI_COMM_NULL;
	if (*newcomm == MPI_COMM_NULL)
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "too many communicators");
	mpi_comm_get(*newcomm)->errh = c->errh;
	return MPI_SUCCESS;
}

/* Of an intercommunicator: group is of the local side, and the result
 * joins it to the group the remote side gives - a split by membership,
 * ordered as the group. */
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	MPI_COMM_ARG("MPI_Comm_create", comm, c);
	struct mpi_group *g;
	int ctx;
	if (c->inter) {
		int rc = group_of(mpi_comm_get(c->local), comm, group, "MPI_Comm_create", &g);
		return rc ? rc
			  : mpi_inter_split(c, comm, g->rank == MPI_UNDEFINED ? MPI_UNDEFINED : 0, g->rank, newcomm,
					    "MPI_Comm_create");
	}
	int rc = group_of(c, comm, group, "MPI_Comm_create", &g);
	if (!rc)
		rc = new_ctx(c, &ctx, "MPI_Comm_create");
	if (rc)
		return rc;
	*newcomm = MPI_COMM_NULL;
	if (g->rank == MPI_UNDEFINED)
		return MPI_SUCCESS;
	return comm_of_group(c, comm, g, ctx, "MPI_Comm_create", newcomm);
}

/* Collective over the group only (MPI-3.1 6.4.2): the members agree on the
 * new context among themselves, on a temporary communicator of the group
 * with the reserved COMM_GROUP_CTX. Its collectives' tags start from the
 * user's tag, so calls with different tags do not take each other's
 * messages; calls of disjoint groups never exchange any. */
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	const char *fn = "MPI_Comm_create_group";
	INTRA_ARG(fn, comm, c);
	struct mpi_group *g;
	int rc = group_of(c, comm, group, fn, &g);
	if (rc)
		return rc;
	if (!newcomm)
		return mpi_err(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
	if (tag < 0 || tag > MPI_TAG_MAX)
		return mpi_err(comm, MPI_ERR_TAG, fn, "invalid tag %d (0 to %d)", tag, MPI_TAG_MAX);
	*newcomm = MPI_COMM_NULL;
	if (g->rank == MPI_UNDEFINED)	/* not a member: a local call */
		return MPI_SUCCESS;
	MPI_Group tg = mpi_group_new(g->size, g->world);
	MPI_Comm t = tg ? mpi_comm_new(COMM_GROUP_CTX, tg, "") : MPI_COMM_NULL;
	if (t == MPI_COMM_NULL)
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "too many communicators");
	struct mpi_comm *tc = mpi_comm_get(t);
	/* errors (a member that never calls: the collective's deadline) name it;
	 * c's name copied first: gcc cannot tell tc from c, both in mpi_comms */
	char cname[61];
	snprintf(cname, sizeof cname, "%s", c->name);
	snprintf(tc->name, sizeof tc->name, "the group of MPI_Comm_create_group on %s, tag %d", cname, tag);
	tc->errh = c->errh;
	tc->ncoll = (unsigned long)tag;
	int ctx;
	rc = new_ctx(tc, &ctx, fn);
	PMPI_Comm_free(&t);
	return rc ? rc : comm_of_group(c, comm, g, ctx, fn, newcomm);
}

int PMPI_Comm_free(MPI_Comm *comm)
{
	MPI_CHECK_INIT("MPI_Comm_free");
	struct mpi_comm *c = comm ? mpi_comm_get(*comm) : NULL;
	if (!c)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_free", "invalid communicator");
	if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
		return mpi_err(*comm, MPI_ERR_COMM, "MPI_Comm_free", "%s cannot be freed", c->name);
	/* While the communicator is still whole: the delete functions may use it. */
	int rc = mpi_attr_drop(false, *comm, "MPI_Comm_free");
	if (rc)
		return rc;
	mpi_coll_comm_free(c);
	mpi_topo_free(c);
	mpi_inter_free(c);
	group_unref(c->group);
	c->in_use = false;
	*comm = MPI_COMM_NULL;
	return MPI_SUCCESS;
}

static int compare_members(int n1, const int *a, int n2, const int *b)
{
	if (n1 != n2)
		return MPI_UNEQUAL;
	if (!memcmp(a, b, sizeof(int) * (size_t)n1))
		return MPI_IDENT;
	for (int i = 0; i < n1; i++) {
		bool in = false;
		for (int j = 0; j < n2 && !in; j++)
			in = a[i] == b[j];
		if (!in)
			return MPI_UNEQUAL;
	}
	return MPI_SIMILAR;
}

int PMPI_Comm_compare(MPI_Comm c1, MPI_Comm c2, int *result)
{
	MPI_CHECK_INIT("MPI_Comm_compare");
	struct mpi_comm *a = mpi_comm_get(c1), *b = mpi_comm_get(c2);
	if (!a || !b)
		return mpi_err(MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_compare", "invalid communicator");
	if (c1 == c2) {
		*result = MPI_IDENT;
		return MPI_SUCCESS;
	}
	if (a->inter != b->inter) {
		*result = MPI_UNEQUAL;
		return MPI_SUCCESS;
	}
	int r = compare_members(a->size, a->world, b->size, b->world);
	if (a->inter && r != MPI_UNEQUAL) {	/* both groups must compare so */
		struct mpi_comm *la = mpi_comm_get(a->local), *lb = mpi_comm_get(b->local);
		int rl = compare_members(la->size, la->world, lb->size, lb->world);
		r = rl == MPI_UNEQUAL ? MPI_UNEQUAL : r == MPI_SIMILAR || rl == MPI_SIMILAR ? MPI_SIMILAR : r;
	}
	*result = r == MPI_IDENT ? MPI_CONGRUENT : r;
	return MPI_SUCCESS;
}

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
	MPI_COMM_ARG("MPI_Comm_group", comm, c);
	if (c->inter)	/* the local group: the local intracommunicator's */
		return PMPI_Comm_group(c->local, group);
	struct mpi_group *g = mpi_group_get(c->group);
	g->refs++;
	*group = c->group;
	return MPI_SUCCESS;
}

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
	MPI_COMM_ARG("MPI_Comm_test_inter", comm, c);
	*flag = c->inter;
	return MPI_SUCCESS;
}

int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
	MPI_COMM_ARG("MPI_Comm_set_name", comm, c);
	snprintf(c->name, sizeof c->name, "%s", name);
	return MPI_SUCCESS;
}

int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *len)
{
	MPI_COMM_ARG("MPI_Comm_get_name", comm, c);
	snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c->name);
	*len = (int)strlen(name);
	return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- groups */

#define GROUP_ARG(fn, group, g)                                                                     \
	struct mpi_group *g = mpi_group_get(group);                                                  \
	if (!g)                                                                                     \
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_GROUP, fn, "invalid group %d", group)

int PMPI_Group_size(MPI_Group group, int *size)
{
	GROUP_ARG("MPI_Group_size", group, g);
	*size = g->size;
	return MPI_SUCCESS;
}

int PMPI_Group_rank(MPI_Group group, int *rank)
{
	GROUP_ARG("MPI_Group_rank", group, g);
	*rank = g->rank;
	return MPI_SUCCESS;
}

static int group_incl(const char *fn, MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	GROUP_ARG(fn, group, g);
	if (n < 0 || n > g->size)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "n %d outside 0..%d", n, g->size);
	if (n == 0) {
		*newgroup = MPI_GROUP_EMPTY;
		return MPI_SUCCESS;
	}
	int *w = malloc(sizeof(int) * (size_t)n);
	if (!w)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= g->size) {
			free(w);
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_RANK, fn, "rank %d is not in the group (size %d)",
				       ranks[i], g->size);
		}
		for (int j = 0; j < i; j++)
			if (ranks[j] == ranks[i]) {
				free(w);
				return mpi_err(MPI_COMM_WORLD, MPI_ERR_RANK, fn, "rank %d listed twice", ranks[i]);
			}
		w[i] = g->world[ranks[i]];
	}
	*newgroup = mpi_group_new(n, w);
	free(w);
	return *newgroup ? MPI_SUCCESS : mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "too many groups");
}

static int group_excl(const char *fn, MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	GROUP_ARG(fn, group, g);
	if (n < 0 || n > g->size)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "n %d outside 0..%d", n, g->size);
	char *drop = calloc((size_t)g->size + 1, 1);
	int *w = malloc(sizeof(int) * (size_t)(g->size + 1));
	if (!drop || !w) {
		free(drop);
		free(w);
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= g->size || drop[ranks[i]]) {
			free(drop);
			free(w);
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_RANK, fn, "rank %d is invalid or listed twice",
				       ranks[i]);
		}
		drop[ranks[i]] = 1;
	}
	int m = 0;
	for (int i = 0; i < g->size; i++)
		if (!drop[i])
			w[m++] = g->world[i];
	*newgroup = m ? mpi_group_new(m, w) : MPI_GROUP_EMPTY;
	free(drop);
	free(w);
	return *newgroup ? MPI_SUCCESS : mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "too many groups");
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	return group_incl("MPI_Group_incl", group, n, ranks, newgroup);
}

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	return group_excl("MPI_Group_excl", group, n, ranks, newgroup);
}

/* The ranks n (first, last, stride) triplets name, in order, into *out
 * (malloc'd; *count of them). A triplet whose stride points away from its
 * last rank names none; every rank named must be in g. */
static int expand_ranges(const char *fn, MPI_Group group, int n, int ranges[][3], int **out, int *count)
{
	GROUP_ARG(fn, group, g);
	if (n < 0)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "n %d < 0", n);
	long total = 0;
	for (int i = 0; i < n; i++) {
		int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
		if (stride == 0)
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "range %d has stride 0", i);
		if (first < 0 || first >= g->size || last < 0 || last >= g->size)
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_RANK, fn, "range %d (%d, %d, %d) leaves the group (size %d)",
				       i, first, last, stride, g->size);
		long k = ((long)last - first) / stride + 1;
		total += k > 0 ? k : 0;
		if (total > g->size)
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_RANK, fn,
				       "ranges 0..%d name more ranks than the group has (%d): some twice", i, g->size);
	}
	int *r = malloc(sizeof(int) * (size_t)(total ? total : 1));
	if (!r)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
	int m = 0;
	for (int i = 0; i < n; i++)
		for (long x = ranges[i][0]; ranges[i][2] > 0 ? x <= ranges[i][1] : x >= ranges[i][1]; x += ranges[i][2])
			r[m++] = (int)x;
	*out = r;
	*count = m;
	return MPI_SUCCESS;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
	int *r, m;
	int rc = expand_ranges("MPI_Group_range_incl", group, n, ranges, &r, &m);
	if (rc)
		return rc;
	rc = group_incl("MPI_Group_range_incl", group, m, r, newgroup);
	free(r);
	return rc;
}

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
	int *r, m;
	int rc = expand_ranges("MPI_Group_range_excl", group, n, ranges, &r, &m);
	if (rc)
		return rc;
	rc = group_excl("MPI_Group_range_excl", group, m, r, newgroup);
	free(r);
	return rc;
}

/* index[w]: the rank of world rank w in g, or -1 (malloc'd, wsize long). */
static int *group_index(const struct mpi_group *g)
{
	int *index = malloc(sizeof(int) * (size_t)mpi_g.wsize);
	if (!index)
		return NULL;
	for (int w = 0; w < mpi_g.wsize; w++)
		index[w] = -1;
	for (int i = 0; i < g->size; i++)
		index[g->world[i]] = i;
	return index;
}

enum group_setop { SETOP_UNION, SETOP_INTERSECTION, SETOP_DIFFERENCE };

/* Group 1's members in its order that the operation keeps, then (union)
 * group 2's members that group 1 does not have, in group 2's order. */
static int group_setop(const char *fn, enum group_setop op, MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
	GROUP_ARG(fn, g1, a);
	GROUP_ARG(fn, g2, b);
	int *in_a = group_index(a), *in_b = group_index(b);
	int *w = malloc(sizeof(int) * (size_t)(a->size + b->size + 1));
	if (!in_a || !in_b || !w) {
		free(in_a);
		free(in_b);
		free(w);
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	int m = 0;
	for (int i = 0; i < a->size; i++)
		if (op == SETOP_UNION || (in_b[a->world[i]] >= 0) == (op == SETOP_INTERSECTION))
			w[m++] = a->world[i];
	for (int j = 0; op == SETOP_UNION && j < b->size; j++)
		if (in_a[b->world[j]] < 0)
			w[m++] = b->world[j];
	*newgroup = m ? mpi_group_new(m, w) : MPI_GROUP_EMPTY;
	free(in_a);
	free(in_b);
	free(w);
	return *newgroup ? MPI_SUCCESS : mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "too many groups");
}

int PMPI_Group_union(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
	return group_setop("MPI_Group_union", SETOP_UNION, g1, g2, newgroup);
}

int PMPI_Group_intersection(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
	return group_setop("MPI_Group_intersection", SETOP_INTERSECTION, g1, g2, newgroup);
}

int PMPI_Group_difference(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
	return group_setop("MPI_Group_difference", SETOP_DIFFERENCE, g1, g2, newgroup);
}

int PMPI_Group_translate_ranks(MPI_Group g1, int n, const int r1[], MPI_Group g2, int r2[])
{
	GROUP_ARG("MPI_Group_translate_ranks", g1, a);
	GROUP_ARG("MPI_Group_translate_ranks", g2, b);
	for (int i = 0; i < n; i++)
		if (r1[i] != MPI_PROC_NULL && (r1[i] < 0 || r1[i] >= a->size))
			return mpi_err(MPI_COMM_WORLD, MPI_ERR_RANK, "MPI_Group_translate_ranks", "rank %d not in group 1",
				       r1[i]);
	int *in_b = group_index(b);
	if (!in_b)
		return mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Group_translate_ranks", "out of memory");
	for (int i = 0; i < n; i++)
		r2[i] = r1[i] == MPI_PROC_NULL ? MPI_PROC_NULL
		      : in_b[a->world[r1[i]]] < 0 ? MPI_UNDEFINED : in_b[a->world[r1[i]]];
	free(in_b);
	return MPI_SUCCESS;
}

int PMPI_Group_compare(MPI_Group g1, MPI_Group g2, int *result)
{
	GROUP_ARG("MPI_Group_compare", g1, a);
	GROUP_ARG("MPI_Group_compare", g2, b);
	*result = compare_members(a->size, a->world, b->size, b->world);
	return MPI_SUCCESS;
}

int PMPI_Group_free(MPI_Group *group)
{
	GROUP_ARG("MPI_Group_free", *group, g);
	(void)g;
	group_unref(*group);
	*group = MPI_GROUP_NULL;
	return MPI_SUCCESS;
}
