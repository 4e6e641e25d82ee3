/*
 * PtlInit / PtlFini: the bootstrap, the NALs, the address exchange and the
 * progress thread, in that order; PtlFini undoes them in reverse.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptl/ptl_internal.h"

struct ptl_lib ptl_lib = {
	.wait_yield_every = 1024,
	.view_fd = -1,
};

/* What each rank publishes about itself besides its NAL addresses: uid
 * and jid too, so that a put to a rank of the same ones can leave them
 * out (ptl_proto.h's struct ptl_hdr_tiny), and so that the answers we
 * make up for a rank that died carry its own (ptl_peer_fail). */
struct ptl_rank_info {
	uint32_t nid;
	int32_t numa;
	uint32_t uid;
	uint32_t jid;
};

/* A rank's info into ptl_lib.peers: 0; -1: it published none; -2: one of
 * another size than ours (a libptl of another version), its size in *got
 * unless got is NULL. */
static int ptl_fetch_rank_info(int rank, size_t *got)
{
	struct ptl_peer *p = &ptl_lib.peers[rank];
	if (p->id_known)
		return 0;
	struct ptl_rank_info ri;
	size_t len = sizeof ri;
	int rc = rt_get(rank, "ptl.info", &ri, &len);
	if (got)
		*got = len;
	if ((rc == 0 || len > sizeof ri) && len != sizeof ri)
		return -2; /* rt_get says the size of a value too large (rt.h) */
	if (rc != 0)
		return -1;
	p->nid = ri.nid;
	p->numa = ri.numa;
	p->uid = ri.uid;
	p->jid = ri.jid;
	p->cred_same = ri.uid == ptl_lib.uid && ri.jid == ptl_lib.jid;
	p->id_known = true;
	return 0;
}

/* ptl_peer_id's first look at a rank (ptl_internal.h has the rest). */
int ptl_peer_id_fetch(int rank, ptl_process_id_t *id)
{
	if (rank < 0 || rank >= ptl_lib.rt.size)
		return PTL_PROCESS_INVALID;
	if (ptl_fetch_rank_info(rank, NULL) != 0)
		return PTL_FAIL;
	id->nid = ptl_lib.peers[rank].nid;
	id->pid = (ptl_pid_t)rank;
	return PTL_OK;
}

int ptl_id_rank_fetch(ptl_process_id_t id)
{
	if (id.pid >= (ptl_pid_t)ptl_lib.rt.size)
		return -1;
	int rank = (int)id.pid;
	if (ptl_fetch_rank_info(rank, NULL) != 0 || ptl_lib.peers[rank].nid != id.nid)
		return -1;
	return rank;
}

/* PTL_NAL=shm|self|verbs|tcp forces one NAL for the peers it can reach. */
static bool ptl_nal_wanted(const char *name)
{
	const char *force = getenv("PTL_NAL");
	if (!force || !*force || !strcmp(name, "self"))
		return true;
	return !strcmp(force, name);
}

