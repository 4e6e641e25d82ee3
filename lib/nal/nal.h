/*
 * lib/nal/nal.h - the network abstraction layer: what lib/ptl asks of a
 * transport, and what a transport may assume.
 *
 * A NAL moves opaque messages between ranks of one job and, if it can,
 * moves bulk bytes between registered memory of two ranks without the
 * other side's CPU (CMA on one host, RDMA read/write between hosts). It
 * knows nothing of match lists, MDs or events: lib/ptl builds its protocol
 * headers on top (lib/ptl/ptl_proto.h). Each NAL fills one struct nal_ops;
 * lib/ptl picks a NAL per peer (shm on the same host, then verbs, then tcp;
 * PTL_NAL forces one) and never looks inside struct nal.
 *
 * Threading: lib/ptl serializes every call into one NAL instance (it holds
 * its library lock), except sleep(), which its progress thread calls
 * without the lock (concurrently with other calls), and kick(), which any
 * thread may call at any time. Upcalls run inside progress(), on the
 * caller's thread, and may call send() and bulk() re-entrantly.
 *
 * Memory registration: lib/ptl registers the pieces of an MD it exposes
 * for a bulk move when the move starts, and calls mem_dereg once for every
 * successful mem_reg when that exposure ends: the op's answer came, it
 * failed, its peer died, or the NI went (before close()). mem_dereg means
 * "this exposure ended", not "free it": the same range may be registered
 * again meanwhile, and a NAL whose registrations pin memory (verbs) counts
 * the users of each, frees or caches one when none is left, and must not
 * free one in use. NALs that pin nothing (shm, tcp) ignore it.
 *
 * Lifetime of a job's NALs:
 *   open()   before the address exchange: create local resources (the shm
 *            leader creates the host's segment), say how big the address is;
 *   addr()   the blob lib/ptl publishes for this rank through lib/rt;
 *   -- lib/rt fence: every rank's blobs visible --
 *   start()  after the fence: attach what other ranks created (map the
 *            host segment); must not wait for peers beyond that;
 *   connect() lazily, before the first send to a peer, with its blob;
 *   send()/bulk()/progress()/sleep() while running;
 *   close().
 */
#ifndef PTL_NAL_H
#define PTL_NAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define NAL_ADDR_MAX 256 /* bytes of an address blob */

/* Return codes of NAL calls: 0 or one of these (negative). */
#define NAL_EAGAIN (-1)  /* no room or no credit now; retry after progress() */
#define NAL_EPEER (-2)   /* the peer is dead or unreachable */
#define NAL_ENOMEM (-3)  /* out of a fixed resource */
#define NAL_EINVAL (-4)  /* bad argument (bug in the caller) */
#define NAL_EPERM (-5)   /* the OS refused (e.g. CMA not permitted) */
#define NAL_EIO (-6)     /* anything else; the NAL has printed why */

struct nal; /* private to each NAL */

/* The headroom a NAL's max_inline leaves above a power-of-two payload for
 * its caller's protocol header: NALs size max_inline as 2^k plus this
 * (shm, self and tcp: 16 KiB plus it; verbs: 8 KiB plus it), and callers
 * assert that their largest header fits (lib/ptl/ptl_move.c), so that
 * payloads of a power of two, which collectives' pieces and users'
 * buffers often are, go inline whole up to 2^k (shm.h says what a 16 KiB
 * one gained). */
#define NAL_HDR_ROOM 128u

/* What lib/ptl needs to know to choose and drive a NAL. */
struct nal_props {
	const char *name;       /* "shm", "self", "verbs", "tcp" */
	size_t max_inline;      /* largest hdr+payload send() takes in one message */
	unsigned ports;         /* links a rank can drive at once (collectives) */
	unsigned latency_class; /* 0 same process, 1 same host, 2 RDMA, 3 TCP */
	int has_bulk;           /* bulk() works: one-sided moves without the peer's CPU */
};

/* Memory exposed for bulk moves. key and addr travel to the peer inside a
 * protocol header; priv is the NAL's own (e.g. struct ibv_mr *). */
struct nal_mr {
	uint64_t addr;
	uint64_t key;
	void *priv;
};

/* Calls from the NAL into lib/ptl. */
struct nal_upcalls {
	void *arg;
	/* A message from peer (a rank) arrived. msg is valid only during the call. */
	void (*recv)(void *arg, int peer, const void *msg, size_t len);
	/* A bulk() that returned 1 (pending) finished; status 0 or NAL_E*. */
	void (*bulk_done)(void *arg, void *cookie, int status);
	/* peer is gone (NAL_EPEER) or its link failed: lib/ptl fails what it
	 * had in flight to that peer, including pending bulk moves, so after
	 * this no bulk_done() may follow for that peer's moves. May be called
	 * more than once per peer. */
	void (*peer_failed)(void *arg, int peer, int status);
};

