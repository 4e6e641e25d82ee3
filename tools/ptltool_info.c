/* ptltool info: what ptl is and can use on this host. */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef PTL_HAVE_HWLOC
#include <hwloc.h>
#endif

#ifdef PTL_HAVE_VERBS
#include <net/if.h>

#include <infiniband/verbs.h>

#include "nal/verbs/vrb_choose.h"
#endif

#include "nal/tcp/tcp_choose.h"
#include "ptltool.h"

/* Whether a process may read a sibling's memory with CMA: a child reads
 * its parent, which Yama's ptrace_scope 1 forbids just as it forbids
 * sibling ranks. */
static int ptltool_cma_works(void)
{
	static volatile int probe = 0x5eed;
	pid_t parent = getpid();
	pid_t child = fork();
	if (child < 0)
		return 0;
	if (child == 0) {
		int got = 0;
		struct iovec l = { &got, sizeof got }, r = { (void *)&probe, sizeof probe };
		_exit(process_vm_readv(parent, &l, 1, &r, 1, 0) == sizeof got && got == 0x5eed ? 0 : 1);
	}
	int st;
	if (waitpid(child, &st, 0) != child)
		return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int ptltool_shm_works(void)
{
	char name[64];
	snprintf(name, sizeof name, "/ptl.info-probe.%d", (int)getpid());
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return 0;
	close(fd);
	shm_unlink(name);
	return 1;
}

/* The addresses the TCP NAL would publish (the NAL's own choice). */
static void ptltool_info_tcp(void)
{
	uint32_t ip[8];
	int n = tcp_choose_addrs(ip, 8, "ptltool info");
	printf("nal tcp:   built, usable: publishes");
	for (int i = 0; i < n; i++) {
		char a[INET_ADDRSTRLEN];
		printf(" %s", inet_ntop(AF_INET, &ip[i], a, sizeof a) ? a : "?");
	}
	const char *why = getenv("PTL_TCP_ADDR") && *getenv("PTL_TCP_ADDR") ? " (PTL_TCP_ADDR)"
			  : getenv("PTL_TCP_IF") && *getenv("PTL_TCP_IF") ? " (PTL_TCP_IF)" : "";
	printf("%s\n", why);
}

static void ptltool_info_topology(void)
{
#ifdef PTL_HAVE_HWLOC
	hwloc_topology_t t;
	if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0) {
		printf("topology:  hwloc could not read this host's topology\n");
		return;
	}
	printf("topology:  %d package(s), %d NUMA node(s), %d core(s), %d hardware thread(s) (hwloc %s)\n",
	       hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE), hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE),
	       hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE), hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU),
	       HWLOC_VERSION);
	hwloc_topology_destroy(t);
#else
	printf("topology:  not available (built without hwloc)\n");
#endif
}

#ifndef PTL_HAVE_VERBS
static void ptltool_read_line(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* RDMA devices as the kernel lists them, for a ptl built without verbs,
 * so a user still sees what the host has. */
static void ptltool_info_rdma(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[1024], ports[512];
		snprintf(ports, sizeof ports, "/sys/class/infiniband/%s/ports", de->d_name);
		DIR *pd = opendir(ports);
		struct dirent *pe;
		while (pd && (pe = readdir(pd))) {
			if (pe->d_name[0] == '.')
				continue;
			char state[64], layer[64], gid[64];
			snprintf(path, sizeof path, "%s/%s/state", ports, pe->d_name);
			ptltool_read_line(path, state, sizeof state);
			snprintf(path, sizeof path, "%s/%s/link_layer", ports, pe->d_name);
			ptltool_read_line(path, layer, sizeof layer);
			snprintf(path, sizeof path, "%s/%s/gids/0", ports, pe->d_name);
			ptltool_read_line(path, gid, sizeof gid);
			printf("rdma:      %s port %s: %s, %s, gid[0] %s\n", de->d_name, pe->d_name, state,
			       layer[0] ? layer : "?", gid[0] ? gid : "?");
			n++;
		}
		if (pd)
			closedir(pd);
	}
	if (d)
		closedir(d);
	if (!n)
		printf("rdma:      no RDMA devices on this host\n");
}
#endif

#ifdef PTL_HAVE_VERBS
static const char *ptltool_gid_type(enum ibv_gid_type t)
{
	switch (t) {
	case IBV_GID_TYPE_IB: return "IB";
	case IBV_GID_TYPE_ROCE_V1: return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2: return "RoCE v2";
	}
	return "?";
}

static const char *ptltool_port_state(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_DOWN: return "DOWN";
	case IBV_PORT_INIT: return "INIT";
	case IBV_PORT_ARMED: return "ARMED";
	case IBV_PORT_ACTIVE: return "ACTIVE";
	case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
	default: return "NOP";
	}
}

/* One port: state, link layer, MTU, LID and the GID table; marks the GID
 * ptl would use when this is ptl's port. */
