/* Memory descriptors: where bytes land or come from, and when to unlink. */
#include "config.h"

#include <string.h>

#include "ptl/ptl_internal.h"
#include "nal/nal_copy.h"

#define PTL_MD_ALL_OPTIONS                                                                  \
	(PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE | PTL_MD_TRUNCATE |            \
	 PTL_MD_ACK_DISABLE | PTL_MD_IOVEC | PTL_MD_MAX_SIZE | PTL_MD_EVENT_START_DISABLE | \
	 PTL_MD_EVENT_END_DISABLE)

/* An IOVEC MD's list, checked and copied into md's slot of the NI's
 * pool; writes md only when the list passes. Out of line: PtlMDUpdate
 * of a contiguous MD (every posted MPI receive) does not carry its loop
 * and memcpy. */
static __attribute__((noinline)) int ptl_md_set_iov(struct ptl_ni *ni, struct ptl_md *md, const ptl_md_t *umd,
						    ptl_size_t *total)
{
	if (umd->length > (ptl_size_t)ni->limits.max_md_iovecs)
		return PTL_MD_ILLEGAL;
	if (umd->length && !umd->start)
		return PTL_SEGV;
	const ptl_md_iovec_t *uiov = umd->start;
	int niov = (int)umd->length;
	ptl_size_t t = 0;
	for (int i = 0; i < niov; i++) {
		if (uiov[i].iov_len && !uiov[i].iov_base)
			return PTL_SEGV;
		t += uiov[i].iov_len;
	}
	/* Our own copy: the caller may reuse its array at once. */
	md->iov = ni->iov_pool + (size_t)ptl_handle_idx(md->handle) * (size_t)ni->limits.max_md_iovecs;
	memcpy(md->iov, uiov, (size_t)niov * sizeof *uiov);
	*total = t;
	return PTL_OK;
}

/* ptl_md_set's body, inline in PtlMDUpdate: re-arming a posted MPI
 * receive's kept MD is one update per receive, and the call into
 * ptl_md_set with its frame was a fifth of it. */
__attribute__((always_inline)) static inline int ptl_md_set_inline(struct ptl_ni *ni, struct ptl_md *md,
								   const ptl_md_t *umd, struct ptl_eq *known)
{
	if (umd->options & ~PTL_MD_ALL_OPTIONS)
		return PTL_MD_ILLEGAL;
	if (umd->threshold < 0 && umd->threshold != PTL_MD_THRESH_INF)
		return PTL_MD_ILLEGAL;
	struct ptl_eq *eq = NULL;
	if (umd->eq_handle != PTL_EQ_NONE) {
		eq = known && known->handle == umd->eq_handle ? known : ptl_eq_lookup(ni, umd->eq_handle);
		if (!eq)
			return PTL_EQ_INVALID;
	}
	ptl_size_t total;
	if (umd->options & PTL_MD_IOVEC) {
		int rc = ptl_md_set_iov(ni, md, umd, &total);
		if (rc != PTL_OK)
			return rc;
	} else {
		if (umd->length && !umd->start)
			return PTL_SEGV;
		md->iov = NULL;
		total = umd->length;
	}
	md->md = *umd;
	md->eq = eq;
	md->niov = md->iov ? (int)umd->length : 0;
	md->total = total;
	md->local_offset = 0;
	return PTL_OK;
}

int ptl_md_set(struct ptl_ni *ni, struct ptl_md *md, const ptl_md_t *umd)
{
	return ptl_md_set_inline(ni, md, umd, NULL);
}

/* Walks [off, off+len) of md piece by piece. */
#define PTL_MD_FOREACH(md, off, len, base, n, body)                                        \
	do {                                                                                \
		ptl_size_t o_ = (off), l_ = (len);                                          \
		if (!(md)->iov) {                                                           \
			char *base = (char *)(md)->md.start + o_;                           \
			ptl_size_t n = l_;                                                  \
			if (n)                                                              \
				body;                                                       \
			break;                                                              \
		}                                                                           \
		for (int i_ = 0; i_ < (md)->niov && l_; i_++) {                             \
			ptl_size_t il_ = (md)->iov[i_].iov_len;                             \
			if (o_ >= il_) {                                                    \
				o_ -= il_;                                                  \
				continue;                                                   \
			}                                                                   \
			char *base = (char *)(md)->iov[i_].iov_base + o_;                   \
			ptl_size_t n = il_ - o_ < l_ ? il_ - o_ : l_;                       \
			body;                                                               \
			l_ -= n;                                                            \
			o_ = 0;                                                             \
		}                                                                           \
	} while (0)

