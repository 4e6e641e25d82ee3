/* mpi_ux.h: the index of unexpected messages (mpi_ux.c), which
 * mpi_pt2pt.c fills as messages land and searches as receives and probes
 * come. Private to lib/mpi-shim. */
#ifndef MPI_UX_H
#define MPI_UX_H

#include "mpi_impl.h"

struct ux_bucket;
struct mpi_uxbuf;

/* The unexpected messages are indexed four ways, one per shape of
 * receive: (ctx, source, tag), (ctx, source, any tag), (ctx, any source,
 * tag), (ctx, any, any). Each message is on one list of every way kept
 * (below), in arrival order, so the list under a receive's own key holds
 * exactly the messages it matches, earliest first: a posted receive, a lazy one, a
 * probe or a wildcard finds its message at the head of one list whatever
 * else is queued (a linear scan of 20,000 messages of another tag cost a
 * ping-pong 53-71 us), and MPI's non-overtaking order is the list order.
 *
 * The three wildcard ways are kept only once a wildcard receive or probe
 * has looked since the index was last empty: until then a message goes on
 * its exact list alone (and on the list of all, in arrival order), and
 * the first such look lists every message there on the other ways, in
 * that order (mpi_ux.c says why). */
enum { UX_EXACT, UX_ANYTAG, UX_ANYSRC, UX_ANYANY, UX_WAYS };

/* One unexpected message (or one arriving into a posted receive's place). */
struct mpi_ux {
	struct mpi_list way[UX_WAYS];  /* on each kept way's list while unexpected */
	struct ux_bucket *bk[UX_WAYS]; /* its list of each kept way */
	struct mpi_list all;           /* on the list of all (while the wildcard ways are not kept) */
	struct mpi_list alink;   /* arriving list (START seen, END not yet) */
	int ctx, src, tag, wsrc, proto;
	size_t len, got, off;
	uint32_t id;
	struct mpi_uxbuf *buf;   /* NULL: overflow, the data stayed at the sender */
	bool ready, in_ux;       /* in_ux: listed (mpi_ux_list), not yet taken */
	bool failed;             /* its sender died while its data moved */
	struct mpi_req *waiter;
};

/* The slabs and the hash, at MPI_Init; false: no memory. Hidden, as all
 * of this module: its callers are in the shim, and a receive's search
 * (mpi_ux_find) and a match's unlisting were calls through the PLT. */
MPI_HIDDEN bool mpi_ux_index_init(void);
MPI_HIDDEN void mpi_ux_index_fini(void);
/* A zeroed record (NULL: no memory), and back to the pool. */
MPI_HIDDEN struct mpi_ux *mpi_ux_new(void);
MPI_HIDDEN void mpi_ux_recycle(struct mpi_ux *u);
/* Lists u (ctx, src, tag set) behind every message it came after (false:
 * no memory for a list), or takes it off (a receive or probe has it). */
MPI_HIDDEN bool mpi_ux_list(struct mpi_ux *u);
MPI_HIDDEN void mpi_ux_unlist(struct mpi_ux *u);
/* Records listed now (mpi_ux.c). */
MPI_HIDDEN extern long mpi_ux_count;
/* mpi_ux_find with some listed. */
MPI_HIDDEN struct mpi_ux *mpi_ux_find_listed(int ctx, int src, int tag);
/* The earliest listed message a receive of (ctx, src, tag) matches, src
 * and tag possibly wildcards; NULL if none. Inline, the empty list's
 * answer without a call: every posted receive asks, and a reserve arrival
 * taken by a waiting lazy receive asks on the path to the receive's
 * completion. */
static inline struct mpi_ux *mpi_ux_find(int ctx, int src, int tag)
{
	return mpi_ux_count ? mpi_ux_find_listed(ctx, src, tag) : NULL;
}

#endif
