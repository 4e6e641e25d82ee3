/*
 * Progress: sending through the NALs (with a backlog for sends a NAL
 * cannot take yet), polling them, and the progress thread that does it when
 * the application is busy elsewhere.
 *
 * Who polls: an application thread inside an API call polls and tells the
 * NALs so (set_polling(1)): peers then never make a system call to wake
 * us. When application threads stop calling in (or go to sleep in
 * PtlEQWait), the progress thread takes over: it clears the polling flag
 * and sleeps in the NAL until a peer wakes it. An idle job sleeps; nothing
 * spins.
 *
 * Dead peers: most NALs report a death themselves (peer_failed), but shm
 * sees one only when it looks (nal_ops.peer_check), and a process whose
 * every thread sleeps would wait for a dead peer's ACK or REPLY forever.
 * So a thread about to sleep while operations are in flight to such
 * peers sleeps for at most PTL_PEER_PROBE_MS, and looks at those peers
 * once that long has passed (ptl_peers_probe). With nothing in flight to
 * them its sleep has no timeout, as before. A thread that only polls
 * never sleeps: the progress thread probes for it (ptl_lease_probe), or
 * without one the polls do (ptl_eq.c: the waits', an empty PtlEQGet's or
 * PtlEQPoll's of timeout 0).
 */
#include "config.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptl/ptl_internal.h"
#include "nal/nal_copy.h"

/* How long the progress thread keeps the "app polls" flag without seeing
 * an application poll, and so how late it notices that none polls. A lease
 * through which the application polled is followed by one twice as long,
 * up to PTL_POLL_LEASE_MAX_MS: a thread that checks every 2 ms on a rank
 * that polls for seconds wakes 500 times a second for nothing (in a VM,
 * where a preempted vCPU also outlasts 2 ms, each such check was a chance
 * to drop the lease, arm the CQ and be kicked back). After the first
 * lease without a poll the next one is short again. */
#define PTL_POLL_LEASE_MS 2
#define PTL_POLL_LEASE_MAX_MS 16
/* Empty polls before the progress thread sleeps. */
#define PTL_THREAD_SPINS 32

int ptl_route(int peer)
{
	struct ptl_peer *p = &ptl_lib.peers[peer];
	for (int i = 0; i < ptl_lib.nnals; i++) {
		struct ptl_nalinst *n = &ptl_lib.nals[i];
		bool self = !strcmp(n->ops->name, "self");
		if (self != (peer == ptl_lib.rt.rank) || !n->ops->reaches(n->n, peer))
			continue;
		unsigned char addr[NAL_ADDR_MAX];
		size_t len = sizeof addr;
		char key[RT_KEY_MAX];
		snprintf(key, sizeof key, "nal.%s", n->ops->name);
		if (rt_get(peer, key, addr, &len) != 0)
			continue;
		if (n->ops->connect(n->n, peer, addr, len) != 0)
			return NAL_EPEER;
		p->nal = i;
		p->connected = true;
		if (n->ops->peer_check) {
			p->probe_next = ptl_lib.probe_head;
			ptl_lib.probe_head = peer;
		}
		return 0;
	}
	fprintf(stderr, "ptl: rank %d: no NAL reaches rank %d (NALs open: %d)\n",
		ptl_lib.rt.rank, peer, ptl_lib.nnals);
	return NAL_EPEER;
}

/* Tries to hand the backlog of peer to its NAL, in order. */
static int ptl_flush_backlog(struct ptl_peer *p, int peer)
{
	int done = 0;
	struct ptl_nalinst *n = &ptl_lib.nals[p->nal];
	while (p->backlog_head) {
		struct ptl_tx *tx = p->backlog_head;
		int rc = n->ops->send(n->n, peer, tx->buf, tx->len, NULL, 0);
		if (rc == NAL_EAGAIN)
			break;
		if (peer == ptl_lib.rt.rank)
			ptl_lib.self_queued = true;
		/* Sent, or the peer is gone (its ops fail through peer_failed). */
		p->backlog_head = tx->next;
		if (!p->backlog_head) {
			p->backlog_tail = NULL;
			ptl_lib.nbacklogged--;
		}
		ptl_lib.tx_req_queued -= tx->req;
		struct ptl_tx **free_list = tx->small ? &ptl_lib.tx_free_small : &ptl_lib.tx_free;
		tx->next = *free_list;
		*free_list = tx;
		done++;
	}
	return done;
}

