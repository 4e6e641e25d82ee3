/* mpi_keep.c: the kept MEs of posted receives (mpi_keep.h).
 *
 * An idle entry accepts nothing (threshold 0), and lib/ptl's walk skips
 * the idle ones at the front of the list once (its dead front, which a
 * re-armed entry ends just before itself): so one that completes before
 * others still armed after it stays, and a window of receives of one
 * envelope (32 deep: bench/mpi_pingpong.c's streaming rows) re-arms the
 * entries of the window before with one PtlMDUpdate each, where it
 * unlinked each as it completed and inserted and attached anew for the
 * next (three Portals calls, ~470 instructions per receive). Idle entries
 * beyond MPI_RME_IDLE_MAX go, oldest first; a receive looks at the first
 * MPI_RME_SCAN after the last armed one for its envelope, so many idle
 * ones of other envelopes cost a post nothing more. */
#include "config.h"

#include <stdlib.h>

#include "mpi_keep.h"

#define MPI_RME_IDLE_MAX 64
#define MPI_RME_SCAN 4
#define MPI_RME_PREALLOC 64
struct mpi_rme {
	struct mpi_list link;    /* K.list, in match-list order; or K.free */
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	ptl_match_bits_t bits, ign;
	struct mpi_req *r;       /* the receive it is armed for, NULL: idle */
	bool heap;               /* malloc'd, beyond the preallocated ones */
};

static struct {
	ptl_handle_me_t marker;  /* new entries go just before it */
	char zero[1];            /* the disabled MD's start (NULL is refused) */
	struct mpi_list list;    /* kept MEs, armed or idle, in match-list order */
	struct mpi_list free;    /* entries not in use */
	struct mpi_rme *last;    /* the last armed one in K.list, NULL: none */
	struct mpi_rme *pool;    /* the MPI_RME_PREALLOC first entries */
	int idle;                /* idle ones in K.list */
	int n, most;             /* entries in K.list; at most (PTL_MPI_MAX_MES) */
} K;

static const ptl_process_id_t any_id = { PTL_NID_ANY, PTL_PID_ANY };

static void rme_trim(void);
static int rme_trim_to(int keep);
static struct mpi_rme *rme_armed_before(struct mpi_rme *e);

struct mpi_rme *mpi_keep_landed_e;

/* The landed entry goes idle: what mpi_keep_disarm does, r->rme cleared
 * already (mpi_keep_landed). */
void mpi_keep_settle(void)
{
	struct mpi_rme *e = mpi_keep_landed_e;
	mpi_keep_landed_e = NULL;
	if (K.last == e)
		K.last = rme_armed_before(e);
	e->r = NULL;
	K.idle++;
	if (K.idle > MPI_RME_IDLE_MAX)
		rme_trim();
}

/* Every entry point below looks at the list: the landed entry first. */
#define SETTLE()                          \
	do {                              \
		if (mpi_keep_landed_e)    \
			mpi_keep_settle(); \
	} while (0)

/* The armed entry before e in K.list, or NULL. */
static struct mpi_rme *rme_armed_before(struct mpi_rme *e)
{
	for (struct mpi_list *l = e->link.prev; l != &K.list; l = l->prev) {
		struct mpi_rme *x = mpi_container(l, struct mpi_rme, link);
		if (x->r)
			return x;
	}
	return NULL;
}

/* e has left the match list (its ME unlinked): back to the free entries. */
void mpi_keep_drop(struct mpi_rme *e)
{
	SETTLE();
	if (e->r) {
		if (K.last == e)
			K.last = rme_armed_before(e);
		e->r->rme = NULL;
		e->r = NULL;
	} else {
		K.idle--;
	}
	mpi_list_del(&e->link);
	mpi_list_add_tail(&e->link, &K.free);
	K.n--;
}

/* e's receive has its message, or took another way: e goes idle, also
 * with armed ones after it (a window of receives): once those are done
 * too, the window's next receives re-arm it. */
void mpi_keep_disarm(struct mpi_rme *e)
{
	SETTLE();
	if (K.last == e)
		K.last = rme_armed_before(e);
	e->r->rme = NULL;
	e->r = NULL;
	K.idle++;
	if (K.idle > MPI_RME_IDLE_MAX)
		rme_trim();
}

/* Unlinks the oldest idle entries beyond keep; returns how many. */
static int rme_trim_to(int keep)
{
	SETTLE(); /* a landed entry settled inside the walk could trim the next one */
	int n = 0;
	struct mpi_list *l = K.list.next;
	while (K.idle > keep && l != &K.list) {
		struct mpi_rme *e = mpi_container(l, struct mpi_rme, link);
		l = l->next;
		if (!e->r && PtlMEUnlink(e->me) == PTL_OK) {
			mpi_keep_drop(e);
			n++;
		}
	}
	return n;
}

static void rme_trim(void)
{
	rme_trim_to(MPI_RME_IDLE_MAX);
}

