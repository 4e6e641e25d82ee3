/*
 * bench/shm_ring.c - the raw shm NAL between two processes pinned to cores
 * 0 and 1: ping-pong half-round-trip latency (8 B .. 64 KiB; above
 * max_inline as a bulk WRITE plus an 8-byte notice), bulk bandwidth up to
 * 16 MiB, and the floors: a shared cache line bouncing between the two
 * cores, and memcpy bandwidth. Prints medians and ranges over trials.
 *
 *   bench/shm_ring [trials] [--lat]    (PTL_SHM_CMA=0: bulk through bounce buffers)
 *
 * --lat: the line floor and the ping-pong rows up to 4 KiB only, for A/B
 * runs of the small-message path, each with the median of every round
 * trip timed on its own ("rtt", the cycle counter scaled by the clock):
 * on a loaded machine a trial's mean takes in every preemption, the
 * median round trip few of them.
 */
#include "config.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "shm_job.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static uint64_t stamp(void) { return __rdtsc(); }
#else
static uint64_t stamp(void) { return sj_now_ns(); }
#endif

#define MAXSZ (16u << 20)

static int trials = 11;
static int lat_only;
static uint64_t *g_ts;  /* --lat: a trial's stamps */
static double *g_rtt;   /* and every half round trip of a row */
static struct nal *g_n;
static volatile int g_got;
static int g_echo;
static int g_peer;
static size_t g_mi;
static uint8_t g_buf[64 << 10];

static void pin(int cpu)
{
	cpu_set_t s;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&s);
	CPU_SET(ncpu > 1 ? cpu % ncpu : 0, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, int n, const char *unit)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	printf("%-28s median %9.3f %s  (range %.3f - %.3f)\n", what, v[n / 2], unit, v[0],
	       v[n - 1]);
}

static volatile int g_stop;
static volatile uint64_t g_raddr;

static void on_recv(void *arg, int peer, const void *msg, size_t len)
{
	(void)arg;
	if (len == 1) { /* rank 0 is done */
		g_stop = 1;
		return;
	}
	if (!g_raddr && len == sizeof(uint64_t)) { /* first message: the peer's buffer */
		uint64_t a;

		memcpy(&a, msg, sizeof(a));
		g_raddr = a;
		return;
	}
	g_got++;
	if (g_echo)
		while (nal_shm_ops.send(g_n, peer, g_buf, len, NULL, 0) == NAL_EAGAIN)
			;
}

static void on_done(void *arg, void *cookie, int status)
{
	(void)arg;
	(void)status;
	*(volatile int *)cookie = 1;
}

static const struct nal_upcalls ups = { .recv = on_recv, .bulk_done = on_done };

static void wait_got(int want)
{
	while (g_got < want)
		nal_shm_ops.progress(g_n);
}

static void bulk_write(void *src, size_t len)
{
	struct iovec iov = { src, len };
	volatile int done = 0;
	int rc = nal_shm_ops.bulk(g_n, g_peer, NAL_BULK_WRITE, &iov, 1, g_raddr, 0, len,
				  (void *)&done);

	if (rc == 1) {
		while (!done)
			nal_shm_ops.progress(g_n);
	} else if (rc < 0) {
		fprintf(stderr, "shm_ring: bulk WRITE of %zu B failed: %d\n", len, rc);
		exit(1);
	}
}

static void sendm(size_t len)
{
	while (nal_shm_ops.send(g_n, g_peer, g_buf, len, NULL, 0) == NAL_EAGAIN)
		nal_shm_ops.progress(g_n);
}

