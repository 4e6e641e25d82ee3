/*
 * Where this process runs (hwloc): its NUMA node, for PtlNIDist, and a
 * place for the progress thread near it. Without hwloc: no binding and
 * every local peer counts as "same host".
 */
#include "config.h"

#include "ptl/ptl_internal.h"

#ifdef PTL_HAVE_HWLOC
#include <hwloc.h>

static hwloc_topology_t ptl_topo;
static hwloc_cpuset_t ptl_topo_near; /* CPUs of the NUMA node(s) we run on */

int ptl_topo_init(void)
{
	if (hwloc_topology_init(&ptl_topo) != 0)
		return -1;
	if (hwloc_topology_load(ptl_topo) != 0) {
		hwloc_topology_destroy(ptl_topo);
		ptl_topo = NULL;
		return -1;
	}
	hwloc_cpuset_t mine = hwloc_bitmap_alloc();
	int numa = -1;
	if (hwloc_get_cpubind(ptl_topo, mine, HWLOC_CPUBIND_PROCESS) != 0)
		hwloc_bitmap_copy(mine, hwloc_topology_get_topology_cpuset(ptl_topo));
	/* The smallest NUMA node holding all our CPUs, if there is one. */
	hwloc_obj_t obj = hwloc_get_obj_covering_cpuset(ptl_topo, mine);
	while (obj && !obj->memory_arity && obj->parent)
		obj = obj->parent;
	if (obj && obj->memory_arity) {
		hwloc_obj_t node = obj->memory_first_child;
		while (node && node->type != HWLOC_OBJ_NUMANODE)
			node = node->memory_first_child;
		if (node)
			numa = (int)node->logical_index;
		ptl_topo_near = hwloc_bitmap_dup(obj->cpuset);
	}
	hwloc_bitmap_free(mine);
	return numa;
}

/* The progress thread shares the NUMA node's CPUs rather than the
 * process's own core, so a process pinned to one core does not have its
 * progress thread compete with it there when other cores are free. */
void ptl_topo_bind_thread(void)
{
	if (ptl_topo && ptl_topo_near)
		hwloc_set_cpubind(ptl_topo, ptl_topo_near, HWLOC_CPUBIND_THREAD);
}

void ptl_topo_fini(void)
{
	if (ptl_topo_near)
		hwloc_bitmap_free(ptl_topo_near);
	ptl_topo_near = NULL;
	if (ptl_topo)
		hwloc_topology_destroy(ptl_topo);
	ptl_topo = NULL;
}
#else
int ptl_topo_init(void) { return -1; }
void ptl_topo_bind_thread(void) {}
void ptl_topo_fini(void) {}
#endif
