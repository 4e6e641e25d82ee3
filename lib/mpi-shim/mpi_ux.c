/* mpi_ux.c: the index of unexpected messages. Records and list buckets
 * come from pools, lists are found through a chained hash of their keys;
 * nothing here allocates per message. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mpi_pool.h"
#include "mpi_ux.h"

/* One list: the messages of one key of one way. Found through a chained
 * hash; freed to a pool when its last message is taken. */
struct ux_bucket {
	struct ux_bucket *hnext; /* hash chain, or the free pool */
	uint64_t key;            /* ux_key() */
	int way;
	struct mpi_list q;       /* struct mpi_ux.way[way], arrival order */
};

/* Records and buckets come from pools (mpi_pool.h): a slab of each at
 * init, another only when a backlog outgrows every one so far (as many
 * records as the unexpected memory and the credits let queue), never one
 * per message. */
#define UX_SLAB 1024

static struct {
	struct mpi_pool recs;        /* struct mpi_ux */
	struct mpi_pool bks;         /* struct ux_bucket */
	struct ux_bucket **ux_hash;  /* ux_hmask + 1 chains */
	size_t ux_hmask, ux_nbk;     /* ux_nbk: buckets in use */
	/* Each way's bucket last listed into or found: a burst of messages
	 * of one key (a sender ahead of its receiver) lists each without
	 * walking the hash, and the receive finds it the same way. Cleared
	 * when that bucket goes. */
	struct ux_bucket *last[UX_WAYS];
	/* Every message listed while the wildcard ways are not kept, in
	 * arrival order: what they are built from when first asked for
	 * (ux_wild_build). */
	struct mpi_list all;
	/* The wildcard ways are kept: a wildcard receive or probe looked
	 * since the index was last empty. So a message has its wildcard
	 * buckets exactly while this holds (it goes off only when none is
	 * listed). Why not always: listing a message four ways (a key, a
	 * bucket and a link each) and unlisting it took about 250 of the
	 * 1,495 instructions a receiving rank spent on each message of a
	 * 64-byte flood (callgrind), and most programs never use a wildcard,
	 * or use one while few messages wait; one way and the list of all
	 * took about 140, the whole 1,428. Back to off when the index
	 * empties: a later first look builds from what came since. */
	bool wild;
} X = { .recs = MPI_POOL_INIT(sizeof(struct mpi_ux), UX_SLAB), .bks = MPI_POOL_INIT(sizeof(struct ux_bucket), UX_SLAB) };

long mpi_ux_count;

struct mpi_ux *mpi_ux_new(void)
{
	struct mpi_ux *u = mpi_pool_get(&X.recs);
	if (u)
		memset(u, 0, sizeof *u);
	return u;
}

void mpi_ux_recycle(struct mpi_ux *u)
{
	mpi_pool_put(&X.recs, u);
}

/* The key of way w for (ctx, src, tag): the match bits with the fields
 * way w does not look at zeroed (the bits are all taken, so the way is
 * kept beside the key, in the bucket, and mixed into the hash). */
static uint64_t ux_key(int w, int ctx, int src, int tag)
{
	uint64_t s = (w == UX_EXACT || w == UX_ANYTAG) ? (uint64_t)(unsigned)src & ((1u << MPI_SRC_BITS) - 1) : 0;
	uint64_t t = (w == UX_EXACT || w == UX_ANYSRC) ? (uint64_t)(unsigned)tag & MPI_TAG_MASK : 0;
	return ((uint64_t)(unsigned)ctx << (MPI_SRC_BITS + 1 + MPI_TAG_BITS)) | (s << MPI_TAG_BITS) | t;
}

static size_t ux_hash(uint64_t key, int w)
{
	return (size_t)(((key ^ ((uint64_t)w << 47)) * 0x9e3779b97f4a7c15ull) >> 32) & X.ux_hmask;
}

/* The bucket of way w's key, or NULL. */
static struct ux_bucket *ux_bucket_find(uint64_t key, int w)
{
	struct ux_bucket *b = X.last[w];
	if (b && b->key == key)
		return b;
	for (b = X.ux_hash[ux_hash(key, w)]; b; b = b->hnext)
		if (b->key == key && b->way == w)
			return X.last[w] = b;
	return NULL;
}

/* Doubles the chains when the buckets outnumber them, so a chain stays
 * about one bucket long (rare: each doubling comes after as many new keys
 * as all before). Keeps the old table if there is no memory for a new. */
