/* mpi_pt2pt.c: MPI point-to-point over Portals 3.3.
 *
 * Portal MPI_PT_MSG holds, in order:
 *   [posted receives...] [marker] [reserves...] [ux marker] [unexpected buffers...] [overflow]
 * A posted receive is an ME whose match bits are (ctx, source, tag) with
 * ignore bits for the wildcards, inserted before the marker, so receives
 * match in the order they were posted and ahead of the catch-all entries.
 * The marker never accepts anything (threshold 0); it only keeps our place.
 * Unexpected buffers take any message (locally managed offsets, unlinked
 * when less than one eager message is left, re-posted once every message
 * in them has been taken). The overflow entry has no memory: a message that
 * finds the buffers full lands there as a header only (mlength 0) and, as
 * the overflow entry sends no ACK, its sender keeps its data until the
 * receiver matches the header and pulls it. (A short ACK would not say
 * "overflowed": a posted receive shorter than the message - truncation -
 * gives one too, and that sender must finish at once.) So unexpected memory is bounded and nothing is
 * dropped. Each sender also holds a few credits per receiver (one per
 * message, returned in batches as the receiver drains its event queue), so
 * a flood of messages slows the sender down instead of overrunning the
 * receiver's event queue.
 *
 * ACK-free eager: the ACK exists only for the overflow case, so a sender
 * that knows its message cannot overflow frees its slot at once. Eager
 * messages up to P.noack_max (inline on every transport, PtlRtMaxInline,
 * so the sender's buffer is free when PtlPut returns) carry MPI_NOACK_BIT,
 * which only the reserve buffers (right after the marker) and posted
 * receives (which ignore the bit) match. Each sender holds ACK-free
 * credits per receiver (nack), in units of MPI_NOACK_UNIT bytes: a message
 * takes nack_units() of them. The receiver keeps what it has promised
 * (nack_out, all peers) at most what its linked reserve buffers can still
 * take (nack_cap, rsv_slots): an arrival lowers nack_out by its units and
 * nack_cap by at most as many, a re-posted buffer raises the room, and
 * credits go back in batches
 * (MPI_CTRL_NOACK) while the room covers them. So an ACK-free message
 * always finds a reserve buffer with room or a posted receive, never the
 * overflow entry. A reserve pinned by messages nobody takes only means
 * no new credits: the senders fall back to the ACKed path.
 *
 * Protocols (hdr_data says which): eager below mpi_g.eager_limit - the data
 * is copied to a bounce buffer and put at once, the send is complete (the
 * bounce buffer is one of MPI_ESLOTS preallocated slots with their MD bound
 * once, when the message fits and one is free: no malloc and no MD bind on
 * the small-message path; it goes back to the pool on the ACK; an
 * MPI_Isend above MPI_DIRECT_MIN, and a blocking send too big for a slot,
 * puts from the user's buffer instead and completes on the ACK or the
 * pull's ACK); above it, and for every
 * synchronous send, rendezvous - the sender exposes its buffer on
 * MPI_PT_RNDV under its operation id and puts a header; the receiver, once
 * it has matched the header, gets the data from there (one copy on shm).
 * A synchronous send therefore completes only after the match.
 *
 * Kept MEs (mpi_keep.c): a posted receive's ME and MD (on a
 * communicator's own context; a collective's are use-once) are retained,
 * so the MD logs no UNLINK event when its message has landed, and a later
 * receive of the same match bits re-arms an idle one with the PtlMDUpdate
 * below instead of inserting and attaching anew: a stream of receives of
 * one envelope costs one Portals call each.
 *
 * The race between posting a receive and an arrival: the receive's ME is
 * inserted with a disabled MD (threshold 0), the event queue is drained and
 * the unexpected list searched, and the MD is enabled with PtlMDUpdate on
 * the condition that the event queue is still empty - Portals 3.3's atomic
 * test-and-update. If anything arrived meanwhile, drain and search again.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "nal/nal_copy.h"
#include "mpi_keep.h"
#include "mpi_pool.h"
#include "mpi_ux.h"

struct mpi_uxbuf {
	int obj;            /* MPI_OBJ_UXBUF */
	char *mem;
	ptl_handle_me_t me;
	int refs;           /* messages landed and not yet taken */
	bool linked;
	bool reserve;       /* takes only ACK-free messages (MPI_NOACK_BIT) */
	size_t used;        /* reserve: bytes landed since it was posted */
};

/* ACK-free eager messages: up to MPI_NOACK_MIN bytes whatever the eager
 * limit, above it up to the eager limit but at most MPI_NOACK_MAX, never
 * more than a put carries inline (PtlRtMaxInline); credits of
 * MPI_NOACK_UNIT bytes, at most MPI_NOACK_CREDITS per peer;
 * MPI_NOACK_NBUFS reserve buffers of MPI_NOACK_BUFSZ bytes. Up to 8 KiB
 * the ACK is most of what a message costs beyond its copies: a record
 * back through the ring, an event and a lookup at the sender, and a
 * bounce-slot copy for a blocking send that cannot wait for it.
 *
 * The credits cover a window of 32 MPI_Isends of the largest (8 KiB:
 * 256 units) to one peer of a 2-rank job, and the reserves that promise
 * (3 x 249 units over the peers: nack_k). With 128 credits and 128 KiB
 * reserves half of such a window went the ACKed way (bench/mpi_pingpong
 * b8192, 3 interleaved rounds: near state (core_rtt 110 - 115 ns) 20.0 -
 * 21.9 -> 23.9 - 28.7 GB/s, MPICH 23.1 - 28.6; far state (~460 ns) 11.1
 * - 11.4 -> 13.2 - 13.4, MPICH 12.8 - 13.2); 4 KiB windows, which took
 * all 128, level. The price: 512 KiB more per rank, prefilled
 * (mem_mapped).
 *
 * Eight reserves, not four: every peer holds its promise whether it
 * sends or not, and with four ranks 3 x 186 units sat with peers that
 * never sent (a ring's rank hears from one), leaving the reserves'
 * room (nack_cap - nack_out) about one batch of grants above what was
 * promised; a grant waited for a full reserve to come back (re-posted
 * once all its messages were taken), and a sender of 8 KiB messages went
 * the ACKed way for 3 of 4 of them (4 ranks on 2 cores, a shift of
 * MPI_Isends: ~700 of 4,200 ACK-free), each waiting a turn of its
 * receiver's core for the ACK. With 7 x 249 units promised at most 256
 * a peer, all went ACK-free: the shift 4.4 -> 3.8-4.0 us a call, and 4
 * ranks on 2 cores, mpi_allreduce's rows, 4 interleaved launches: ring
 * 32 KiB 33.4 -> 15.1 us, ring_bidir 23.5 -> 14.7, halving-doubling 22.0
 * -> 18.2, MPI_Allreduce's own pick 18.5 -> 14.5; 2 ranks level. The
 * price: 1 MiB more per rank. */
#define MPI_NOACK_MIN 1024
#define MPI_NOACK_MAX 8192
#define MPI_NOACK_UNIT 1024
#define MPI_NOACK_NBUFS 8
#define MPI_NOACK_BUFSZ (256u << 10)
#define MPI_NOACK_CREDITS 256

struct mpi_obj_hdr {
	int obj;
};

/* A preallocated eager send buffer with its MD (user_ptr: the slot, so the
 * ACK finds the request that uses it). */
#define MPI_ESLOTS 64
#define MPI_ESLOT_BYTES 4096

/* By default at most this much memory (PTL_MPI_SEND_COPY_MEM) a rank
 * keeps in eager sends it has copied and not yet finished, their requests
 * counted (MPI_SEND_COPY_OVERHEAD), per process whatever the peer: the
 * copies made when every slot is in use, or of data not contiguous. Past
 * it a contiguous send goes from the user's buffer and completes once the
 * receiver has it (a copied one too, once delivered), which holds back a
 * sender that outruns its receiver. Unbounded, the copies and their
 * requests grew with the queue behind the peer's credits: a loop of 64
 * 256-byte MPI_Isends and MPI_Waitall, 256,000 sends, left 255,809 copies
 * and as many requests, 130 MB. Not none: a program that sends many small
 * messages each way before it receives them (unsafe by the standard, but
 * MPICH and Open MPI buffer it) runs on the copies while they last:
 * 100,000 256-byte MPI_Sends each way before the receives do at the
 * default, 200,000 block (at 64 MiB 100,000 blocked). */
#define MPI_SEND_COPY_DEFAULT (128u << 20)
/* PTL_MPI_MAX_MES: the receives that may be posted at once (their kept
 * MEs, idle ones included: mpi_keep.c). The network interface has
 * MPI_MES_OWN more, and the unexpected buffers' and reserves', for the
 * library's own: its markers, an emptied buffer going back in, a
 * collective's receives, a rendezvous send's exposed buffer; and
 * MPI_PULL_LANDINGS for pulls' landings. Receives that took them all had
 * left a buffer nowhere to go back in (the job aborted) and a pull
 * nowhere to land. The library's own stay within MPI_MES_OWN
 * (mpi_entry_ok): past it a rendezvous send or a schedule's receive is
 * refused (MPI_ERR_NO_MEM) rather than taking another's room. The most
 * keeps the whole
 * within lib/ptl's (PTL_LIM_MAX_MES, 1 << 20); the MDs asked, twice the
 * entries, lib/ptl caps at 1 << 20, which leaves sends 400,000 beyond
 * the entries' even then. MPI_MES_OWN is the 65,536 a job's collectives
 * and rendezvous sends may hold at once besides (they had shared the
 * receives' 262,144); lib/ptl's tables take their pages as used. */
#define MPI_MES_DEFAULT (1 << 18)
#define MPI_MES_LEAST 256
#define MPI_MES_MOST (1 << 19)
#define MPI_MES_OWN 65536
/* A pull (a receive taking an overflowed eager message, its data still at
 * the sender) lands in a use-once entry of its own; past
 * MPI_PULL_LANDINGS of them at once the next waits (P.pullq, in order)
 * for one to land: each landed or failed lets one go, whatever the
 * program does meanwhile. Where pulls landed in the receives' room, a
 * receive whose message overflowed while PTL_MPI_MAX_MES receives were
 * posted failed (MPI_ERR_NO_MEM) and its sender, not told, waited for
 * ever; a wait in the calls to that sender instead could wait for the
 * very sends the posted receives wait for. */
#define MPI_PULL_LANDINGS 1024
/* What each copy holds besides its bytes: its request and the allocator's
 * headers, and it held an MD of its own when measured (1M of budget, 1.8 MB
 * of RSS with 64-byte messages and the request alone counted; copies now go
 * through the address-space MD). */
#define MPI_SEND_COPY_OVERHEAD (sizeof(struct mpi_req) + 256)

/* A send's copy of up to MPI_COPY_SMALL bytes (an eager send's past the
 * slots, a buffered or non-contiguous send's) is a chunk of a pool
 * (mpi_pool.h; MPI_COPY_SLAB chunks a slab, one more only when every
 * chunk so far is in use), not a malloc: a sender that outruns its
 * receiver copies every message once the slots are in use, and malloc
 * and free were about 370 of an 8-byte MPI_Send's 1,720 instructions
 * there (callgrind, bench/mpi_pingpong.c's flood row). The slabs stay
 * until finalize: as many chunks as were in flight at once, which for
 * eager copies the copies' budget bounds (each counted with
 * MPI_SEND_COPY_OVERHEAD, 512 B: at the default 128 MiB at most
 * 262,144 chunks, 64 MiB, after a burst of the smallest messages). */
#define MPI_COPY_SMALL 256
#define MPI_COPY_SLAB 1024

/* A nonblocking eager send above MPI_DIRECT_MIN bytes (acknowledged: it
 * may overflow and be pulled, so its data must stay until the ACK) goes
 * from the user's buffer instead of a copy into a bounce slot, and its
 * request completes on the ACK. Its MD is the address-space MD, bound once
 * over all of memory: the put names the buffer by its offset, so a send
 * binds nothing; its events name the request by the id in hdr_data (the
 * pull's put carries it too). Blocking sends that fit a slot keep the
 * copy (or, every slot in use, a malloc'd one within
 * PTL_MPI_SEND_COPY_MEM): they return without waiting for the ACK. A
 * larger blocking send goes from the user's buffer as well and waits for
 * its ACK, which comes while the receiver answers (a ping-pong's reply
 * follows it): cheaper than a malloc'd copy and its bind, and than the
 * rendezvous's extra hop. */
#define MPI_DIRECT_MIN MPI_NOACK_MIN
#define MPI_DIRECT_BASE ((void *)(uintptr_t)1) /* the MD's start (NULL is refused) */

/* The figures in this comment and the next two were measured while shm's
 * bulk moves went by CMA (and on another machine); its bounce moves, the
 * default since, make rendezvous copies and receiver reads 2-4x cheaper
 * (lib/nal/shm/shm_bulk.c), and the three limits have not been re-tuned
 * for them.
 *
 * The default eager limit. Up to it an eager send from the user's buffer
 * travels inline through the shm ring (a header and 8 KiB fit while the
 * rings are 64 KiB or more: up to 28 ranks on a host, shm_seg.c) and is
 * copied once more, straight into a posted receive: sender and receiver
 * copy in turn, with no system call. Above it the rendezvous's copy wins
 * when messages stream: the rank that serves a get copies, so
 * the receiver matches headers while the sender copies, where an eager put
 * of more than the ring's max_inline is read by the receiver, which then
 * does both. 2 pinned ranks, bench/mpi_pingpong.c, best of 5 interleaved
 * rounds: 8 KiB half round trip 1.48 us eager vs 1.87 rendezvous (MPICH
 * 1.37); 16 KiB streaming 4.84 GB/s eager vs 5.38 rendezvous. */
#define MPI_EAGER_DEFAULT 8192

/* A blocking send (MPI_MODE_BLOCKING) stays eager up to this many times
 * the eager limit: its sender idles until it is done either way, so the
 * receiver may as well make the copy (an eager put that does not fit the
 * ring inline is read by the receiver, a bulk move on shm) and the rendezvous's
 * second hop, the receiver's get, is saved; and it returns once its data
 * has landed, posted or not. Nonblocking sends keep the rendezvous, whose
 * copies their senders make side by side with the receiver's matching.
 * 2 pinned ranks, bench/mpi_pingpong.c, best of 5 interleaved rounds, eager
 * vs rendezvous (MPICH): 16 KiB half round trip 3.41 vs 3.89 us (4.11),
 * 32 KiB 4.26 vs 5.07 (4.98), 64 KiB 6.06 vs 7.39 (6.73); 128 KiB the same
 * (the copy dominates). */
#define MPI_BLOCKING_EAGER 8

/* A 2-rank schedule's send (MPI_MODE_PULL) stays eager further: both ranks
 * send and receive at once, so neither core is idle to take half of a
 * rendezvous copy, and a get served by the sender writes the data into
 * lines the receiver then reads back for its combination. Read by the
 * receiver, it lands in its own cache. 2-rank MPI_Allreduce (its ring's
 * 256 KiB and 512 KiB halves), interleaved at load 1, median [best] us,
 * 128 times against 8: 512 KiB 107 [84.0] vs 125 [91.0], 1 MiB 188 [144]
 * vs 218 [168] (Open MPI 150 [138]). */
#define MPI_PULL_EAGER 128

struct mpi_eslot {
	int obj;                 /* MPI_OBJ_ESLOT */
	struct mpi_eslot *next;  /* free list */
	struct mpi_req *r;       /* the send using it, NULL when free */
	char *mem;
	ptl_handle_md_t md;
};