struct nal_open_args {
	int rank, size;             /* this rank and the job size */
	int local_rank, local_size; /* among the ranks on this host */
	const int *local_ranks;     /* NULL until start(): ranks on this host, sorted */
	uint64_t jobid;             /* names shared objects; unique per job on a host */
	const uint8_t *job_key;     /* RT_JOB_KEY_LEN bytes shared by the job */
	int job_key_len;
	struct nal_upcalls up;
};

enum nal_bulk_op { NAL_BULK_READ, NAL_BULK_WRITE };

struct nal_ops {
	const char *name;
	/* Creates the instance. Returns 0, or NAL_E* after printing why. A NAL
	 * that cannot run here (no device) returns NAL_EPERM quietly. */
	int (*open)(const struct nal_open_args *args, struct nal **out);
	/* Fills buf (NAL_ADDR_MAX bytes) with this rank's address; *len out. */
	int (*addr)(struct nal *n, void *buf, size_t *len);
	/* After the address exchange; local_ranks is now known. */
	int (*start)(struct nal *n, const int *local_ranks, int nlocal);
	/* Makes peer reachable; called once, before the first send to it. */
	int (*connect)(struct nal *n, int peer, const void *addr, size_t len);
	/* Whether this NAL can reach peer at all (e.g. shm: same host). */
	int (*reaches)(struct nal *n, int peer);
	void (*close)(struct nal *n);
	void (*props)(struct nal *n, struct nal_props *out);

	/* Sends hdr then payload (hdr_len + len <= max_inline) as one message;
	 * the receiver's recv() upcall sees them contiguous, in send order per
	 * peer. Returns 0 (buffers reusable at once), NAL_EAGAIN or NAL_EPEER. */
	int (*send)(struct nal *n, int peer, const void *hdr, size_t hdr_len,
		    const void *payload, size_t len);

	/* Registers [addr, addr+len) for bulk moves by peers (and by us);
	 * mem_dereg(mr) ends that exposure (see "Memory registration"). */
	int (*mem_reg)(struct nal *n, void *addr, size_t len, struct nal_mr *mr);
	void (*mem_dereg)(struct nal *n, struct nal_mr *mr);

	/* Moves len bytes between our local iovecs and the peer's registered
	 * memory at (raddr, rkey): READ copies theirs into ours, WRITE ours into
	 * theirs. Returns 0 when already done, 1 when pending (bulk_done(cookie)
	 * follows, never from inside bulk() itself), or NAL_E*. Only when
	 * props.has_bulk. */
	int (*bulk)(struct nal *n, int peer, enum nal_bulk_op op,
		    const struct iovec *local, int niov, uint64_t raddr,
		    uint64_t rkey, size_t len, void *cookie);

	/* Delivers what has arrived and completes what has finished, through
	 * the upcalls. Returns the number of things done (0: nothing). Must not
	 * make a system call when nothing arrived (shm). Not called from inside
	 * an upcall; a NAL may return 0 if it is. */
	int (*progress)(struct nal *n);

	/* Blocks until something may have arrived, a send refused with
	 * NAL_EAGAIN may now succeed, kick() is called or timeout_ms passes
	 * (-1: no timeout). Closes the race with senders: it returns at once
	 * when something is already pending. Valid after start(); lib/ptl may
	 * run it on a watcher thread when several NALs are open. */
	int (*sleep)(struct nal *n, int timeout_ms);
	/* Wakes a sleep() of this instance; any thread, async-signal-safe. */
	void (*kick)(struct nal *n);
	/* on=1: a thread of ours is polling, so peers need not wake us (no
	 * system call on their send path); on=0: wake us when you send. */
	void (*set_polling)(struct nal *n, int on);
	/* Optional, for a NAL that notices a peer's death only when something
	 * to it is stuck: looks now, and if peer is gone reports it through
	 * peer_failed before returning 1; 0 while it lives. Called with
	 * lib/ptl's lock held, when PtlRtRankFailed asks and, while a thread
	 * of ours waits with operations in flight to peer, once a second
	 * (ptl_peers_probe, lib/ptl/ptl_progress.c); must not block. NULL:
	 * the NAL reports deaths by itself, and lib/ptl never probes. */
	int (*peer_check)(struct nal *n, int peer);
	/* Optional: 1 while an answer this rank may be waiting for is due (it
	 * sent lately and has heard nothing since), so a waiting thread should
	 * poll on rather than sleep: on a loaded (virtual) machine a CPU that
	 * went idle is slow to get back, far slower than the answer. Bounded
	 * in time by the NAL. Lock held; no system call. NULL: never. */
	int (*due)(struct nal *n);
};

extern const struct nal_ops nal_shm_ops;
extern const struct nal_ops nal_self_ops;
extern const struct nal_ops nal_verbs_ops;
extern const struct nal_ops nal_tcp_ops;

#endif /* PTL_NAL_H */
