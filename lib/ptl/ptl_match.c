/*
 * Address translation (PORTALS33.md, "Address translation", steps 2-3):
 * walk a portal's match list in order; the first ME whose match id admits
 * the initiator, whose bits match under its ignore bits, and whose MD
 * accepts the operation, wins. Pure functions of their arguments, so the
 * unit tests drive them directly.
 */
#include "config.h"

#include "ptl/ptl_internal.h"

/* The walk itself is inline in ptl_internal.h (ptl_match_walk and its
 * tests), where ptl_recv.c's use of it is compiled in: every message walks
 * a list. These are its entry points for the unit tests and anyone else. */
bool ptl_me_matches(const struct ptl_me *me, ptl_process_id_t src, ptl_match_bits_t bits)
{
	return ptl_match_me(me, src, bits);
}

bool ptl_md_accepts(const struct ptl_md *md, enum ptl_match_op op, ptl_size_t roffset,
		    ptl_size_t rlength, ptl_size_t *off, ptl_size_t *mlen)
{
	return ptl_match_md(md, op, roffset, rlength, off, mlen);
}

struct ptl_me *ptl_match(struct ptl_list *list, ptl_process_id_t src, ptl_match_bits_t bits,
			 enum ptl_match_op op, ptl_size_t roffset, ptl_size_t rlength,
			 ptl_size_t *off, ptl_size_t *mlen)
{
	return ptl_match_walk(list, NULL, src, bits, op, roffset, rlength, off, mlen);
}