static struct {
	ptl_handle_me_t marker, overflow_me;
	ptl_handle_me_t ux_marker;   /* after the reserves: re-posted unexpected buffers go right after it */
	struct mpi_obj_hdr overflow, ctrl;
	ptl_handle_md_t zero_md;     /* 0-byte MD for headers and control puts */
	struct mpi_uxbuf *ux;
	struct mpi_list arriving;
	int *credit;                 /* per peer: messages we may still send */
	int *consumed;               /* per peer: messages drained, not yet credited */
	struct mpi_list *sendq;      /* per peer: sends waiting for a credit */
	uint64_t *idkeys;            /* id hash: (nid << 32 | pid) + 1, 0 = empty */
	int *idranks;
	size_t idmask;
	char zero[8];
	struct mpi_uxbuf *rsv;       /* MPI_NOACK_NBUFS reserve buffers, NULL: ACK-free off */
	int mes_all;                 /* the NI's match entries (max_mes, or max_me_list if fewer;
				      * an interface the program opened: by half its MDs too) */
	int mes_bufs;                /* the unexpected and reserve buffers', each may go back in */
	bool ni_dup;                 /* the interface is one the program opened before MPI_Init */
	int landings;                /* pulls' landing entries posted (MPI_PULL_LANDINGS at most) */
	int *nland;                  /* per peer: those of pulls from it */
	struct mpi_list pullq;       /* receives whose pulls wait for a landing (MPI_SS_LANDQ) */
	int nack_k;                  /* ACK-free credits a peer starts with and gets back to */
	int nack_half, credit_half;  /* nack_k / 2, mpi_g.credits / 2: a batch given back */
	int *grant_left;             /* per peer: arrivals (or ACK-free units) before we owe a batch (grant_left_set) */
	int *nack;                   /* per peer: ACK-free messages we may still send */
	int *nack_seen;              /* per peer: ACK-free arrivals not yet credited back */
	long nack_out;               /* credits peers hold or used and we have not seen */
	long nack_cap;               /* credit units the linked reserves surely take (rsv_slots) */
	size_t rsv_max;              /* the largest ACK-free message any rank sends (MPI_NOACK_MIN/MAX) */
	size_t noack_max;            /* ... and this rank: rsv_max or less, what it puts inline */
	struct mpi_eslot *eslots, *eslot_free;
	struct mpi_obj_hdr direct;   /* user_ptr of direct_md and bulk_md */
	ptl_handle_md_t direct_md;   /* the address-space MD (MPI_DIRECT_MIN) */
	ptl_handle_md_t bulk_md;     /* the same, for a collective's direct sends that do not go inline */
	size_t inline_max;           /* PtlRtMaxInline: above it a put is a bulk move */
	char *eslot_mem;
	size_t copy_bytes, copy_max; /* sends' copies not yet finished (eager ones', a failed collective's:
				      * r->counted), and their bound (MPI_SEND_COPY_DEFAULT) */
	struct mpi_pool copies;      /* small copies' chunks (copy_get) */
	uint64_t ux_appends;         /* unexpected-list records ever added */
	int unlink_due;              /* UNLINK events of use-once MDs sure to follow (progress_drain) */
	/* What libptl refused for now (PTL_NO_SPACE), tried again by progress
	 * (retry_refused): peers whose queued sends wait behind a refused
	 * one, and the other calls, in order per peer. */
	bool refused;                /* either list is not empty */
	int *blocked, nblocked;      /* those peers, each once (is_blocked) */
	bool *is_blocked;
	struct mpi_defer *dq;        /* the calls, dq_len of them */
	size_t dq_len, dq_cap;
	int *ndeferred;              /* per peer: its calls in dq (later ones to it queue behind) */
	unsigned *refused_pass;      /* per peer: the retry pass that was refused a call to it */
	unsigned pass;               /* retry passes made */
} P;

/* A Portals call libptl refused with PTL_NO_SPACE, to make again: a
 * control put, a rendezvous receive's get, the put that answers a pull. */
enum { MPI_DEFER_CTRL, MPI_DEFER_GET, MPI_DEFER_PULL };
struct mpi_defer {
	int kind;
	int w;                       /* the peer's world rank */
	uint32_t id;                 /* GET, PULL: the request (mpi_req_id) */
	int ctrl;                    /* CTRL: MPI_CTRL_* */
	ptl_match_bits_t bits;
	uint64_t arg;                /* CTRL: its argument; GET: the length */
	ptl_handle_md_t md;          /* GET: the bound landing */
};


static struct mpi_ux *lazy_first; /* see lazy_waiter */
static void ux_free(struct mpi_ux *u)
{
	if (u == lazy_first)
		lazy_first = NULL;
	mpi_ux_recycle(u);
}


static const ptl_process_id_t any_id = { PTL_NID_ANY, PTL_PID_ANY };
static void ctrl_put(int wdest, int kind, ptl_match_bits_t bits, uint64_t arg);

double mpi_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t idkey(ptl_process_id_t id)
{
	return (((uint64_t)id.nid << 32) | id.pid) + 1;
}

static int rank_of(ptl_process_id_t id)
{
	uint64_t k = idkey(id);
	for (size_t i = (size_t)(k * 0x9e3779b97f4a7c15ull) & P.idmask;; i = (i + 1) & P.idmask) {
		if (P.idkeys[i] == k)
			return P.idranks[i];
		if (!P.idkeys[i])
			return -1;
	}
}

static void ptl_check(int rc, const char *what)
{
	if (rc != PTL_OK)
		mpi_fatal(MPI_ERR_INTERN, "%s failed: %s", what, PtlErrorStr((unsigned)rc));
}

/* Credit units of ACK-free messages that a reserve with free bytes left
 * surely takes before Portals unlinks it (free below its max_size,
 * rsv_max): it stays linked while what lands stays within free - rsv_max,
 * and the message that crosses that still fits, so at least
 * (free - rsv_max) / unit + 1 units, whatever their sizes. */
static long rsv_room(size_t free)
{
	return free < P.rsv_max ? 0 : (long)((free - P.rsv_max) / MPI_NOACK_UNIT) + 1;
}

/* The units b can still take (0: not a reserve, or unlinked). */
static long rsv_slots(const struct mpi_uxbuf *b)
{
	return b->reserve && b->linked ? rsv_room(MPI_NOACK_BUFSZ - b->used) : 0;
}

/* The credit units an ACK-free message of len bytes takes (a 0-byte one
 * takes one: it is an arrival all the same). */
static inline int nack_units(size_t len)
{
	return len <= MPI_NOACK_UNIT ? 1 : (int)((len + MPI_NOACK_UNIT - 1) / MPI_NOACK_UNIT);
}

/* How many more arrivals (each counted as the ACK-free units it takes, at
 * least one) from w can come before we owe w a batch of credits or of
 * ACK-free units: what acct_defer counts down, so that it tells whether
 * settling an arrival will send something back with one subtraction (the
 * two thresholds, tested each time, cost its event 16 instructions). Set
 * wherever the counts it comes from change. */
static inline void grant_left_set(int w)
{
	int left = P.credit_half - P.consumed[w];
	if (P.nack_k && P.nack_half - P.nack_seen[w] < left)
		left = P.nack_half - P.nack_seen[w];
	P.grant_left[w] = left;
}

/* Gives peer w its ACK-free credits back if the reserves' room covers them
 * (nack_out <= nack_cap before and after). */
static void nack_grant(int w)
{
	int n = P.nack_seen[w];
	if (n < P.nack_half || P.nack_cap - P.nack_out < n)
		return;
	P.nack_out += n;
	P.nack_seen[w] = 0;
	grant_left_set(w);
	ctrl_put(w, MPI_CTRL_NOACK, 0, (uint64_t)n);
}

/* The accounting of the arrivals that completed receives straight away
 * (a posted receive's, or a reserve's taken by the waiting lazy receive):
 * their credits (credit_note) and their ACK-free units (nack_landed),
 * with the credits they may send back. Put off until a batch of credits
 * is due (grant, below), another arrival is accounted at once
 * (nack_arrived) or a buffer is unlinked or re-posted (acct_settle), so
 * that the caller returns - and a ping-pong replies - without it
 * (callgrind, with the kept ME's settling, mpi_keep_landed: a posted
 * receive's arrival 163 instructions -> 117, a reserve arrival taken by a
 * 2-rank allreduce's lazy receive 209 -> 152). Nothing reads what it
 * changes (the receiver's side of the credits: P.consumed, P.nack_out,
 * P.nack_cap, P.nack_seen, a reserve's used bytes) before it is settled:
 * those places settle first.
 *
 * Arrivals from the same sender into the same place (posted receives, or
 * one reserve) add up in one record (n, units), settled in one go: a
 * window of 32 streamed receives settles once or twice, not 32 times
 * (4 KiB MPI_Irecv window, callgrind, the receiver: ~85 instructions a
 * message -> ~15). Settling n at once is settling them one by one: the
 * record stops growing at the first arrival after which settling would
 * give something back (grant), so no threshold lies within it, and a
 * reserve's used bytes are the furthest end.
 *
 * Except the credits themselves: when settling sends some back (grant:
 * a batch of credits or ACK-free units is due), the next progress pass
 * and our next put settle first (put_now, send_start), so that they reach
 * the sender ahead of that message. A sender that used up its ACK-free
 * units in a burst (the streaming rows' window of 32 8 KiB Isends takes
 * all 256, as 4 KiB ones took all 128 when that was the bound) gets them
 * back before our reply releases its next burst, as when they went back
 * from the arrival's event; put off to our next wait they came after
 * the reply, and half of the next window went the ACKed way (b4096 -4%
 * to -6%). Once every 128 messages or 128 ACK-free units (a 2-rank
 * job): the ping-pong's reply carries that cost then, not the others. */
static struct {
	bool due;
	bool grant;             /* settling sends credits back: before our next put (only while due) */
	int w;                  /* the senders' world rank */
	int n;                  /* arrivals */
	int units;              /* their ACK-free units (0: none was ACK-free) */
	struct mpi_uxbuf *b;    /* the reserve they landed in, or NULL */
	size_t end;             /* the furthest end of theirs in b */
} acct;
static void acct_settle_now(void);

static int ux_post(struct mpi_uxbuf *b, bool first)
{
	if (acct.due)
		acct_settle_now();
	ptl_md_t md = { .start = b->mem, .length = mpi_g.ux_bufsize, .threshold = PTL_MD_THRESH_INF,
			.max_size = mpi_g.eager_limit ? mpi_g.eager_limit : 1,
			.options = PTL_MD_OP_PUT | PTL_MD_MAX_SIZE | PTL_MD_ACK_DISABLE * 0,
			.user_ptr = b, .eq_handle = mpi_g.eq };
	int rc;
	if (b->reserve) {
		md.length = MPI_NOACK_BUFSZ;
		md.max_size = P.rsv_max;
		/* What lands here is inline (at most rsv_max bytes), so its
		 * START and END come together: END alone says it is here, whole,
		 * one event instead of two. Its place in the unexpected list is
		 * still right: a larger message from the same sender, sent
		 * before, had its START (and its place) earlier. */
		md.options |= PTL_MD_EVENT_START_DISABLE;
		rc = PtlMEInsert(P.marker, any_id, MPI_NOACK_BIT, ~MPI_NOACK_BIT, PTL_UNLINK, PTL_INS_AFTER,
				 &b->me);
	} else if (first) {
		rc = PtlMEAttach(mpi_g.ni, MPI_PT_MSG, any_id, 0, ~(ptl_match_bits_t)0, PTL_UNLINK,
				 PTL_INS_AFTER, &b->me);
	} else {
		/* First in line: the buffer emptied last takes the next messages,
		 * so unexpected messages keep landing in (and being copied out of)
		 * memory still in cache, not in the next of mpi_g.ux_nbufs
		 * megabytes round-robin. Where a message lands does not change
		 * its order: that is the order of its events. */
		rc = PtlMEInsert(P.ux_marker, any_id, 0, ~(ptl_match_bits_t)0, PTL_UNLINK, PTL_INS_AFTER, &b->me);
	}
	if (rc != PTL_OK)
		return rc;
	ptl_handle_md_t mdh;
	rc = PtlMDAttach(b->me, md, PTL_UNLINK, &mdh);
	if (rc == PTL_OK) {
		b->linked = true;
		if (b->reserve) {
			b->used = 0;
			P.nack_cap += rsv_slots(b);
			/* Room again: peers that wait for credits get them. */
			if (!first)
				for (int w = 0; w < mpi_g.wsize; w++)
					nack_grant(w);
		}
	}
	return rc;
}

static void ux_release(struct mpi_uxbuf *b)
{
	if (--b->refs == 0 && !b->linked)
		ptl_check(ux_post(b, false), "re-posting an unexpected-message buffer");
}

/* ACK-free messages of k units in all from w have landed, the furthest
 * ending at byte end of reserve b or (b NULL) in posted receives. Inline:
 * only a batch of credits to give back calls out (nack_grant). */
static inline void nack_landed(struct mpi_uxbuf *b, size_t end, int k, int w)
{
	if (b) {
		long before = rsv_slots(b);
		if (end > b->used)
			b->used = end;
		P.nack_cap += rsv_slots(b) - before;
	}
	P.nack_out -= k;
	if (w >= 0) {
		if ((P.nack_seen[w] += k) >= P.nack_half)
			nack_grant(w);
		grant_left_set(w);
	}
}

static inline void credit_note(int w, int n);

static __attribute__((noinline)) void acct_settle_now(void)
{
	acct.due = false;
	acct.grant = false;
	credit_note(acct.w, acct.n);
	if (acct.units)
		nack_landed(acct.b, acct.end, acct.units, acct.w);
}

static inline void acct_settle(void)
{
	if (acct.due)
		acct_settle_now();
}

/* The same for ev, its PUT_END, at once: the one put off before first
 * (its grant must not see room it has taken). */
static inline void nack_arrived(const ptl_event_t *ev, struct mpi_uxbuf *b, int w)
{
	acct_settle();
	nack_landed(b, ev->offset + ev->mlength, nack_units(ev->rlength), w);
}


/* ev completed a receive from world rank w: its accounting, later (with
 * the others from w into the same place, until one makes a grant due),
 * and whether settling gives credits back (what credit_note and
 * nack_landed test; a grant short of room is only settled early for
 * nothing). */
static inline void acct_defer(const ptl_event_t *ev, struct mpi_uxbuf *b, int w)
{
	int k = nack_units(ev->rlength);
	size_t end = ev->offset + ev->mlength;
	/* (An arrival of no known sender, w < 0, never makes a grant due:
	 * one at a time, so that nothing counts up without end.) */
	if (!acct.due || acct.grant || acct.w != w || w < 0 || acct.b != b) {
		acct_settle();
		acct.due = true;
		acct.w = w;
		acct.b = b;
		acct.n = 0;
		acct.units = 0;
		acct.end = 0;
	}
	acct.n++;
	if (ev->match_bits & MPI_NOACK_BIT)
		acct.units += k;
	if (end > acct.end)
		acct.end = end;
	acct.grant = w >= 0 && (P.grant_left[w] -= k) <= 0;
}

/* Before a put: credits the last arrival gives back go first. */
static inline void acct_before_put(void)
{
	if (acct.grant)
		acct_settle_now();
}

/* rank_of, remembering the last answer: a reserve arrival's sender is
 * most often the one before's. */
static inline int rank_of_recent(ptl_process_id_t id)
{
	static uint64_t key;
	static int rank = -1;
	uint64_t k = idkey(id);
	if (k != key) {
		rank = rank_of(id);
		key = k;
	}
	return rank;
}

static const char *envs(const char *n) { return getenv(n); }

static size_t env_size(const char *n, size_t def)
{
	const char *v = envs(n);
	if (!v || !*v)
		return def;
	char *end;
	double d = strtod(v, &end);
	if (*end == 'k' || *end == 'K')
		d *= 1024, end++;
	else if (*end == 'm' || *end == 'M')
		d *= 1024 * 1024, end++;
	if (*end || d < 0) {
		fprintf(stderr, "ptl-mpi: ignoring %s=%s (want a byte count like 16384 or 64K)\n", n, v);
		return def;
	}
	return (size_t)d;
}

/* Memory that peers' messages land in (the unexpected-message buffers,
 * the ACK-free reserves) or that eager sends go out of, its first
 * MPI_PREFILL_MAX bytes in all backed now: from malloc (an mmap at these
 * sizes) each page was mapped by a fault the first time a message reached
 * it, inside whichever calls first carried enough to get that far. Where
 * a fault costs as much as on the KVM/PVM guests here that showed: 4
 * ranks on 2 cores, 256 KiB MPI_Allreduce after the 32 KiB row, streaks
 * of calls taking 750-1100 us instead of ~260, each with 32 minor faults
 * (two 64 KiB eager messages reaching untouched pages of a 1 MiB buffer)
 * until all 8 MiB had been touched. MAP_POPULATE maps a buffer within the
 * budget in one system call, and a store a page then backs it where the
 * guest's kernel leaves a page the host reported as zero unwritten
 * (pvm_no_zero_page: the host backs it at the first store, as libptl's
 * EQ rings found, lib/ptl/ptl_view.c). The defaults' 9.25 MiB a rank fit
 * (measured at 8.75 MiB: ~20 ms of MPI_Init a rank on those guests,
 * where the host backs each page at its store; ~1 ms where populating
 * backs them); past the budget (PTL_MPI_UNEXPECTED_MEM or
 * PTL_MPI_EAGER_LIMIT raised: up to 2 x 128 MiB) pages are mapped when
 * first used, as before, rather than every rank committing it all at
 * MPI_Init. */