static int body(struct sj_ctx *c, void *arg)
{
	static const size_t lat_sz[] = { 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096,
					 8192, 16384, 32768, 65536 };
	static const size_t bw_sz[] = { 65536, 262144, 1u << 20, 4u << 20, 16u << 20 };
	uint8_t *mem = malloc(MAXSZ);
	uint64_t a = (uint64_t)(uintptr_t)mem;
	struct nal_props p;
	double v[64];

	(void)arg;
	g_n = c->n;
	g_peer = 1 - c->rank;
	pin(c->rank);
	nal_shm_ops.props(c->n, &p);
	g_mi = p.max_inline;
	memset(mem, c->rank + 1, MAXSZ);
	memset(g_buf, 7, sizeof(g_buf));
	while (nal_shm_ops.send(c->n, g_peer, &a, sizeof(a), NULL, 0) == NAL_EAGAIN)
		nal_shm_ops.progress(c->n);
	sj_barrier(c);
	if (c->rank == 1) {
		g_echo = 1;
		while (!g_stop)
			nal_shm_ops.progress(c->n);
		sj_barrier(c);
		free(mem);
		return 0;
	}
	while (!g_raddr)
		nal_shm_ops.progress(c->n);
	printf("shm NAL raw: max_inline %zu B, ring %llu B, bounce chunk %zu B, bulk by %s\n",
	       g_mi, (unsigned long long)c->n->ring_size, c->n->chunk,
	       c->n->cma ? "CMA (process_vm_writev)" : "bounce buffers");
	printf("-- ping-pong half round trip (above max_inline: bulk WRITE + 8 B notice)\n");
	for (size_t s = 0; s < sizeof(lat_sz) / sizeof(lat_sz[0]); s++) {
		size_t len = lat_sz[s];

		if (lat_only && len > 4096)
			break;
		int iters = len <= 4096 ? 20000 : 2000, nrtt = 0;
		char what[64];

		for (int t = 0; t < trials; t++) {
			uint64_t t0, c0;

			g_got = 0;
			t0 = sj_now_ns();
			c0 = stamp();
			for (int i = 0; i < iters; i++) {
				if (g_ts)
					g_ts[i] = stamp();
				if (len <= g_mi) {
					sendm(len);
				} else {
					bulk_write(mem, len);
					sendm(8);
				}
				wait_got(i + 1);
			}
			v[t] = (double)(sj_now_ns() - t0) / iters / 2 / 1000.0;
			if (g_ts) {
				double per_us;

				g_ts[iters] = stamp();
				per_us = (double)(g_ts[iters] - c0) / (v[t] * iters * 2);
				for (int i = 0; i < iters; i++)
					g_rtt[nrtt++] = (double)(g_ts[i + 1] - g_ts[i]) / per_us / 2;
			}
		}
		snprintf(what, sizeof(what), "latency %zu B", len);
		report(what, v, trials, "us");
		if (g_ts) {
			double sum = 0;

			snprintf(what, sizeof(what), "rtt %zu B", len);
			report(what, g_rtt, nrtt, "us");
			/* sorted now: the mean of the middle half, finer than
			 * the median where the counter ticks coarsely */
			for (int i = nrtt / 4; i < nrtt - nrtt / 4; i++)
				sum += g_rtt[i];
			printf("%-28s mean      %9.4f us\n", "rtt middle half", sum / (nrtt - 2 * (nrtt / 4)));
		}
	}
	if (!lat_only)
		printf("-- bulk WRITE bandwidth (back-to-back moves, then an 8 B round trip)\n");
	for (size_t s = 0; !lat_only && s < sizeof(bw_sz) / sizeof(bw_sz[0]); s++) {
		size_t len = bw_sz[s];
		int reps = (int)((256u << 20) / len);
		char what[64];

		if (reps > 2000)
			reps = 2000;
		for (int t = 0; t < trials; t++) {
			uint64_t t0;

			g_got = 0;
			t0 = sj_now_ns();
			for (int i = 0; i < reps; i++)
				bulk_write(mem, len);
			sendm(8);
			wait_got(1);
			v[t] = (double)len * reps / (double)(sj_now_ns() - t0);
		}
		snprintf(what, sizeof(what), "bandwidth %zu KiB", len >> 10);
		report(what, v, trials, "GB/s");
	}
	sendm(1);
	fflush(stdout);
	sj_barrier(c);
	free(mem);
	return 0;
}

/* Floor 1: one cache line bouncing between the two cores. */
static void cacheline_floor(void)
{
	_Atomic uint64_t *line = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	double v[64];
	const int iters = 200000;
	pid_t pid;

	if (line == MAP_FAILED)
		return;
	atomic_store(line, 0);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		pin(1);
		for (uint64_t k = 1; k < (uint64_t)iters * trials * 2; k += 2) {
			while (atomic_load_explicit(line, memory_order_acquire) != k)
				;
			atomic_store_explicit(line, k + 1, memory_order_release);
		}
		_exit(0);
	}
	pin(0);
	for (int t = 0; t < trials; t++) {
		uint64_t base = (uint64_t)t * iters * 2, t0 = sj_now_ns();

		for (uint64_t k = base; k < base + (uint64_t)iters * 2; k += 2) {
			atomic_store_explicit(line, k + 1, memory_order_release);
			while (atomic_load_explicit(line, memory_order_acquire) != k + 2)
				;
		}
		v[t] = (double)(sj_now_ns() - t0) / iters / 2 / 1000.0;
	}
	waitpid(pid, NULL, 0);
	munmap((void *)line, 4096);
	report("cache line half round trip", v, trials, "us");
}

/* Called through a volatile pointer so the copies are not optimized away. */
static void *(*volatile memcpy_p)(void *, const void *, size_t) = memcpy;

/* Floor 2: memcpy bandwidth of this machine, one core. */
static void memcpy_floor(void)
{
	static const size_t sz[] = { 65536, 1u << 20, 4u << 20, 16u << 20 };
	uint8_t *a = malloc(MAXSZ), *b = malloc(MAXSZ);
	double v[64];

	if (!a || !b)
		return;
	memset(a, 1, MAXSZ);
	memset(b, 2, MAXSZ);
	for (size_t s = 0; s < sizeof(sz) / sizeof(sz[0]); s++) {
		int reps = (int)((256u << 20) / sz[s]);
		char what[64];

		for (int t = 0; t < trials; t++) {
			uint64_t t0 = sj_now_ns();

			for (int i = 0; i < reps; i++)
				memcpy_p(b, a + (i & 1), sz[s]);
			v[t] = (double)sz[s] * reps / (double)(sj_now_ns() - t0);
		}
		snprintf(what, sizeof(what), "memcpy %zu KiB", sz[s] >> 10);
		report(what, v, trials, "GB/s");
	}
	free(a);
	free(b);
}

int main(int argc, char **argv)
{
	if (argc > 1 && atoi(argv[1]) > 0 && atoi(argv[1]) <= 63)
		trials = atoi(argv[1]);
	lat_only = argc > 2 && !strcmp(argv[2], "--lat");
	if (lat_only) {
		g_ts = malloc(sizeof(*g_ts) * 20001);
		g_rtt = malloc(sizeof(*g_rtt) * 20000 * (size_t)trials);
		if (!g_ts || !g_rtt)
			return 1;
	}
	printf("-- floors (cores 0 and 1)\n");
	cacheline_floor();
	if (!lat_only)
		memcpy_floor();
	fflush(stdout);
	return sj_run(2, ups, body, NULL, 600, -1, NULL) ? 1 : 0;
}