/* The NAL the progress thread sleeps in: shm when it is open (its wake-up
 * is a futex only it can wait on), else the last NAL that can sleep. Other
 * NALs that peers send through get a watcher thread (ptl_watch_thread). */
static struct ptl_nalinst *ptl_sleep_nal(void)
{
	for (int i = 0; i < ptl_lib.nnals; i++)
		if (!strcmp(ptl_lib.nals[i].ops->name, "shm") && ptl_lib.nals[i].ops->sleep)
			return &ptl_lib.nals[i];
	for (int i = ptl_lib.nnals - 1; i >= 0; i--)
		if (ptl_lib.nals[i].ops->sleep)
			return &ptl_lib.nals[i];
	return NULL;
}

static void ptl_kick_sleeper(void)
{
	struct ptl_nalinst *s = ptl_sleep_nal();
	if (s && s->ops->kick && ptl_lib.thread_running)
		s->ops->kick(s->n);
}

/* Queues a send the NAL refused for now; per-peer order is kept, since
 * once something waits everything queues. The slots grow when they run
 * out. A request past tx_req_max queued requests is refused (NAL_ENOMEM:
 * PTL_NO_SPACE to its initiator's caller, who tries again once the peers
 * have read some). An answer (a target's ACK or REPLY, ptl_target) has no
 * one to return a failure to, and one dropped leaves its initiator
 * waiting for good: answers are not counted, and only one that finds no
 * slot at all (PTL_TX_SMALL_MAX, PTL_TX_MAX, memory) is dropped, said once
 * and counted in PTL_SR_DROP_COUNT. */
int ptl_send_later(struct ptl_peer *p, int peer, const void *hdr, size_t hdr_len, const void *payload,
		   size_t len)
{
	uint8_t type = *(const uint8_t *)hdr; /* where every header has it */
	bool answer = type == PTL_MSG_ACK || type == PTL_MSG_REPLY, small = hdr_len + len <= PTL_TX_SMALL;
	struct ptl_tx **free_list = small ? &ptl_lib.tx_free_small : &ptl_lib.tx_free;
	if (hdr_len + len > ptl_lib.max_inline)
		return NAL_ENOMEM;
	if (!answer && ptl_lib.tx_req_queued >= ptl_lib.tx_req_max) {
		ptl_sr_inc(PTL_SR_REFUSED_COUNT);
		return NAL_ENOMEM;
	}
	if (!*free_list && ptl_tx_grow(small) != 0) {
		if (answer) {
			ptl_sr_inc(PTL_SR_DROP_COUNT);
			if (!ptl_lib.tx_drop_told)
				fprintf(stderr,
					"ptl: rank %d: no room left for sends that wait for ring space; an answer to "
					"rank %d is dropped (its initiator waits in vain; PTL_SR_DROP_COUNT counts them)\n",
					ptl_lib.rt.rank, peer);
			ptl_lib.tx_drop_told = true;
		}
		return NAL_ENOMEM;
	}
	struct ptl_tx *tx = *free_list;
	*free_list = tx->next;
	tx->req = !answer;
	ptl_lib.tx_req_queued += !answer;
	tx->next = NULL;
	tx->peer = peer;
	tx->len = hdr_len + len;
	memcpy(tx->buf, hdr, hdr_len);
	if (len)
		nal_copy(tx->buf + hdr_len, payload, len);
	if (p->backlog_tail) {
		p->backlog_tail->next = tx;
	} else {
		p->backlog_head = tx;
		ptl_lib.nbacklogged++;
	}
	p->backlog_tail = tx;
	return 0;
}