#define MPI_PREFILL_MAX (16u << 20)
static size_t prefill_left = MPI_PREFILL_MAX;

/* len bytes, backed now as far as prefill_left goes. NULL when out of
 * address space; give it back with mem_unmap. */
static void *mem_mapped(size_t len)
{
	size_t pre = len < prefill_left ? len : prefill_left;
	int pop = 0;
#ifdef MAP_POPULATE
	if (pre == len)
		pop = MAP_POPULATE;
#endif
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | pop, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	prefill_left -= pre;
	for (size_t off = 0; off < pre; off += 4096) /* every page, whatever its size: none is smaller */
		((volatile char *)p)[off] = 0;
	return p;
}

static void mem_unmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

int mpi_pt2pt_init(void)
{
	int n = mpi_g.wsize;
	mpi_g.eager_limit = env_size("PTL_MPI_EAGER_LIMIT", MPI_EAGER_DEFAULT);
	if (mpi_g.eager_limit > (1u << 24))
		mpi_g.eager_limit = 1u << 24;
	size_t uxmem = env_size("PTL_MPI_UNEXPECTED_MEM", 8u << 20);
	P.copy_max = env_size("PTL_MPI_SEND_COPY_MEM", MPI_SEND_COPY_DEFAULT);
	P.copies = (struct mpi_pool)MPI_POOL_INIT(MPI_COPY_SMALL, MPI_COPY_SLAB);
	mpi_g.ux_bufsize = mpi_g.eager_limit * 8 > (1u << 20) ? mpi_g.eager_limit * 8 : (1u << 20);
	mpi_g.ux_nbufs = (int)(uxmem / mpi_g.ux_bufsize);
	if (mpi_g.ux_nbufs < 2)
		mpi_g.ux_nbufs = 2;
	int cr = 32768 / n;
	mpi_g.credits = cr < 16 ? 16 : cr > 256 ? 256 : cr;
	size_t c = env_size("PTL_MPI_CREDITS", (size_t)mpi_g.credits);
	if (c >= 2 && c < 65536)
		mpi_g.credits = (int)c;

	/* Match entries: PTL_MPI_MAX_MES for posted receives (past them a
	 * receive cannot be posted: MPI_ERR_NO_MEM), the library's own
	 * beyond them (MPI_MES_OWN) */
	size_t mes = env_size("PTL_MPI_MAX_MES", MPI_MES_DEFAULT);
	if (mes < MPI_MES_LEAST || mes > MPI_MES_MOST) {
		fprintf(stderr, "ptl-mpi: ignoring PTL_MPI_MAX_MES=%s (want %d - %d)\n", envs("PTL_MPI_MAX_MES"),
			MPI_MES_LEAST, MPI_MES_MOST);
		mes = MPI_MES_DEFAULT;
	}
	P.mes_bufs = mpi_g.ux_nbufs + MPI_NOACK_NBUFS;
	int own = MPI_MES_OWN + P.mes_bufs + MPI_PULL_LANDINGS, all = (int)mes + own;
	ptl_ni_limits_t want = { .max_mes = all, .max_mds = 2 * all, .max_eqs = 4, .max_pt_index = 15,
				 .max_me_list = all },
			got = { 0 };
	int rc = PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, &want, &got, &mpi_g.ni);
	if (rc != PTL_OK && rc != PTL_IFACE_DUP)
		ptl_check(rc, "PtlNIInit");
	/* An interface the program opened before MPI_Init (PTL_IFACE_DUP)
	 * keeps the limits it was opened with, and the entries the program
	 * holds in it: the receives get the entries left past those and the
	 * library's own (and half the MDs, as asked above: a rendezvous
	 * receive's get and the eager slots bind MDs of their own), and where
	 * fewer than PTL_MPI_MAX_MES's least are left the job stops here,
	 * saying so. Sized by the limits asked, receives had taken the
	 * entries the unexpected buffers go back into, and the job aborted at
	 * the first that found none. */
	int total = got.max_mes < got.max_me_list ? got.max_mes : got.max_me_list;
	ptl_sr_value_t held = 0;
	if (rc == PTL_IFACE_DUP)
		ptl_check(PtlNIStatus(mpi_g.ni, PTL_SR_MES_IN_USE, &held), "PtlNIStatus");
	int left = total - own - (int)held;
	if (rc == PTL_IFACE_DUP && got.max_mds / 2 - own < left)
		left = got.max_mds / 2 - own;
	if (left < MPI_MES_LEAST || got.max_pt_index < MPI_PT_CTRL)
		mpi_fatal(MPI_ERR_NO_MEM,
			  "the network interface, opened before MPI_Init, has max_mes %d, max_me_list %d, max_mds %d "
			  "and max_pt_index %d, %lld match entries in use; the MPI layer needs %d entries free (%d "
			  "receives and %d of its own), twice as many MDs, and portal index %d: open it with those or "
			  "more, or let MPI_Init open it",
			  got.max_mes, got.max_me_list, got.max_mds, got.max_pt_index, (long long)held,
			  own + MPI_MES_LEAST, MPI_MES_LEAST, own, MPI_PT_CTRL);
	/* (the MDs' cap held to the entries too: the library's own each
	 * bind one) */
	P.mes_all = left + own + (int)held;
	P.ni_dup = rc == PTL_IFACE_DUP;
	if ((size_t)left < mes) {
		fprintf(stderr,
			"ptl-mpi: rank %d: the network interface, opened before MPI_Init (max_mes %d, max_me_list %d, "
			"max_mds %d, %lld match entries in use), holds %d posted receives at once (PTL_MPI_MAX_MES %zu)\n",
			mpi_g.wrank, got.max_mes, got.max_me_list, got.max_mds, (long long)held, left, mes);
		mes = (size_t)left;
	}
	/* Events: three per peer and credit (a message's arrival, a send's
	 * ACK, its pull's), and 65,536 more, which hold a collective's bulk
	 * sends' SEND_ENDs (bulk_md) and the library's own while the program
	 * does not poll for a while. */
	size_t eqn = (size_t)3 * (size_t)mpi_g.credits * (size_t)n + 65536;
	ptl_check(PtlEQAlloc(mpi_g.ni, eqn, PTL_EQ_HANDLER_NONE, &mpi_g.eq), "PtlEQAlloc");

	P.credit = malloc(sizeof(int) * (size_t)n);
	P.consumed = calloc((size_t)n, sizeof(int));
	P.sendq = malloc(sizeof(struct mpi_list) * (size_t)n);
	mpi_g.ids = malloc(sizeof(ptl_process_id_t) * (size_t)n);
	P.idmask = 1;
	while (P.idmask < (size_t)n * 2)
		P.idmask <<= 1;
	P.idkeys = calloc(P.idmask, sizeof *P.idkeys);
	P.idranks = calloc(P.idmask, sizeof *P.idranks);
	P.idmask--;
	/* Every peer (ourselves too) starts with nack_k ACK-free credits, all
	 * of them covered by the reserves; too many peers to give each a few
	 * and the path stays off. One reserve's worth is kept out of the
	 * promise: the reserve being filled gives its slots back only when it
	 * is full and re-posted, so up to a reserve of room is missing at any
	 * time, and a promise of all of it would leave a grant waiting for
	 * room that never comes (the senders then stay on the ACKed path). */
	/* The reserves take what any rank may send; a rank whose transports
	 * carry less inline (another host's shm rings may be smaller) sends
	 * less ACK-free. */
	P.rsv_max = mpi_g.eager_limit > MPI_NOACK_MIN ? mpi_g.eager_limit : MPI_NOACK_MIN;
	if (P.rsv_max > MPI_NOACK_MAX)
		P.rsv_max = MPI_NOACK_MAX;
	P.noack_max = P.rsv_max < PtlRtMaxInline() ? P.rsv_max : PtlRtMaxInline();
	P.nack_k = (MPI_NOACK_NBUFS - 1) * (int)rsv_room(MPI_NOACK_BUFSZ) / n;
	if (P.nack_k > MPI_NOACK_CREDITS)
		P.nack_k = MPI_NOACK_CREDITS;
	if (P.nack_k < 4 || envs("PTL_MPI_NOACK_OFF"))
		P.nack_k = 0;
	P.nack = calloc((size_t)n, sizeof(int));
	P.nack_seen = calloc((size_t)n, sizeof(int));
	P.grant_left = calloc((size_t)n, sizeof(int));
	P.blocked = malloc(sizeof(int) * (size_t)n);
	P.is_blocked = calloc((size_t)n, sizeof(bool));
	P.ndeferred = calloc((size_t)n, sizeof(int));
	P.refused_pass = calloc((size_t)n, sizeof(unsigned));
	P.nblocked = 0;
	P.dq_len = 0;
	P.refused = false;
	if (!P.credit || !P.consumed || !P.sendq || !mpi_g.ids || !P.idkeys || !P.idranks || !P.nack ||
	    !P.nack_seen || !P.grant_left || !P.blocked || !P.is_blocked || !P.ndeferred ||
	    !P.refused_pass)
		mpi_fatal(MPI_ERR_NO_MEM, "out of memory for %d peers", n);
	P.nack_out = (long)P.nack_k * n;
	P.nack_half = P.nack_k / 2;
	P.credit_half = mpi_g.credits / 2;
	for (int r = 0; r < n; r++)
		grant_left_set(r);
	for (int r = 0; r < n; r++) {
		P.nack[r] = P.nack_k;
		P.credit[r] = mpi_g.credits;
		mpi_list_init(&P.sendq[r]);
		ptl_check(PtlRtId(r, &mpi_g.ids[r]), "PtlRtId");
		uint64_t k = idkey(mpi_g.ids[r]);
		size_t i = (size_t)(k * 0x9e3779b97f4a7c15ull) & P.idmask;
		while (P.idkeys[i])
			i = (i + 1) & P.idmask;
		P.idkeys[i] = k;
		P.idranks[i] = r;
	}
	if (!mpi_ux_index_init())
		mpi_fatal(MPI_ERR_NO_MEM, "out of memory for the unexpected-message index");
	mpi_list_init(&P.arriving);
	mpi_list_init(&P.pullq);
	P.landings = 0;
	P.nland = calloc((size_t)n, sizeof *P.nland);
	if (!P.nland)
		mpi_fatal(MPI_ERR_NO_MEM, "out of memory for %d peers", n);

	/* The eager send slots' share of the prefill is kept for them: every
	 * small send goes out of them, and mapped last (mapped first, the
	 * 8-byte half round trip read 0.39 us against 0.37: where they land
	 * matters) they were left unbacked whenever the buffers before them
	 * outgrew the budget (PTL_MPI_UNEXPECTED_MEM=64M: ~64 more faults in a
	 * rank's first small MPI_Isends). */
	prefill_left -= (size_t)MPI_ESLOTS * MPI_ESLOT_BYTES;
	/* The marker: matches anything, accepts nothing. */
	ptl_handle_md_t mdh;
	ptl_check(PtlMEAttach(mpi_g.ni, MPI_PT_MSG, any_id, 0, ~(ptl_match_bits_t)0, PTL_RETAIN, PTL_INS_AFTER,
			      &P.marker), "PtlMEAttach(marker)");
	ptl_md_t mk = { .start = P.zero, .length = 0, .threshold = 0, .options = PTL_MD_OP_PUT,
			.eq_handle = PTL_EQ_NONE };
	ptl_check(PtlMDAttach(P.marker, mk, PTL_RETAIN, &mdh), "PtlMDAttach(marker)");
	mpi_keep_init(P.marker, (int)mes);
	if (P.nack_k) {
		P.rsv = calloc(MPI_NOACK_NBUFS, sizeof *P.rsv);
		if (!P.rsv)
			mpi_fatal(MPI_ERR_NO_MEM, "out of memory for ACK-free reserve buffers");
		for (int i = 0; i < MPI_NOACK_NBUFS; i++) {
			P.rsv[i].obj = MPI_OBJ_UXBUF;
			P.rsv[i].reserve = true;
			P.rsv[i].mem = mem_mapped(MPI_NOACK_BUFSZ);
			if (!P.rsv[i].mem)
				mpi_fatal(MPI_ERR_NO_MEM, "out of memory for ACK-free reserve buffers");
			ptl_check(ux_post(&P.rsv[i], true), "posting an ACK-free reserve buffer");
		}
	}
	ptl_check(PtlMEAttach(mpi_g.ni, MPI_PT_MSG, any_id, 0, ~(ptl_match_bits_t)0, PTL_RETAIN, PTL_INS_AFTER,
			      &P.ux_marker), "PtlMEAttach(unexpected marker)");
	ptl_check(PtlMDAttach(P.ux_marker, mk, PTL_RETAIN, &mdh), "PtlMDAttach(unexpected marker)");
	P.ux = calloc((size_t)mpi_g.ux_nbufs, sizeof *P.ux);
	if (!P.ux)
		mpi_fatal(MPI_ERR_NO_MEM, "out of memory for unexpected-message buffers");
	for (int i = 0; i < mpi_g.ux_nbufs; i++) {
		P.ux[i].obj = MPI_OBJ_UXBUF;
		P.ux[i].mem = mem_mapped(mpi_g.ux_bufsize);
		if (!P.ux[i].mem)
			mpi_fatal(MPI_ERR_NO_MEM, "out of memory for unexpected-message buffers");
		ptl_check(ux_post(&P.ux[i], true), "posting an unexpected-message buffer");
	}
	P.overflow.obj = MPI_OBJ_OVERFLOW;
	ptl_check(PtlMEAttach(mpi_g.ni, MPI_PT_MSG, any_id, 0, ~(ptl_match_bits_t)0, PTL_RETAIN, PTL_INS_AFTER,
			      &P.overflow_me), "PtlMEAttach(overflow)");
	/* No ACK from here: an eager sender that gets none waits for the pull. */
	ptl_md_t ov = { .start = P.zero, .length = 0, .threshold = PTL_MD_THRESH_INF,
			.options = PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_ACK_DISABLE,
			.user_ptr = &P.overflow,
			.eq_handle = mpi_g.eq };
	ptl_check(PtlMDAttach(P.overflow_me, ov, PTL_RETAIN, &mdh), "PtlMDAttach(overflow)");

	P.ctrl.obj = MPI_OBJ_CTRL;
	ptl_handle_me_t cme;
	ptl_check(PtlMEAttach(mpi_g.ni, MPI_PT_CTRL, any_id, 0, ~(ptl_match_bits_t)0, PTL_RETAIN, PTL_INS_AFTER,
			      &cme), "PtlMEAttach(control)");
	ptl_md_t cm = { .start = P.zero, .length = 0, .threshold = PTL_MD_THRESH_INF,
			.options = PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_EVENT_START_DISABLE,
			.user_ptr = &P.ctrl, .eq_handle = mpi_g.eq };
	ptl_check(PtlMDAttach(cme, cm, PTL_RETAIN, &mdh), "PtlMDAttach(control)");
	ptl_md_t z = { .start = P.zero, .length = 0, .threshold = PTL_MD_THRESH_INF, .options = 0,
		       .eq_handle = PTL_EQ_NONE };
	ptl_check(PtlMDBind(mpi_g.ni, z, PTL_RETAIN, &P.zero_md), "PtlMDBind");

	P.eslots = calloc(MPI_ESLOTS, sizeof *P.eslots);
	prefill_left += (size_t)MPI_ESLOTS * MPI_ESLOT_BYTES;
	P.eslot_mem = mem_mapped((size_t)MPI_ESLOTS * MPI_ESLOT_BYTES);
	if (!P.eslots || !P.eslot_mem)
		mpi_fatal(MPI_ERR_NO_MEM, "out of memory for eager send slots");
	for (int i = MPI_ESLOTS - 1; i >= 0; i--) {
		struct mpi_eslot *e = &P.eslots[i];
		e->obj = MPI_OBJ_ESLOT;
		e->mem = P.eslot_mem + (size_t)i * MPI_ESLOT_BYTES;
		ptl_md_t md = { .start = e->mem, .length = MPI_ESLOT_BYTES, .threshold = PTL_MD_THRESH_INF,
				.options = PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_END_DISABLE,
				.user_ptr = e, .eq_handle = mpi_g.eq };
		ptl_check(PtlMDBind(mpi_g.ni, md, PTL_RETAIN, &e->md), "PtlMDBind(eager slot)");
		e->next = P.eslot_free;
		P.eslot_free = e;
	}
	P.direct.obj = MPI_OBJ_DIRECT;
	ptl_md_t dm = { .start = MPI_DIRECT_BASE, .length = (ptl_size_t)(UINTPTR_MAX >> 1),
			.threshold = PTL_MD_THRESH_INF,
			.options = PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_END_DISABLE,
			.user_ptr = &P.direct, .eq_handle = mpi_g.eq };
	ptl_check(PtlMDBind(mpi_g.ni, dm, PTL_RETAIN, &P.direct_md), "PtlMDBind(address space)");
	/* A collective's direct send too long to go inline is a bulk move,
	 * which reads the buffer until the put is answered: its SEND_END says
	 * when (r->reading; the send of a collective that failed waits for
	 * it, mpi_send_abandon). An overflowed put is answered with no ACK,
	 * so the ACK cannot say it. */
	dm.options = PTL_MD_EVENT_START_DISABLE;
	ptl_check(PtlMDBind(mpi_g.ni, dm, PTL_RETAIN, &P.bulk_md), "PtlMDBind(address space, bulk)");
	P.inline_max = PtlRtMaxInline();
	return MPI_SUCCESS;
}

