/*
 * rt_pmi.c - a rank started by a launcher that speaks the PMI-1 wire
 * protocol (MPICH's mpiexec.hydra, Slurm's srun --mpi=pmi2 also answers
 * it). No library: text lines "cmd=... key=value ...\n" over the socket
 * the launcher hands over, either inherited (PMI_FD, with PMI_RANK and
 * PMI_SIZE) or to connect to (PMI_PORT=host:port, with PMI_ID).
 *
 * The PMI key space is flat and its values are short text, so every key
 * carries the rank ("<rank>.<...>"), and a fence publishes what this rank
 * put since the last fence as one text record ("key=hex;key=hex;...")
 * split into parts of at most vallen_max characters, then reads every
 * rank's record into the local table: rt_get never talks to the launcher
 * (it may run on the progress thread while another thread sits in a
 * barrier). Init exchanges each rank's host id (for local_rank and
 * local_size) and rank 0's random job key the same way.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rt.h"
#include "rt_proto.h"

#define PMI_LINE 4096

static int pmi_fd = -1;
static int pmi_rank, pmi_size;
static char pmi_kvs[256];
static int pmi_vallen = 1024;
static int pmi_fences;
static char *pmi_pending;       /* this rank's puts since the last fence */
static size_t pmi_plen, pmi_pcap;
static char pmi_in[PMI_LINE];
static size_t pmi_inlen;

static int pmi_write(const char *s)
{
	size_t len = strlen(s);

	while (len > 0) {
		ssize_t n = send(pmi_fd, s, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "ptl: rank %d: lost the PMI server: %s\n",
				pmi_rank, strerror(errno));
			return -1;
		}
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads one reply line (without the newline) into line. */
static int pmi_read(char *line, size_t cap)
{
	for (;;) {
		char *nl = memchr(pmi_in, '\n', pmi_inlen);
		ssize_t n;

		if (nl != NULL) {
			size_t l = (size_t)(nl - pmi_in);

			if (l >= cap)
				l = cap - 1;
			memcpy(line, pmi_in, l);
			line[l] = '\0';
			pmi_inlen -= (size_t)(nl - pmi_in) + 1;
			memmove(pmi_in, nl + 1, pmi_inlen);
			return 0;
		}
		if (pmi_inlen == sizeof(pmi_in)) {
			fprintf(stderr, "ptl: rank %d: overlong line from the PMI server\n",
				pmi_rank);
			return -1;
		}
		n = read(pmi_fd, pmi_in + pmi_inlen, sizeof(pmi_in) - pmi_inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "ptl: rank %d: the PMI server closed the connection "
				"(the launcher is gone?)\n", pmi_rank);
			return -1;
		}
		pmi_inlen += (size_t)n;
	}
}

/* Copies the value of key in a reply line ("a=b c=d") into out. */
static int pmi_field(const char *line, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);

	for (const char *p = line; p != NULL && *p != '\0';) {
		p += strspn(p, " ");
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			size_t l = strcspn(p + kl + 1, " ");

			if (l >= cap)
				return -1;
			memcpy(out, p + kl + 1, l);
			out[l] = '\0';
			return 0;
		}
		p = strchr(p, ' ');
	}
	return -1;
}

/* Sends a command and reads the reply whose cmd is want. */
static int pmi_call(const char *cmd, const char *want, char *reply, size_t cap)
{
	char got[64];

	if (pmi_write(cmd) != 0 || pmi_read(reply, cap) != 0)
		return -1;
	if (pmi_field(reply, "cmd", got, sizeof(got)) != 0 || strcmp(got, want) != 0) {
		fprintf(stderr, "ptl: rank %d: unexpected PMI reply '%.80s' (wanted %s)\n",
			pmi_rank, reply, want);
		return -1;
	}
	if (pmi_field(reply, "rc", got, sizeof(got)) == 0 && strcmp(got, "0") != 0)
		return -2;
	return 0;
}