void ptl_md_copy_in(const struct ptl_md *md, ptl_size_t off, const void *src, ptl_size_t len)
{
	const char *s = src;
	PTL_MD_FOREACH(md, off, len, p, n, { nal_copy(p, s, n); s += n; });
}

void ptl_md_copy_out(const struct ptl_md *md, ptl_size_t off, void *dst, ptl_size_t len)
{
	char *d = dst;
	PTL_MD_FOREACH(md, off, len, p, n, { nal_copy(d, p, n); d += n; });
}

int ptl_md_iovecs(const struct ptl_md *md, ptl_size_t off, ptl_size_t len, struct iovec *out, int max)
{
	int k = 0;
	bool overflow = false;
	PTL_MD_FOREACH(md, off, len, p, n, {
		if (k == max) {
			overflow = true;
		} else {
			out[k].iov_base = p;
			out[k].iov_len = n;
			k++;
		}
	});
	return overflow ? -1 : k;
}

void ptl_md_event(struct ptl_md *md, ptl_event_kind_t kind, ptl_event_t *ev)
{
	struct ptl_eq *eq = ptl_md_eq(md, kind);
	if (!eq)
		return;
	ev->type = kind;
	ev->md_handle = md->handle;
	ev->md = md->md;
	ptl_eq_post(eq, ev);
}

bool ptl_md_autounlink(struct ptl_ni *ni, struct ptl_md *md)
{
	if (!ptl_md_due(md) && !md->doomed)
		return false;
	if (md->pending > 0) {
		/* Answers are still due; unlink when the last one arrives. */
		md->doomed = true;
		return false;
	}
	struct ptl_me *me = md->me;
	struct ptl_eq *eq = ptl_md_eq(md, PTL_EVENT_UNLINK);
	if (eq) {
		/* Written in its slot, every field (a posted MPI receive's
		 * UNLINK, built zeroed aside and copied, cost as much as the
		 * PUT_END before it). */
		ptl_event_t *e = ptl_eq_slot(eq);
		e->type = PTL_EVENT_UNLINK;
		/* This process unlinked it: the event names us, uid and jid
		 * as well as id, as a SEND event does (not 0, "root, job 0"). */
		e->initiator = ni->id;
		e->uid = ptl_uid();
		e->jid = ptl_jid();
		e->pt_index = me ? me->pt_index : 0;
		e->match_bits = me ? me->match_bits : 0;
		e->rlength = 0;
		e->mlength = 0;
		e->offset = 0;
		e->md_handle = md->handle;
		e->md = md->md;
		e->hdr_data = 0;
		e->link = 1;
		e->ni_fail_type = PTL_NI_OK;
		uint64_t h = md->handle;
		ptl_eq_commit(eq, e);
		/* The EQ's handler may have unlinked it (and bound another
		 * MD into its slot): nothing left to do. */
		if (ptl_md_lookup(ni, h) != md)
			return true;
		me = md->me; /* as the EQ's handler left it */
	}
	if (me && me->unlink_op == PTL_UNLINK) {
		ptl_me_destroy(ni, me); /* takes the MD with it */
	} else {
		ptl_md_destroy(ni, md);
	}
	return true;
}


static inline int ptl_md_new(struct ptl_ni *ni, const ptl_md_t *umd, ptl_unlink_t unlink_op,
		      struct ptl_md **out)
{
	if (unlink_op != PTL_RETAIN && unlink_op != PTL_UNLINK)
		return PTL_MD_ILLEGAL;
	uint64_t h;
	struct ptl_md *md = ptl_htab_take(&ni->mds, &h);
	if (!md)
		return PTL_NO_SPACE;
	/* Every field, the slot is not zeroed: ptl_md_set sets the MD's
	 * description; the rest may hold what the slot's last MD left (an MD
	 * unlinked when its last answer came was doomed). */
	md->handle = h;
	int rc = ptl_md_set(ni, md, umd);
	if (rc != PTL_OK) {
		ptl_htab_release(&ni->mds, h);
		return rc;
	}
	md->me = NULL;
	md->unlink_op = unlink_op;
	md->pending = 0;
	md->doomed = false;
	*out = md;
	return PTL_OK;
}