void mpi_pt2pt_fini(void)
{
	PtlNIFini(mpi_g.ni);
	mpi_keep_fini();
	mpi_mprobe_fini();
	for (int i = 0; i < mpi_g.ux_nbufs; i++)
		mem_unmap(P.ux[i].mem, mpi_g.ux_bufsize);
	free(P.ux);
	for (int i = 0; P.rsv && i < MPI_NOACK_NBUFS; i++)
		mem_unmap(P.rsv[i].mem, MPI_NOACK_BUFSZ);
	free(P.rsv);
	P.rsv = NULL;
	free(P.nack);
	free(P.nack_seen);
	free(P.grant_left);
	free(P.blocked);
	free(P.is_blocked);
	free(P.ndeferred);
	free(P.refused_pass);
	free(P.dq); /* the rest is reset by init; defer() grows dq from these */
	P.dq = NULL;
	P.dq_cap = 0;
	mpi_pool_fini(&P.copies);
	free(P.credit);
	free(P.consumed);
	free(P.nland);
	free(P.sendq);
	free(P.idkeys);
	free(P.idranks);
	free(mpi_g.ids);
	mpi_ux_index_fini();
	free(P.eslots);
	mem_unmap(P.eslot_mem, (size_t)MPI_ESLOTS * MPI_ESLOT_BYTES);
	prefill_left = MPI_PREFILL_MAX;
	P.eslots = P.eslot_free = NULL;
	P.eslot_mem = NULL;
}

/* ---------------------------------------------------------------- sending */

/* PTL_FAIL: wdest is dead or its transport refused (libptl knows it
 * failed). Credits and grants for it no longer matter, and a pull's
 * receive fails through the dead-peer checks of its wait: not a fatal
 * error. (An arrival's credits go back after its receive has completed,
 * acct_settle: by then its sender may have died.) */
static int ctrl_put_now(int wdest, int kind, ptl_match_bits_t bits, uint64_t arg)
{
	int rc = PtlPut(P.zero_md, PTL_NO_ACK_REQ, mpi_g.ids[wdest], MPI_PT_CTRL, 0, bits, 0,
			((uint64_t)kind << 60) | (arg & ((1ull << 60) - 1)));
	if (rc != PTL_FAIL && rc != PTL_NO_SPACE)
		ptl_check(rc, "PtlPut(control)");
	return rc;
}

static void defer(struct mpi_defer d);
static void ctrl_put(int wdest, int kind, ptl_match_bits_t bits, uint64_t arg)
{
	/* behind calls to wdest refused before it: a pull's request after its credits */
	if (P.ndeferred[wdest] || ctrl_put_now(wdest, kind, bits, arg) == PTL_NO_SPACE)
		defer((struct mpi_defer){ .kind = MPI_DEFER_CTRL, .w = wdest, .ctrl = kind, .bits = bits, .arg = arg });
}

/* A rendezvous send whose header never went out: its exposed buffer goes
 * (send_finish unlinks only an eager send's MD); no get can be under way. */
static void rndv_unexpose(struct mpi_req *r)
{
	if (r->proto == MPI_PROTO_RNDV && r->me != PTL_INVALID_HANDLE && PtlMEUnlink(r->me) == PTL_OK) {
		r->me = PTL_INVALID_HANDLE;
		r->md = PTL_INVALID_HANDLE;
	}
}

static void send_finish(struct mpi_req *r);
static void send_fail(struct mpi_req *r, int cls)
{
	if (!r->done) {
		r->err = cls;
		r->st.MPI_ERROR = cls;
		if (cls == MPI_ERR_PROC_FAILED)
			r->dead = r->wpeer;
	}
	mpi_g.pending_ops--;
	send_finish(r);
}

/* Takes busy send r back where its peer would have to act to end it: a
 * send queued for credits, a buffer exposed for a get not yet made, an
 * eager put with no ACK come (taken as overflowed, waiting for a pull:
 * the caller knows its answer came, or does not mind a put that landed
 * reported failed). True: taken back, the caller fails it (send_fail).
 * False: a transfer of it is under way (a get, a pulled put), which
 * the peer's libptl ends (abandon_wait says when it does not), finishing
 * r; or r finished meanwhile. */
static bool send_withdraw(struct mpi_req *r)
{
	switch (r->stage) {
	case MPI_SS_QUEUED:
		mpi_list_del(&r->link);
		rndv_unexpose(r);
		return true;
	case MPI_SS_RNDV:
		if (PtlMEUnlink(r->me) != PTL_OK)
			return false; /* the get is under way */
		r->me = PTL_INVALID_HANDLE;
		r->md = PTL_INVALID_HANDLE; /* went with its ME */
		return true;
	case MPI_SS_EAGER: {
		/* Its answer, if come, is in the queue: an ACK finishes it. */
		uint32_t id = mpi_req_id(r);
		mpi_progress(0);
		return mpi_req_by_id(id) == r && r->busy && r->stage == MPI_SS_EAGER;
	}
	default:
		return false;
	}
}

/* Whether md is one of the two address-space MDs (direct_md, bulk_md),
 * bound for good, which hold a send's data by its address. */
static inline bool addr_md(ptl_handle_md_t md)
{
	return md == P.direct_md || md == P.bulk_md;
}

/* Where r's data starts in r->md: a slot's MD holds it alone; an
 * address-space MD (a direct send's, a copy's) by its address. */
static ptl_size_t send_off(const struct mpi_req *r)
{
	return addr_md(r->md) ? (ptl_size_t)((uintptr_t)r->pbuf - (uintptr_t)MPI_DIRECT_BASE) : 0;
}

/* libptl refused r's put for now (PTL_NO_SPACE: the requests it keeps
 * waiting for ring space are at their bound, its peers not reading; or its
 * table of operations in flight is full): nothing went out. r goes back to
 * the head of its peer's queue with its credit, ahead of every later send
 * there (non-overtaking: put_now's now_ok sees the queue), and progress
 * starts it again (retry_refused). */
static bool send_refused(struct mpi_req *r)
{
	int w = r->wpeer;
	r->stage = MPI_SS_QUEUED;
	P.credit[w]++;
	mpi_list_add_tail(&r->link, P.sendq[w].next);
	if (!P.is_blocked[w]) {
		P.is_blocked[w] = true;
		P.blocked[P.nblocked++] = w;
	}
	P.refused = true;
	return false;
}

/* Puts the header (and, eager, the data) of r; r holds a credit. False:
 * refused for now, r queued again (send_refused). */
static bool send_start(struct mpi_req *r)
{
	acct_before_put();
	ptl_match_bits_t bits = mpi_bits(r->ctx, r->myrank, r->tag);
	ptl_process_id_t to = mpi_g.ids[r->wpeer];
	int rc;
	bool noack = r->len <= P.noack_max && P.nack[r->wpeer] >= nack_units(r->len);
	if (r->proto == MPI_PROTO_EAGER && (r->len == 0 || noack)) {
		/* Finished once it is out: with an ACK-free credit it lands in a
		 * reserve or a posted receive (one event at the receiver, not
		 * START and END), never in the overflow entry, so nothing will
		 * pull it; a 0-byte message without a credit has nothing to keep
		 * or pull either (and no ACK would come from the overflow entry). */
		if (noack) {
			P.nack[r->wpeer] -= nack_units(r->len);
			bits |= MPI_NOACK_BIT;
		}
		ptl_hdr_data_t hdr = MPI_HDR(MPI_PROTO_EAGER, r->len, mpi_req_id(r));
		rc = r->len ? PtlPutRegion(r->md, send_off(r), r->len, PTL_NO_ACK_REQ, to, MPI_PT_MSG, 0, bits, 0, hdr)
			    : PtlPut(P.zero_md, PTL_NO_ACK_REQ, to, MPI_PT_MSG, 0, bits, 0, hdr);
		if (rc == PTL_NO_SPACE) {
			if (noack)
				P.nack[r->wpeer] += nack_units(r->len);
			return send_refused(r);
		}
		if (rc != PTL_OK) {
			send_fail(r, MPI_ERR_PROC_FAILED);
			return true;
		}
		mpi_g.pending_ops--;
		send_finish(r);
		return true;
	}
	if (r->proto == MPI_PROTO_EAGER) {
		r->stage = MPI_SS_EAGER;
		rc = PtlPutRegion(r->md, send_off(r), r->len, PTL_ACK_REQ, to, MPI_PT_MSG, 0, bits, 0,
				  MPI_HDR(MPI_PROTO_EAGER, r->len, mpi_req_id(r)));
		r->reading = rc == PTL_OK && r->md == P.bulk_md;
	} else {
		r->stage = MPI_SS_RNDV;
		rc = PtlPut(P.zero_md, PTL_NO_ACK_REQ, to, MPI_PT_MSG, 0, bits, 0,
			    MPI_HDR(MPI_PROTO_RNDV, r->len, mpi_req_id(r)));
	}
	if (rc == PTL_NO_SPACE)
		return send_refused(r);
	if (rc != PTL_OK) {
		rndv_unexpose(r);
		send_fail(r, MPI_ERR_PROC_FAILED);
	}
	return true;
}

bool mpi_send_small_ctx(const void *buf, int count, MPI_Datatype dt, int dest, int tag, struct mpi_comm *c, int ctx)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	return dest != MPI_PROC_NULL && t->contig &&
	       mpi_send_bytes((const char *)buf + t->true_lb, t->size * (size_t)count, dest, tag, c, ctx);
}

/* Whether len bytes to world rank w may go out at once ACK-free
 * (put_now): inline, with the credits they need at hand and nothing
 * queued before them, to a rank not known dead. */
static inline bool now_ok(size_t len, int w)
{
	return len <= P.noack_max && P.nack[w] >= nack_units(len) && P.credit[w] > 0 &&
	       mpi_list_empty(&P.sendq[w]) && !(mpi_g.ndead && mpi_rank_dead(w, false));
}

/* What send_start does for an ACK-free message (now_ok), without the
 * request and its bounce slot: the put is inline (noack_max), so its bytes
 * are in the NAL's hands when it returns and it goes straight from the
 * user's buffer through the address-space MD, which logs no event (an
 * empty one from the 0-byte MD: p may be anything). The id in hdr_data
 * names no request: a receiver asks a sender about a message only to pull
 * or get it, and an ACK-free one lands whole (never in the overflow
 * entry). False: nothing went out. */
static inline bool put_now(const void *p, size_t len, int w, int tag, const struct mpi_comm *c, int ctx)
{
	acct_before_put();
	int k = nack_units(len);
	P.credit[w]--;
	P.nack[w] -= k;
	ptl_match_bits_t bits = mpi_bits(ctx, c->rank, tag) | MPI_NOACK_BIT;
	ptl_hdr_data_t hdr = MPI_HDR(MPI_PROTO_EAGER, len, 0);
	int rc = len ? PtlPutRegion(P.direct_md, (ptl_size_t)((uintptr_t)p - (uintptr_t)MPI_DIRECT_BASE), len,
				    PTL_NO_ACK_REQ, mpi_g.ids[w], MPI_PT_MSG, 0, bits, 0, hdr)
		     : PtlPut(P.zero_md, PTL_NO_ACK_REQ, mpi_g.ids[w], MPI_PT_MSG, 0, bits, 0, hdr);
	if (rc != PTL_OK) {
		/* Nothing went out: the general path tries again and reports. */
		P.credit[w]++;
		P.nack[w] += k;
		return false;
	}
	return true;
}

bool mpi_send_bytes(const void *p, size_t len, int dest, int tag, struct mpi_comm *c, int ctx)
{
	int w = c->world[dest];
	return now_ok(len, w) && put_now(p, len, w, tag, c, ctx);
}

int mpi_send_std(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	struct mpi_comm *c;
	struct mpi_dtype *t;
	if (mpi_args_ok(buf, count, dt, dest, tag, comm, false, &c, &t) && t->contig) {
		size_t len = t->size * (size_t)count;
		int w = c->world[dest];
		if (now_ok(len, w) && put_now((const char *)buf + t->true_lb, len, w, tag, c, c->ctx))
			return MPI_SUCCESS;
	}
	return mpi_send_slow(buf, count, dt, dest, tag, comm);
}

static void sendq_flush(int w)
{
	while (P.credit[w] > 0 && !mpi_list_empty(&P.sendq[w])) {
		struct mpi_req *r = mpi_container(P.sendq[w].next, struct mpi_req, link);
		mpi_list_del(&r->link);
		P.credit[w]--;
		if (!send_start(r))
			break;
	}
}

/* Room for a send's copy of len bytes (copy_put gives it back). */
static void *copy_get(size_t len)
{
	if (len > MPI_COPY_SMALL)
		return malloc(len);
	return mpi_pool_get(&P.copies);
}

static void copy_put(void *p, size_t len)
{
	if (len > MPI_COPY_SMALL)
		free(p);
	else
		mpi_pool_put(&P.copies, p);
}

/* A send's copy of its data, if it has one, given back with what it was
 * counted against (the Bsend buffer, or the copies' budget). */
static void send_copy_free(struct mpi_req *r)
{
	if (!r->ptmp)
		return;
	if (r->bsend)
		mpi_g.bsend_used -= r->len + MPI_BSEND_OVERHEAD;
	else if (r->counted)
		P.copy_bytes -= r->len + MPI_SEND_COPY_OVERHEAD;
	r->counted = false;
	copy_put(r->pbuf, r->len);
	r->pbuf = NULL;
	r->ptmp = false;
}

/* The send is over for the library: free what it held. */
static void send_finish(struct mpi_req *r)
{
	if (r->direct) {
		r->direct = false;
		r->pbuf = NULL;
	} else if (r->slot) {
		r->slot->r = NULL;
		r->slot->next = P.eslot_free;
		P.eslot_free = r->slot;
		r->slot = NULL;
		r->pbuf = NULL;
	} else if (r->md != PTL_INVALID_HANDLE && !addr_md(r->md) && r->proto == MPI_PROTO_EAGER) {
		PtlMDUnlink(r->md);
	}
	r->md = PTL_INVALID_HANDLE;
	r->stage = MPI_SS_DONE;
	send_copy_free(r);
	r->busy = false;
	if (!r->done)
		mpi_req_complete(r);
	else if (!r->held)
		mpi_req_release(r);
}

/* A send or receive request as the user started it: whom it is with (a
 * rank of c, or MPI_PROC_NULL / MPI_ANY_SOURCE), the tag, the context. */
static struct mpi_req *user_req_new(int kind, int peer, int tag, struct mpi_comm *c, int ctx)
{
	struct mpi_req *r = mpi_req_new(kind);
	if (!r)
		return NULL;
	r->myrank = c->rank;
	r->comm = c;
	r->ctx = ctx;
	r->peer = peer;
	r->wpeer = peer >= 0 ? c->world[peer] : -1;
	r->tag = tag;
	return r;
}

/* Whether one more entry leaves the rooms of others free (others: the
 * entries not in use that others may yet take), the buffers' and the
 * landings' counted whole (a landing whose data came is out of libptl's
 * count before its event is taken). */