static void ptltool_info_port(struct ibv_context *ctx, uint8_t port, bool chosen)
{
	struct ibv_port_attr pa;
	if (ibv_query_port(ctx, port, &pa) != 0) {
		printf("  port %u:  cannot query it\n", port);
		return;
	}
	const char *layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)"
			    : pa.link_layer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "unspecified";
	printf("  port %u:  %s, %s, active MTU %d, LID %u%s\n", port, ptltool_port_state(pa.state), layer,
	       128 << pa.active_mtu, pa.lid, chosen ? "   <- ptl uses this port" : "");
	int pick = chosen ? vrb_choose_gid(ctx, port, pa.gid_tbl_len) : -1;
	int shown = 0;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry e;
		static const uint8_t zero[16];
		if (ibv_query_gid_ex(ctx, port, (uint32_t)i, &e, 0) != 0 || !memcmp(e.gid.raw, zero, sizeof zero))
			continue;
		char addr[INET6_ADDRSTRLEN] = "?", ifname[IF_NAMESIZE] = "";
		if (vrb_gid_is_v4(&e.gid))
			inet_ntop(AF_INET, e.gid.raw + 12, addr, sizeof addr);
		else
			inet_ntop(AF_INET6, e.gid.raw, addr, sizeof addr);
		if (e.ndev_ifindex)
			if_indextoname(e.ndev_ifindex, ifname);
		printf("    gid %-3d %-8s %-40s %-10s%s\n", i, ptltool_gid_type(e.gid_type), addr,
		       ifname[0] ? ifname : "-", i == pick ? " <- ptl uses this GID" : "");
		shown++;
	}
	if (!shown)
		printf("    no valid GID%s\n", pa.link_layer == IBV_LINK_LAYER_ETHERNET
						    ? " (no IP address on its netdev? RoCE needs one)" : "");
	else if (chosen && pick < 0 && pa.link_layer == IBV_LINK_LAYER_ETHERNET)
		printf("    no usable GID: ptl cannot use this port\n");
}

/* The devices libibverbs sees, and which device, port and GID the verbs
 * NAL would choose (the same code as the NAL: lib/nal/verbs/vrb_choose.c). */
static void ptltool_info_verbs(void)
{
	int ndev = 0;
	struct ibv_device **devs = ibv_get_device_list(&ndev);
	const char *env = getenv("PTL_VERBS_DEVICE");
	uint8_t port = 0;
	int chosen = devs && ndev > 0 ? vrb_choose_device(devs, ndev, &port, true) : -1;
	if (chosen >= 0)
		printf("nal verbs: built, usable: %s port %u%s\n", ibv_get_device_name(devs[chosen]), port,
		       env && *env ? " (PTL_VERBS_DEVICE)" : "");
	else if (env && *env)
		printf("nal verbs: built, NOT usable: PTL_VERBS_DEVICE=%s names no device with an ACTIVE port\n", env);
	else
		printf("nal verbs: built, NOT usable: no RDMA device with an ACTIVE port\n");
	ptltool_info_tcp();
	ptltool_info_topology();
	if (!devs || ndev == 0) {
		printf("rdma:      no RDMA devices on this host%s\n",
		       devs ? "" : " (libibverbs found no devices or no kernel support)");
		if (devs)
			ibv_free_device_list(devs);
		return;
	}
	if (env && *env)
		printf("rdma:      PTL_VERBS_DEVICE=%s\n", env);
	for (int i = 0; i < ndev; i++) {
		const char *name = ibv_get_device_name(devs[i]);
		struct ibv_context *ctx = ibv_open_device(devs[i]);
		struct ibv_device_attr da;
		if (!ctx || ibv_query_device(ctx, &da) != 0) {
			printf("rdma:      %s: cannot open it (%s)\n", name, strerror(errno));
			if (ctx)
				ibv_close_device(ctx);
			continue;
		}
		uint64_t g = be64toh(ibv_get_device_guid(devs[i]));
		printf("rdma:      %s: node GUID %04x:%04x:%04x:%04x, firmware %s, %u port(s)%s\n", name,
		       (unsigned)(g >> 48) & 0xffff, (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
		       (unsigned)g & 0xffff, da.fw_ver[0] ? da.fw_ver : "-", da.phys_port_cnt,
		       i == chosen ? "   <- ptl uses this device" : "");
		for (int p = 1; p <= da.phys_port_cnt; p++)
			ptltool_info_port(ctx, (uint8_t)p, i == chosen && p == port);
		ibv_close_device(ctx);
	}
	ibv_free_device_list(devs);
}
#endif

int ptltool_info_main(int argc, char **argv)
{
	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			printf("usage: ptltool info\n  version, NALs, topology and RDMA devices of this host\n");
			return 0;
		}
		fprintf(stderr, "ptltool info: unexpected argument '%s'\nusage: ptltool info\n", argv[1]);
		return 2;
	}
	printf("ptl:       %s\n", PACKAGE_VERSION);
	printf("nal self:  built, usable\n");
	int shm = ptltool_shm_works(), cma = shm && ptltool_cma_works();
	printf("nal shm:   built, %s%s\n", shm ? "usable" : "NOT usable: cannot create objects in /dev/shm",
	       !shm ? "" : cma ? " (large messages by pipelined copy or CMA single copy, whichever measures faster)"
			       : " (large messages by pipelined copy; CMA not permitted here)");
#ifdef PTL_HAVE_VERBS
	ptltool_info_verbs();
#else
	printf("nal verbs: not built (no libibverbs at build time)\n");
	ptltool_info_tcp();
	ptltool_info_topology();
	ptltool_info_rdma();
#endif
	return 0;
}