static int pmi_connect_port(const char *port, const char *id)
{
	char host[256], line[PMI_LINE], v[64];
	const char *colon = strrchr(port, ':');
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	int fd;

	if (colon == NULL || (size_t)(colon - port) >= sizeof(host)) {
		fprintf(stderr, "ptl: PMI_PORT='%s' is not host:port\n", port);
		return -1;
	}
	memcpy(host, port, (size_t)(colon - port));
	host[colon - port] = '\0';
	if (getaddrinfo(host, colon + 1, &hints, &ai) != 0) {
		fprintf(stderr, "ptl: PMI_PORT='%s': cannot resolve %s\n", port, host);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		fprintf(stderr, "ptl: cannot connect to the PMI server at %s: %s\n", port,
			strerror(errno));
		freeaddrinfo(ai);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	freeaddrinfo(ai);
	pmi_fd = fd;
	/* The port mode says who we are first, then learns rank and size. */
	snprintf(line, sizeof(line), "cmd=initack pmiid=%s\n", id);
	if (pmi_call(line, "initack", line, sizeof(line)) != 0)
		return -1;
	for (int i = 0; i < 3; i++) {
		char key[32];

		if (pmi_read(line, sizeof(line)) != 0 || pmi_field(line, "cmd", key, sizeof(key)) != 0 ||
		    strcmp(key, "set") != 0)
			return -1;
		if (pmi_field(line, "size", v, sizeof(v)) == 0)
			pmi_size = atoi(v);
		else if (pmi_field(line, "rank", v, sizeof(v)) == 0)
			pmi_rank = atoi(v);
	}
	return 0;
}

static int pmi_put_raw(const char *key, const char *val)
{
	char line[PMI_LINE];

	snprintf(line, sizeof(line), "cmd=put kvsname=%s key=%s value=%s\n", pmi_kvs, key, val);
	if (pmi_call(line, "put_result", line, sizeof(line)) != 0) {
		fprintf(stderr, "ptl: rank %d: PMI put of %s failed\n", pmi_rank, key);
		return -1;
	}
	return 0;
}

static int pmi_get_raw(const char *key, char *val, size_t cap)
{
	char line[PMI_LINE];

	snprintf(line, sizeof(line), "cmd=get kvsname=%s key=%s\n", pmi_kvs, key);
	if (pmi_call(line, "get_result", line, sizeof(line)) != 0 ||
	    pmi_field(line, "value", val, cap) != 0) {
		fprintf(stderr, "ptl: rank %d: PMI get of %s failed\n", pmi_rank, key);
		return -1;
	}
	return 0;
}

static int pmi_barrier(void)
{
	char line[PMI_LINE];

	return pmi_call("cmd=barrier_in\n", "barrier_out", line, sizeof(line)) == 0 ? 0 : -1;
}

static uint64_t pmi_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s != '\0'; s++) {
		h ^= (uint8_t)*s;
		h *= 1099511628211ULL;
	}
	return h != 0 ? h : 1;
}