static bool entry_leaves(int others)
{
	ptl_sr_value_t used;
	if (PtlNIStatus(mpi_g.ni, PTL_SR_MES_IN_USE, &used) != PTL_OK)
		return true;
	return used + others + P.mes_bufs + MPI_PULL_LANDINGS < P.mes_all;
}

bool mpi_entry_ok(void)
{
	return entry_leaves(mpi_keep_room());
}

bool mpi_recv_entry_ok(void)
{
	return !P.ni_dup || entry_leaves(0);
}

/* A use-once entry for r's buffer on pt, matching only peer w and r's id:
 * a rendezvous send's exposed buffer (op GET) or a pull's landing (PUT).
 * When its MD cannot be attached the entry goes too: nothing else would
 * unlink it (the request fails and is dropped), and each one left took a
 * match entry of the NI's for good - a program whose sends kept being
 * refused ran out of them, and later sends failed with MPI_ERR_NO_MEM. */
static int attach_once(struct mpi_req *r, ptl_pt_index_t pt, int w, size_t len, unsigned op)
{
	if (pt != MPI_PT_PULL && !mpi_entry_ok()) /* (a pull's has its room: MPI_PULL_LANDINGS) */
		return PTL_NO_SPACE;
	int rc = PtlMEAttach(mpi_g.ni, pt, mpi_g.ids[w], mpi_req_id(r), 0, PTL_UNLINK, PTL_INS_AFTER, &r->me);
	if (rc != PTL_OK)
		return rc;
	ptl_md_t md = { .start = r->pbuf, .length = len, .threshold = 1,
			.options = op | PTL_MD_TRUNCATE | PTL_MD_EVENT_START_DISABLE,
			.user_ptr = r, .eq_handle = mpi_g.eq };
	rc = PtlMDAttach(r->me, md, PTL_UNLINK, &r->md);
	if (rc != PTL_OK) {
		PtlMEUnlink(r->me);
		r->me = PTL_INVALID_HANDLE;
	}
	return rc;
}

/* mpi_isend_now's body, inline in PMPI_Isend too. */
__attribute__((always_inline)) static inline bool isend_now(const void *buf, int count, const struct mpi_dtype *t,
							    int dest, int tag, struct mpi_comm *c, int ctx,
							    struct mpi_req **out)
{
	size_t len = t->size * (size_t)count;
	if (!t->contig || !now_ok(len, c->world[dest]))
		return false;
	/* The request before the put: once the message is out there is no
	 * failing. */
	struct mpi_req *r = user_req_new(MPI_REQ_SEND, dest, tag, c, ctx);
	if (!r)
		return false;
	if (!put_now((const char *)buf + t->true_lb, len, r->wpeer, tag, c, ctx)) {
		mpi_req_release(r);
		return false;
	}
	r->st.MPI_SOURCE = dest;
	r->st.MPI_TAG = tag;
	mpi_req_complete(r);
	*out = r;
	return true;
}

bool mpi_isend_now(const void *buf, int count, const struct mpi_dtype *t, int dest, int tag, struct mpi_comm *c,
		   int ctx, struct mpi_req **out)
{
	return isend_now(buf, count, t, dest, tag, c, ctx, out);
}

/* MPI_Isend as most go (mpi_isend_now's case): out in this one frame, as
 * PMPI_Irecv posts. From mpi_p2p_api.c it passed eight arguments on to
 * mpi_isend_now, whose frame and the call were ~25 instructions of a
 * streamed send. Anything else goes the long way (mpi_isend_slow), which
 * checks again, starts it and reports. */
int PMPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	struct mpi_comm *c;
	struct mpi_dtype *t;
	struct mpi_req *r;
	if (mpi_args_ok(buf, count, dt, dest, tag, comm, false, &c, &t) && isend_now(buf, count, t, dest, tag, c, c->ctx, &r)) {
		*request = mpi_req_handle(r);
		return MPI_SUCCESS;
	}
	return mpi_isend_slow(buf, count, dt, dest, tag, comm, request);
}

int mpi_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, struct mpi_comm *c, int ctx,
	      int mode, struct mpi_req **out)
{
	return mpi_isend_t(buf, count, dt, mpi_dtype_get(dt), dest, tag, c, ctx, mode, out);
}

