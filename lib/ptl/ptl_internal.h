/*
 * lib/ptl internals: the objects of one process's Portals library.
 *
 * Locking: one recursive library lock (ptl_lib.lock, below) covers every object
 * and every NAL call except nal_ops.kick. API calls take it; the progress
 * engine takes it; EQ handlers run under it (hence recursive). One NI per
 * process (PtlInit reports one interface), so the lock is never contended
 * across interfaces.
 */
#ifndef PTL_INTERNAL_H
#define PTL_INTERNAL_H

#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <portals3.h>

#include "nal/nal.h"
#include "ptl/ptl_handle.h"
#include "ptl/ptl_proto.h"
#include "ptl/ptl_view.h"
#include "rt/rt.h"

/* ------------------------------------------------------------ lists */
struct ptl_list {
	struct ptl_list *next, *prev;
};

static inline void ptl_list_init(struct ptl_list *l) { l->next = l->prev = l; }
static inline bool ptl_list_empty(const struct ptl_list *l) { return l->next == l; }
static inline void ptl_list_insert_between(struct ptl_list *n, struct ptl_list *prev, struct ptl_list *next)
{
	n->prev = prev;
	n->next = next;
	prev->next = n;
	next->prev = n;
}
/* Inserts n before pos (at the tail when pos is the head). */
static inline void ptl_list_add_before(struct ptl_list *n, struct ptl_list *pos) { ptl_list_insert_between(n, pos->prev, pos); }
/* Inserts n after pos (at the head when pos is the head). */
static inline void ptl_list_add_after(struct ptl_list *n, struct ptl_list *pos) { ptl_list_insert_between(n, pos, pos->next); }
static inline void ptl_list_del(struct ptl_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}
#define ptl_container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

/* ------------------------------------------------------------ limits */
/* What this implementation supports at most, and gives when not asked. */
#define PTL_LIM_MAX_MES (1 << 20)
#define PTL_LIM_MAX_MDS (1 << 20)
#define PTL_LIM_MAX_EQS PTL_VIEW_MAX_EQS
#define PTL_LIM_MAX_AC 1023
#define PTL_LIM_MAX_PT 1023
#define PTL_LIM_MAX_IOV 256
#define PTL_LIM_MAX_GETPUT 256
#define PTL_DEF_MAX_MES 4096
#define PTL_DEF_MAX_MDS 4096
#define PTL_DEF_MAX_EQS 64
#define PTL_DEF_MAX_AC 63
#define PTL_DEF_MAX_PT 63
#define PTL_DEF_MAX_IOV 32
#define PTL_DEF_MAX_GETPUT 64
#define PTL_EQ_MAX_COUNT (1u << 24)

/* ------------------------------------------------------------ objects */
struct ptl_eq {
	uint64_t handle;
	struct ptl_view_eq *ring;  /* shared view object: header + events */
	size_t map_len;
	uint32_t view_index;
	uint64_t count;
	uint64_t rd;               /* next sequence to read */
	/* write_seq % count and rd % count, kept as they advance: a 64-bit
	 * division per event written and per event read (tens of cycles
	 * each, on both ends of every message) for a compare. */
	uint64_t wr_slot, rd_slot;
	ptl_eq_handler_t handler;
	atomic_uint waiters;       /* app threads sleeping on ring->write_seq */
};

struct ptl_me;

struct ptl_md {
	uint64_t handle;
	ptl_md_t md;               /* as the user gave it (events report it so); iov is our copy */
	/* md.eq_handle's EQ, set with it (NULL for PTL_EQ_NONE); it is still
	 * that EQ while its handle equals md.eq_handle: ptl_eq_destroy clears
	 * a freed EQ's handle and a reused slot's has a new generation, and
	 * the slot's memory lives as long as the NI's MDs (ptl_md_live_eq:
	 * two loads and a compare for the handle lookup, ~12 instructions,
	 * that every event of an MD made). */
	struct ptl_eq *eq;
	ptl_md_iovec_t *iov;       /* NULL unless PTL_MD_IOVEC: this MD's copy */
	int niov;
	ptl_size_t total;          /* bytes described */
	ptl_size_t local_offset;   /* next offset when not MANAGE_REMOTE */
	struct ptl_me *me;         /* attached to, or NULL when bound */
	ptl_unlink_t unlink_op;
	int pending;               /* initiator ops still waiting for an answer */
	bool doomed;               /* unlink as soon as pending drops to 0 */
};

/* An ME. What a match-list walk reads of every entry comes first, in the
 * form it compares (ptl_me_set_match): an arrival walks past every entry
 * before the one it matches, and the match id's two wildcard tests and
 * the ignore bits' inversion cost each entry ~20 instructions more. */
struct ptl_me {
	struct ptl_list link;      /* in its portal's match list */
	struct ptl_md *md;
	ptl_match_bits_t match_bits;
	ptl_match_bits_t care_bits; /* ~ignore_bits: the bits that must equal */
	uint64_t id_key;           /* the match id, ptl_id_key's packing */
	uint64_t id_mask;          /* its bits that must equal: none of a wildcard field */
	uint64_t handle;
	ptl_pt_index_t pt_index;
	ptl_unlink_t unlink_op;
	bool front;                /* in its portal's dead front (struct ptl_pt) */
};

/* A process id as one word, nid above pid: one compare under a mask tests
 * both fields, each against its wildcard. */
static inline uint64_t ptl_id_key(ptl_process_id_t id)
{
	return (uint64_t)id.nid << 32 | id.pid;
}

/* The bits of ptl_id_key that must equal to admit id's initiators: none
 * of a wildcard (PTL_NID_ANY, PTL_PID_ANY). */
static inline uint64_t ptl_id_mask(ptl_process_id_t id)
{
	return (id.nid == PTL_NID_ANY ? 0 : 0xffffffffull << 32) | (id.pid == PTL_PID_ANY ? 0 : 0xffffffffull);
}

/* Sets what me matches: initiators id admits (PTL_NID_ANY, PTL_PID_ANY:
 * any), bits compared outside ignore_bits. */
static inline void ptl_me_set_match(struct ptl_me *me, ptl_process_id_t id, ptl_match_bits_t bits,
				    ptl_match_bits_t ignore_bits)
{
	me->match_bits = bits;
	me->care_bits = ~ignore_bits;
	me->id_mask = ptl_id_mask(id);
	me->id_key = ptl_id_key(id) & me->id_mask;
}