static void ux_hash_grow(void)
{
	size_t n = (X.ux_hmask + 1) * 2;
	struct ux_bucket **h = calloc(n, sizeof *h), **old = X.ux_hash;
	if (!h)
		return;
	size_t on = X.ux_hmask + 1;
	X.ux_hash = h;
	X.ux_hmask = n - 1;
	for (size_t i = 0; i < on; i++)
		for (struct ux_bucket *b = old[i], *nx; b; b = nx) {
			nx = b->hnext;
			size_t j = ux_hash(b->key, b->way);
			b->hnext = h[j];
			h[j] = b;
		}
	free(old);
}

/* Lists u at the tail of its list of each way in [from, to). */
static bool ux_list_ways(struct mpi_ux *u, int from, int to)
{
	for (int w = from; w < to; w++) {
		uint64_t key = ux_key(w, u->ctx, u->src, u->tag);
		struct ux_bucket *b = ux_bucket_find(key, w);
		if (!b) {
			if (!(b = mpi_pool_get(&X.bks)))
				return false;
			b->key = key;
			b->way = w;
			mpi_list_init(&b->q);
			X.last[w] = b;
			size_t i = ux_hash(key, w);
			b->hnext = X.ux_hash[i];
			X.ux_hash[i] = b;
			if (++X.ux_nbk > X.ux_hmask + 1)
				ux_hash_grow();
		}
		mpi_list_add_tail(&u->way[w], &b->q);
		u->bk[w] = b;
	}
	return true;
}

/* Lists u (its fields set) at the tail of its exact list and of the
 * wildcard ways' lists while they are kept, else of the list of all. */
bool mpi_ux_list(struct mpi_ux *u)
{
	if (X.wild) {
		if (!ux_list_ways(u, UX_EXACT, UX_WAYS))
			return false;
		mpi_list_init(&u->all); /* for unlist's del */
	} else {
		if (!ux_list_ways(u, UX_EXACT, UX_EXACT + 1))
			return false;
		mpi_list_add_tail(&u->all, &X.all);
	}
	u->in_ux = true;
	mpi_ux_count++;
	return true;
}

/* The first wildcard look since the index was last empty: every listed
 * message goes on the wildcard ways' lists, in arrival order (the list of
 * all), so each list holds its messages earliest first, as if they had
 * been listed there as they came. false: no memory for a list. */
static bool ux_wild_build(void)
{
	for (struct mpi_list *l = X.all.next; l != &X.all; l = l->next)
		if (!ux_list_ways(mpi_container(l, struct mpi_ux, all), UX_EXACT + 1, UX_WAYS))
			return false;
	X.wild = true;
	return true;
}

/* Takes u off its lists (a receive has it); a list left empty goes. */
void mpi_ux_unlist(struct mpi_ux *u)
{
	for (int w = 0, n = X.wild ? UX_WAYS : UX_EXACT + 1; w < n; w++) {
		struct ux_bucket *b = u->bk[w];
		mpi_list_del(&u->way[w]);
		if (mpi_list_empty(&b->q)) {
			struct ux_bucket **pp = &X.ux_hash[ux_hash(b->key, w)];
			while (*pp != b)
				pp = &(*pp)->hnext;
			*pp = b->hnext;
			if (X.last[w] == b)
				X.last[w] = NULL;
			mpi_pool_put(&X.bks, b);
			X.ux_nbk--;
		}
	}
	mpi_list_del(&u->all);
	u->in_ux = false;
	if (!--mpi_ux_count)
		X.wild = false;
}

/* The earliest unexpected message a receive of (ctx, src, tag) matches:
 * the head of the list of its own key. */
struct mpi_ux *mpi_ux_find_listed(int ctx, int src, int tag)
{
	int w = src == MPI_ANY_SOURCE ? (tag == MPI_ANY_TAG ? UX_ANYANY : UX_ANYSRC)
				      : (tag == MPI_ANY_TAG ? UX_ANYTAG : UX_EXACT);
	if (w != UX_EXACT && !X.wild && !ux_wild_build())
		mpi_fatal(MPI_ERR_NO_MEM, "out of memory for an unexpected-message index");
	struct ux_bucket *b = ux_bucket_find(ux_key(w, ctx, src, tag), w);
	return b ? mpi_container(b->q.next, struct mpi_ux, way[w]) : NULL;
}

bool mpi_ux_index_init(void)
{
	X.ux_hmask = 1023;
	mpi_list_init(&X.all);
	X.ux_hash = calloc(X.ux_hmask + 1, sizeof *X.ux_hash);
	return X.ux_hash && mpi_pool_grow(&X.recs) && mpi_pool_grow(&X.bks);
}

void mpi_ux_index_fini(void)
{
	mpi_pool_fini(&X.recs);
	mpi_pool_fini(&X.bks);
	memset(X.last, 0, sizeof X.last);
	mpi_list_init(&X.all);
	X.wild = false;
	free(X.ux_hash);
	X.ux_hash = NULL;
	mpi_ux_count = 0;
	X.ux_nbk = 0;
}