static int pmi_init(struct rt_info *info)
{
	const char *fdv = getenv("PMI_FD"), *port = getenv("PMI_PORT");
	char line[PMI_LINE], v[256], key[64];
	long l;

	pmi_inlen = 0;
	if (pmi_fd >= 0) {
		/* Re-initialization: the job and the connection stay. */
	} else if (fdv != NULL) {
		if (rt_parse_int(fdv, 0, 1 << 20, &l) != 0) {
			fprintf(stderr, "ptl: PMI_FD='%s' is not a descriptor\n", fdv);
			return -1;
		}
		pmi_fd = (int)l;
		fcntl(pmi_fd, F_SETFD, FD_CLOEXEC);
		if (getenv("PMI_RANK") == NULL || getenv("PMI_SIZE") == NULL ||
		    rt_parse_int(getenv("PMI_SIZE"), 1, 1 << 24, &l) != 0) {
			fprintf(stderr, "ptl: PMI_FD is set but PMI_RANK or PMI_SIZE is not\n");
			return -1;
		}
		pmi_size = (int)l;
		if (rt_parse_int(getenv("PMI_RANK"), 0, pmi_size - 1, &l) != 0) {
			fprintf(stderr, "ptl: PMI_RANK is not in 0..%d\n", pmi_size - 1);
			return -1;
		}
		pmi_rank = (int)l;
	} else if (pmi_connect_port(port, getenv("PMI_ID") ? getenv("PMI_ID") : "0") != 0) {
		return -1;
	}
	if (pmi_fences == 0) {
		if (pmi_call("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init",
			     line, sizeof(line)) != 0) {
			fprintf(stderr, "ptl: rank %d: the PMI server refused PMI 1.1\n", pmi_rank);
			return -1;
		}
		if (pmi_call("cmd=get_maxes\n", "maxes", line, sizeof(line)) == 0 &&
		    pmi_field(line, "vallen_max", v, sizeof(v)) == 0 && atoi(v) >= 64)
			pmi_vallen = atoi(v) < PMI_LINE - 512 ? atoi(v) : PMI_LINE - 512;
		if (pmi_call("cmd=get_my_kvsname\n", "my_kvsname", line, sizeof(line)) != 0 ||
		    pmi_field(line, "kvsname", pmi_kvs, sizeof(pmi_kvs)) != 0)
			return -1;
		/* Who shares our host, and the job key (rank 0's). */
		snprintf(key, sizeof(key), "%d.nid", pmi_rank);
		snprintf(v, sizeof(v), "%u", rt_host_nid());
		if (pmi_put_raw(key, v) != 0)
			return -1;
		if (pmi_rank == 0) {
			uint8_t k[RT_JOB_KEY_LEN];

			if (rt_random_bytes(k, sizeof(k)) != 0)
				return -1;
			rt_hex_encode(v, k, sizeof(k));
			if (pmi_put_raw("ptl.jobkey", v) != 0)
				return -1;
		}
		if (pmi_barrier() != 0)
			return -1;
		pmi_fences = 1;
	}
	info->rank = pmi_rank;
	info->size = pmi_size;
	info->nid = rt_host_nid();
	info->local_size = 0;
	for (int r = 0; r < pmi_size; r++) {
		snprintf(key, sizeof(key), "%d.nid", r);
		if (pmi_get_raw(key, v, sizeof(v)) != 0)
			return -1;
		if (strtoul(v, NULL, 10) == info->nid) {
			if (r == pmi_rank)
				info->local_rank = info->local_size;
			info->local_size++;
		}
	}
	size_t n;
	if (pmi_get_raw("ptl.jobkey", v, sizeof(v)) != 0 ||
	    rt_hex_decode(info->job_key, sizeof(info->job_key), v, strlen(v), &n) != 0)
		return -1;
	info->jobid = pmi_hash(pmi_kvs);
	return 0;
}

static int pmi_put(const char *key, const void *val, size_t len)
{
	size_t need = strlen(key) + 2 * len + 3;

	/* rt_put checked the key and length; PMI-1's text format also
	 * reserves these two characters. */
	if (strchr(key, '=') != NULL || strchr(key, ';') != NULL) {
		fprintf(stderr, "ptl: rt_put: key '%s' has '=' or ';', which PMI-1 cannot carry\n", key);
		return -1;
	}
	if (pmi_pcap - pmi_plen < need) {
		size_t cap = pmi_pcap ? pmi_pcap : 4096;
		char *p;

		while (cap - pmi_plen < need)
			cap *= 2;
		if ((p = realloc(pmi_pending, cap)) == NULL)
			return -1;
		pmi_pending = p;
		pmi_pcap = cap;
	}
	pmi_plen += (size_t)sprintf(pmi_pending + pmi_plen, "%s=", key);
	rt_hex_encode(pmi_pending + pmi_plen, val, len);
	pmi_plen += 2 * len;
	pmi_pending[pmi_plen++] = ';';
	pmi_pending[pmi_plen] = '\0';
	/* Also ours at once, as under ptlrun after the fence. */
	return 0;
}

