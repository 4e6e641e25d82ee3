/* Match entries: ordered lists on portal table entries. */
#include "config.h"

#include "ptl/ptl_internal.h"

/* Unlinks me from its list and frees it, with its MD if it has one. */
void ptl_me_destroy(struct ptl_ni *ni, struct ptl_me *me)
{
	if (me->md) {
		struct ptl_md *md = me->md;
		me->md = NULL;
		md->me = NULL;
		ptl_md_destroy(ni, md);
	}
	struct ptl_pt *pt = &ni->pts[me->pt_index];
	if (pt->dead == &me->link)
		pt->dead = me->link.prev; /* dead too, or the head */
	ptl_list_del(&me->link);
	pt->length--;
	ptl_htab_release(&ni->mes, me->handle);
	ptl_sr_mes(ni);
}

static int ptl_me_check_id(ptl_process_id_t id)
{
	if (id.pid != PTL_PID_ANY && id.pid >= (ptl_pid_t)ptl_lib.rt.size)
		return PTL_PROCESS_INVALID;
	return PTL_OK;
}

/* Creates an ME on pt next to pos (the list head for attach). Inlined in
 * each API call whatever its size: PtlMEInsert posts an MPI receive, and
 * the call cost it 20 instructions. */
__attribute__((always_inline)) static inline int ptl_me_new(struct ptl_ni *ni, ptl_pt_index_t pt, struct ptl_list *pos,
		      ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		      ptl_match_bits_t ignore_bits, ptl_unlink_t unlink_op,
		      ptl_ins_pos_t position, ptl_handle_me_t *me_handle)
{
	if (!me_handle)
		return PTL_SEGV;
	if (unlink_op != PTL_RETAIN && unlink_op != PTL_UNLINK)
		return PTL_FAIL;
	if (position != PTL_INS_BEFORE && position != PTL_INS_AFTER)
		return PTL_FAIL;
	int rc = ptl_me_check_id(match_id);
	if (rc != PTL_OK)
		return rc;
	if (ni->pts[pt].length >= ni->limits.max_me_list)
		return PTL_ME_LIST_TOO_LONG;
	uint64_t h;
	struct ptl_me *me = ptl_htab_take(&ni->mes, &h);
	if (!me)
		return PTL_NO_SPACE;
	/* Every field, the slot is not zeroed: the link is set by the insert. */
	me->handle = h;
	me->pt_index = pt;
	ptl_me_set_match(me, match_id, match_bits, ignore_bits);
	me->unlink_op = unlink_op;
	me->md = NULL;
	if (position == PTL_INS_BEFORE)
		ptl_list_add_before(&me->link, pos);
	else
		ptl_list_add_after(&me->link, pos);
	/* In the dead front if it went between two of its entries (it has
	 * no MD: it accepts nothing yet). */
	struct ptl_list *prev = me->link.prev, *dead = ni->pts[pt].dead;
	me->front = prev == &ni->pts[pt].list ? dead != prev
					      : ptl_container_of(prev, struct ptl_me, link)->front && prev != dead;
	ni->pts[pt].length++;
	ptl_sr_mes(ni);
	*me_handle = h;
	return PTL_OK;
}

int PtlMEAttach(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, ptl_process_id_t match_id,
		ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits, ptl_unlink_t unlink_op,
		ptl_ins_pos_t position, ptl_handle_me_t *me_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	struct ptl_ni *ni = ptl_ni_lookup(ni_handle);
	int rc;
	if (!ni)
		rc = PTL_NI_INVALID;
	else if (pt_index > (ptl_pt_index_t)ni->limits.max_pt_index)
		rc = PTL_PT_INDEX_INVALID;
	else if (position != PTL_INS_BEFORE && position != PTL_INS_AFTER)
		rc = PTL_FAIL;
	else {
		/* On the list head, "before" the head is the tail: INS_AFTER
		 * appends, INS_BEFORE prepends - invert for the head. */
		struct ptl_list *head = &ni->pts[pt_index].list;
		rc = ptl_me_new(ni, pt_index, head, match_id, match_bits, ignore_bits, unlink_op,
				position == PTL_INS_AFTER ? PTL_INS_BEFORE : PTL_INS_AFTER, me_handle);
	}
	ptl_unlock();
	return rc;
}

int PtlMEAttachAny(ptl_handle_ni_t ni_handle, ptl_pt_index_t *pt_index, ptl_process_id_t match_id,
		   ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits, ptl_unlink_t unlink_op,
		   ptl_handle_me_t *me_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	if (!pt_index)
		return PTL_SEGV;
	ptl_lock();
	struct ptl_ni *ni = ptl_ni_lookup(ni_handle);
	int rc = PTL_PT_FULL;
	if (!ni) {
		rc = PTL_NI_INVALID;
	} else {
		for (int pt = 0; pt <= ni->limits.max_pt_index; pt++) {
			if (ni->pts[pt].length)
				continue;
			rc = ptl_me_new(ni, (ptl_pt_index_t)pt, &ni->pts[pt].list, match_id, match_bits,
					ignore_bits, unlink_op, PTL_INS_AFTER, me_handle);
			if (rc == PTL_OK)
				*pt_index = (ptl_pt_index_t)pt;
			break;
		}
	}
	ptl_unlock();
	return rc;
}

int PtlMEInsert(ptl_handle_me_t base, ptl_process_id_t match_id, ptl_match_bits_t match_bits,
		ptl_match_bits_t ignore_bits, ptl_unlink_t unlink_op, ptl_ins_pos_t position,
		ptl_handle_me_t *me_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	struct ptl_ni *ni = ptl_lib.ni;
	struct ptl_me *b = ni ? ptl_me_lookup(ni, base) : NULL;
	int rc;
	if (!b)
		rc = PTL_ME_INVALID;
	else
		rc = ptl_me_new(ni, b->pt_index, &b->link, match_id, match_bits, ignore_bits,
				unlink_op, position, me_handle);
	ptl_unlock();
	return rc;
}

int PtlMEUnlink(ptl_handle_me_t me_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	struct ptl_ni *ni = ptl_lib.ni;
	struct ptl_me *me = ni ? ptl_me_lookup(ni, me_handle) : NULL;
	int rc = PTL_OK;
	if (!me)
		rc = PTL_ME_INVALID;
	else if (me->md && me->md->pending)
		rc = PTL_ME_IN_USE;
	else
		ptl_me_destroy(ni, me);
	ptl_unlock();
	return rc;
}