int mpi_isend_t(const void *buf, int count, MPI_Datatype dt, struct mpi_dtype *t, int dest, int tag,
		struct mpi_comm *c, int ctx, int mode, struct mpi_req **out)
{
	bool nb = mode & MPI_MODE_NB, blocking = mode & MPI_MODE_BLOCKING, pull = mode & MPI_MODE_PULL;
	mode &= ~(MPI_MODE_NB | MPI_MODE_BLOCKING | MPI_MODE_PULL);
	if (nb && (mode == MPI_MODE_STD || mode == MPI_MODE_READY) && dest != MPI_PROC_NULL &&
	    mpi_isend_now(buf, count, t, dest, tag, c, ctx, out))
		return MPI_SUCCESS;
	struct mpi_req *r = user_req_new(MPI_REQ_SEND, dest, tag, c, ctx);
	if (!r)
		return MPI_ERR_NO_MEM;
	*out = r;
	r->st.MPI_SOURCE = dest;
	r->st.MPI_TAG = tag;
	if (dest == MPI_PROC_NULL) {
		r->st.MPI_SOURCE = MPI_PROC_NULL;
		r->st.MPI_TAG = MPI_ANY_TAG;
		mpi_req_complete(r);
		return MPI_SUCCESS;
	}
	if (mpi_g.ndead && mpi_rank_dead(r->wpeer, false)) {
		/* Known dead: nothing to send, the request fails at once. */
		r->dead = r->wpeer;
		r->err = r->st.MPI_ERROR = MPI_ERR_PROC_FAILED;
		mpi_req_complete(r);
		return MPI_SUCCESS;
	}
	size_t len = t->size * (size_t)count;
	if (len > MPI_MAX_MSG) {
		mpi_req_release(r);
		*out = NULL;
		return MPI_ERR_COUNT;
	}
	r->len = len;
	r->sync = mode == MPI_MODE_SYNC;
	r->bsend = mode == MPI_MODE_BUFFERED;
	size_t eager_max = mpi_g.eager_limit * (!blocking || !t->contig ? 1 : pull ? MPI_PULL_EAGER : MPI_BLOCKING_EAGER);
	r->proto = (len <= eager_max && !r->sync) ? MPI_PROTO_EAGER : MPI_PROTO_RNDV;
	bool copy = r->proto == MPI_PROTO_EAGER || r->bsend || !t->contig;
	if (r->bsend && len + MPI_BSEND_OVERHEAD > mpi_g.bsend_size - mpi_g.bsend_used) {
		mpi_req_release(r);
		*out = NULL;
		return MPI_ERR_BUFFER;
	}
	/* One that goes out now without an ACK (send_start) goes from the
	 * user's buffer too, whatever its size: its bytes are in the ring when
	 * PtlPut returns, so a copy to a slot would only add a copy. */
	bool noack_now = now_ok(len, r->wpeer);
	bool direct = r->proto == MPI_PROTO_EAGER && !r->bsend && t->contig &&
		      ((len > MPI_DIRECT_MIN && (nb || len > MPI_ESLOT_BYTES)) || noack_now ||
		       (!P.eslot_free && P.copy_bytes + len + MPI_SEND_COPY_OVERHEAD > P.copy_max));
	if (direct) {
		r->direct = true;
		r->pbuf = (char *)(uintptr_t)buf + t->true_lb;
		/* a collective's (its context c->ctx + 1), which may be
		 * abandoned (mpi_send_abandon), says when its bulk move is
		 * over: a user's has no use for the event */
		r->md = len > P.inline_max && ctx != c->ctx ? P.bulk_md : P.direct_md;
	} else if (r->proto == MPI_PROTO_EAGER && !r->bsend && len <= MPI_ESLOT_BYTES && P.eslot_free) {
		struct mpi_eslot *e = P.eslot_free;
		P.eslot_free = e->next;
		e->r = r;
		r->slot = e;
		r->pbuf = e->mem;
		r->md = e->md;
		if (t->contig)
			nal_copy(r->pbuf, (const char *)buf + t->true_lb, len);
		else
			mpi_pack(t, buf, count, r->pbuf);
	} else if (copy) {
		r->pbuf = copy_get(len);
		if (!r->pbuf) {
			mpi_req_release(r);
			*out = NULL;
			return MPI_ERR_NO_MEM;
		}
		r->ptmp = true;
		if (r->bsend) {
			mpi_g.bsend_used += len + MPI_BSEND_OVERHEAD;
		} else if (r->proto == MPI_PROTO_EAGER) {
			P.copy_bytes += len + MPI_SEND_COPY_OVERHEAD;
			r->counted = true;
		}
		if (t->contig)
			nal_copy(r->pbuf, (const char *)buf + t->true_lb, len);
		else
			mpi_pack(t, buf, count, r->pbuf);
	} else {
		r->pbuf = (char *)buf + t->true_lb;
	}
	int rc = PTL_OK;
	if (r->slot || direct) {
		/* the slot's MD is bound already */
	} else if (r->proto == MPI_PROTO_EAGER) {
		/* A copy goes through the address-space MD too, its events naming
		 * the request by hdr_data's id: no MD bound and unlinked per
		 * message where a flood runs on copies (past the slots and the
		 * ACK-free credits, a 64-byte MPI_Send's bind and unlink were a
		 * sixth of its sender's time). */
		r->md = P.direct_md;
	} else {
		rc = attach_once(r, MPI_PT_RNDV, r->wpeer, len, PTL_MD_OP_GET);
	}
	if (rc != PTL_OK) {
		send_copy_free(r);
		mpi_req_release(r);
		*out = NULL;
		return MPI_ERR_NO_MEM;
	}
	mpi_g.pending_ops++;
	r->busy = true;
	/* A buffered or eager send is complete for the user now (the data is
	 * copied); the library finishes it without the user. A direct one
	 * completes when the library has finished it, and so does a copy
	 * past the copies' bound (data not contiguous, which cannot go
	 * direct): the caller holds it, and is held back. */
	bool late = r->counted && P.copy_bytes > P.copy_max;
	if (((r->proto == MPI_PROTO_EAGER && !direct) || r->bsend) && !late)
		mpi_req_complete(r);
	if (P.credit[r->wpeer] > 0 && mpi_list_empty(&P.sendq[r->wpeer])) {
		P.credit[r->wpeer]--;
		send_start(r);
	} else {
		r->stage = MPI_SS_QUEUED;
		mpi_list_add_tail(&r->link, &P.sendq[r->wpeer]);
	}
	return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- receiving */

static bool ux_matches(const struct mpi_ux *u, int ctx, int src, int tag)
{
	return u->ctx == ctx && (src == MPI_ANY_SOURCE || u->src == src) && (tag == MPI_ANY_TAG || u->tag == tag);
}


/* A non-contiguous receive's temporary image goes: unpacked, or unread
 * where the receive ends without its data. */
static void recv_tmp_drop(struct mpi_req *r)
{
	if (!r->ptmp)
		return;
	free(r->pbuf);
	r->pbuf = NULL;
	r->ptmp = false;
	mpi_dtype_release(r->dtp);
	r->dtp = NULL;
}

/* A noncontiguous receive's temporary image goes into the user's buffer. */
static void recv_unpack(struct mpi_req *r, size_t got)
{
	if (r->dtp) /* (none: abandoned, the image is the library's alone: mpi_recv_abandon) */
		mpi_unpack(r->dtp, r->ubuf, r->count, r->pbuf, got);
	recv_tmp_drop(r);
}

/* The receive is over: unpack, status, complete. Inline (the unpack out
 * of line): every receive ends here, on the path from its arrival to the
 * caller's return. */
static inline void recv_finish(struct mpi_req *r, size_t got)
{
	if (got > r->len)
		got = r->len;
	r->st.ptl_count = (long long)got;
	if (r->msglen > r->len) {
		r->err = MPI_ERR_TRUNCATE;
		r->st.MPI_ERROR = MPI_ERR_TRUNCATE;
	}
	if (r->ptmp)
		recv_unpack(r, got);
	mpi_req_complete(r);
}

/* r's error err (w >= 0: naming the death of world rank w). */
static void req_set_err(struct mpi_req *r, int err, int w)
{
	r->err = r->st.MPI_ERROR = err;
	if (w >= 0)
		r->dead = w;
}

/* Receive r fails with err (w as req_set_err's). */
static void recv_fail(struct mpi_req *r, int err, int w)
{
	recv_tmp_drop(r);
	req_set_err(r, err, w);
	mpi_req_complete(r);
}

/* A rendezvous receive whose get cannot be made (its sender dead or
 * unreachable, or no MD to land in): its landing MD, if bound, goes, and
 * it fails naming w. */
static void rndv_get_fail(struct mpi_req *r, int w, ptl_handle_md_t md)
{
	if (md != PTL_INVALID_HANDLE)
		PtlMDUnlink(md);
	recv_fail(r, MPI_ERR_PROC_FAILED, w);
}

static void rndv_get(struct mpi_req *r, int wsrc, uint32_t id)
{
	size_t n = r->msglen < r->len ? r->msglen : r->len;
	ptl_md_t md = { .start = r->pbuf, .length = n, .threshold = 1,
			.options = PTL_MD_EVENT_START_DISABLE, .user_ptr = r, .eq_handle = mpi_g.eq };
	ptl_handle_md_t mdh;
	int rc = PtlMDBind(mpi_g.ni, md, PTL_UNLINK, &mdh);
	if (rc != PTL_OK) {
		rndv_get_fail(r, wsrc, PTL_INVALID_HANDLE);
		return;
	}
	r->md = mdh; /* (for mpi_recv_abandon) */
	if (P.ndeferred[wsrc] ||
	    (rc = PtlGetRegion(mdh, 0, n, mpi_g.ids[wsrc], MPI_PT_RNDV, 0, id, 0)) == PTL_NO_SPACE)
		defer((struct mpi_defer){
			.kind = MPI_DEFER_GET, .w = wsrc, .id = mpi_req_id(r), .bits = id, .arg = n, .md = mdh });
	else if (rc != PTL_OK)
		rndv_get_fail(r, wsrc, mdh);
}

/* Receive r's pull (r->wpeer its sender, r->sid the send) asks for the
 * data into a landing entry of its own (MPI_PULL_LANDINGS). Where
 * libptl has no entry for it after all (an interface the program opened
 * and filled) the receive fails; its sender, not told, keeps its copy. */
static void pull_start(struct mpi_req *r)
{
	size_t n = r->msglen < r->len ? r->msglen : r->len;
	if (mpi_g.ndead && mpi_rank_dead(r->wpeer, false)) {
		recv_fail(r, MPI_ERR_PROC_FAILED, r->wpeer);
		return;
	}
	if (attach_once(r, MPI_PT_PULL, r->wpeer, n, PTL_MD_OP_PUT) != PTL_OK) {
		recv_fail(r, MPI_ERR_NO_MEM, -1);
		return;
	}
	P.landings++;
	P.nland[r->wpeer]++;
	r->stage = MPI_SS_PULLWAIT;
	ctrl_put(r->wpeer, MPI_CTRL_PULL, mpi_req_id(r), r->sid);
}

/* The data of an overflowed eager message is still at its sender: pull
 * it, or wait for a landing (MPI_PULL_LANDINGS). */
static void pull(struct mpi_req *r)
{
	if (P.landings < MPI_PULL_LANDINGS && mpi_list_empty(&P.pullq)) {
		pull_start(r);
	} else {
		r->stage = MPI_SS_LANDQ;
		mpi_list_add_tail(&r->link, &P.pullq);
	}
}

/* Receive r's landing entry went (its data landed, or its sender died):
 * the next waiting pulls take the room, as many as start (one that
 * fails, its sender dead, leaves it to the next). */
static void landing_gone(const struct mpi_req *r)
{
	P.landings--;
	P.nland[r->wpeer]--;
	while (P.landings < MPI_PULL_LANDINGS && !mpi_list_empty(&P.pullq)) {
		struct mpi_req *q = mpi_container(P.pullq.next, struct mpi_req, link);
		mpi_list_del(&q->link);
		pull_start(q);
	}
}

void mpi_landings_check(void)
{
	for (int w = 0; w < mpi_g.wsize; w++)
		if (P.nland[w] > 0)
			mpi_rank_dead(w, true);
}

/* Receive r takes unexpected message u (already off the unexpected list). */
static void ux_deliver(struct mpi_req *r, struct mpi_ux *u)
{
	r->matched = true;
	r->st.MPI_SOURCE = u->src;
	r->st.MPI_TAG = u->tag;
	r->msglen = u->len;
	if (u->proto == MPI_PROTO_RNDV || (!u->buf && u->len > 0)) {
		/* Only a header landed: the data comes by get or pull. The
		 * header's place in an unexpected buffer is free now (it held
		 * the buffer from being re-posted), and if its END is still
		 * to come, nobody waits for it but the credit. */
		if (!u->ready) {
			mpi_list_del(&u->alink);
			acct_settle(); /* grant_left_set must see the deferred ones too */
			credit_note(u->wsrc, 1);
		}
		if (u->buf)
			ux_release(u->buf);
		/* its sender known now (an MPI_ANY_SOURCE receive's too): a
		 * death fails it (mpi_req_check) */
		r->wpeer = u->wsrc;
		r->sid = u->id;
		if (u->proto == MPI_PROTO_RNDV)
			rndv_get(r, u->wsrc, u->id);
		else
			pull(r);
		ux_free(u);
		return;
	}
	if (!u->ready) {
		u->waiter = r;
		r->ux = u;
		return;
	}
	if (u->failed) {
		r->err = r->st.MPI_ERROR = MPI_ERR_PROC_FAILED;
		r->dead = u->wsrc;
	}
	size_t n = u->got < r->len ? u->got : r->len;
	if (n)
		nal_copy(r->pbuf, u->buf->mem + u->off, n);
	if (u->buf)
		ux_release(u->buf);
	ux_free(u);
	recv_finish(r, n);
}

static void credit_give(int w)
{
	ctrl_put(w, MPI_CTRL_CREDIT, 0, (uint64_t)P.consumed[w]);
	P.consumed[w] = 0;
}

/* Inline: every arrival counts (n of them from w); only a batch to give
 * back calls out. */
static inline void credit_note(int w, int n)
{
	if (w < 0)
		return;
	if ((P.consumed[w] += n) >= P.credit_half)
		credit_give(w);
	grant_left_set(w);
}

/* The lazy blocking receive being waited for (mpi_wait_req), if any, and
 * the first unexpected message it matches that came since it looked at
 * the whole list and found none: the one it takes, without walking the
 * list again (a long list of others' messages would make each wait cost
 * walks of it). */
static struct mpi_req *lazy_waiter;

/* w: the sender's world rank (rank_of), looked up once by the caller for
 * ux_arrive, ux_arrived and the credits. */
static void ux_arrive(const ptl_event_t *ev, struct mpi_uxbuf *b, int w)
{
	struct mpi_ux *u = mpi_ux_new();
	if (!u)
		mpi_fatal(MPI_ERR_NO_MEM, "out of memory for an unexpected message header");
	u->ctx = MPI_BITS_CTX(ev->match_bits);
	u->src = MPI_BITS_SRC(ev->match_bits);
	u->tag = MPI_BITS_TAG(ev->match_bits);
	u->wsrc = w;
	u->proto = MPI_HDR_PROTO(ev->hdr_data);
	u->len = MPI_HDR_LEN(ev->hdr_data);
	u->id = MPI_HDR_ID(ev->hdr_data);
	u->got = ev->mlength;
	u->off = ev->offset;
	u->buf = b;
	if (b)
		b->refs++;
	if (!mpi_ux_list(u))
		mpi_fatal(MPI_ERR_NO_MEM, "out of memory for an unexpected-message index");
	mpi_list_add_tail(&u->alink, &P.arriving);
	P.ux_appends++;
	if (lazy_waiter && !lazy_first && ux_matches(u, lazy_waiter->ctx, lazy_waiter->peer, lazy_waiter->tag))
		lazy_first = u;
}

static void ux_arrived(const ptl_event_t *ev, struct mpi_uxbuf *b, int w)
{
	uint32_t id = MPI_HDR_ID(ev->hdr_data);
	for (struct mpi_list *l = P.arriving.next; l != &P.arriving; l = l->next) {
		struct mpi_ux *u = mpi_container(l, struct mpi_ux, alink);
		if (u->buf != b || u->id != id || u->wsrc != w || (b && u->off != ev->offset))
			continue;
		mpi_list_del(&u->alink);
		u->ready = true;
		acct_settle(); /* grant_left_set must see the deferred ones too */
		credit_note(w, 1);
		if (ev->ni_fail_type != PTL_NI_OK) {
			/* The sender died while its data moved: whoever takes
			 * the message (now or, matched by MPI_Mprobe or not yet
			 * received, later) gets the error. */
			u->got = 0;
			u->failed = true;
		}
		if (u->waiter) {
			struct mpi_req *r = u->waiter;
			r->ux = NULL;
			ux_deliver(r, u);
		}
		return;
	}
}

/* A whole message landed in reserve b: if the waiting lazy receive takes
 * it, deliver it now, without an unexpected-list record. Only when no
 * listed message matches the receive, so it is the first message the
 * receive can take (one that came before is listed, until taken). */
static bool lazy_take(const ptl_event_t *ev, struct mpi_uxbuf *b)
{
	struct mpi_req *r = lazy_waiter;
	int src = MPI_BITS_SRC(ev->match_bits), tag = MPI_BITS_TAG(ev->match_bits);
	if (!r || r->done || r->matched || mpi_ux_find(r->ctx, r->peer, r->tag) || MPI_BITS_CTX(ev->match_bits) != r->ctx ||
	    (r->peer != MPI_ANY_SOURCE && r->peer != src) || (r->tag != MPI_ANY_TAG && r->tag != tag))
		return false;
	r->matched = true;
	r->st.MPI_SOURCE = src;
	r->st.MPI_TAG = tag;
	r->msglen = MPI_HDR_LEN(ev->hdr_data);
	size_t n = ev->mlength < r->len ? ev->mlength : r->len;
	if (n)
		nal_copy(r->pbuf, b->mem + ev->offset, n);
	recv_finish(r, n);
	return true;
}

/* Answers a pull from world rank w (bits: its landing) for send id:
 * puts the data there. PTL_NO_SPACE: refused for now, nothing changed
 * (the send still waits in MPI_SS_EAGER, as a dead rank's walk expects). */
static int pull_put(uint32_t id, int w, ptl_match_bits_t bits)
{
	struct mpi_req *r = mpi_req_by_id(id);
	/* (w's own send: a stale id, its request reused, names another's) */
	if (!r || r->kind != MPI_REQ_SEND || r->wpeer != w || r->md == PTL_INVALID_HANDLE ||
	    r->stage != MPI_SS_EAGER)
		return PTL_OK;
	int rc = PtlPutRegion(r->md, send_off(r), r->len, PTL_ACK_REQ, mpi_g.ids[w], MPI_PT_PULL, 0, bits, 0,
			      MPI_HDR(MPI_PROTO_EAGER, r->len, id));
	if (rc == PTL_OK) {
		r->stage = MPI_SS_PULLED;
		r->reading = r->md == P.bulk_md;
	} else if (rc != PTL_NO_SPACE) {
		send_fail(r, MPI_ERR_PROC_FAILED);
	}
	return rc;
}

static void on_ctrl(const ptl_event_t *ev)
{
	int w = rank_of(ev->initiator);
	int kind = (int)(ev->hdr_data >> 60);
	uint64_t arg = ev->hdr_data & ((1ull << 60) - 1);
	if (w < 0)
		return;
	if (kind == MPI_CTRL_CREDIT) {
		P.credit[w] += (int)arg;
		sendq_flush(w);
	} else if (kind == MPI_CTRL_NOACK) {
		P.nack[w] += (int)arg;
	} else if (kind == MPI_CTRL_PULL) {
		if (P.ndeferred[w] || pull_put((uint32_t)arg, w, ev->match_bits) == PTL_NO_SPACE)
			defer((struct mpi_defer){
				.kind = MPI_DEFER_PULL, .w = w, .id = (uint32_t)arg, .bits = ev->match_bits });
	}
}

/* A posted receive's message has landed (its PUT_END, not on PT_PULL).
 * Inline in on_event too: the event of every posted receive, and
 * on_req_event's frame and tests before it were some 15 instructions. */
__attribute__((always_inline)) static inline void recv_landed(const ptl_event_t *ev, struct mpi_req *r)
{
	r->matched = true;
	/* A kept ME is another receive's to arm now, a use-once one is
	 * gone and its MD logs its UNLINK right after: either way a dead
	 * sender's cleanup must not unlink it. */
	if (r->rme)
		mpi_keep_landed(r);
	else if (!r->kept)
		P.unlink_due++;
	r->me = PTL_INVALID_HANDLE;
	r->md = PTL_INVALID_HANDLE;
	int w = r->wpeer >= 0 ? r->wpeer : rank_of(ev->initiator);
	acct_defer(ev, NULL, w);
	r->st.MPI_SOURCE = MPI_BITS_SRC(ev->match_bits);
	r->st.MPI_TAG = MPI_BITS_TAG(ev->match_bits);
	r->msglen = MPI_HDR_LEN(ev->hdr_data);
	if (MPI_HDR_PROTO(ev->hdr_data) == MPI_PROTO_RNDV) {
		rndv_get(r, w, MPI_HDR_ID(ev->hdr_data));
		return;
	}
	if (ev->ni_fail_type != PTL_NI_OK)
		r->err = r->st.MPI_ERROR = MPI_ERR_PROC_FAILED;
	recv_finish(r, ev->mlength);
}

static void on_req_event(const ptl_event_t *ev, struct mpi_req *r)
{
	if (r->kind == MPI_REQ_SEND) {
		switch (ev->type) {
		case PTL_EVENT_ACK:
			if (ev->ni_fail_type != PTL_NI_OK) {
				send_fail(r, MPI_ERR_PROC_FAILED);
				return;
			}
			/* An ACK from PT_MSG: the data landed (in a posted receive,
			 * maybe truncated, or in an unexpected buffer). A header
			 * that overflowed gets no ACK; the receiver's pull moves
			 * the data and the pull's ACK (PT_PULL) finishes us. */
			if (ev->pt_index == MPI_PT_MSG && r->stage != MPI_SS_EAGER)
				return;
			mpi_g.pending_ops--;
			send_finish(r);
			return;
		case PTL_EVENT_SEND_END: /* (bulk_md's: its bulk move is over) */
			r->reading = false;
			return;
		case PTL_EVENT_GET_END:
			P.unlink_due++; /* the exposed buffer's use-once MD */
			mpi_g.pending_ops--;
			r->md = PTL_INVALID_HANDLE; /* unlinked by its threshold */
			if (ev->ni_fail_type != PTL_NI_OK && !r->done) {
				r->err = r->st.MPI_ERROR = MPI_ERR_PROC_FAILED;
				r->dead = r->wpeer;
			}
			send_finish(r);
			return;
		default:
			return;
		}
	}
	/* receive */
	switch (ev->type) {
	case PTL_EVENT_PUT_START:
		r->matched = true;
		return;
	case PTL_EVENT_PUT_END:
		r->matched = true;
		if (ev->pt_index == MPI_PT_PULL) {
			P.unlink_due++; /* the pull's use-once landing logs its UNLINK right after */
			landing_gone(r);
			if (ev->ni_fail_type != PTL_NI_OK)
				req_set_err(r, MPI_ERR_PROC_FAILED, r->wpeer);
			recv_finish(r, ev->mlength);
			return;
		}
		recv_landed(ev, r);
		return;
	case PTL_EVENT_REPLY_END:
		P.unlink_due++; /* rndv_get's MD, use-once too */
		/* Dropped: the sender's libptl, alive, refused the get (its
		 * exposed buffer taken back - a failed collective's send with
		 * no memory for a copy, mpi_send_abandon - or no room for the
		 * operation, or access denied): not a death. Failed: the
		 * sender is gone, or the move failed. */
		if (ev->ni_fail_type == PTL_NI_DROPPED)
			req_set_err(r, MPI_ERR_OTHER, -1);
		else if (ev->ni_fail_type != PTL_NI_OK)
			req_set_err(r, MPI_ERR_PROC_FAILED, r->wpeer >= 0 ? r->wpeer : rank_of(ev->initiator));
		recv_finish(r, ev->mlength);
		return;
	default:
		return;
	}
}

/* Whether ev is a posted receive's data landing (recv_landed's case, not a
 * pulled one's): on_event and take_event_fast handle it inline. */
static inline bool ev_recv_landed(const ptl_event_t *ev, const struct mpi_req *r)
{
	return ev->type == PTL_EVENT_PUT_END && r->kind == MPI_REQ_RECV && ev->pt_index != MPI_PT_PULL;
}

static void on_event(const ptl_event_t *ev)
{
	const struct mpi_obj_hdr *o = ev->md.user_ptr;
	if (!o)
		return;
	switch (o->obj) {
	case MPI_OBJ_REQ: {
		struct mpi_req *r = ev->md.user_ptr;
		if (ev_recv_landed(ev, r)) {
			recv_landed(ev, r);
			return;
		}
		if (ev->type == PTL_EVENT_UNLINK && P.unlink_due)
			P.unlink_due--;
		on_req_event(ev, r);
		return;
	}
	case MPI_OBJ_UXBUF: {
		struct mpi_uxbuf *b = ev->md.user_ptr;
		if (ev->type == PTL_EVENT_PUT_START) {
			ux_arrive(ev, b, rank_of_recent(ev->initiator));
		} else if (ev->type == PTL_EVENT_PUT_END && b->reserve) {
			/* Whole (no START event, ux_post): straight to a blocking
			 * receive that waits for it, else into the list. */
			int w = rank_of_recent(ev->initiator);
			if (lazy_take(ev, b)) {
				acct_defer(ev, b, w);
			} else {
				if (ev->match_bits & MPI_NOACK_BIT)
					nack_arrived(ev, b, w);
				ux_arrive(ev, b, w);
				ux_arrived(ev, b, w);
			}
		} else if (ev->type == PTL_EVENT_PUT_END) {
			int w = rank_of_recent(ev->initiator);
			if (ev->match_bits & MPI_NOACK_BIT)
				nack_arrived(ev, NULL, w);
			ux_arrived(ev, b, w);
		}
		if (ev->type == PTL_EVENT_UNLINK || ev->link) {
			if (b->linked) {
				acct_settle(); /* its room as the last arrival left it */
				P.nack_cap -= rsv_slots(b);
				b->linked = false;
				b->refs++;
				ux_release(b);
			}
		}
		return;
	}
	case MPI_OBJ_OVERFLOW:
		/* Its sender kept no copy: the data is lost, and the accounting
		 * that should have made this impossible is wrong. */
		if (ev->match_bits & MPI_NOACK_BIT)
			mpi_fatal(MPI_ERR_INTERN, "rank %d: an ACK-free message from rank %d overflowed; "
				  "set PTL_MPI_NOACK_OFF=1 and report this as a bug", mpi_g.wrank,
				  rank_of(ev->initiator));
		if (ev->type == PTL_EVENT_PUT_START)
			ux_arrive(ev, NULL, rank_of_recent(ev->initiator));
		else if (ev->type == PTL_EVENT_PUT_END)
			ux_arrived(ev, NULL, rank_of_recent(ev->initiator));
		return;
	case MPI_OBJ_CTRL:
		if (ev->type == PTL_EVENT_PUT_END)
			on_ctrl(ev);
		return;
	case MPI_OBJ_ESLOT: {
		struct mpi_req *r = ((struct mpi_eslot *)ev->md.user_ptr)->r;
		if (r)
			on_req_event(ev, r);
		return;
	}
	case MPI_OBJ_DIRECT: {
		/* a send from the user's buffer: its id is in hdr_data */
		struct mpi_req *r = mpi_req_by_id(MPI_HDR_ID(ev->hdr_data));
		if (r && r->kind == MPI_REQ_SEND && r->md == ev->md_handle)
			on_req_event(ev, r);
		return;
	}
	default:
		return;
	}
}

/* One event PtlEQGet or PtlEQPoll returned (rc PTL_OK or an error). */
static void take_event(int rc, const ptl_event_t *ev)
{
	if (rc == PTL_EQ_DROPPED)
		mpi_fatal(MPI_ERR_INTERN, "rank %d: the event queue overran; raise PTL_MPI_CREDITS "
			  "headroom or report this as a bug", mpi_g.wrank);
	if (rc != PTL_OK)
		mpi_fatal(MPI_ERR_INTERN, "PtlEQGet: %s", PtlErrorStr((unsigned)rc));
	on_event(ev);
}

/* take_event with a posted receive's landing (on_event's first case)
 * inline in the waits' loop: a stream's commonest event, and on_event's
 * frame (six saved registers) and dispatch were ~25 instructions of it. */
__attribute__((always_inline)) static inline void take_event_fast(int rc, const ptl_event_t *ev)
{
	const struct mpi_obj_hdr *o = ev->md.user_ptr;
	if (rc == PTL_OK && o && o->obj == MPI_OBJ_REQ && ev_recv_landed(ev, ev->md.user_ptr)) {
		recv_landed(ev, ev->md.user_ptr);
		return;
	}
	take_event(rc, ev);
}

/* Keeps a call libptl refused (PTL_NO_SPACE) for retry_refused. The queue
 * grows only while the peers do not read: off the fast path. */
static void defer(struct mpi_defer d)
{
	if (P.dq_len == P.dq_cap) {
		size_t cap = P.dq_cap ? 2 * P.dq_cap : 64;
		struct mpi_defer *q = realloc(P.dq, cap * sizeof *q);
		if (!q)
			mpi_fatal(MPI_ERR_NO_MEM, "out of memory for %zu Portals calls waiting for room", P.dq_len + 1);
		P.dq = q;
		P.dq_cap = cap;
	}
	P.dq[P.dq_len++] = d;
	P.ndeferred[d.w]++;
	P.refused = true;
}

/* A deferred call made again: PTL_NO_SPACE if refused again. */
static int defer_run(const struct mpi_defer *d)
{
	switch (d->kind) {
	case MPI_DEFER_CTRL:
		return ctrl_put_now(d->w, d->ctrl, d->bits, d->arg);
	case MPI_DEFER_PULL:
		return pull_put(d->id, d->w, d->bits);
	default: { /* MPI_DEFER_GET */
		struct mpi_req *r = mpi_req_by_id(d->id);
		int rc = PTL_FAIL;
		if (r && (r->kind != MPI_REQ_RECV || !r->matched))
			r = NULL; /* a stale id: its request reused */
		if (r && !r->done)
			rc = PtlGetRegion(d->md, 0, d->arg, mpi_g.ids[d->w], MPI_PT_RNDV, 0, d->bits, 0);
		if (rc == PTL_OK || rc == PTL_NO_SPACE)
			return rc;
		if (r && !r->done)
			rndv_get_fail(r, d->w, d->md);
		else
			PtlMDUnlink(d->md);
		return rc;
	}
	}
}

/* Makes again what libptl refused (send_refused, defer): each peer's in
 * order, until one to that peer is refused again (the later ones to it
 * wait behind it; those to other peers go on). Whether something still
 * waits. */
static __attribute__((noinline)) bool retry_refused(void)
{
	static bool busy; /* a send failed here may complete what calls progress */
	if (busy)
		return true;
	busy = true;
	/* the queue compacted as it goes: what is kept moves down */
	size_t keep = 0;
	unsigned pass = ++P.pass ? P.pass : ++P.pass; /* 0: never refused */
	for (size_t i = 0; i < P.dq_len; i++) {
		struct mpi_defer d = P.dq[i];
		/* a peer refused in this pass keeps the rest of its calls */
		if (P.refused_pass[d.w] != pass && defer_run(&d) != PTL_NO_SPACE) {
			P.ndeferred[d.w]--;
			continue;
		}
		P.refused_pass[d.w] = pass;
		P.dq[keep++] = d;
	}
	P.dq_len = keep;
	/* A peer refused again is listed again, at most once each (is_blocked):
	 * below the one being flushed, never past it. */
	int nb = P.nblocked;
	P.nblocked = 0;
	for (int i = 0; i < nb; i++) {
		int w = P.blocked[i];
		P.is_blocked[w] = false;
		sendq_flush(w);
	}
	P.refused = P.nblocked || P.dq_len;
	busy = false;
	return P.refused;
}

__attribute__((always_inline)) static inline int progress_drain(int rc, ptl_event_t *ev, struct mpi_req *until,
								struct mpi_req *const *more, int nmore, int *at);

/* Whether progress_events(0, ...) would do nothing but its PtlEQGet until
 * that finds an event (and clear unlink_due when it finds none): nothing
 * to settle (acct.grant is only ever set while acct.due), no refused call
 * to make again, no nonblocking collective to move on. mpi_poll counts on
 * it: work added to progress_events' start or to progress_drain's empty
 * pass belongs here too. */
static inline bool progress_quiet(void)
{
	return !(acct.due | P.refused | (mpi_g.icoll_live != 0));
}

/* Takes events until the queue is empty or, with until, as soon as until
 * is done: a wait returns on its own completion without the last, empty
 * PtlEQGet, whose progress pass (a poll of every NAL) would delay the
 * caller's next send by a few hundred instructions. The UNLINK that a
 * use-once MD logs right after the END that completed until stays queued
 * too (P.unlink_due): a ping-pong's reply goes out first, and the next
 * posted receive takes it (take_unlinks) before the PtlMDUpdate it would
 * make fail. What else stays queued is taken by the next call.
 *
 * With more (MPI_Waitall's requests, until being more[*at]), a done until
 * hands on to the next of more[*at + 1, nmore) not done yet, and the call
 * returns only once they are all done (or the queue is empty): a receiver
 * behind its sender finds a window's events queued, and a wait per
 * request (its PtlEQPoll, this call's and the wait's entry and exit) was
 * ~75 instructions of each event more than the PtlEQGet that takes it
 * here. A lazy receive among them is left to its own wait (mpi_wait_req,
 * which sets lazy_waiter). Inline in both callers: the ping-pong's has
 * none of it. */
__attribute__((always_inline)) static inline int progress_events(int wait_ms, struct mpi_req *until,
								 struct mpi_req *const *more, int nmore, int *at)
{
	ptl_event_t ev;
	int rc;
	acct_before_put(); /* credits due go back now that the caller has moved on; the rest waits */
	/* Refused calls again; while some wait, a wait comes back within a
	 * millisecond to try them (the room comes with no event of ours). */
	if (__builtin_expect(P.refused, 0) && retry_refused() && wait_ms > 1)
		wait_ms = until && until->done ? 0 : 1;
	if (wait_ms > 0) {
		int which;
		rc = PtlEQPoll(&mpi_g.eq, 1, wait_ms, &ev, &which);
	} else {
		rc = PtlEQGet(mpi_g.eq, &ev);
	}
	return progress_drain(rc, &ev, until, more, nmore, at);
}

/* progress_events from its first PtlEQGet's or PtlEQPoll's answer rc (and
 * event, *ev) on: takes the events, then settles. */
__attribute__((always_inline)) static inline int progress_drain(int rc, ptl_event_t *ev, struct mpi_req *until,
								struct mpi_req *const *more, int nmore, int *at)
{
	int n = 0;
	while (rc != PTL_EQ_EMPTY) {
		take_event_fast(rc, ev);
		n++;
		if (until && until == lazy_waiter && lazy_first) {
			/* Still listed (nobody else takes from the list while a
			 * blocking receive waits, but make sure). */
			struct mpi_ux *u = lazy_first;
			lazy_first = NULL;
			if (!until->done && !until->matched && u->in_ux) {
				mpi_ux_unlist(u);
				ux_deliver(until, u);
			} else {
				mpi_recv_try(until);
			}
		}
		if (until && until->done) {
			if (!more)
				break;
			while (*at < nmore && more[*at]->done)
				++*at;
			if (*at == nmore || more[*at]->lazy)
				break;
			until = more[*at];
			acct_before_put(); /* as a call for it would at its start */
		}
		rc = PtlEQGet(mpi_g.eq, ev);
	}
	if (rc == PTL_EQ_EMPTY)
		P.unlink_due = 0; /* whatever we counted on is not coming */
	/* A pass that found nothing settles the batch too (acct_defer): the
	 * rank waits anyway, so the work costs no one, a burst of arrivals
	 * still settles once, and a place that changes a sender's counts and
	 * forgot to settle first delays its grant by a pass, not for good. */
	if (n == 0)
		acct_settle();
	if (mpi_g.icoll_live) /* nonblocking collectives move on whatever made progress */
		mpi_icoll_progress(n == 0);
	return n;
}

int mpi_progress_until(int wait_ms, struct mpi_req *until)
{
	return progress_events(wait_ms, until, NULL, 0, NULL);
}

/* mpi_poll's events after the first. */
static __attribute__((noinline)) int poll_drain(int rc, ptl_event_t *ev)
{
	return progress_drain(rc, ev, NULL, NULL, 0, NULL);
}

int mpi_poll(void)
{
	if (__builtin_expect(!progress_quiet(), 0))
		return mpi_progress_until(0, NULL);
	ptl_event_t ev;
	int rc = PtlEQGet(mpi_g.eq, &ev);
	if (rc == PTL_EQ_EMPTY) {
		P.unlink_due = 0;
		return 0;
	}
	return poll_drain(rc, &ev);
}

void mpi_wait_all_plain(struct mpi_req *const *rs, int n)
{
	struct mpi_idle idle = { 0, 0 };
	int i = 0;
	for (;;) {
		while (i < n && rs[i]->done)
			i++;
		if (i == n)
			return;
		if (rs[i]->lazy) {
			mpi_wait_req(rs[i], 0);
			continue;
		}
		bool empty = progress_events(100, rs[i], rs, n, &i) == 0;
		if (i < n && !rs[i]->done && mpi_idle_due(&idle, empty))
			mpi_req_check(rs[i]);
	}
}

/* Takes the UNLINK events progress_drain left queued (and whatever came
 * before them): a PtlEQGet that finds an event makes no progress pass. */
static void take_unlinks(void)
{
	ptl_event_t ev;
	while (P.unlink_due) {
		int rc = PtlEQGet(mpi_g.eq, &ev);
		if (rc == PTL_EQ_EMPTY) {
			P.unlink_due = 0;
			return;
		}
		take_event(rc, &ev);
	}
}

/* A receive request as the user posted it (mpi_irecv, mpi_irecv_lazy). */
static struct mpi_req *recv_req_new(void *buf, int count, MPI_Datatype dt, int src, int tag, struct mpi_comm *c,
				    int ctx)
{
	struct mpi_req *r = user_req_new(MPI_REQ_RECV, src, tag, c, ctx);
	if (!r)
		return NULL;
	r->ubuf = buf;
	r->count = count;
	r->dt = dt;
	return r;
}

/* A noncontiguous receive's temporary image of len bytes (recv_buf_init). */
static bool recv_buf_tmp(struct mpi_req *r, struct mpi_dtype *t, size_t len)
{
	r->pbuf = malloc(len ? len : 1);
	if (!r->pbuf)
		return false;
	r->ptmp = true;
	/* the user may free the type before the message arrives */
	r->dtp = mpi_dtype_hold(t);
	return true;
}

/* Where r's data lands: the user's buffer if the type is contiguous, else
 * a temporary image unpacked when it is done. False: no memory. */
static inline bool recv_buf_init(struct mpi_req *r, struct mpi_dtype *t)
{
	size_t len = t->size * (size_t)r->count;
	r->len = len > MPI_MAX_MSG ? MPI_MAX_MSG : len;
	if (!t->contig)
		return recv_buf_tmp(r, t, len);
	r->pbuf = (char *)r->ubuf + t->true_lb;
	return true;
}

/* mpi_irecv_t's body, inline where MPI_Irecv posts in its own frame too.
 * Every receive of point-to-point posts its ME here, MPI_Recv's too (only
 * a short MPI_Sendrecv's goes lazily: mpi_p2p_api.c): a blocking receive
 * of 0 bytes went lazily (no ME: mpi_irecv_lazy, its arrival in a
 * reserve buffer) while the two cost the same (0 B 0.233 vs 0.237 us); on
 * the Zen 3 guest the lazy one cost a 0-byte half round trip 5-15 ns more
 * than an 8-byte one, posted 5-15 ns less (2 pinned ranks,
 * bench/mpi_pingpong.c sizes 0 8 0 8 0 8, 6 interleaved launches). */
__attribute__((always_inline)) static inline int irecv_post(void *buf, int count, MPI_Datatype dt,
							    struct mpi_dtype *t, int src, int tag,
							    struct mpi_comm *c, int ctx, struct mpi_req **out)
{
	struct mpi_req *r = recv_req_new(buf, count, dt, src, tag, c, ctx);
	if (!r)
		return MPI_ERR_NO_MEM;
	*out = r;
	if (src == MPI_PROC_NULL) {
		r->st.MPI_SOURCE = MPI_PROC_NULL;
		r->st.MPI_TAG = MPI_ANY_TAG;
		mpi_req_complete(r);
		return MPI_SUCCESS;
	}
	if (!recv_buf_init(r, t)) {
		mpi_req_release(r);
		return MPI_ERR_NO_MEM;
	}
	/* No drain of the event queue first (a progress pass, ~450
	 * instructions, a third of a posted receive): the MD below goes live
	 * only while the queue is empty, so a match still queued sends us
	 * round the loop, where we drain and search again. Except from a dead
	 * peer: all it sent must be listed before we say nothing more comes. */
	bool refused = false; /* once by mpi_keep_arm: the look below again */
look:
	if (mpi_g.ndead)
		mpi_progress(0);
	struct mpi_ux *u = mpi_ux_find(ctx, src, tag);
	if (u) {
		mpi_ux_unlist(u);
		ux_deliver(r, u);
		return MPI_SUCCESS;
	}
	if (mpi_g.ndead && mpi_rank_dead(r->wpeer, false)) {
		/* What it sent before it died was taken above; nothing more comes. */
		mpi_req_fail_dead(r, r->wpeer);
		return MPI_SUCCESS;
	}
	take_unlinks();
	ptl_match_bits_t ign = MPI_NOACK_BIT;
	if (src == MPI_ANY_SOURCE)
		ign |= MPI_SRC_MASK;
	if (tag == MPI_ANY_TAG)
		ign |= MPI_TAG_MASK;
	ptl_match_bits_t bits = mpi_bits(ctx, src == MPI_ANY_SOURCE ? 0 : src, tag == MPI_ANY_TAG ? 0 : tag);
	ptl_md_t md = { .start = r->pbuf, .length = r->len, .threshold = 0,
			.options = PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_EVENT_START_DISABLE,
			.user_ptr = r, .eq_handle = mpi_g.eq };
	/* Kept entries for the communicator's own context only: a schedule's
	 * receives (c->ctx + 1) carry a tag per call that never comes back, so
	 * theirs would only pile up idle in front of every arrival. Order
	 * between contexts does not matter: no message matches both. */
	struct mpi_rme *e = NULL;
	if (ctx == c->ctx) {
		if (!(e = mpi_keep_arm(r, bits, ign)) && !refused) {
			/* PTL_MPI_MAX_MES receives posted, some of them maybe
			 * with their messages in already, their entries held
			 * until their events are taken: take them, and look
			 * for this receive's message again */
			mpi_progress(0);
			refused = true;
			goto look;
		}
		if (!e)
			goto fail;
	} else if (!mpi_entry_ok() || PtlMEInsert(P.marker, any_id, bits, ign, PTL_UNLINK, PTL_INS_BEFORE, &r->me) != PTL_OK) {
		goto fail;
	} else if (PtlMDAttach(r->me, md, PTL_UNLINK, &r->md) != PTL_OK) {
		PtlMEUnlink(r->me);
		goto fail;
	}
	md.threshold = 1;
	for (;;) {
		int rc = PtlMDUpdate(r->md, NULL, &md, mpi_g.eq);
		if (rc == PTL_OK)
			return MPI_SUCCESS;
		if (rc != PTL_MD_NO_UPDATE)
			mpi_fatal(MPI_ERR_INTERN, "PtlMDUpdate: %s", PtlErrorStr((unsigned)rc));
		mpi_progress(0);
		u = mpi_ux_find(ctx, src, tag);
		if (u) {
			if (e) /* still disabled: idle again, for a later receive */
				mpi_keep_disarm(e);
			else
				PtlMEUnlink(r->me);
			r->me = PTL_INVALID_HANDLE;
			r->md = PTL_INVALID_HANDLE;
			r->kept = false;
			mpi_ux_unlist(u);
			ux_deliver(r, u);
			return MPI_SUCCESS;
		}
	}
fail:
	recv_tmp_drop(r);
	mpi_req_release(r);
	*out = NULL;
	return MPI_ERR_NO_MEM;
}

int mpi_irecv_t(void *buf, int count, MPI_Datatype dt, struct mpi_dtype *t, int src, int tag, struct mpi_comm *c,
		int ctx, struct mpi_req **out)
{
	return irecv_post(buf, count, dt, t, src, tag, c, ctx, out);
}

/* MPI_Irecv as nearly every call goes (mpi_args_ok's case): posted in
 * this one frame. In mpi_p2p_api.c beside the other calls it passed nine
 * arguments on to mpi_irecv_t, whose frame and the call were ~35
 * instructions of a streamed receive. Anything else, and a post that
 * found no memory, goes the long way, which checks again and reports. */
int PMPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *request)
{
	struct mpi_comm *c;
	struct mpi_dtype *t;
	struct mpi_req *r;
	if (mpi_args_ok(buf, count, dt, src, tag, comm, true, &c, &t) &&
	    irecv_post(buf, count, dt, t, src, tag, c, c->ctx, &r) == MPI_SUCCESS) {
		*request = mpi_req_handle(r);
		return MPI_SUCCESS;
	}
	return mpi_irecv_slow(buf, count, dt, src, tag, comm, request);
}