struct ptl_pt {
	struct ptl_list list;
	int length;
	/* The last of the entries at the list's front that accept nothing
	 * (no MD, threshold 0, doomed), the list head when there are none:
	 * an arrival's walk starts after it (ptl_match_pt). A window of
	 * posted MPI receives of one envelope leaves each used-up kept entry
	 * in front of the rest until its event is taken, and a batch of
	 * arrivals walked past all those before it (a 32-deep window of
	 * 8-byte messages: half the instructions of a message's match).
	 * Its entries are marked (ptl_me.front), so whatever could make one
	 * accept again (an MD attached or updated, a threshold given back:
	 * ptl_me_revive) ends the front just before it, and one after it
	 * costs nothing: a re-armed window of kept receives keeps the walk
	 * short. Each mark is set by a walk once and cleared once. A new
	 * entry (no MD) takes its place's mark; unlinking the entry dead
	 * names moves it back one. */
	struct ptl_list *dead;
};

static inline void ptl_pt_init(struct ptl_pt *pt)
{
	ptl_list_init(&pt->list);
	pt->dead = &pt->list;
}

/* me (on pt) may accept again: if it is in pt's dead front, the front
 * ends just before it. */
static inline void ptl_me_revive(struct ptl_pt *pt, struct ptl_me *me)
{
	if (!me->front)
		return;
	struct ptl_list *end = pt->dead;
	pt->dead = me->link.prev;
	for (struct ptl_list *l = &me->link;; l = l->next) {
		ptl_container_of(l, struct ptl_me, link)->front = false;
		if (l == end)
			break;
	}
}

/* An access control entry, in the form every arrival compares
 * (ptl_ac_set): each field as a key and the mask of its bits that must
 * equal (none of a wildcard), as an ME's match id. Five fields each tested
 * against its wildcard and then its value, a branch each, were ~24
 * instructions of every arrival; three masked compares OR'ed together
 * with no branch save 4-6 of them (the initiator's key is the match
 * walk's too). */
struct ptl_ac {
	uint64_t id_key, id_mask;     /* initiator, ptl_id_key's packing */
	uint64_t cred_key, cred_mask; /* uid and jid, ptl_cred_key's packing */
	uint32_t pt_key, pt_mask;     /* portal */
	bool in_use;                  /* false: admits nobody */
};

/* A request's uid and jid as one word, jid above uid: the AC check
 * compares both in one masked compare. */
static inline uint64_t ptl_cred_key(ptl_uid_t uid, ptl_jid_t jid)
{
	return (uint64_t)jid << 32 | uid;
}

/* Sets e to admit initiator id (PTL_NID_ANY, PTL_PID_ANY: any), user uid
 * and job jid (PTL_UID_ANY, PTL_JID_ANY: any) on portal pt
 * (PTL_PT_INDEX_ANY: any). */
static inline void ptl_ac_set(struct ptl_ac *e, ptl_process_id_t id, ptl_uid_t uid, ptl_jid_t jid,
			      ptl_pt_index_t pt)
{
	e->id_mask = ptl_id_mask(id);
	e->id_key = ptl_id_key(id) & e->id_mask;
	e->cred_mask = (jid == PTL_JID_ANY ? 0 : 0xffffffffull << 32) |
		       (uid == PTL_UID_ANY ? 0 : 0xffffffffull);
	e->cred_key = ptl_cred_key(uid, jid) & e->cred_mask;
	e->pt_mask = pt == PTL_PT_INDEX_ANY ? 0 : 0xffffffffu;
	e->pt_key = pt & e->pt_mask;
	e->in_use = true;
}

/* An initiator operation waiting for its answer (ACK/REPLY). */
enum ptl_op_kind {
	PTL_OP_PUT = 1, PTL_OP_GET, PTL_OP_GETPUT, /* initiator: waits for ACK/REPLY */
	PTL_OP_TARGET,                             /* target: bulk moves in flight */
};
struct ptl_op {
	struct ptl_list link;      /* on its peer's list of ops in flight */
	uint64_t cookie;           /* its handle in ni->ops, echoed by answers */
	enum ptl_op_kind kind;
	int peer;
	uint64_t md_handle;        /* put MD, or get MD for get/getput */
	uint64_t put_md_handle;    /* getput: the MD whose bytes went out */
	ptl_size_t local_offset;
	ptl_size_t length;
	ptl_match_bits_t match_bits;
	ptl_pt_index_t pt_index;
	ptl_hdr_data_t hdr_data;
	ptl_size_t remote_offset;
	bool ack_req;
	bool bulk;                 /* a bulk request: a put's SEND_END waits for
	                            * the answer; nmr is valid (ptl_send_bulk) */
	/* A bulk request's registrations (its segments'): the exposure ends
	 * with the op, so ptl_op_finish hands them back (mem_dereg). nmr 0:
	 * none; 1: mr1; more: mrs, malloc'ed (IOVEC MDs only). Not set in
	 * ptl_op_new: one more store there made a put's fast path spill. */
	uint16_t nmr;
	struct nal_mr mr1;
	struct nal_mr *mrs;
	/* PTL_OP_TARGET: what to do when the last bulk move finishes. */
	int bulk_left;
	int bulk_status;
	ptl_event_kind_t end_kind;
	ptl_event_t ev;            /* the END event, filled in but for status */
	struct ptl_hdr answer;     /* sent back when answer_due */
	bool answer_due;
};

struct ptl_ni {
	uint64_t handle;
	ptl_ni_limits_t limits;
	ptl_process_id_t id;
	struct ptl_htab eqs, mds, mes, ops;
	struct ptl_pt *pts;        /* limits.max_pt_index + 1 */
	struct ptl_ac *acs;        /* limits.max_ac_index + 1 */
	ptl_md_iovec_t *iov_pool;  /* max_mds * max_md_iovecs, slot per MD */
};

/* A peer rank: how to reach it and what is in flight to it. */
struct ptl_tx;
struct ptl_peer {
	int nal;                   /* index into ptl_lib.nals, -1 unreachable */
	bool connected;
	bool failed;
	bool id_known;
	bool cred_same;            /* its uid and jid are ours (id_known): puts
	                            * to it may take a struct ptl_hdr_tiny */
	ptl_nid_t nid;
	int numa;
	/* Its uid and jid as it published them (id_known): what its answers
	 * carry, and so the ones ptl_peer_fail makes in its stead. */
	ptl_uid_t uid;
	ptl_jid_t jid;
	struct ptl_list ops;       /* struct ptl_op in flight to this peer */
	struct ptl_tx *backlog_head, *backlog_tail; /* sends the NAL refused for now */
	int probe_next;            /* the next rank on ptl_lib.probe_head's list, -1: none */
};