/* Parses one rank's record "key=hex;..." into the table. */
static int pmi_store(int rank, char *rec)
{
	for (char *save = NULL, *t = strtok_r(rec, ";", &save); t != NULL;
	     t = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(t, '=');
		uint8_t val[RT_VAL_MAX];
		size_t n;

		if (eq == NULL)
			return -1;
		*eq = '\0';
		if (rt_hex_decode(val, sizeof(val), eq + 1, strlen(eq + 1), &n) != 0 ||
		    rt_kv_set(rank, t, val, n) != 0)
			return -1;
	}
	return 0;
}

static int pmi_fence(void)
{
	size_t part = (size_t)pmi_vallen - 1, nparts = (pmi_plen + part - 1) / part;
	char key[64], v[PMI_LINE];
	int f = pmi_fences++;

	for (size_t i = 0; i < nparts; i++) {
		size_t l = pmi_plen - i * part < part ? pmi_plen - i * part : part;

		snprintf(key, sizeof(key), "%d.f%d.%zu", pmi_rank, f, i);
		memcpy(v, pmi_pending + i * part, l);
		v[l] = '\0';
		if (pmi_put_raw(key, v) != 0)
			return -1;
	}
	snprintf(key, sizeof(key), "%d.f%d.n", pmi_rank, f);
	snprintf(v, sizeof(v), "%zu", nparts);
	if (pmi_put_raw(key, v) != 0 || pmi_barrier() != 0)
		return -1;
	pmi_plen = 0;
	for (int r = 0; r < pmi_size; r++) {
		char *rec;
		size_t np, len = 0;

		snprintf(key, sizeof(key), "%d.f%d.n", r, f);
		if (pmi_get_raw(key, v, sizeof(v)) != 0)
			return -1;
		np = strtoul(v, NULL, 10);
		if ((rec = malloc(np * part + 1)) == NULL)
			return -1;
		rec[0] = '\0';
		for (size_t i = 0; i < np; i++) {
			snprintf(key, sizeof(key), "%d.f%d.%zu", r, f, i);
			if (pmi_get_raw(key, rec + len, part + 1) != 0) {
				free(rec);
				return -1;
			}
			len += strlen(rec + len);
		}
		if (pmi_store(r, rec) != 0) {
			fprintf(stderr, "ptl: rank %d: bad record of rank %d in the PMI "
				"key space\n", pmi_rank, r);
			free(rec);
			return -1;
		}
		free(rec);
	}
	return 0;
}

static int pmi_get(int rank, const char *key, void *val, size_t *len)
{
	if (rank < 0 || rank >= pmi_size || key == NULL || len == NULL)
		return -1;
	return rt_kv_get(rank, key, val, len) == 0 ? 0 : -1;
}

static void pmi_abort(int code, const char *why)
{
	char line[256];

	fprintf(stderr, "ptl: rank %d: abort with code %d: %s\n", pmi_rank, code, why);
	if (pmi_fd >= 0) {
		snprintf(line, sizeof(line), "cmd=abort exitcode=%d\n", code);
		if (write(pmi_fd, line, strlen(line)) < 0) {
			/* exiting anyway */
		}
	}
	_exit(code > 0 && code < 256 ? code : 1);
}

static void pmi_fini(void)
{
	/* The connection stays for a later rt_init; PMI's finalize is sent
	 * at exit so the launcher sees a clean end. */
}

static void pmi_atexit(void)
{
	char line[256];

	if (pmi_fd >= 0 && pmi_fences > 0)
		pmi_call("cmd=finalize\n", "finalize_ack", line, sizeof(line));
}

static int pmi_init_once(struct rt_info *info)
{
	static int registered;
	int rc = pmi_init(info);

	if (rc == 0 && !registered) {
		atexit(pmi_atexit);
		registered = 1;
	}
	return rc;
}

const struct rt_ops rt_pmi_ops = {
	.name = "pmi",
	.init = pmi_init_once,
	.put = pmi_put,
	.fence = pmi_fence,
	.get = pmi_get,
	.barrier = pmi_barrier,
	.abort = pmi_abort,
	.fini = pmi_fini,
};