int mpi_irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, struct mpi_comm *c, int ctx,
	      struct mpi_req **out)
{
	return mpi_irecv_t(buf, count, dt, mpi_dtype_get(dt), src, tag, c, ctx, out);
}

/* A lazy receive's search of the unexpected list, and its delivery. */
static inline bool recv_try_lazy(struct mpi_req *r)
{
	struct mpi_ux *u = mpi_ux_find(r->ctx, r->peer, r->tag);
	if (u) {
		mpi_ux_unlist(u);
		ux_deliver(r, u);
	} else {
		r->ux_looked = P.ux_appends + 1;
	}
	return r->done;
}

int mpi_irecv_lazy(void *buf, size_t len, int src, int tag, struct mpi_comm *c, int ctx, struct mpi_req **out)
{
	struct mpi_req *r = recv_req_new(buf, (int)len, MPI_BYTE, src, tag, c, ctx);
	if (!r)
		return MPI_ERR_NO_MEM;
	*out = r;
	r->pbuf = buf;
	r->len = len;
	r->lazy = true;
	/* A new request is neither done nor matched: straight to the search.
	 * mpi_recv_try's test of its three flags, one 8-byte load over bytes
	 * just stored, waited for those stores (13% of a 2-rank 8-byte
	 * allreduce's perf samples sat there). */
	if (!recv_try_lazy(r) && mpi_g.ndead) {
		/* From a dead peer, as irecv_post: all it sent must be listed
		 * before we say nothing more comes. */
		mpi_progress(0);
		if (!mpi_recv_try(r) && mpi_rank_dead(r->wpeer, false))
			mpi_req_fail_dead(r, r->wpeer);
	}
	return MPI_SUCCESS;
}

