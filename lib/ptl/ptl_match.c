/*
 * Address translation (PORTALS33.md, "Address translation", steps 2-3):
 * walk a portal's match list in order; the first ME whose match id admits
 * the initiator, whose bits match under its ignore bits, and whose MD
 * accepts the operation, wins. Pure functions of their arguments, so the
 * unit tests drive them directly.
 */
#include "config.h"

#include "ptl/ptl_internal.h"

/* Inline for ptl_match's walk (every message walks at least two entries);
 * the unit tests call the public wrappers below. */
static inline bool me_matches(const struct ptl_me *me, ptl_process_id_t src, ptl_match_bits_t bits)
{
	if (me->match_id.nid != PTL_NID_ANY && me->match_id.nid != src.nid)
		return false;
	if (me->match_id.pid != PTL_PID_ANY && me->match_id.pid != src.pid)
		return false;
	return ((bits ^ me->match_bits) & ~me->ignore_bits) == 0;
}

static inline bool md_accepts(const struct ptl_md *md, enum ptl_match_op op, ptl_size_t roffset,
			      ptl_size_t rlength, ptl_size_t *off, ptl_size_t *mlen)
{
	unsigned int opts = md->md.options;
	unsigned int need = op == PTL_MATCH_PUT ? PTL_MD_OP_PUT
			  : op == PTL_MATCH_GET ? PTL_MD_OP_GET
			  : PTL_MD_OP_PUT | PTL_MD_OP_GET;
	if ((opts & need) != need || md->md.threshold == 0 || md->doomed)
		return false;
	ptl_size_t o = (opts & PTL_MD_MANAGE_REMOTE) ? roffset : md->local_offset;
	ptl_size_t room = o <= md->total ? md->total - o : 0;
	if (rlength <= room) {
		*mlen = rlength;
	} else if (opts & PTL_MD_TRUNCATE) {
		*mlen = room;
	} else {
		return false;
	}
	*off = o;
	return true;
}

bool ptl_me_matches(const struct ptl_me *me, ptl_process_id_t src, ptl_match_bits_t bits)
{
	return me_matches(me, src, bits);
}

bool ptl_md_accepts(const struct ptl_md *md, enum ptl_match_op op, ptl_size_t roffset,
		    ptl_size_t rlength, ptl_size_t *off, ptl_size_t *mlen)
{
	return md_accepts(md, op, roffset, rlength, off, mlen);
}

struct ptl_me *ptl_match(struct ptl_list *list, ptl_process_id_t src, ptl_match_bits_t bits,
			 enum ptl_match_op op, ptl_size_t roffset, ptl_size_t rlength,
			 ptl_size_t *off, ptl_size_t *mlen)
{
	for (struct ptl_list *l = list->next; l != list; l = l->next) {
		struct ptl_me *me = ptl_container_of(l, struct ptl_me, link);
		if (me->md && me_matches(me, src, bits) && md_accepts(me->md, op, roffset, rlength, off, mlen))
			return me;
	}
	return NULL;
}
