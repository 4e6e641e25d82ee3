/* Network interface: limits, tables, status registers, ids, distance. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptl/ptl_internal.h"

/* Honour a desired limit up to what we support. A zeroed ptl_ni_limits_t is
 * the common way to say "no preference", so <= 0 asks for the default, also
 * for the two index limits. */
static int ptl_limit(int desired, int def, int max)
{
	if (desired <= 0)
		return def;
	return desired > max ? max : desired;
}

static void ptl_ni_limits(const ptl_ni_limits_t *d, ptl_ni_limits_t *l)
{
	ptl_ni_limits_t none = { 0 };
	if (!d)
		d = &none;
	l->max_mes = ptl_limit(d->max_mes, PTL_DEF_MAX_MES, PTL_LIM_MAX_MES);
	l->max_mds = ptl_limit(d->max_mds, PTL_DEF_MAX_MDS, PTL_LIM_MAX_MDS);
	l->max_eqs = ptl_limit(d->max_eqs, PTL_DEF_MAX_EQS, PTL_LIM_MAX_EQS);
	l->max_ac_index = ptl_limit(d->max_ac_index, PTL_DEF_MAX_AC, PTL_LIM_MAX_AC);
	l->max_pt_index = ptl_limit(d->max_pt_index, PTL_DEF_MAX_PT, PTL_LIM_MAX_PT);
	l->max_md_iovecs = ptl_limit(d->max_md_iovecs, PTL_DEF_MAX_IOV, PTL_LIM_MAX_IOV);
	l->max_me_list = ptl_limit(d->max_me_list, l->max_mes, l->max_mes);
	l->max_getput_md = ptl_limit(d->max_getput_md, PTL_DEF_MAX_GETPUT, PTL_LIM_MAX_GETPUT);
}

struct ptl_ni *ptl_ni_lookup(ptl_handle_ni_t h)
{
	struct ptl_ni *ni = ptl_lib.ni;
	if (!ni || h != ni->handle)
		return NULL;
	return ni;
}

void ptl_sr_inc(int reg)
{
	if (ptl_lib.view)
		__atomic_add_fetch(&ptl_lib.view->sr[reg], 1, __ATOMIC_RELAXED);
}

/* tag: the NI's generation, so handles of an NI that was finalized never
 * match the tables of a later one. */
static int ptl_ni_create(const ptl_ni_limits_t *desired, unsigned tag, struct ptl_ni **out)
{
	struct ptl_ni *ni = calloc(1, sizeof *ni);
	if (!ni)
		return PTL_NO_SPACE;
	ptl_ni_limits(desired, &ni->limits);
	const ptl_ni_limits_t *l = &ni->limits;
	/* Ops in flight: each MD may have a few; bounded so memory stays sane. */
	uint32_t nops = (uint32_t)l->max_mds * 2u;
	if (nops > 65536)
		nops = 65536;
	ni->pts = calloc((size_t)l->max_pt_index + 1, sizeof *ni->pts);
	ni->acs = calloc((size_t)l->max_ac_index + 1, sizeof *ni->acs);
	ni->iov_pool = calloc((size_t)l->max_mds * (size_t)l->max_md_iovecs, sizeof *ni->iov_pool);
	if (!ni->pts || !ni->acs || !ni->iov_pool ||
	    ptl_htab_init(&ni->eqs, PTL_HK_EQ, tag, (uint32_t)l->max_eqs, sizeof(struct ptl_eq)) ||
	    ptl_htab_init(&ni->mds, PTL_HK_MD, tag, (uint32_t)l->max_mds, sizeof(struct ptl_md)) ||
	    ptl_htab_init(&ni->mes, PTL_HK_ME, tag, (uint32_t)l->max_mes, sizeof(struct ptl_me)) ||
	    ptl_htab_init(&ni->ops, 0xfe, tag, nops, sizeof(struct ptl_op))) {
		ptl_ni_destroy(ni);
		return PTL_NO_SPACE;
	}
	for (int i = 0; i <= l->max_pt_index; i++)
		ptl_pt_init(&ni->pts[i]);
	ptl_ac_defaults(ni);
	*out = ni;
	return PTL_OK;
}

void ptl_ni_destroy(struct ptl_ni *ni)
{
	if (ni->mes.objs)
		for (uint32_t i = 0; i < ni->mes.fresh; i++) {
			struct ptl_me *me = ptl_htab_at(&ni->mes, i);
			if (me)
				ptl_me_destroy(ni, me);
		}
	if (ni->mds.objs)
		for (uint32_t i = 0; i < ni->mds.fresh; i++) {
			struct ptl_md *md = ptl_htab_at(&ni->mds, i);
			if (md)
				ptl_md_destroy(ni, md);
		}
	if (ni->eqs.objs)
		for (uint32_t i = 0; i < ni->eqs.fresh; i++) {
			struct ptl_eq *eq = ptl_htab_at(&ni->eqs, i);
			if (eq)
				ptl_eq_destroy(ni, eq);
		}
	if (ptl_lib.ni == ni) /* ops in flight hold registrations */
		ptl_ops_unreg_all();
	ptl_htab_fini(&ni->eqs);
	ptl_htab_fini(&ni->mds);
	ptl_htab_fini(&ni->mes);
	ptl_htab_fini(&ni->ops);
	free(ni->pts);
	free(ni->acs);
	free(ni->iov_pool);
	if (ptl_lib.ni == ni) {
		ptl_lib.ni = NULL;
		for (int r = 0; ptl_lib.peers && r < ptl_lib.rt.size; r++)
			ptl_list_init(&ptl_lib.peers[r].ops);
		if (ptl_lib.view) {
			ptl_lib.view->ni_up = 0;
			__atomic_store_n(&ptl_lib.view->sr[PTL_SR_MES_IN_USE], 0, __ATOMIC_RELAXED);
		}
	}
	free(ni);
}