/* ptl_send's less common cases: a dead or new peer, a backlog, ourselves. */
int ptl_send_slow(int peer, const void *hdr, size_t hdr_len, const void *payload, size_t len)
{
	struct ptl_peer *p = &ptl_lib.peers[peer];
	if (p->failed)
		return NAL_EPEER;
	if (p->nal < 0) {
		int rc = ptl_route(peer);
		if (rc != 0) {
			/* First contact failed: nothing was ever sent there, so
			 * the only op involved is the caller's, which it undoes. */
			p->failed = true;
			ptl_sr_inc(PTL_SR_PEER_FAILURES);
			return rc;
		}
	}
	struct ptl_nalinst *n = &ptl_lib.nals[p->nal];
	if (!p->backlog_head) {
		int rc = n->ops->send(n->n, peer, hdr, hdr_len, payload, len);
		/* Nobody else wakes the progress thread for a message to
		 * ourselves; do it when no application thread polls. */
		if (rc == 0 && peer == ptl_lib.rt.rank) {
			ptl_lib.self_queued = true;
			if (!ptl_lib.polling_announced)
				ptl_kick_sleeper();
		}
		if (rc != NAL_EAGAIN)
			return rc;
	}
	return ptl_send_later(p, peer, hdr, hdr_len, payload, len);
}

/* A backlog is rare (a full ring, no credit): walk the peers only when
 * one has one, so a poll stays O(1) in the job size. Out of line, so that
 * a poll's own frame stays small (inlined, its registers made every poll
 * save and restore six). */
__attribute__((noinline)) static int ptl_flush_backlogs(void)
{
	int done = 0;
	for (int r = 0; ptl_lib.nbacklogged && r < ptl_lib.rt.size; r++)
		if (ptl_lib.peers[r].backlog_head)
			done += ptl_flush_backlog(&ptl_lib.peers[r], r);
	return done;
}

/* Every NAL, self only when something was queued to it. Out of line for
 * the same reason as ptl_flush_backlogs. */
__attribute__((noinline)) static int ptl_progress_all(void)
{
	int done = 0;
	for (int i = 0; i < ptl_lib.nnals; i++) {
		struct ptl_nalinst *n = &ptl_lib.nals[i];
		/* Only ptl_send() (lock held, as here) queues to the self NAL:
		 * a poll skips it unless something was queued since its last
		 * pass. Deliveries that send to ourselves set the flag again. */
		if (n->ops == &nal_self_ops) {
			if (!ptl_lib.self_queued || ptl_lib.self_delivering)
				continue;
			ptl_lib.self_queued = false;
			ptl_lib.self_delivering = true;
			done += n->ops->progress(n->n);
			ptl_lib.self_delivering = false;
			continue;
		}
		done += n->ops->progress(n->n);
	}
	if (ptl_lib.nbacklogged)
		done += ptl_flush_backlogs();
	return done;
}

/* The common case, one NAL besides self and nothing for self or the
 * backlog, is a tail call: a poll that finds nothing costs the NAL's poll
 * and not much more. Inline in both entry points (an application's poll
 * paid a call and a frame for it). */
static inline int ptl_progress_pass(void)
{
	struct ptl_nalinst *one = ptl_lib.poll_one;
	if (one && !ptl_lib.self_queued && !ptl_lib.nbacklogged)
		return one->ops->progress(one->n);
	return ptl_progress_all();
}

int ptl_progress(void)
{
	return ptl_progress_pass();
}

static void ptl_set_polling(int on)
{
	for (int i = 0; i < ptl_lib.nnals; i++)
		if (ptl_lib.nals[i].ops->set_polling)
			ptl_lib.nals[i].ops->set_polling(ptl_lib.nals[i].n, on);
	ptl_lib.polling_announced = on;
}