/* A send the NAL could not take yet (ring full, no credit). */
struct ptl_tx {
	struct ptl_tx *next;
	int peer;
	bool small;                /* from the small slots (PTL_TX_SMALL bytes of buf) */
	bool req;                  /* a request (counted in tx_req_queued), not an answer */
	size_t len;
	unsigned char buf[];       /* hdr + payload, up to the NAL's max_inline */
};
/* A small slot's bytes of buf: a header and a little (every ACK, a
 * control put): 128 bytes a slot with struct ptl_tx. */
#define PTL_TX_SMALL (128 - sizeof(struct ptl_tx))

#define PTL_MAX_NALS 4
struct ptl_nalinst {
	const struct nal_ops *ops;
	struct nal *n;
	struct nal_props props;
};

/* The library lock: recursive (EQ handlers run under it and call the API
 * again). Every API call and every progress pass takes it, so an 8-byte
 * message pays for it at both ends: pthread's recursive mutex spent 77
 * instructions per lock and unlock (its type dispatch, the owner's TID
 * from the thread block), this one about 20. The word is 0 free, 1 held,
 * 2 held and a thread may sleep on it (Drepper, "Futexes Are Tricky",
 * mutex 3); only the owner writes owner and depth, so another thread never
 * reads its own id there unless it holds the lock. One thread may take it
 * without atomics instead (bias; ptl_lock says how). All zero: unlocked,
 * no bias. */
struct ptl_rlock {
	_Atomic uint32_t word;
	unsigned depth;            /* re-entries beyond the first */
	_Atomic unsigned long owner; /* ptl_thread_id() of the holder, 0: none */
	/* The biased path (ptl_lock): */
	_Atomic unsigned long bias; /* the thread that takes it without atomics, 0: none */
	_Atomic uint32_t fast_in;  /* that thread holds it so, or is about to (a futex word) */
	_Atomic uint32_t revoked;  /* the biased path is shut: another thread took the mutex */
	bool fast;                 /* the holder took it by the biased path */
	bool bias_broken;          /* a membarrier failed: no bias again (ptl_lock.c) */
	unsigned long last_bias;   /* the bias thread of an earlier PtlInit, the one biased again */
	unsigned others;           /* takes by other threads (under the mutex) */
	unsigned others_seen, quiet; /* the bias thread's count of its own takes since */
};

struct ptl_lib {
	struct ptl_rlock lock;
	int init_count;
	struct rt_info rt;
	ptl_uid_t uid;              /* getuid(), read once: no syscall per put */
	ptl_jid_t jid;              /* from rt.jobid, computed once: no division per put */
	int nnals;
	struct ptl_nalinst nals[PTL_MAX_NALS];
	struct ptl_nalinst *poll_one; /* the one NAL besides self, when there is
	                               * one: a poll calls it straight */
	struct ptl_peer *peers;    /* rt.size */
	int *local_ranks;
	int nlocal;
	int my_numa;
	struct ptl_ni *ni;         /* the one NI, or NULL */
	uint64_t ni_handle_gen;    /* generation of NI handles */

	/* Sends the NAL refused, kept in preallocated buffers. */
	struct ptl_tx *tx_free, *tx_free_small;
	int nbacklogged;           /* peers with a backlog */
	bool self_queued;          /* a message to ourselves may wait in the
	                            * self NAL: progress() skips it otherwise */
	bool self_delivering;      /* the self NAL's progress is delivering: an EQ
				    * handler's call into progress from there
				    * leaves it (and self_queued) to the pass
				    * after (it delivers into one buffer) */
	unsigned char *tx_pool;    /* the newest chunk of queued-send slots (ptl_tx_grow) */
	int tx_chunks, tx_chunk; /* chunks made, slots in each (PTL_TX_POOL; PTL_TEST_TX_CHUNK) */
	int tx_small_chunks;       /* chunks of small slots made */
	int tx_req_queued;         /* requests in the backlogs now */
	int tx_req_max;            /* PTL_TX_REQ_MAX, or PTL_TEST_TX_REQ_MAX */
	int tx_max;                /* PTL_TX_MAX, or PTL_TEST_TX_MAX */
	bool tx_drop_told;         /* a dropped answer was reported */
	size_t tx_size;            /* bytes of one struct ptl_tx incl. buffer */
	unsigned char *scratch;    /* gather buffer for inline sends from IOVEC MDs */
	size_t max_inline;         /* smallest max_inline of the NALs in use */

	/* Progress thread. */
	pthread_t thread;
	atomic_bool thread_running; /* read by watchers, which start before it is set */
	atomic_bool thread_stop;
	atomic_uint app_polls;     /* bumped by application threads that poll */
	pthread_t watchers[PTL_MAX_NALS]; /* sleep in the NALs the thread cannot */
	int nwatchers;
	atomic_uint progress_passes; /* progress thread passes, for watchers */
	atomic_uint lease_bell;    /* bumped when app threads stop polling */
	bool polling_announced;    /* the NALs were told an app thread polls */

	unsigned wait_yield_every; /* polls between sched_yield()s in PtlEQWait/Poll */

	/* The peers whose NAL sees a death only when it looks (nal_ops.
	 * peer_check: shm), linked through probe_next as ptl_route reaches
	 * them (-1: none), and when ptl_peers_probe next looks at those with
	 * operations in flight (ms, ptl_now_ms; 0: nothing was in flight at
	 * its last call). probing: it is looking (an EQ handler that waits
	 * inside it does not look again). */
	int probe_head;
	int64_t probe_at;
	bool probing;

	struct ptl_view_proc *view;
	int view_fd;               /* the view's object, flock'd while we live (ptl_view.c) */
	char view_name[64];
};

extern struct ptl_lib ptl_lib;

/* The job's Portals jid: the low bits of the job id, never a wildcard. */
static inline ptl_jid_t ptl_jid(void) { return ptl_lib.jid; }

static inline ptl_uid_t ptl_uid(void) { return ptl_lib.uid; }

/* Gives back one use of md's threshold, taken for an operation that did
 * not happen: its entry may accept again. */
static inline void ptl_md_give_back(struct ptl_md *md)
{
	if (md->md.threshold != PTL_MD_THRESH_INF)
		md->md.threshold++;
	if (md->me)
		ptl_me_revive(&ptl_lib.ni->pts[md->me->pt_index], md->me);
}