bool mpi_recv_try(struct mpi_req *r)
{
	if (r->done || r->matched || !r->lazy)
		return r->done;
	return recv_try_lazy(r);
}

/* A probe's status of u: its envelope and length. */
static void ux_status(const struct mpi_ux *u, MPI_Status *st)
{
	if (!st)
		return;
	st->MPI_SOURCE = u->src;
	st->MPI_TAG = u->tag;
	st->ptl_cancelled = 0;
	st->ptl_count = (long long)u->len;
}

int mpi_iprobe(int src, int tag, struct mpi_comm *c, int *flag, MPI_Status *st)
{
	mpi_progress(0);
	struct mpi_ux *u = mpi_ux_find(c->ctx, src, tag);
	*flag = u != NULL;
	if (u)
		ux_status(u, st);
	return MPI_SUCCESS;
}

/* Off the index, the record is the matched message: no receive or probe
 * finds it, and whatever state it is in (whole, still arriving, a header
 * whose data waits at the sender) stays as it is until mpi_mrecv_start
 * hands it to ux_deliver, as a receive that matched it would have been.
 * Its unexpected buffer stays pinned and its END, if still to come, finds
 * it on the arriving list meanwhile. */
struct mpi_ux *mpi_ux_take(int src, int tag, struct mpi_comm *c, MPI_Status *st)
{
	mpi_progress(0);
	struct mpi_ux *u = mpi_ux_find(c->ctx, src, tag);
	if (u) {
		mpi_ux_unlist(u);
		ux_status(u, st);
	}
	return u;
}

int mpi_mrecv_start(void *buf, int count, MPI_Datatype dt, struct mpi_ux *u, struct mpi_comm *c,
		    struct mpi_req **out)
{
	struct mpi_req *r = recv_req_new(buf, count, dt, u->src, u->tag, c, u->ctx);
	if (!r)
		return MPI_ERR_NO_MEM;
	if (!recv_buf_init(r, mpi_dtype_get(dt))) {
		mpi_req_release(r);
		return MPI_ERR_NO_MEM;
	}
	*out = r;
	ux_deliver(r, u);
	return MPI_SUCCESS;
}

/* Where an abandoned receive's pull lands: no bytes (PTL_MD_TRUNCATE:
 * its sender's put is taken and acknowledged, and goes nowhere). */
static char abandoned[1];

/* A pass of an abandoning wait for a transfer of r's under way, which
 * the peer's libptl ends without the peer's MPI calls - but not while
 * the peer's process is stopped, nor, with PTL_PROGRESS_THREAD=0, while
 * it is out of MPI. The caller cannot return before it ends (the
 * transfer reads or writes its buffer), so past PTL_COLL_TIMEOUT (10 s
 * without one) the wait says whom it waits for, once. *since: 0 at the
 * wait's start. */
static void abandon_wait(const struct mpi_req *r, double *since)
{
	double now = mpi_now();
	if (*since == 0)
		*since = now;
	double limit = mpi_g.coll_timeout > 0 ? mpi_g.coll_timeout : 10;
	if (*since > 0 && now - *since > limit) {
		char who[32] = "a peer";
		if (r->wpeer >= 0)
			snprintf(who, sizeof who, "world rank %d", r->wpeer);
		fprintf(stderr,
			"ptl-mpi: rank %d: a call that failed waits, %.1f s now, for its transfer with %s to end "
			"before it returns (is that process stopped, or not calling MPI with PTL_PROGRESS_THREAD=0?)\n",
			mpi_g.wrank, now - *since, who);
		*since = -1;
	}
	mpi_progress(1);
}

/* Whether r needs nothing more of the library's: a receive done, a send
 * finished. */
static bool req_over(const struct mpi_req *r)
{
	return r->kind == MPI_REQ_SEND ? !r->busy : r->done;
}

/* r's MD (r->md) re-pointed to start, of no bytes where empty, its length
 * kept otherwise. The read and the write are two calls (libptl's progress
 * thread between them): a use-once MD consumed meanwhile is gone
 * (PTL_MD_INVALID). PTL_MD_NO_UPDATE, data moving now: waited for
 * (abandon_wait), and tried again unless r is over meanwhile. Returns
 * the last call's code. */
static int md_repoint(struct mpi_req *r, void *start, bool empty)
{
	double since = 0;
	for (;;) {
		ptl_md_t md;
		int rc = PtlMDUpdate(r->md, &md, NULL, PTL_EQ_NONE);
		if (rc == PTL_OK) {
			md.start = start;
			if (empty)
				md.length = 0;
			rc = PtlMDUpdate(r->md, NULL, &md, PTL_EQ_NONE);
		}
		if (rc != PTL_MD_NO_UPDATE)
			return rc;
		abandon_wait(r, &since);
		if (req_over(r))
			return rc;
	}
}

void mpi_recv_abandon(struct mpi_req *r)
{
	mpi_cancel_recv(r);
	if (r->done)
		return;
	if (r->ptmp) {
		/* its image is the library's (freed once its message is in):
		 * only the unpack into the caller's buffer goes */
		mpi_dtype_release(r->dtp);
		r->dtp = NULL;
	}
	/* A pull to come, or a copy out of an unexpected buffer: of no
	 * bytes. No memory is held for them: the sender may answer a pull
	 * long after, or never. */
	bool pulled = r->matched && (r->stage == MPI_SS_LANDQ || r->stage == MPI_SS_PULLWAIT);
	if (pulled || r->ux) {
		r->len = 0;
		if (!r->ptmp)
			r->pbuf = abandoned;
	}
	/* The MD its data lands in, re-pointed (md_repoint): a pull's
	 * landing to no bytes; another (a get's, bound, its call deferred)
	 * to memory of ours as long (a get of no bytes would be refused, and
	 * its sender would wait for it); none where the image is ours
	 * already. A kept MD (a posted receive's) is reached only once
	 * spent, its cancel refused while its data moves. */
	if (r->md == PTL_INVALID_HANDLE || (!pulled && r->ptmp))
		return;
	if (pulled) {
		md_repoint(r, abandoned, true);
		return;
	}
	ptl_md_t cur;
	if (PtlMDUpdate(r->md, &cur, NULL, PTL_EQ_NONE) != PTL_OK)
		return; /* consumed meanwhile (a read alone is never refused) */
	void *own;
	double since = 0;
	while (!(own = malloc(cur.length ? cur.length : 1))) {
		if (r->done)
			return; /* no memory: until it has landed, or there is */
		abandon_wait(r, &since);
	}
	if (md_repoint(r, own, false) == PTL_OK && !r->done) {
		r->pbuf = own;
		r->ptmp = true;
		r->dtp = NULL;
	} else {
		free(own);
	}
}

void mpi_send_abandon(struct mpi_req *r)
{
	/* A copy or a slot is the library's already. */
	if (!r->busy || r->ptmp || r->slot || !r->len || (r->proto == MPI_PROTO_EAGER && !r->direct))
		return;
	/* To a rank known dead nothing more is read (libptl failed what was
	 * under way): taken back. */
	bool dead = mpi_g.ndead && mpi_rank_dead(r->wpeer, false);
	void *own = dead ? NULL : copy_get(r->len);
	if (own)
		nal_copy(own, r->pbuf, r->len);
	if (r->proto == MPI_PROTO_RNDV) {
		/* The exposed buffer's MD, re-pointed to the copy: refused
		 * while a get is under way (waited for), gone once one has
		 * been made (its end, in the queue, finishes r). */
		if (own && md_repoint(r, own, false) != PTL_OK) {
			copy_put(own, r->len);
			return;
		}
	} else if (own) {
		/* what is still to go (a put queued, a pull's answer) goes
		 * from the copy */
		r->direct = false;
	}
	if (own) {
		/* counted with the eager copies (PTL_MPI_SEND_COPY_MEM): a
		 * peer that never takes it holds it until MPI_Finalize */
		r->pbuf = own;
		r->ptmp = true;
		r->counted = true;
		P.copy_bytes += r->len + MPI_SEND_COPY_OVERHEAD;
	}
	/* A bulk put of it may be read still, until it is answered: waited
	 * for (abandon_wait). */
	double since = 0;
	while (r->busy && r->reading)
		abandon_wait(r, &since);
	if (own)
		return;
	/* No memory for a copy: what its peer has yet to ask for is taken
	 * back and fails; a transfer under way is waited for. The peer's
	 * call fails too: a get of it finds nothing (MPI_ERR_OTHER), a pull
	 * of it goes unanswered and a part not sent never comes (the peer's
	 * deadline). */
	if (r->busy && send_withdraw(r)) {
		send_fail(r, dead ? MPI_ERR_PROC_FAILED : MPI_ERR_NO_MEM);
		return;
	}
	while (r->busy)
		abandon_wait(r, &since);
}

void mpi_req_give_up(struct mpi_req *r)
{
	if (r->kind == MPI_REQ_RECV)
		mpi_recv_abandon(r);
	else if (r->kind == MPI_REQ_SEND)
		mpi_send_abandon(r);
	mpi_req_drop(r);
}

int mpi_cancel_recv(struct mpi_req *r)
{
	if (r->lazy && !r->done && !r->matched) {
		/* no ME: nothing can take it now */
		r->cancelled = true;
		r->st.ptl_cancelled = 1;
		mpi_req_complete(r);
		return MPI_SUCCESS;
	}
	if (r->done || r->matched || r->me == PTL_INVALID_HANDLE)
		return MPI_SUCCESS;
	if (PtlMEUnlink(r->me) != PTL_OK)
		return MPI_SUCCESS; /* being matched: it will complete */
	if (r->rme)
		mpi_keep_drop(r->rme);
	/* Unlinked: anything that matched it before is in the queue now. */
	mpi_progress(0);
	if (r->matched || r->done)
		return MPI_SUCCESS;
	r->me = PTL_INVALID_HANDLE;
	r->cancelled = true;
	r->st.ptl_cancelled = 1;
	recv_tmp_drop(r);
	mpi_req_complete(r);
	return MPI_SUCCESS;
}

int mpi_wait_req(struct mpi_req *r, double timeout)
{
	struct mpi_idle idle = { 0, 0 };
	struct mpi_req *outer = lazy_waiter;
	struct mpi_ux *outer_first = lazy_first;
	int rc = MPI_SUCCESS;
	/* A lazy receive that has looked at every unexpected message so far
	 * (mpi_irecv_lazy just did) need not look again. */
	if (r->lazy && (r->ux_looked == P.ux_appends + 1 || !mpi_recv_try(r)) && !r->done && !r->matched) {
		lazy_waiter = r;
		lazy_first = NULL;
	}
	/* With a timeout the clock is read first after a pass that brought
	 * nothing (up to 100 ms) or 64 eventful ones, and the timeout runs
	 * from then: a read per pass was a tenth of a 2-rank 8-byte
	 * allreduce's exchange. */
	double t0 = 0;
	unsigned passes = 0;
	bool empty = false;
	while (!r->done) {
		int ms = 100;
		if (timeout > 0 && (t0 > 0 || empty || ++passes % 64 == 0)) {
			double now = mpi_now();
			if (t0 == 0)
				t0 = now;
			double left = t0 + timeout - now;
			if (left <= 0) {
				rc = MPI_ERR_TIMEOUT;
				break;
			}
			if (left < 0.1)
				ms = (int)(left * 1000) + 1;
		}
		/* Only a wait that brought nothing asks after the peer. */
		empty = mpi_progress_until(ms, r) == 0;
		if (!r->done && mpi_idle_due(&idle, empty))
			mpi_req_check(r);
	}
	lazy_waiter = outer;
	lazy_first = outer_first;
	return rc;
}

void mpi_req_fail_dead(struct mpi_req *r, int w)
{
	if (r->kind == MPI_REQ_SEND) {
		/* (an eager put's ACK libptl has failed already: ptl_peer_fail
		 * answers every op in flight to a peer before its death shows
		 * here; send_withdraw takes it, and it finishes the send) */
		if (r->busy && send_withdraw(r))
			send_fail(r, MPI_ERR_PROC_FAILED); /* names r->wpeer, which is w */
		return;
	}
	if (r->done || r->ux)
		return; /* r->ux: its message is arriving; a failed arrival fails it */
	if (r->lazy && !r->matched && mpi_recv_try(r))
		return; /* sent before the death */
	if (r->matched && r->stage == MPI_SS_LANDQ) {
		mpi_list_del(&r->link); /* a pull that waited for a landing */
	} else if (r->me != PTL_INVALID_HANDLE) {
		/* A posted receive, or a pull's landing. */
		if (PtlMEUnlink(r->me) != PTL_OK)
			return; /* being matched: the transfer's end completes it */
		if (r->rme)
			mpi_keep_drop(r->rme);
		r->me = PTL_INVALID_HANDLE;
		bool landing = r->matched && r->stage == MPI_SS_PULLWAIT; /* (unlinked: no data comes) */
		/* Anything that matched it before is in the queue now. */
		mpi_progress(0);
		if (landing)
			landing_gone(r);
		if (r->done || r->ux || (r->matched && !landing))
			return;
	} else if (r->matched) {
		return; /* the rendezvous get is under way: its failed REPLY ends it
			 * (or, refused and deferred, its next try fails: defer_run) */
	}
	recv_fail(r, MPI_ERR_PROC_FAILED, w);
}

/* Finalize: every send the library finishes on its own must be finished. */
void mpi_drain_internal(void)
{
	double until = mpi_now() + 30;
	while (mpi_g.pending_ops > 0 && mpi_now() < until)
		mpi_progress(10);
	if (mpi_g.pending_ops > 0)
		fprintf(stderr, "ptl-mpi: rank %d: MPI_Finalize gave up after 30 s on %lu unfinished sends\n",
			mpi_g.wrank, mpi_g.pending_ops);
}
