/* ptltool info: what ptl is and can use on this host. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

/* RDMA devices as the kernel lists them: works whether or not ptl was
 * built with verbs, so a user sees what the host has. */
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
	       !shm ? "" : cma ? " (large messages by CMA single copy)"
			       : " (CMA not permitted here: large messages by pipelined copy)");
#ifdef PTL_HAVE_VERBS
	printf("nal verbs: libibverbs found at build time; the verbs NAL is not built yet\n");
#else
	printf("nal verbs: not built (no libibverbs at build time)\n");
#endif
	printf("nal tcp:   not built yet\n");
	ptltool_info_topology();
	ptltool_info_rdma();
	return 0;
}