static int ptl_open_nals(void)
{
	static const struct nal_ops *const all[] = {
		&nal_self_ops, &nal_shm_ops,
#ifdef PTL_HAVE_VERBS
		&nal_verbs_ops,
#endif
		&nal_tcp_ops, /* last: ptl_route prefers the NALs before it */
	};
	const struct rt_info *rt = &ptl_lib.rt;
	struct nal_open_args args = {
		.rank = rt->rank,
		.size = rt->size,
		.local_rank = rt->local_rank,
		.local_size = rt->local_size,
		.jobid = rt->shm_jobid ? rt->shm_jobid : rt->jobid,
		.job_key = rt->job_key,
		.job_key_len = RT_JOB_KEY_LEN,
		.up = { .arg = NULL, .recv = ptl_recv, .bulk_done = ptl_bulk_done,
			.peer_failed = ptl_peer_failed_upcall },
	};
	const char *force = getenv("PTL_NAL");
	bool known = false;
	for (size_t i = 0; force && i < sizeof all / sizeof all[0]; i++)
		known = known || !strcmp(force, all[i]->name);
	if (force && *force && !known) {
		fprintf(stderr, "ptl: PTL_NAL=%s is not a NAL built here (choose shm, self, tcp%s)\n", force,
			sizeof all / sizeof all[0] > 3 ? " or verbs" : "");
		return -1;
	}
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		if (!ptl_nal_wanted(all[i]->name))
			continue;
		/* A host with one rank has no use for a shared segment. */
		if (all[i] == &nal_shm_ops && rt->local_size < 2)
			continue;
		/* TCP only when some ranks are on other hosts, or forced. */
		if (all[i] == &nal_tcp_ops && rt->local_size == rt->size && !(force && *force))
			continue;
		struct ptl_nalinst *ni = &ptl_lib.nals[ptl_lib.nnals];
		int rc = all[i]->open(&args, &ni->n);
		if (rc == NAL_EPERM)
			continue;
		if (rc != 0) {
			fprintf(stderr, "ptl: rank %d: cannot open the %s NAL (error %d)\n",
				rt->rank, all[i]->name, rc);
			return -1;
		}
		ni->ops = all[i];
		ni->ops->props(ni->n, &ni->props);
		ptl_lib.nnals++;
	}
	ptl_lib.poll_one = NULL;
	for (int i = 0, others = 0; i < ptl_lib.nnals; i++)
		if (ptl_lib.nals[i].ops != &nal_self_ops)
			ptl_lib.poll_one = ++others == 1 ? &ptl_lib.nals[i] : NULL;
	return 0;
}

/* A decimal test option from lo to hi: true and its value in *v; unset
 * or empty: false; anything else said on stderr ("is not <what>") and
 * ignored: false. */
static bool ptl_test_option(const char *name, unsigned long long lo, unsigned long long hi, const char *what,
			    unsigned long long *v)
{
	const char *t = getenv(name);
	if (!t || !*t)
		return false;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(t, &end, 10);
	if (*t < '0' || *t > '9' || *end || errno || x < lo || x > hi) {
		fprintf(stderr, "ptl: rank %d: %s=%s is not %s: ignored\n", ptl_lib.rt.rank, name, t, what);
		return false;
	}
	*v = x;
	return true;
}

/* A test option: claim another uid, as a process of another user would
 * (tests/ptl/mp/uid.sh: a job of two users). A decimal uid below
 * PTL_UID_ANY, else said and ignored: a typo must not claim root, nor the
 * wildcard, which would make the default ACL entry admit every user. */
static void ptl_test_uid(void)
{
	char what[32];
	unsigned long long v;
	snprintf(what, sizeof what, "a uid below %u", (unsigned)PTL_UID_ANY);
	if (ptl_test_option("PTL_TEST_UID", 0, (unsigned long long)PTL_UID_ANY - 1, what, &v))
		ptl_lib.uid = (ptl_uid_t)v;
}

/* Test option PTL_TEST_INFO_LEN=n: publish only the first n bytes of our
 * rank info (8: nid and numa, as the libptl before uid and jid did), so
 * that a test sees what a job of two versions says. */
static size_t ptl_test_info_len(void)
{
	char what[32];
	unsigned long long v;
	snprintf(what, sizeof what, "1 to %zu", sizeof(struct ptl_rank_info));
	return ptl_test_option("PTL_TEST_INFO_LEN", 1, sizeof(struct ptl_rank_info), what, &v)
		       ? (size_t)v
		       : sizeof(struct ptl_rank_info);
}

static int ptl_publish(void)
{
	struct ptl_rank_info ri = {
		.nid = ptl_lib.rt.nid, .numa = ptl_lib.my_numa, .uid = ptl_lib.uid, .jid = ptl_lib.jid
	};
	if (rt_put("ptl.info", &ri, ptl_test_info_len()) != 0)
		return -1;
	for (int i = 0; i < ptl_lib.nnals; i++) {
		struct ptl_nalinst *n = &ptl_lib.nals[i];
		unsigned char addr[NAL_ADDR_MAX];
		size_t len = sizeof addr;
		char key[RT_KEY_MAX];
		if (n->ops->addr(n->n, addr, &len) != 0)
			return -1;
		snprintf(key, sizeof key, "nal.%s", n->ops->name);
		if (rt_put(key, addr, len) != 0)
			return -1;
	}
	return rt_fence();
}