/* The calling thread's id for the lock's owner: nonzero, and no other live
 * thread's. The thread pointer (%fs:0 on x86-64, the TCB's address, which
 * is also what glibc's pthread_self() returns there; on aarch64 another
 * address of the thread's own, as unique) read in one instruction: the
 * call to pthread_self() through the PLT was ~5 instructions of every
 * lock. (PtlMDUpdate, PtlPutRegion and ptl_recv still save six
 * registers: their own register pressure, not the lock's.) */
#if defined(__has_builtin) && (defined(__x86_64__) || defined(__aarch64__))
#if __has_builtin(__builtin_thread_pointer)
#define PTL_HAVE_THREAD_POINTER 1
#endif
#endif
static inline unsigned long ptl_thread_id(void)
{
#ifdef PTL_HAVE_THREAD_POINTER
	return (unsigned long)__builtin_thread_pointer();
#else
	return (unsigned long)pthread_self();
#endif
}

/* The biased path. Nearly every take of the lock is by one thread, the
 * one that initialized the library (the application's, which sends and
 * polls); the progress thread takes it only while that thread stays out
 * of the library. A take and a release by atomics are two locked
 * instructions, and each makes the core wait for every store before it
 * to leave: on a 4 KiB MPI_Isend stream, the copy into the ring (2
 * ranks pinned, 300 trials of 10 windows a launch, medians; with and
 * without the atomics: 31.5 against 34.5 GB/s). So that thread (bias)
 * takes and releases it with plain stores and loads (Dekker: its flag
 * fast_in, then a look at revoked), and any other thread, holding the
 * mutex, first shuts that path (revoked), then makes
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) stand for the bias
 * thread's missing fence (every running thread of the process passes a
 * full barrier before it returns, a sleeping one passed one when it was
 * switched out) and waits for fast_in to clear: one side always sees the
 * other's flag, as in lib/nal/shm/shm_wake.c's asymmetric fence. The
 * path stays shut while other threads keep taking the lock; the bias
 * thread opens it again after PTL_LOCK_REOPEN takes of its own (by the
 * mutex) with none by another in between and none waiting, so a thread
 * that takes it now and then (the progress thread's probe, once a
 * second) costs one membarrier a time, and two threads that take it by
 * turns (MPI_THREAD_MULTIPLE) pay the mutex's atomics only, never a
 * membarrier per take. The bias is cleared only under the mutex with the
 * path shut, and set again only for the thread it was set for before
 * (lib/ptl/ptl_lock.c says why). */
#define PTL_LOCK_REOPEN 64

/* membarrier(2)'s commands; ours, as <linux/membarrier.h> has them as
 * enum constants, and older headers none. */
#define PTL_MEMBARRIER_QUERY 0
#define PTL_MEMBARRIER_PRIVATE_EXPEDITED (1 << 3)
#define PTL_MEMBARRIER_REGISTER_PRIVATE_EXPEDITED (1 << 4)
static inline long ptl_membarrier(int cmd)
{
#ifdef SYS_membarrier
	return syscall(SYS_membarrier, cmd, 0, 0);
#else
	(void)cmd;
	return -1;
#endif
}

/* The lock's slow paths, out of line (cold): with the futex calls inline
 * every API function kept their arguments in callee-saved registers. */