/* e, idle or new, is armed for r from now on. */
static inline struct mpi_rme *rme_arm(struct mpi_rme *e, struct mpi_req *r)
{
	e->r = r;
	r->rme = e;
	r->kept = true;
	r->me = e->me;
	r->md = e->md;
	K.last = e;
	return e;
}

/* A new entry for r at the end of the posted receives, its MD disabled.
 * Apart from mpi_keep_arm so that its common case, an idle entry re-armed,
 * saves no registers for the Portals calls here (its frame was a third of
 * it, ~15 instructions of a streamed receive). */
static __attribute__((noinline)) struct mpi_rme *rme_new(struct mpi_req *r, ptl_match_bits_t bits,
							 ptl_match_bits_t ign)
{
	struct mpi_rme *e;
	/* PTL_MPI_MAX_MES receives posted: idle entries make way, and past
	 * them the receive is refused, so that the network interface's
	 * entries beyond them stay the library's (mpi_pt2pt_init) */
	if ((K.n >= K.most || !mpi_recv_entry_ok()) && rme_trim_to(0) == 0)
		return NULL;
	if (!mpi_list_empty(&K.free)) {
		e = mpi_container(K.free.next, struct mpi_rme, link);
		mpi_list_del(&e->link);
	} else if ((e = malloc(sizeof *e))) { /* more receives posted at once than ever before */
		e->heap = true;
	} else {
		return NULL;
	}
	ptl_md_t md = { .start = K.zero, .length = 0, .threshold = 0, .options = PTL_MD_OP_PUT,
			.eq_handle = mpi_g.eq };
	if (PtlMEInsert(K.marker, any_id, bits, ign, PTL_RETAIN, PTL_INS_BEFORE, &e->me) != PTL_OK) {
		mpi_list_add_tail(&e->link, &K.free);
		return NULL;
	}
	if (PtlMDAttach(e->me, md, PTL_RETAIN, &e->md) != PTL_OK) {
		PtlMEUnlink(e->me);
		mpi_list_add_tail(&e->link, &K.free);
		return NULL;
	}
	e->bits = bits;
	e->ign = ign;
	mpi_list_add_tail(&e->link, &K.list);
	K.n++;
	return rme_arm(e, r);
}

/* A kept ME for receive r, of match bits (bits, ign), with its MD still
 * disabled (threshold 0): an idle one after the last armed one, else a
 * new one at the end of the posted receives. It counts as armed from now
 * on, so a receive posted meanwhile (by a nonblocking collective's
 * progress) goes after it. NULL: no memory, no more MEs, or PTL_MPI_MAX_MES
 * receives posted already. */
static __attribute__((noinline)) struct mpi_rme *keep_arm_settle(struct mpi_req *r, ptl_match_bits_t bits,
								  ptl_match_bits_t ign);

struct mpi_rme *mpi_keep_arm(struct mpi_req *r, ptl_match_bits_t bits, ptl_match_bits_t ign)
{
	/* SETTLE() by a tail call, for the same reason as rme_new: a
	 * window's receives find a landed entry to settle only at its first. */
	if (mpi_keep_landed_e)
		return keep_arm_settle(r, bits, ign);
	int n = 0;
	for (struct mpi_list *l = K.last ? K.last->link.next : K.list.next; l != &K.list && n < MPI_RME_SCAN;
	     l = l->next, n++) {
		struct mpi_rme *x = mpi_container(l, struct mpi_rme, link);
		if (!x->r && x->bits == bits && x->ign == ign) {
			K.idle--;
			return rme_arm(x, r);
		}
	}
	return rme_new(r, bits, ign);
}

static struct mpi_rme *keep_arm_settle(struct mpi_req *r, ptl_match_bits_t bits, ptl_match_bits_t ign)
{
	mpi_keep_settle();
	return mpi_keep_arm(r, bits, ign);
}

int mpi_keep_room(void)
{
	return K.most - K.n;
}

void mpi_keep_init(ptl_handle_me_t marker, int most)
{
	K.marker = marker;
	K.most = most;
	K.n = 0;
	mpi_list_init(&K.list);
	mpi_list_init(&K.free);
	K.pool = calloc(MPI_RME_PREALLOC, sizeof *K.pool);
	if (!K.pool)
		mpi_fatal(MPI_ERR_NO_MEM, "out of memory for posted receives' entries");
	for (int i = 0; i < MPI_RME_PREALLOC; i++)
		mpi_list_add_tail(&K.pool[i].link, &K.free);
}

void mpi_keep_fini(void)
{
	mpi_keep_landed_e = NULL; /* its entry goes with the others */
	struct mpi_list *lists[] = { &K.list, &K.free };
	for (int k = 0; k < 2; k++)
		while (!mpi_list_empty(lists[k])) {
			struct mpi_rme *e = mpi_container(lists[k]->next, struct mpi_rme, link);
			mpi_list_del(&e->link);
			if (e->heap)
				free(e);
		}
	free(K.pool);
	K.pool = NULL;
	K.last = NULL;
	K.idle = 0;
}