void ptl_progress_app(void)
{
	/* Callers hold the lock, so no two bump it at once: a plain store
	 * does, where an atomic add would lock the bus on every poll. */
	atomic_store_explicit(&ptl_lib.app_polls, atomic_load_explicit(&ptl_lib.app_polls, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (!ptl_lib.polling_announced) {
		ptl_set_polling(1);
		/* The progress thread may be going to sleep with no timeout,
		 * having read the flag clear; with it set, peers no longer wake
		 * it, and if we stop polling (the app leaves the library) nothing
		 * would clear it again. The kick makes it loop and take the
		 * lease, which it drops when app polls stop. */
		ptl_kick_sleeper();
	}
	ptl_progress_pass();
}

/* The progress thread may be waiting out a lease (it leaves the work to
 * polling application threads): the bell ends that wait at once. */
static void ptl_ring_lease_bell(void)
{
	atomic_fetch_add(&ptl_lib.lease_bell, 1);
	syscall(SYS_futex, &ptl_lib.lease_bell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void ptl_progress_app_sleeping(void)
{
	if (ptl_lib.polling_announced) {
		ptl_set_polling(0);
		if (ptl_lib.thread_running)
			ptl_ring_lease_bell();
	}
}

/* Whether an operation is in flight to a live peer of the probe list.
 * ops.used (every op, any peer) is 0 when nothing is in flight at all: a
 * sleep then costs one load here. Lock held. */
static bool ptl_probe_wanted(void)
{
	if (ptl_lib.probe_head < 0 || !ptl_lib.ni || !ptl_lib.ni->ops.used)
		return false;
	for (int r = ptl_lib.probe_head; r >= 0; r = ptl_lib.peers[r].probe_next)
		if (!ptl_lib.peers[r].failed && !ptl_list_empty(&ptl_lib.peers[r].ops))
			return true;
	return false;
}

/*
 * Why once a second (PTL_PEER_PROBE_MS): a look costs a few system calls
 * per peer looked at (shm: kill(2) and a read of /proc/<pid>/stat), so
 * its price is the wake-up, not the look; a waiter of a peer that is
 * slow but alive (a long computation before it answers a get) wakes once
 * a second for it, where a shorter period would take a core from the
 * ranks it shares it with ten or a hundred times as often. A second is
 * also what a stuck send gives a shm peer before it looks (SHM_DEAD_NS),
 * so the two ways a dead shm peer is found take about as long, and the
 * verbs NAL's keepalive takes seconds.
 *
 * The period runs from the first call that found something in flight
 * to these peers (a wait that began; the call before found nothing):
 * a peer dead before the wait began is found a period into the wait,
 * one that dies during it within a period of its death.
 */
int ptl_peers_probe(int *next_ms)
{
	*next_ms = -1;
	if (ptl_lib.probing)
		return 0;
	if (!ptl_probe_wanted()) {
		ptl_lib.probe_at = 0;
		return 0;
	}
	int64_t now = ptl_now_ms();
	if (!ptl_lib.probe_at)
		ptl_lib.probe_at = now + PTL_PEER_PROBE_MS;
	if (now < ptl_lib.probe_at) {
		*next_ms = (int)(ptl_lib.probe_at - now);
		return 0;
	}
	/* ptl_peer_fail runs EQ handlers, which may start operations (a
	 * peer reached then joins the list at its head, behind us) or wait
	 * (and call here: probing). */
	ptl_lib.probing = true;
	int found = 0;
	for (int r = ptl_lib.probe_head; r >= 0; r = ptl_lib.peers[r].probe_next) {
		struct ptl_peer *p = &ptl_lib.peers[r];
		if (p->failed || ptl_list_empty(&p->ops))
			continue;
		struct ptl_nalinst *n = &ptl_lib.nals[p->nal];
		found += n->ops->peer_check(n->n, r) != 0;
	}
	ptl_lib.probing = false;
	ptl_lib.probe_at = now + PTL_PEER_PROBE_MS;
	*next_ms = PTL_PEER_PROBE_MS;
	return found;
}

/* While application threads poll, the progress thread wakes every lease
 * without the lock, and never reaches its sleep's probe: a thread that
 * polls (PtlEQGet, PtlEQPoll of timeout 0) for the answer of a dead peer
 * would never see it come. So once a PTL_PEER_PROBE_MS (*at, ms) it takes
 * the lock and probes. */
static void ptl_lease_probe(int64_t *at)
{
	int64_t now = ptl_now_ms();
	if (now < *at)
		return;
	int ms;
	ptl_lock();
	ptl_peers_probe(&ms);
	ptl_unlock();
	*at = now + (ms > 0 ? ms : PTL_PEER_PROBE_MS);
}

/* PTL_PROGRESS_THREAD=0: an application thread that waits (PtlEQPoll)
 * sleeps in a NAL itself, lock not held, after ptl_progress_app_sleeping().
 * It can hear only that NAL, so with others open (besides self, which only
 * this process sends to) the sleep is short. */
void ptl_progress_nal_wait(int timeout_ms)
{
	struct ptl_nalinst *s = ptl_sleep_nal();
	for (int i = 0; i < ptl_lib.nnals; i++) {
		struct ptl_nalinst *n = &ptl_lib.nals[i];
		if (n != s && strcmp(n->ops->name, "self") && timeout_ms > 1)
			timeout_ms = 1;
	}
	if (s)
		s->ops->sleep(s->n, timeout_ms);
	else
		nanosleep(&(struct timespec){ 0, 1000000L * (timeout_ms > 0 ? timeout_ms : 0) }, NULL);
}

/*
 * With several NALs open (shm for this host, verbs or tcp for others) the
 * progress thread can sleep in only one. Each other NAL gets a watcher
 * that sleeps in it and, when it wakes, kicks the progress thread and
 * waits for one progress pass before it sleeps again (its sleep would
 * return at once while the work it saw is still pending).
 */
static void *ptl_watch_thread(void *arg)
{
	struct ptl_nalinst *w = arg;
	while (!atomic_load(&ptl_lib.thread_stop)) {
		unsigned pass = atomic_load(&ptl_lib.progress_passes);
		w->ops->sleep(w->n, -1);
		if (atomic_load(&ptl_lib.thread_stop))
			break;
		ptl_kick_sleeper();
		while (atomic_load(&ptl_lib.progress_passes) == pass && !atomic_load(&ptl_lib.thread_stop))
			syscall(SYS_futex, &ptl_lib.progress_passes, FUTEX_WAIT_PRIVATE, pass, NULL, NULL, 0);
	}
	return NULL;
}

static void ptl_progress_pass_done(void)
{
	atomic_fetch_add(&ptl_lib.progress_passes, 1);
	if (ptl_lib.nwatchers)
		syscall(SYS_futex, &ptl_lib.progress_passes, FUTEX_WAKE_PRIVATE, 1 << 30, NULL, NULL, 0);
}

static void *ptl_progress_thread(void *arg)
{
	(void)arg;
	ptl_topo_bind_thread();
	struct ptl_nalinst *sleeper = ptl_sleep_nal();
	unsigned idle = 0;
	unsigned last_polls = atomic_load(&ptl_lib.app_polls);
	bool leased = false;
	unsigned lease_bell = 0;
	long lease_ms = PTL_POLL_LEASE_MS;
	int64_t lease_probe_at = 0;
	while (!atomic_load(&ptl_lib.thread_stop)) {
		/* While application threads poll, the work is theirs: a pass
		 * here would only take the lock from them and, with the rank
		 * pinned to one core, the core too (a context switch per
		 * message in a busy ping-pong). Look again after a lease; the
		 * NALs are not armed meanwhile (set_polling(1)), so no
		 * completion wakes us either. */
		unsigned seen = atomic_load(&ptl_lib.app_polls);
		if (leased && seen != last_polls && atomic_load(&ptl_lib.lease_bell) == lease_bell) {
			last_polls = seen;
			syscall(SYS_futex, &ptl_lib.lease_bell, FUTEX_WAIT_PRIVATE, lease_bell,
				&(struct timespec){ lease_ms / 1000, (lease_ms % 1000) * 1000000L }, NULL, 0);
			if (lease_ms < PTL_POLL_LEASE_MAX_MS)
				lease_ms *= 2;
			ptl_lease_probe(&lease_probe_at);
			continue;
		}
		lease_ms = PTL_POLL_LEASE_MS;
		ptl_lock();
		int done = ptl_progress();
		/* A pass that finds nothing now goes to sleep: for how long,
		 * with answers due from peers that must be looked at. */
		int probe_ms = -1;
		if (!done && idle + 1 >= PTL_THREAD_SPINS)
			done = ptl_peers_probe(&probe_ms);
		leased = ptl_lib.polling_announced;
		lease_bell = atomic_load(&ptl_lib.lease_bell);
		ptl_unlock();
		if (ptl_lib.nwatchers && (done || idle + 1 >= PTL_THREAD_SPINS))
			ptl_progress_pass_done();
		if (done) {
			idle = 0;
			continue;
		}
		if (++idle < PTL_THREAD_SPINS) {
			sched_yield();
			continue;
		}
		unsigned polls = atomic_load(&ptl_lib.app_polls);
		if (leased && polls == last_polls) {
			/* No application poll for a whole lease: from now on
			 * peers must wake us. */
			ptl_lock();
			ptl_progress_app_sleeping();
			leased = false;
			ptl_unlock();
			continue; /* poll once more before the long sleep */
		}
		last_polls = polls;
		int ms = leased ? PTL_POLL_LEASE_MS : -1;
		if (probe_ms >= 0 && (ms < 0 || probe_ms < ms))
			ms = probe_ms;
		if (sleeper)
			sleeper->ops->sleep(sleeper->n, ms);
		idle = PTL_THREAD_SPINS - 1;
	}
	return NULL;
}

void ptl_kick_nals(void)
{
	for (int i = 0; i < ptl_lib.nnals; i++)
		if (ptl_lib.nals[i].ops->kick)
			ptl_lib.nals[i].ops->kick(ptl_lib.nals[i].n);
}

/* Ends the watchers (thread_stop set, the NALs kicked: that ended their
 * sleeps): a pass released ends their wait for one. They take no lock. */
static void ptl_watchers_join(void)
{
	ptl_progress_pass_done();
	for (int i = 0; i < ptl_lib.nwatchers; i++)
		pthread_join(ptl_lib.watchers[i], NULL);
	ptl_lib.nwatchers = 0;
}

int ptl_progress_start(void)
{
	/* PTL_PROGRESS_THREAD=0: only API calls make progress (debugging). */
	const char *e = getenv("PTL_PROGRESS_THREAD");
	if (e && !strcmp(e, "0"))
		return 0;
	atomic_store(&ptl_lib.thread_stop, false);
	/* The watchers first: the caller (PtlInit) holds the library lock,
	 * which a progress thread already started would be waiting for while
	 * a failure here joined it. Watchers take no lock, so they can be
	 * ended here; one that wakes before the progress thread runs kicks
	 * nobody (thread_running is false) and waits for its first pass. */
	struct ptl_nalinst *primary = ptl_sleep_nal();
	for (int i = 0; i < ptl_lib.nnals; i++) {
		struct ptl_nalinst *n = &ptl_lib.nals[i];
		/* self needs no watcher: its only sender kicks the sleeper. */
		if (n == primary || !n->ops->sleep || !strcmp(n->ops->name, "self"))
			continue;
		if (pthread_create(&ptl_lib.watchers[ptl_lib.nwatchers], NULL, ptl_watch_thread, n) != 0) {
			fprintf(stderr, "ptl: cannot start a watcher thread for the %s NAL\n", n->ops->name);
			goto undo;
		}
		ptl_lib.nwatchers++;
	}
	if (pthread_create(&ptl_lib.thread, NULL, ptl_progress_thread, NULL) != 0) {
		fprintf(stderr, "ptl: cannot start the progress thread\n");
		goto undo;
	}
	ptl_lib.thread_running = true;
	return 0;
undo:
	atomic_store(&ptl_lib.thread_stop, true);
	ptl_kick_nals();
	ptl_watchers_join();
	return -1;
}

void ptl_progress_stop(void)
{
	if (!ptl_lib.thread_running)
		return;
	atomic_store(&ptl_lib.thread_stop, true);
	ptl_ring_lease_bell();
	ptl_kick_nals();
	pthread_join(ptl_lib.thread, NULL);
	ptl_watchers_join();
	ptl_lib.thread_running = false;
}