int PtlMDAttach(ptl_handle_me_t me_handle, ptl_md_t md, ptl_unlink_t unlink_op, ptl_handle_md_t *md_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	if (!md_handle)
		return PTL_SEGV;
	ptl_lock();
	struct ptl_ni *ni = ptl_lib.ni;
	struct ptl_me *me = ni ? ptl_me_lookup(ni, me_handle) : NULL;
	struct ptl_md *m;
	int rc;
	if (!me)
		rc = PTL_ME_INVALID;
	else if (me->md)
		rc = PTL_ME_IN_USE;
	else if ((rc = ptl_md_new(ni, &md, unlink_op, &m)) == PTL_OK) {
		m->me = me;
		me->md = m;
		*md_handle = m->handle;
		if (m->md.threshold != 0) /* (a disabled MD accepts nothing yet) */
			ptl_me_revive(&ni->pts[me->pt_index], me);
	}
	ptl_unlock();
	return rc;
}

int PtlMDBind(ptl_handle_ni_t ni_handle, ptl_md_t md, ptl_unlink_t unlink_op, ptl_handle_md_t *md_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	if (!md_handle)
		return PTL_SEGV;
	ptl_lock();
	struct ptl_ni *ni = ptl_ni_lookup(ni_handle);
	struct ptl_md *m;
	int rc;
	if (!ni)
		rc = PTL_NI_INVALID;
	else if ((rc = ptl_md_new(ni, &md, unlink_op, &m)) == PTL_OK)
		*md_handle = m->handle;
	ptl_unlock();
	return rc;
}

int PtlMDUnlink(ptl_handle_md_t md_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	struct ptl_ni *ni = ptl_lib.ni;
	struct ptl_md *md = ni ? ptl_md_lookup(ni, md_handle) : NULL;
	int rc = PTL_OK;
	if (!md)
		rc = PTL_MD_INVALID;
	else if (md->pending)
		rc = PTL_MD_IN_USE;
	else if (md->me && md->me->unlink_op == PTL_UNLINK)
		/* An explicit unlink is an MD unlink like the automatic one,
		 * and an ME attached with PTL_UNLINK goes with its MD (3.3,
		 * PtlMEAttach's unlink_op): left behind it would stay on its
		 * list with no MD, a stray entry every arrival walks past. */
		ptl_me_destroy(ni, md->me); /* takes the MD with it */
	else
		ptl_md_destroy(ni, md);
	ptl_unlock();
	return rc;
}

int PtlMDUpdate(ptl_handle_md_t md_handle, ptl_md_t *old_md, ptl_md_t *new_md, ptl_handle_eq_t eq_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	struct ptl_ni *ni = ptl_lib.ni;
	struct ptl_md *md = ni ? ptl_md_lookup(ni, md_handle) : NULL;
	int rc = PTL_OK;
	if (!md) {
		rc = PTL_MD_INVALID;
		goto out;
	}
	if (old_md)
		*old_md = md->md;
	if (!new_md)
		goto out;
	struct ptl_eq *eq = NULL;
	if (eq_handle != PTL_EQ_NONE) {
		/* Mostly the MD's own EQ (a posted MPI receive's): no lookup. */
		eq = eq_handle == md->md.eq_handle ? ptl_md_live_eq(md) : ptl_eq_lookup(ni, eq_handle);
		if (!eq) {
			rc = PTL_EQ_INVALID;
			goto out;
		}
		/* The conditional update: only while nothing is waiting in eq, so
		 * the caller knows no operation slipped in since it last looked. */
		if (__atomic_load_n(&eq->ring->write_seq, __ATOMIC_ACQUIRE) != eq->rd) {
			rc = PTL_MD_NO_UPDATE;
			goto out;
		}
	}
	if (md->pending) {
		/* Operations in flight (an EQ handler between START and the
		 * data's move, answers still due): not updated, and said with
		 * the one code 3.3 gives PtlMDUpdate for that, which programs
		 * written for it retry on (PTL_MD_IN_USE is PtlMDUnlink's). */
		rc = PTL_MD_NO_UPDATE;
		goto out;
	}
	/* ptl_md_set checks everything before it writes anything, so a
	 * refused update leaves md as it was; it never touches the
	 * attachment, the handle or the unlink choice, which an update keeps
	 * (a copy of the whole MD to restore was a sixth of a posted MPI
	 * receive's PtlMDUpdate). */
	rc = ptl_md_set_inline(ni, md, new_md, eq); /* eq_handle's EQ, or NULL */
	if (rc == PTL_OK && md->me)
		ptl_me_revive(&ni->pts[md->me->pt_index], md->me);
out:
	ptl_unlock();
	return rc;
}