static __attribute__((noinline, cold, unused)) void ptl_lock_sleep(struct ptl_rlock *l)
{
	/* Held: mark it contended and sleep until it is free. A thread holds
	 * it for a progress pass at most, never across a wait. */
	while (atomic_exchange_explicit(&l->word, 2, memory_order_acquire) != 0)
		syscall(SYS_futex, &l->word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}
static __attribute__((noinline, cold, unused)) void ptl_lock_wake(struct ptl_rlock *l)
{
	syscall(SYS_futex, &l->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
/* The bias thread let go of the biased path while a revoker may wait. */
static __attribute__((noinline, cold, unused)) void ptl_lock_fast_wake(struct ptl_rlock *l)
{
	syscall(SYS_futex, &l->fast_in, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
/* The mutex held, by a thread other than the bias thread: shuts the
 * biased path, if open, and waits until the bias thread is out of it.
 * The membarrier, registered for at init, fails only where the kernel
 * cannot allocate its cpumask (ENOMEM: tried again) or a seccomp filter
 * came since; then the bias thread's fence is missing: a take that
 * crossed our store may not have seen it and we may not see its flag
 * yet, but after a fence and a millisecond its flag is out of its core
 * (a switch drains it too), no later take misses revoked, and the bias
 * stays off for good (bias_broken). */
static __attribute__((noinline, cold, unused)) void ptl_lock_revoke(struct ptl_rlock *l)
{
	l->others++;
	if (atomic_load_explicit(&l->revoked, memory_order_relaxed))
		return;
	atomic_store_explicit(&l->revoked, 1, memory_order_relaxed);
	bool timed = false;
	for (int i = 0; ptl_membarrier(PTL_MEMBARRIER_PRIVATE_EXPEDITED) != 0; i++) {
		if (i < 3)
			continue;
		l->bias_broken = true;
		atomic_store_explicit(&l->bias, 0, memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		timed = true;
		break;
	}
	while (atomic_load_explicit(&l->fast_in, memory_order_acquire))
		syscall(SYS_futex, &l->fast_in, FUTEX_WAIT_PRIVATE, 1,
			timed ? &(struct timespec){ 0, 1000000 } : NULL, NULL, 0);
}
/* Two holders at once: the biased path's rules were broken (a thread
 * inside the library across the last PtlFini, or fork's child of a
 * process whose other thread held it): better said and stopped than a
 * corrupted library. */
static __attribute__((noinline, cold, noreturn, unused)) void ptl_lock_overlap(unsigned long owner)
{
	char m[128];
	int n = snprintf(m, sizeof m, "ptl: the library lock is held by thread %#lx as another takes it\n", owner);
	if (n > 0 && write(2, m, (size_t)n < sizeof m ? (size_t)n : sizeof m - 1) < 0)
		abort();
	abort();
}
/* The mutex alone, as every thread but a biased one takes it. */
static inline void ptl_mutex_take(struct ptl_rlock *l)
{
	uint32_t c = 0;
	if (!atomic_compare_exchange_strong_explicit(&l->word, &c, 1, memory_order_acquire,
						     memory_order_relaxed))
		ptl_lock_sleep(l);
}
static inline void ptl_mutex_give(struct ptl_rlock *l)
{
	if (atomic_exchange_explicit(&l->word, 0, memory_order_release) == 2)
		ptl_lock_wake(l);
}
/* The mutex held by the bias thread, the path shut: opens it again after
 * PTL_LOCK_REOPEN such takes with no other thread's take in between and
 * no thread waiting for the mutex now (one would revoke at once). */
static __attribute__((noinline, cold, unused)) void ptl_lock_reopen_count(struct ptl_rlock *l)
{
	if (l->others != l->others_seen || atomic_load_explicit(&l->word, memory_order_relaxed) == 2) {
		l->others_seen = l->others;
		l->quiet = 0;
	} else if (++l->quiet >= PTL_LOCK_REOPEN) {
		l->quiet = 0;
		atomic_store_explicit(&l->revoked, 0, memory_order_relaxed);
	}
}

/* ptl_lock past its biased path: the mutex. */
static __attribute__((noinline, unused)) void ptl_lock_mutex(struct ptl_rlock *l, unsigned long me)
{
	ptl_mutex_take(l);
	unsigned long bias = atomic_load_explicit(&l->bias, memory_order_relaxed);
	if (bias && bias != me)
		ptl_lock_revoke(l);
	else if (bias && atomic_load_explicit(&l->revoked, memory_order_relaxed))
		ptl_lock_reopen_count(l);
	/* One load, off the biased path: a holder there now broke the rules. */
	unsigned long held = atomic_load_explicit(&l->owner, memory_order_relaxed);
	if (held)
		ptl_lock_overlap(held);
	l->fast = false;
	atomic_store_explicit(&l->owner, me, memory_order_relaxed);
}

/* The biased path inline in every entry point, the mutex a call (as a
 * whole, gcc called it: a call, its frame and return, on each of the
 * ~6 entries of an 8-byte MPI exchange and each empty MPI_Test). */
static inline void ptl_lock(void)
{
	struct ptl_rlock *l = &ptl_lib.lock;
	unsigned long me = ptl_thread_id();
	if (atomic_load_explicit(&l->owner, memory_order_relaxed) == me) {
		l->depth++;
		return;
	}
	if (atomic_load_explicit(&l->bias, memory_order_relaxed) == me &&
	    !atomic_load_explicit(&l->revoked, memory_order_relaxed)) {
		atomic_store_explicit(&l->fast_in, 1, memory_order_relaxed);
		/* The compiler's order only: the revoker's membarrier is the fence. */
		atomic_signal_fence(memory_order_seq_cst);
		if (!atomic_load_explicit(&l->revoked, memory_order_acquire)) {
			l->fast = true;
			atomic_store_explicit(&l->owner, me, memory_order_relaxed);
			return;
		}
		/* Shut as we came in: its revoker may wait for our flag. */
		atomic_store_explicit(&l->fast_in, 0, memory_order_release);
		ptl_lock_fast_wake(l);
	}
	ptl_lock_mutex(l, me);
}

static inline void ptl_unlock(void)
{
	struct ptl_rlock *l = &ptl_lib.lock;
	if (l->depth) {
		l->depth--;
		return;
	}
	atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
	if (l->fast) {
		l->fast = false;
		atomic_store_explicit(&l->fast_in, 0, memory_order_release);
		atomic_signal_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&l->revoked, memory_order_relaxed))
			ptl_lock_fast_wake(l);
		return;
	}
	ptl_mutex_give(l);
}

/* Whether another thread waits for the lock, which the caller holds: its
 * ptl_lock marked the word contended (2) before it slept, or, the holder
 * being in by the biased path, shut that path and waits for it. */
static inline bool ptl_lock_wanted(void)
{
	struct ptl_rlock *l = &ptl_lib.lock;
	return atomic_load_explicit(&l->word, memory_order_relaxed) == 2 ||
	       (l->fast && atomic_load_explicit(&l->revoked, memory_order_relaxed));
}

/* lib/ptl/ptl_lock.c: makes the calling thread the lock's bias thread,
 * if the kernel lets it, PTL_LOCK_BIAS is not 0 and no other thread was
 * (the caller holds the lock, by the mutex: the bias is off until this
 * returns); and turns the bias off (the caller holds nothing: it takes
 * the mutex and shuts the path first, so that no thread is in by it
 * meanwhile). */
void ptl_lock_bias_init(void);
void ptl_lock_bias_fini(void);

/* A forked child's start (ptl_init.c's one pthread_atfork child
 * handler, registered by PtlInit until it takes: ptl_atfork_ok says so):
 * each module's part of it. */
extern bool ptl_atfork_ok;
void ptl_lock_atfork_child(void);
void ptl_view_atfork_child(void);

/* Milliseconds on the coarse monotonic clock (a tick's resolution), read
 * from the vDSO's data alone, where the precise one may be a system call
 * reading an emulated device (the hpet of a QEMU TCG guest): what wait
 * timeouts (ptl_eq.c) and the peer probe's period (ptl_progress.c) need. */
#ifdef CLOCK_MONOTONIC_COARSE
#define PTL_WAIT_CLOCK CLOCK_MONOTONIC_COARSE
#else
#define PTL_WAIT_CLOCK CLOCK_MONOTONIC
#endif
static inline int64_t ptl_now_ms(void)
{
	struct timespec ts;
	clock_gettime(PTL_WAIT_CLOCK, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ functions */
/* ptl_init.c */
/* Every API call asks first: inline. */
static inline bool ptl_initialized(void) { return ptl_lib.init_count > 0; }
int ptl_peer_id_fetch(int rank, ptl_process_id_t *id);
int ptl_id_rank_fetch(ptl_process_id_t id);
/* The process id of a rank of this job. Every message asks (its
 * initiator's id for the event, its target's rank): once the rank's nid
 * is known, without a call. */
static inline int ptl_peer_id(int rank, ptl_process_id_t *id)
{
	if (rank >= 0 && rank < ptl_lib.rt.size && ptl_lib.peers[rank].id_known) {
		id->nid = ptl_lib.peers[rank].nid;
		id->pid = (ptl_pid_t)rank;
		return PTL_OK;
	}
	return ptl_peer_id_fetch(rank, id);
}
/* Rank of a process id of this job, or -1. */
static inline int ptl_id_rank(ptl_process_id_t id)
{
	if (id.pid < (ptl_pid_t)ptl_lib.rt.size && ptl_lib.peers[id.pid].id_known)
		return ptl_lib.peers[id.pid].nid == id.nid ? (int)id.pid : -1;
	return ptl_id_rank_fetch(id);
}

/* ptl_ni.c */
struct ptl_ni *ptl_ni_lookup(ptl_handle_ni_t h);
void ptl_ni_destroy(struct ptl_ni *ni);
void ptl_sr_inc(int reg);
/* PTL_SR_MES_IN_USE: the NI's match entries in use, stored in the view as
 * they change (ptltool reads it there), from the table's own count */
static inline void ptl_sr_mes(const struct ptl_ni *ni)
{
	if (ptl_lib.view)
		__atomic_store_n(&ptl_lib.view->sr[PTL_SR_MES_IN_USE], (int64_t)ni->mes.used, __ATOMIC_RELAXED);
}

/* ptl_eq.c */
/* Handle lookups are inline: every message looks up an MD and an EQ, a
 * posted receive an ME, an MD and an EQ twice. */
static inline struct ptl_eq *ptl_eq_lookup(struct ptl_ni *ni, ptl_handle_eq_t h)
{
	return ni ? ptl_htab_lookup(&ni->eqs, h) : NULL;
}
/* Fills the common fields and sequence, logs ev, runs the handler. */
void ptl_eq_post(struct ptl_eq *eq, ptl_event_t *ev);
/* The slot the next event of eq goes to, for a caller that fills an event
 * in place (every field but sequence) and then calls ptl_eq_commit():
 * a small put's PUT_END, built aside and copied by ptl_eq_post(), cost
 * more than the rest of its event. Lock held from here to the commit. */
static inline ptl_event_t *ptl_eq_slot(const struct ptl_eq *eq)
{
	return &PTL_VIEW_EQ_EVENTS(eq->ring)[eq->wr_slot];
}
/* Wakes eq's sleepers and runs its handler on the event just committed. */
void ptl_eq_notify(struct ptl_eq *eq, ptl_event_t *slot);
/* > 0 while this thread runs an EQ handler (with the library lock held):
 * PtlInit only counts then, and PtlFini will not end the library. */
extern _Thread_local int ptl_eq_in_handler;
/* Posts the event filled in at slot (from ptl_eq_slot): as ptl_eq_post.
 * Inline: a message commits one event or two, on its critical path. */
static inline void ptl_eq_commit(struct ptl_eq *eq, ptl_event_t *slot)
{
	struct ptl_view_eq *r = eq->ring;
	uint64_t w = r->write_seq;
	slot->sequence = (ptl_seq_t)w;
	__atomic_store_n(&r->write_seq, w + 1, __ATOMIC_RELEASE);
	eq->wr_slot = eq->wr_slot + 1 == eq->count ? 0 : eq->wr_slot + 1;
	/* Waiters register under the library lock, which we hold too. */
	if (atomic_load_explicit(&eq->waiters, memory_order_relaxed) || eq->handler)
		ptl_eq_notify(eq, slot);
}
void ptl_eq_destroy(struct ptl_ni *ni, struct ptl_eq *eq);

/* ptl_md.c */
static inline struct ptl_md *ptl_md_lookup(struct ptl_ni *ni, ptl_handle_md_t h)
{
	return ptl_htab_lookup(&ni->mds, h);
}
/* Checks and copies a user MD into md (Attach and Bind; PtlMDUpdate
 * inlines the same with the EQ it looked up already), with md->eq its
 * EQ; writes nothing unless every check passes. */
int ptl_md_set(struct ptl_ni *ni, struct ptl_md *md, const ptl_md_t *umd);
void ptl_md_copy_in(const struct ptl_md *md, ptl_size_t off, const void *src, ptl_size_t len);
void ptl_md_copy_out(const struct ptl_md *md, ptl_size_t off, void *dst, ptl_size_t len);
/* Describes [off, off+len) of md as iovecs; returns how many (<= max), or -1. */
int ptl_md_iovecs(const struct ptl_md *md, ptl_size_t off, ptl_size_t len, struct iovec *out, int max);
/* Logs an event of md (if it has an EQ and the kind is not disabled). */
void ptl_md_event(struct ptl_md *md, ptl_event_kind_t kind, ptl_event_t *ev);
/* Whether ptl_md_event would post kind for md: callers skip building an
 * event nobody will see (an eager slot's SEND_START/END, every put), or
 * the call (a posted receive's PUT_START). */
static inline bool ptl_md_wants_event(const struct ptl_md *md, ptl_event_kind_t kind)
{
	unsigned int off = kind == PTL_EVENT_SEND_START || kind == PTL_EVENT_PUT_START ||
				   kind == PTL_EVENT_GET_START || kind == PTL_EVENT_REPLY_START
				   ? PTL_MD_EVENT_START_DISABLE
			 : kind == PTL_EVENT_SEND_END || kind == PTL_EVENT_PUT_END ||
				   kind == PTL_EVENT_GET_END || kind == PTL_EVENT_REPLY_END
				   ? PTL_MD_EVENT_END_DISABLE
				   : 0;
	return md->md.eq_handle != PTL_EQ_NONE && !(md->md.options & off);
}
/* md's EQ while it lives, or NULL. md->eq is NULL whenever md.eq_handle
 * is PTL_EQ_NONE (ptl_md_set sets the two together), so the 0 that
 * ptl_eq_destroy leaves in a freed EQ's handle, PTL_EQ_NONE's value too,
 * never matches. */
static inline struct ptl_eq *ptl_md_live_eq(const struct ptl_md *md)
{
	struct ptl_eq *eq = md->eq;
	return eq && eq->handle == md->md.eq_handle ? eq : NULL;
}
/* The EQ md logs events of kind to, or NULL when it logs none (inline:
 * every event asks). */
static inline struct ptl_eq *ptl_md_eq(const struct ptl_md *md, ptl_event_kind_t kind)
{
	return ptl_md_wants_event(md, kind) ? ptl_md_live_eq(md) : NULL;
}
/* Threshold used up / max_size reached with PTL_UNLINK: unlink md (and its
 * ME if that was attached with PTL_UNLINK), logging UNLINK. Returns true if
 * it unlinked. */
bool ptl_md_autounlink(struct ptl_ni *ni, struct ptl_md *md);
/* Whether md has reached its unlink condition. */
static inline bool ptl_md_due(const struct ptl_md *md)
{
	if (md->unlink_op != PTL_UNLINK)
		return false;
	if (md->md.threshold == 0)
		return true;
	return (md->md.options & PTL_MD_MAX_SIZE) && !(md->md.options & PTL_MD_MANAGE_REMOTE) &&
	       md->total - (md->local_offset < md->total ? md->local_offset : md->total) < md->md.max_size;
}
/* Every message asks, on both sides: inline, and so is the test of the
 * condition (MPI's eager buffers are PTL_UNLINK with a max_size: every
 * message into one called out to find it had room left). */
static inline bool ptl_md_maybe_autounlink(struct ptl_ni *ni, struct ptl_md *md)
{
	if (!md->doomed && !ptl_md_due(md))
		return false;
	return ptl_md_autounlink(ni, md);
}
/* The same after events whose EQ handlers may have unlinked the MD (and
 * bound another into its slot): found again by its handle h, if it lives. */
static inline void ptl_md_maybe_autounlink_h(struct ptl_ni *ni, ptl_handle_md_t h)
{
	struct ptl_md *md = ptl_md_lookup(ni, h);
	if (md)
		ptl_md_maybe_autounlink(ni, md);
}
/* Frees md; detaches it from its ME first (inline: a posted receive's
 * unlink frees an ME and its MD). */
static inline void ptl_md_destroy(struct ptl_ni *ni, struct ptl_md *md)
{
	if (md->me) {
		md->me->md = NULL;
		md->me = NULL;
	}
	ptl_htab_release(&ni->mds, md->handle);
}

/* ptl_me.c */
static inline struct ptl_me *ptl_me_lookup(struct ptl_ni *ni, ptl_handle_me_t h)
{
	return ptl_htab_lookup(&ni->mes, h);
}
void ptl_me_destroy(struct ptl_ni *ni, struct ptl_me *me);

/* ptl_ac.c */
/* Whether entry ac admits the request (every message asks: inline). */
static inline bool ptl_ac_admits(const struct ptl_ni *ni, ptl_ac_index_t ac, ptl_process_id_t src,
				 ptl_uid_t uid, ptl_jid_t jid, ptl_pt_index_t pt)
{
	if (ac > (ptl_ac_index_t)ni->limits.max_ac_index)
		return false;
	const struct ptl_ac *e = &ni->acs[ac];
	return e->in_use &&
	       (((ptl_id_key(src) ^ e->id_key) & e->id_mask) |
		((ptl_cred_key(uid, jid) ^ e->cred_key) & e->cred_mask) |
		((pt ^ e->pt_key) & e->pt_mask)) == 0;
}
void ptl_ac_defaults(struct ptl_ni *ni);

/* ptl_match.c: the address translation of PORTALS33.md, as pure functions
 * (PORTALS33.md, "Address translation", steps 2-3): walk a portal's match
 * list in order; the first ME whose match id admits the initiator, whose
 * bits match under its ignore bits, and whose MD accepts the operation,
 * wins. Inline here, since every message walks a list; ptl_match.c gives
 * them out of line to the unit tests. */
enum ptl_match_op { PTL_MATCH_PUT, PTL_MATCH_GET, PTL_MATCH_GETPUT };
/* src as ptl_id_key packs it: the walk packs it once. */
static inline bool ptl_match_me_key(const struct ptl_me *me, uint64_t src_key, ptl_match_bits_t bits)
{
	return (((src_key ^ me->id_key) & me->id_mask) | ((bits ^ me->match_bits) & me->care_bits)) == 0;
}
static inline bool ptl_match_me(const struct ptl_me *me, ptl_process_id_t src, ptl_match_bits_t bits)
{
	return ptl_match_me_key(me, ptl_id_key(src), bits);
}
static inline unsigned int ptl_match_need(enum ptl_match_op op)
{
	return op == PTL_MATCH_PUT ? PTL_MD_OP_PUT
	     : op == PTL_MATCH_GET ? PTL_MD_OP_GET
	     : PTL_MD_OP_PUT | PTL_MD_OP_GET;
}
/* need: ptl_match_need(op), which the walk works out once. */
static inline bool ptl_match_md_need(const struct ptl_md *md, unsigned int need, ptl_size_t roffset,
				     ptl_size_t rlength, ptl_size_t *off, ptl_size_t *mlen)
{
	unsigned int opts = md->md.options;
	if ((opts & need) != need || md->md.threshold == 0 || md->doomed)
		return false;
	ptl_size_t o = (opts & PTL_MD_MANAGE_REMOTE) ? roffset : md->local_offset;
	ptl_size_t room = o <= md->total ? md->total - o : 0;
	if (rlength <= room) {
		*mlen = rlength;
	} else if (opts & PTL_MD_TRUNCATE) {
		*mlen = room;
	} else {
		return false;
	}
	*off = o;
	return true;
}
static inline bool ptl_match_md(const struct ptl_md *md, enum ptl_match_op op, ptl_size_t roffset,
				ptl_size_t rlength, ptl_size_t *off, ptl_size_t *mlen)
{
	return ptl_match_md_need(md, ptl_match_need(op), roffset, rlength, off, mlen);
}
/* The walk of the match list at head: from after *dead, which it
 * extends past the entries it finds accepting nothing before any other
 * (a portal's dead front, struct ptl_pt); dead NULL: from the head,
 * keeping no front (ptl_match, for the unit tests). Inlined with the
 * argument constant, either way has no test of it left. */
static inline struct ptl_me *ptl_match_walk(struct ptl_list *head, struct ptl_list **dead, ptl_process_id_t src,
					    ptl_match_bits_t bits, enum ptl_match_op op, ptl_size_t roffset,
					    ptl_size_t rlength, ptl_size_t *off, ptl_size_t *mlen)
{
	uint64_t key = ptl_id_key(src);
	unsigned int need = ptl_match_need(op);
	for (struct ptl_list *l = dead ? (*dead)->next : head->next; l != head; l = l->next) {
		struct ptl_me *me = ptl_container_of(l, struct ptl_me, link);
		const struct ptl_md *md = me->md;
		if (!md || md->md.threshold == 0 || md->doomed) {
			if (dead && *dead == l->prev) {
				*dead = l;
				me->front = true;
			}
			continue;
		}
		if (ptl_match_me_key(me, key, bits) && ptl_match_md_need(md, need, roffset, rlength, off, mlen))
			return me;
	}
	return NULL;
}
/* An arrival's walk of its portal's list, after the dead front. */
static inline struct ptl_me *ptl_match_pt(struct ptl_pt *pt, ptl_process_id_t src, ptl_match_bits_t bits,
					  enum ptl_match_op op, ptl_size_t roffset, ptl_size_t rlength,
					  ptl_size_t *off, ptl_size_t *mlen)
{
	return ptl_match_walk(&pt->list, &pt->dead, src, bits, op, roffset, rlength, off, mlen);
}
bool ptl_me_matches(const struct ptl_me *me, ptl_process_id_t src, ptl_match_bits_t bits);
/* Whether md accepts the op; on yes *off and *mlen say where and how much. */
bool ptl_md_accepts(const struct ptl_md *md, enum ptl_match_op op, ptl_size_t roffset,
		    ptl_size_t rlength, ptl_size_t *off, ptl_size_t *mlen);
/* First ME of the list that matches and whose MD accepts, or NULL. */
struct ptl_me *ptl_match(struct ptl_list *list, ptl_process_id_t src, ptl_match_bits_t bits,
			 enum ptl_match_op op, ptl_size_t roffset, ptl_size_t rlength,
			 ptl_size_t *off, ptl_size_t *mlen);

/* ptl_progress.c */
/* Picks and connects the NAL that reaches peer (rt_get of its address). */
int ptl_route(int peer);
/* Sends the NAL refused for now (ring full, no credit) wait in the peer's
 * backlog, in order; ptl_send_slow takes a dead or new peer, a backlog,
 * ourselves. Both out of line: rare. */
#define PTL_TX_POOL 256 /* sends that may wait for ring space: a chunk of them */
/* At most this many slots of max_inline bytes: a peer that has not read
 * 16384 sends' worth is not coming back for them soon, and the memory is
 * bounded. */
#define PTL_TX_MAX 16384
/* Requests (puts, gets) queue only while fewer than this many requests
 * wait; past it the initiator's call returns PTL_NO_SPACE and nothing went
 * out (its caller tries again once the peers have read some). Answers (ACK,
 * REPLY) have no caller to refuse, and one dropped leaves its initiator
 * waiting for good: they are not counted against it, and those that fit
 * a small slot (every ACK, a REPLY whose data went by bulk) take small
 * slots, up to PTL_TX_SMALL_MAX (their number is bounded in practice by
 * the requests the peers have in flight to us: an MPI's credits). Slots
 * of max_inline (PTL_TX_MAX at most) for the rest. PTL_TEST_TX_REQ_MAX
 * lowers this, PTL_TEST_TX_MAX that (test options: refusals and a dropped
 * answer without thousands of queued sends). */
#define PTL_TX_REQ_MAX (PTL_TX_MAX / 2)
#define PTL_TX_SMALL_MAX (1 << 20) /* small slots: 128 MiB, a sanity bound */
int ptl_tx_grow(bool small);
int ptl_send_later(struct ptl_peer *p, int peer, const void *hdr, size_t hdr_len, const void *payload,
		   size_t len);
int ptl_send_slow(int peer, const void *hdr, size_t hdr_len, const void *payload, size_t len);
/* Sends hdr and payload to peer. Inline: out of line, the arguments kept
 * for a refusal made it save and restore six registers per message. */
static inline int ptl_send(int peer, const void *hdr, size_t hdr_len, const void *payload, size_t len)
{
	/* Most sends go to a live, connected peer other than ourselves with
	 * nothing queued: straight to its NAL. */
	struct ptl_peer *p = &ptl_lib.peers[peer];
	if (p->nal < 0 || p->failed || p->backlog_head || peer == ptl_lib.rt.rank)
		return ptl_send_slow(peer, hdr, hdr_len, payload, len);
	struct ptl_nalinst *n = &ptl_lib.nals[p->nal];
	int rc = n->ops->send(n->n, peer, hdr, hdr_len, payload, len);
	return rc == NAL_EAGAIN ? ptl_send_later(p, peer, hdr, hdr_len, payload, len) : rc;
}
/* Drives every NAL once; returns the work done. Lock held. */
int ptl_progress(void);
/* Called by app threads in API calls that want progress (EQ polling). */
void ptl_progress_app(void);
int ptl_progress_start(void);
void ptl_progress_stop(void);
/* Ends every sleep in a NAL (a kick of each that can sleep): the progress
 * thread's, the watchers', a helper's. */
void ptl_kick_nals(void);
/* An app thread stops polling to sleep; peers must wake us again. */
void ptl_progress_app_sleeping(void);
void ptl_progress_nal_wait(int timeout_ms);
/* How often a waiting process looks whether a peer it awaits an answer
 * from still lives, where the peer's NAL would not tell (ptl_progress.c). */
#define PTL_PEER_PROBE_MS 1000
/* Called where a thread is about to sleep (the progress thread, a
 * PtlEQPoll), and where one polls without a progress thread (a wait's
 * polls, an empty PtlEQGet's or PtlEQPoll's of timeout 0: ptl_eq.c): with
 * operations in flight to peers of ptl_lib.probe_head's list, looks at
 * those peers (nal_ops.peer_check) once PTL_PEER_PROBE_MS has passed since
 * the first such call, failing the operations of each
 * found dead (ptl_peer_fail: events, which may run EQ handlers); returns
 * the number found. *next_ms: how long the caller may sleep before it
 * calls again (at least 1), -1 when nothing awaits such a peer. Lock held. */
int ptl_peers_probe(int *next_ms);
void ptl_peer_fail(int peer, int status);

/* ptl_recv.c */
void ptl_recv(void *arg, int peer, const void *msg, size_t len);
void ptl_bulk_done(void *arg, void *cookie, int status);
void ptl_peer_failed_upcall(void *arg, int peer, int status);

/* ptl_move.c */
void ptl_op_finish(struct ptl_ni *ni, struct ptl_op *op);
void ptl_op_unreg(struct ptl_op *op);
void ptl_ops_unreg_all(void);

/* ptl_view.c */
int ptl_view_open(void);
void ptl_view_close(void);
void ptl_view_ni(struct ptl_ni *ni);
/* Creates the shared ring object of an EQ. */
int ptl_view_eq_create(struct ptl_eq *eq, uint64_t count);
void ptl_view_eq_destroy(struct ptl_eq *eq);

/* ptl_topo.c */
int ptl_topo_init(void);  /* my NUMA node, or -1 */
void ptl_topo_bind_thread(void);
void ptl_topo_fini(void);

#endif /* PTL_INTERNAL_H */
