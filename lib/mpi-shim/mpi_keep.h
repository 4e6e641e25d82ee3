/* mpi_keep.h: the kept MEs of posted receives (mpi_keep.c), which
 * mpi_pt2pt.c arms for a receive and disarms once its message has landed.
 * Private to lib/mpi-shim.
 *
 * A kept ME and its MD are not use-once: when its message has landed the
 * MD logs no UNLINK event and the entry goes idle (threshold 0, it takes
 * nothing), and a later receive of the same match bits re-arms it with
 * one PtlMDUpdate instead of an insert and an attach. MPI's order holds
 * because only an idle entry after the last armed one in the match list
 * is re-armed: it then comes after every receive still posted, as a new
 * insert would. */
#ifndef MPI_KEEP_H
#define MPI_KEEP_H

#include "mpi_impl.h"

/* The entries' pool; new ones go in just before marker (the end of the
 * posted receives), at most most of them, idle ones included
 * (PTL_MPI_MAX_MES). Does not return without memory. */
MPI_HIDDEN void mpi_keep_init(ptl_handle_me_t marker, int most);
MPI_HIDDEN void mpi_keep_fini(void);
/* The room left for receives' entries: most less those kept (idle ones
 * too, which make way when the room runs out) */
MPI_HIDDEN int mpi_keep_room(void);
/* An entry for receive r, of match bits (bits, ign), its MD still disabled
 * (threshold 0: the caller enables it with PtlMDUpdate on r->md): an idle
 * one after the last armed one, else a new one at the end of the posted
 * receives. Sets r->rme, r->kept, r->me and r->md. It counts as armed from
 * now on, so a receive posted meanwhile (by a nonblocking collective's
 * progress) goes after it. NULL: no memory, no more MEs, or PTL_MPI_MAX_MES
 * receives posted already. */
MPI_HIDDEN struct mpi_rme *mpi_keep_arm(struct mpi_req *r, ptl_match_bits_t bits, ptl_match_bits_t ign);
/* e's receive has its message, or took another way: e goes idle, to be
 * re-armed or, past MPI_RME_IDLE_MAX idle ones, unlinked (mpi_keep.c),
 * and r->rme is cleared. */
MPI_HIDDEN void mpi_keep_disarm(struct mpi_rme *e);
/* e has left the match list (its ME unlinked by the caller): back to the
 * free entries; an armed one's receive forgets it. */
MPI_HIDDEN void mpi_keep_drop(struct mpi_rme *e);
/* r's message has landed in its kept entry (the PUT_END): r forgets the
 * entry at once, and the entry goes idle (as mpi_keep_disarm) at the next
 * call of this module - the next receive's arm, after the reply a
 * ping-pong sends - not here, on the path from the arrival to that reply
 * (a disarm was a call and 25 instructions). One entry waits so; a second
 * landing settles the first. Until it is settled the entry looks armed:
 * nothing re-arms or trims it, and every call of mpi_keep.c settles it
 * before it looks at the list. */
MPI_HIDDEN extern struct mpi_rme *mpi_keep_landed_e;
MPI_HIDDEN void mpi_keep_settle(void);
static inline void mpi_keep_landed(struct mpi_req *r)
{
	if (mpi_keep_landed_e)
		mpi_keep_settle();
	mpi_keep_landed_e = r->rme;
	r->rme = NULL;
}

#endif
