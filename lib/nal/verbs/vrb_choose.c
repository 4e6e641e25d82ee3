/*
 * The verbs NAL's choice of device, port and GID (vrb_choose.h); linked
 * into libptl and compiled into ptltool.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PTL_HAVE_HWLOC
#include <hwloc.h>
#include <hwloc/openfabrics-verbs.h>
#endif

#include "nal/verbs/vrb_choose.h"

bool vrb_gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t pre[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	return memcmp(g->raw, pre, sizeof pre) == 0;
}

/* Picks the GID index of port on ctx; -1 when none is usable. */
int vrb_choose_gid(struct ibv_context *ctx, uint8_t port, int tbl_len)
{
	int v2 = -1, any = -1;
	for (int i = 0; i < tbl_len; i++) {
		struct ibv_gid_entry e;
		if (ibv_query_gid_ex(ctx, port, (uint32_t)i, &e, 0) != 0)
			continue;
		static const uint8_t zero[16];
		if (!memcmp(e.gid.raw, zero, sizeof zero))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && vrb_gid_is_v4(&e.gid))
			return i;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && v2 < 0)
			v2 = i;
		if (any < 0)
			any = i;
	}
	return v2 >= 0 ? v2 : any;
}

/* First ACTIVE port of dev (or the one asked); 0 when none. */
uint8_t vrb_active_port(struct ibv_context *ctx, int want)
{
	struct ibv_device_attr da;
	if (ibv_query_device(ctx, &da) != 0)
		return 0;
	for (int p = 1; p <= da.phys_port_cnt; p++) {
		struct ibv_port_attr pa;
		if (want && p != want)
			continue;
		if (ibv_query_port(ctx, (uint8_t)p, &pa) == 0 && pa.state == IBV_PORT_ACTIVE)
			return (uint8_t)p;
	}
	return 0;
}

/* Whether dev sits next to the CPUs this process may run on. */
static bool vrb_dev_near(struct ibv_device *dev)
{
#ifdef PTL_HAVE_HWLOC
	hwloc_topology_t topo;
	bool near = false;
	if (hwloc_topology_init(&topo) != 0)
		return false;
	if (hwloc_topology_load(topo) == 0) {
		hwloc_cpuset_t dset = hwloc_bitmap_alloc(), mine = hwloc_bitmap_alloc();
		if (dset && mine && hwloc_ibv_get_device_cpuset(topo, dev, dset) == 0 &&
		    hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) == 0)
			near = hwloc_bitmap_isincluded(mine, dset) ||
			       (hwloc_bitmap_intersects(mine, dset) && !hwloc_bitmap_iszero(dset));
		hwloc_bitmap_free(dset);
		hwloc_bitmap_free(mine);
	}
	hwloc_topology_destroy(topo);
	return near;
#else
	(void)dev;
	return false;
#endif
}

int vrb_choose_device(struct ibv_device **devs, int ndev, uint8_t *port, bool quiet)
{
	const char *want = getenv("PTL_VERBS_DEVICE");
	char wname[64] = "";
	int wport = 0;
	if (want && *want) {
		snprintf(wname, sizeof wname, "%s", want);
		char *colon = strchr(wname, ':');
		if (colon) {
			*colon = 0;
			wport = atoi(colon + 1);
		}
	}
	int first = -1, chosen, nactive = 0;
	uint8_t ports[64] = { 0 };
	for (int i = 0; i < ndev && i < 64; i++) {
		const char *name = ibv_get_device_name(devs[i]);
		if (*wname && strcmp(name, wname))
			continue;
		struct ibv_context *c = ibv_open_device(devs[i]);
		if (!c)
			continue;
		ports[i] = vrb_active_port(c, wport);
		ibv_close_device(c);
		if (!ports[i])
			continue;
		nactive++;
		if (first < 0)
			first = i;
	}
	if (first < 0) {
		if (*wname && !quiet)
			fprintf(stderr, "ptl: verbs: PTL_VERBS_DEVICE=%s: no such device with an ACTIVE port\n", want);
		return -1;
	}
	chosen = first;
	if (nactive > 1) {
		for (int i = 0; i < ndev && i < 64; i++)
			if (ports[i] && vrb_dev_near(devs[i])) {
				chosen = i;
				break;
			}
	}
	*port = ports[chosen];
	return chosen;
}