int PtlNIInit(ptl_interface_t iface, ptl_pid_t pid, ptl_ni_limits_t *desired,
	      ptl_ni_limits_t *actual, ptl_handle_ni_t *ni_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	if (!ni_handle)
		return PTL_SEGV;
	if (iface != PTL_IFACE_DEFAULT)
		return PTL_IFACE_INVALID;
	if (pid != PTL_PID_ANY && pid != (ptl_pid_t)ptl_lib.rt.rank)
		return PTL_PID_INVALID;
	ptl_lock();
	int rc = PTL_OK;
	if (ptl_lib.ni) {
		rc = PTL_IFACE_DUP;
	} else {
		struct ptl_ni *ni;
		/* A new generation per init, so a handle from before a
		 * PtlNIFini stays invalid, for the NI and everything in it. */
		unsigned gen = (unsigned)(ptl_lib.ni_handle_gen % 0xffff + 1);
		rc = ptl_ni_create(desired, gen & 0xff, &ni);
		if (rc == PTL_OK) {
			ptl_lib.ni_handle_gen = gen;
			ni->handle = ptl_handle_make(PTL_HK_NI, 0, gen, 0);
			ptl_peer_id(ptl_lib.rt.rank, &ni->id);
			ptl_lib.ni = ni;
			ptl_view_ni(ni);
		}
	}
	if (ptl_lib.ni) {
		*ni_handle = ptl_lib.ni->handle;
		if (actual)
			*actual = ptl_lib.ni->limits;
	}
	ptl_unlock();
	return rc;
}

int PtlNIFini(ptl_handle_ni_t ni_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	struct ptl_ni *ni = ptl_ni_lookup(ni_handle);
	if (!ni) {
		ptl_unlock();
		return PTL_NI_INVALID;
	}
	ptl_ni_destroy(ni);
	ptl_unlock();
	return PTL_OK;
}

int PtlNIStatus(ptl_handle_ni_t ni_handle, ptl_sr_index_t reg, ptl_sr_value_t *status)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	int rc = PTL_OK;
	if (!ptl_ni_lookup(ni_handle))
		rc = PTL_NI_INVALID;
	else if (!status)
		rc = PTL_SEGV;
	else if (reg < 0 || reg >= PTL_SR_COUNT)
		rc = PTL_SR_INDEX_INVALID;
	else
		*status = (ptl_sr_value_t)__atomic_load_n(&ptl_lib.view->sr[reg], __ATOMIC_RELAXED);
	ptl_unlock();
	return rc;
}

int PtlNIDist(ptl_handle_ni_t ni_handle, ptl_process_id_t process, unsigned long *distance)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	ptl_lock();
	int rc = PTL_OK;
	int rank;
	if (!ptl_ni_lookup(ni_handle))
		rc = PTL_NI_INVALID;
	else if (!distance)
		rc = PTL_SEGV;
	else if ((rank = ptl_id_rank(process)) < 0)
		rc = PTL_PROCESS_INVALID;
	else if (rank == ptl_lib.rt.rank)
		*distance = 0;
	else if (ptl_lib.peers[rank].nid != ptl_lib.rt.nid)
		*distance = 3;
	else if (ptl_lib.my_numa >= 0 && ptl_lib.peers[rank].numa == ptl_lib.my_numa)
		*distance = 1;
	else
		*distance = 2;
	ptl_unlock();
	return rc;
}

int PtlNIHandle(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	if (!ni_handle)
		return PTL_SEGV;
	ptl_lock();
	struct ptl_ni *ni = ptl_lib.ni;
	bool live = false;
	if (ni) {
		switch (ptl_handle_kind(handle)) {
		case PTL_HK_NI: live = handle == ni->handle; break;
		case PTL_HK_EQ: live = ptl_htab_lookup(&ni->eqs, handle) != NULL; break;
		case PTL_HK_MD: live = ptl_htab_lookup(&ni->mds, handle) != NULL; break;
		case PTL_HK_ME: live = ptl_htab_lookup(&ni->mes, handle) != NULL; break;
		}
	}
	if (live)
		*ni_handle = ni->handle;
	ptl_unlock();
	return live ? PTL_OK : PTL_HANDLE_INVALID;
}

static int ptl_ni_get(ptl_handle_ni_t ni_handle, const void *out)
{
	if (!ptl_initialized())
		return PTL_NO_INIT;
	if (!out)
		return PTL_SEGV;
	ptl_lock();
	int rc = ptl_ni_lookup(ni_handle) ? PTL_OK : PTL_NI_INVALID;
	ptl_unlock();
	return rc;
}

int PtlGetUid(ptl_handle_ni_t ni_handle, ptl_uid_t *uid)
{
	int rc = ptl_ni_get(ni_handle, uid);
	if (rc == PTL_OK)
		*uid = ptl_uid();
	return rc;
}

int PtlGetId(ptl_handle_ni_t ni_handle, ptl_process_id_t *id)
{
	int rc = ptl_ni_get(ni_handle, id);
	if (rc == PTL_OK)
		*id = ptl_lib.ni->id;
	return rc;
}

int PtlGetJid(ptl_handle_ni_t ni_handle, ptl_jid_t *jid)
{
	int rc = ptl_ni_get(ni_handle, jid);
	if (rc == PTL_OK)
		*jid = ptl_jid();
	return rc;
}