static int ptl_start_nals(void)
{
	const struct rt_info *rt = &ptl_lib.rt;
	ptl_lib.local_ranks = calloc((size_t)rt->size, sizeof(int));
	if (!ptl_lib.local_ranks)
		return -1;
	for (int r = 0; r < rt->size; r++) {
		size_t len;
		int rc = ptl_fetch_rank_info(r, &len);
		if (rc == -2) {
			fprintf(stderr,
				"ptl: rank %d: rank %d published %zu bytes of rank info where this libptl publishes %zu: "
				"another version of libptl (every rank of a job must run the same)\n",
				rt->rank, r, len, sizeof(struct ptl_rank_info));
			return -1;
		}
		if (rc != 0) {
			fprintf(stderr, "ptl: rank %d: rank %d published no address\n", rt->rank, r);
			return -1;
		}
		if (ptl_lib.peers[r].nid == rt->nid)
			ptl_lib.local_ranks[ptl_lib.nlocal++] = r;
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ptl_lib.wait_yield_every = ncpu > 0 && ptl_lib.nlocal > ncpu ? 1 : 1024;
	ptl_lib.max_inline = SIZE_MAX;
	for (int i = 0; i < ptl_lib.nnals; i++) {
		struct ptl_nalinst *n = &ptl_lib.nals[i];
		if (n->ops->start && n->ops->start(n->n, ptl_lib.local_ranks, ptl_lib.nlocal) != 0) {
			fprintf(stderr, "ptl: rank %d: the %s NAL failed to start\n", rt->rank, n->ops->name);
			return -1;
		}
		if (n->props.max_inline < ptl_lib.max_inline)
			ptl_lib.max_inline = n->props.max_inline;
	}
	/* Connect the peers on this host now rather than at the first send:
	 * the lazy route reads the peer's address with rt_get, and the
	 * progress thread answering a request must not wait on lib/rt while
	 * the application sits in PtlRtBarrier (which holds lib/rt's lock). */
	for (int i = 0; i < ptl_lib.nlocal; i++) {
		int r = ptl_lib.local_ranks[i];
		if (ptl_lib.peers[r].nal < 0 && ptl_route(r) != 0)
			return -1;
	}
	/* Every rank has attached what the others created; now the creators
	 * may remove the names, so nothing outlives the job. */
	return rt_barrier();
}

/* Another chunk of queued-send slots (PTL_TX_POOL, or PTL_TEST_TX_CHUNK)
 * onto the free list (its first 64 bytes chain the chunks for teardown). The first of each
 * size at init; more only when a flood's answers outrun the rings
 * (ptl_send_later), off the fast path. -1 at the limit or out of memory. */
int ptl_tx_grow(bool small)
{
	int *chunks = small ? &ptl_lib.tx_small_chunks : &ptl_lib.tx_chunks;
	size_t size = small ? sizeof(struct ptl_tx) + PTL_TX_SMALL : ptl_lib.tx_size;
	struct ptl_tx **free_list = small ? &ptl_lib.tx_free_small : &ptl_lib.tx_free;
	if ((*chunks + 1) * ptl_lib.tx_chunk > (small ? PTL_TX_SMALL_MAX : ptl_lib.tx_max))
		return -1;
	unsigned char *c = calloc(1, 64 + (size_t)ptl_lib.tx_chunk * size);
	if (!c)
		return -1;
	*(unsigned char **)(void *)c = ptl_lib.tx_pool;
	ptl_lib.tx_pool = c;
	++*chunks;
	for (int i = ptl_lib.tx_chunk - 1; i >= 0; i--) {
		struct ptl_tx *tx = (struct ptl_tx *)(void *)(c + 64 + (size_t)i * size);
		tx->small = small;
		tx->next = *free_list;
		*free_list = tx;
	}
	return 0;
}

static int ptl_alloc_pools(void)
{
	size_t inl = ptl_lib.max_inline;
	ptl_lib.tx_size = (sizeof(struct ptl_tx) + inl + 63) & ~(size_t)63;
	/* a test option: small chunks, so that a flood makes the pool grow */
	const char *t = getenv("PTL_TEST_TX_CHUNK");
	ptl_lib.tx_chunk = t && atoi(t) > 0 && atoi(t) <= PTL_TX_POOL ? atoi(t) : PTL_TX_POOL;
	t = getenv("PTL_TEST_TX_REQ_MAX");
	ptl_lib.tx_req_max = t && atoi(t) > 0 && atoi(t) <= PTL_TX_REQ_MAX ? atoi(t) : PTL_TX_REQ_MAX;
	t = getenv("PTL_TEST_TX_MAX");
	ptl_lib.tx_max = t && atoi(t) >= ptl_lib.tx_chunk && atoi(t) <= PTL_TX_MAX ? atoi(t) : PTL_TX_MAX;
	ptl_lib.tx_req_queued = 0;
	ptl_lib.tx_drop_told = false;
	ptl_lib.scratch = malloc(inl);
	/* both sizes' first chunks now: a first flood mallocs none on its send path */
	return ptl_lib.scratch && ptl_tx_grow(false) == 0 && ptl_tx_grow(true) == 0 ? 0 : -1;
}

static void ptl_teardown(void)
{
	/* PtlFini turned the bias off already; PtlInit's failure holds the
	 * lock by the mutex, so no thread is in by the biased path. */
	atomic_store_explicit(&ptl_lib.lock.bias, 0, memory_order_relaxed);
	ptl_progress_stop();
	if (ptl_lib.ni)
		ptl_ni_destroy(ptl_lib.ni);
	for (int i = ptl_lib.nnals - 1; i >= 0; i--)
		ptl_lib.nals[i].ops->close(ptl_lib.nals[i].n);
	ptl_lib.nnals = 0;
	ptl_lib.poll_one = NULL;
	ptl_view_close();
	free(ptl_lib.peers);
	free(ptl_lib.local_ranks);
	while (ptl_lib.tx_pool) {
		unsigned char *next = *(unsigned char **)(void *)ptl_lib.tx_pool;
		free(ptl_lib.tx_pool);
		ptl_lib.tx_pool = next;
	}
	ptl_lib.tx_chunks = 0;
	ptl_lib.tx_small_chunks = 0;
	ptl_lib.tx_free_small = NULL;
	free(ptl_lib.scratch);
	ptl_lib.peers = NULL;
	ptl_lib.probe_head = -1;
	ptl_lib.local_ranks = NULL;
	ptl_lib.tx_pool = NULL;
	ptl_lib.scratch = NULL;
	ptl_lib.tx_free = NULL;
	ptl_lib.nbacklogged = 0;
	ptl_lib.nlocal = 0;
	ptl_topo_fini();
	rt_fini();
}

/* PtlInit and PtlFini one at a time, whole: the last PtlFini lets the
 * library lock go to stop the progress thread before it tears down, and a
 * PtlInit on another thread in that gap would find the count at 0 and set
 * up over what is about to go (two threads pairing them: the view opened
 * twice, then torn down under the second). */
static pthread_mutex_t ptl_init_mutex = PTHREAD_MUTEX_INITIALIZER;

bool ptl_atfork_ok;

/* What a child forked after PtlInit starts from, every module's in one
 * place (one registration, in this order): the lock's bias, the view's
 * fd, and the init mutex, which a child forked while another thread was
 * in PtlInit or PtlFini has held by a thread it does not have. (The
 * mutex is not taken in a prepare handler: a fork from an EQ handler
 * would wait on it for a thread that waits for the lock the handler's
 * thread holds.) */
static void ptl_atfork_child(void)
{
	ptl_lock_atfork_child();
	ptl_view_atfork_child();
	pthread_mutex_init(&ptl_init_mutex, NULL);
}

/* Init mutex held: at each PtlInit until it takes (pthread_atfork fails
 * only for want of memory), so that one failure does not cost the
 * process its fork handling for good. */
static void ptl_atfork_register(void)
{
	if (!ptl_atfork_ok)
		ptl_atfork_ok = pthread_atfork(NULL, NULL, ptl_atfork_child) == 0;
}

static int ptl_init_locked(int *max_interfaces);

int PtlInit(int *max_interfaces)
{
	if (!max_interfaces)
		return PTL_SEGV;
	/* In an EQ handler the library lock is ours: count. Not the init
	 * mutex, which a thread in PtlInit or PtlFini may hold while it
	 * waits for that lock (or for this thread to end). At a count of 0
	 * the last PtlFini has let the lock go to end the library (handlers
	 * run until its progress thread stops): a count now would outlive
	 * the teardown, so refused. */
	if (ptl_eq_in_handler) {
		ptl_lock();
		int rc = ptl_lib.init_count > 0 ? PTL_OK : PTL_FAIL;
		if (rc == PTL_OK) {
			ptl_lib.init_count++;
			*max_interfaces = 1;
		}
		ptl_unlock();
		if (rc != PTL_OK)
			fprintf(stderr, "ptl: PtlInit in an EQ handler while the last PtlFini ends the library; refused\n");
		return rc;
	}
	pthread_mutex_lock(&ptl_init_mutex);
	ptl_atfork_register();
	int rc = ptl_init_locked(max_interfaces);
	pthread_mutex_unlock(&ptl_init_mutex);
	return rc;
}

static int ptl_init_locked(int *max_interfaces)
{
	ptl_lock();
	if (ptl_lib.init_count > 0) {
		ptl_lib.init_count++;
		*max_interfaces = 1;
		ptl_unlock();
		return PTL_OK;
	}
	int rc = PTL_FAIL;
	if (rt_init(&ptl_lib.rt) != 0)
		goto out;
	ptl_lib.uid = (ptl_uid_t)getuid();
	ptl_test_uid();
	/* The job's Portals jid: the low bits of the job id, never a wildcard. */
	ptl_lib.jid = (ptl_jid_t)(ptl_lib.rt.jobid % 0xfffffff0u);
	ptl_lib.peers = calloc((size_t)ptl_lib.rt.size, sizeof *ptl_lib.peers);
	if (!ptl_lib.peers)
		goto fail;
	for (int r = 0; r < ptl_lib.rt.size; r++) {
		ptl_list_init(&ptl_lib.peers[r].ops);
		ptl_lib.peers[r].nal = -1;
		ptl_lib.peers[r].probe_next = -1;
	}
	ptl_lib.probe_head = -1;
	ptl_lib.probe_at = 0;
	ptl_lib.my_numa = ptl_topo_init();
	if (ptl_open_nals() != 0 || ptl_publish() != 0 || ptl_start_nals() != 0 ||
	    ptl_alloc_pools() != 0)
		goto fail;
	if (ptl_view_open() != 0)
		goto fail;
	/* Before the progress thread, whose first take then shuts the path. */
	ptl_lock_bias_init();
	ptl_lib.init_count = 1;
	if (ptl_progress_start() != 0) {
		ptl_lib.init_count = 0;
		goto fail;
	}
	*max_interfaces = 1;
	rc = PTL_OK;
	goto out;
fail:
	ptl_teardown();
out:
	ptl_unlock();
	return rc;
}

void PtlFini(void)
{
	/* In an EQ handler the last PtlFini cannot end the library: the
	 * handler runs inside it, perhaps on the progress thread it would
	 * join. Refused, and said (PtlFini returns nothing). */
	if (ptl_eq_in_handler) {
		ptl_lock();
		if (ptl_lib.init_count > 1)
			ptl_lib.init_count--;
		else if (ptl_lib.init_count == 1)
			fprintf(stderr, "ptl: PtlFini in an EQ handler would end the library under the handler;"
					" ignored (call it once the handler has returned)\n");
		ptl_unlock();
		return;
	}
	pthread_mutex_lock(&ptl_init_mutex);
	ptl_lock();
	if (ptl_lib.init_count == 0 || --ptl_lib.init_count > 0) {
		ptl_unlock();
		pthread_mutex_unlock(&ptl_init_mutex);
		return;
	}
	ptl_unlock();
	/* Holding nothing: no thread is in by the biased path once this
	 * returns, and none takes it after (teardown's EQ bells wake threads
	 * waiting in PtlEQWait, which then take the lock by the mutex). */
	ptl_lock_bias_fini();
	/* The progress thread takes the lock: stop it without holding it. */
	ptl_progress_stop();
	ptl_lock();
	ptl_teardown();
	ptl_unlock();
	pthread_mutex_unlock(&ptl_init_mutex);
}
