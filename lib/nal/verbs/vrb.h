/*
 * lib/nal/verbs/vrb.h - the verbs (RDMA) NAL's private state, shared by its
 * files: vrb_dev.c (device, port and GID choice; open/close), vrb_conn.c
 * (lazy RC connections through a UD handshake), vrb_msg.c (eager messages
 * with credits, progress, sleep), vrb_zip.c (small messages without their
 * zero words), vrb_reg.c (the registration cache, which follows freed and
 * remapped memory), vrb_bulk.c (RDMA READ/WRITE).
 *
 * Wire facts:
 *  - Every rank publishes a struct vrb_addr (port LID, GID, the UD QP that
 *    takes connection requests). Nothing else is exchanged up front: the RC
 *    QP to a peer is made on first use (or when the peer asks), so a job
 *    of N ranks does not open N^2 connections at start.
 *  - Handshake: REQ and REP over UD (struct vrb_cm) carry the RC QPN and
 *    PSN, the credits granted and where the peer returns credits; both
 *    carry the job key. When two ranks ask each other at once, the REQ of
 *    the lower rank wins; the higher rank reuses its QP to answer it.
 *  - Eager messages are RC SENDs into a shared receive queue. A sender
 *    holds credits: the receiver granted it `grant` buffers, posted for it
 *    in the SRQ, and RDMA-writes the running count of the sender's
 *    messages it has consumed into the sender's credit slot. A send with
 *    no credit returns NAL_EAGAIN, so no buffer ever overruns; credit
 *    returns consume no receive buffer, so they cannot deadlock. Every
 *    message also carries the sender's consumed count of the receiver's
 *    messages (low 31 bits of the immediate data): traffic both ways (a
 *    ping-pong) returns credits with no write of their own. The top bit
 *    says the message is zipped: small ones leave their zero 8-byte words
 *    out (vrb_zip.h).
 *  - Death: an RC QP whose peer is gone fails its WRs with RETRY_EXC_ERR
 *    after VRB_RETRY_CNT retransmissions. A peer we only wait for (nothing
 *    of ours in flight to it) is probed: when it has shown no sign of life
 *    for a keepalive period, a credit write (idempotent, no receive buffer)
 *    goes to it, so a dead peer fails that write within seconds. A rank
 *    that closes cleanly says BYE over UD first, so its peers report its
 *    QP's death quietly.
 *  - Breaks: any other error completion (a remote access error of one
 *    RDMA READ/WRITE whose MD went away, a local protection error...), or
 *    a flushed WR on a QP we did not retire, puts the QP in error but says
 *    nothing of the peer: the operations in flight on that QP fail (bulks
 *    report bulk_done with NAL_EIO) and the connection re-opens with a new
 *    RC QP through the same handshake, one epoch later. REQ and REP carry
 *    the epoch (older ones are stale) and the sender's count of the
 *    receiver's messages it consumed; that count is frozen from the break
 *    on, as messages arriving on the old QP are dropped. Each side then
 *    sends again, on the new QP, its messages the other has not consumed:
 *    every message sent is kept (per peer, a copy per credit) until the
 *    peer's consumed count covers it, so no eager message is lost or
 *    delivered twice and lib/ptl sees nothing. The old QP drains its
 *    flushed WRs before it is destroyed. A peer whose connection breaks
 *    more than reopen_max times within VRB_REOPEN_WIN_MS is failed, and is
 *    told so (DROP) so that both sides agree.
 */
#ifndef PTL_VRB_H
#define PTL_VRB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "nal/nal.h"

/* "VRB2": eager buffers of VRB_EAGER (8 KiB + NAL_HDR_ROOM); a "VRB1"
 * peer posts 8 KiB ones, which a message past 8 KiB would overrun (its
 * connection breaking again at each resend): refused at the handshake. */
#define VRB_MAGIC 0x56524232u
/* bytes of one eager buffer = max_inline: 8 KiB of data and libptl's
 * header (nal.h's NAL_HDR_ROOM). At 8192 flat, an MPI message of the
 * default eager limit (8 KiB) went by the bulk path (an RDMA read and its
 * answer) and acknowledged, not ACK-free (its MPI layer's noack_max is
 * what goes inline). */
#define VRB_EAGER (8192u + NAL_HDR_ROOM)
/* n bytes of eager buffers, rounded up to 4 KiB: aligned_alloc's size
 * must be a multiple of its alignment */
#define VRB_PAGES(n) (((size_t)(n) + 4095) & ~(size_t)4095)
#define VRB_CREDITS 32u         /* eager buffers granted to each peer */
/* Receive buffers posted beyond the grants: a consumed buffer goes back
 * to the SRQ at the next poll (vrb_msg.c, off a ping-pong's critical
 * path), and the spare covers it meanwhile, so a peer within its credits
 * never finds the SRQ short. */
#define VRB_RECV_SPARE 1u
#define VRB_SQ_DEPTH 128u       /* send WRs in flight per RC QP */
#define VRB_TX_MAX 2048u        /* signaled WRs in flight per NI (CQ room) */
/* Eager SENDs ask for a completion only every VRB_SIG_EVERY-th time (and
 * whenever the send queue or the NI's unsignaled count runs short): a
 * completion costs the provider a CQE and us a poll, per message. An RC
 * QP completes in order, so a signaled SEND's completion also retires the
 * unsignaled ones before it. At most VRB_UNSIG_MAX are outstanding per NI,
 * as a broken QP flushes each with a CQE of its own (the CQ has room). */
#define VRB_SIG_EVERY 16u
#define VRB_UNSIG_MAX 1024u
#define VRB_CM_BUFS 64u         /* UD receive/send buffers for the handshake */
#define VRB_CM_RETRY_MS 200     /* handshake retransmission period */
#define VRB_CM_TRIES 75         /* ... and attempts before the peer is dead */
/* Transport retries of an unanswered packet: timeout 16 (268 ms) x 7 sends,
 * so a dead peer shows within ~2 s. Not 7: rdma_rxe takes retry_cnt 7 as
 * "retry forever" (as IB defines only for rnr_retry), and a dead peer
 * would never be noticed. */
#define VRB_RETRY_CNT 6
#define VRB_ACK_TIMEOUT 16
#define VRB_KA_MS 2000          /* default keepalive period (PTL_VERBS_KEEPALIVE_MS) */
/* How long after a send, with nothing received since, a waiting thread
 * polls on (nal_ops.due, PTL_VERBS_DUE_MS): under TCG emulation on a loaded
 * host a vCPU that halts is rescheduled milliseconds later, so a ping-pong
 * whose ranks slept took milliseconds a round trip where one that polls
 * took 20 us. Long enough for a preempted peer vCPU to come back. */
#define VRB_DUE_MS 50
#define VRB_KA_POLLS 64         /* progress() calls between keepalive clock reads */
#define VRB_REG_MAX 256u        /* registrations kept (more only while in use) */
#define VRB_STASH 64u           /* completions sleep() took off the CQ */
#define VRB_QKEY 0x50544c31u
#define VRB_REOPEN_MAX 8u       /* re-opens of one peer's connection ... */
#define VRB_REOPEN_WIN_MS 60000 /* ... within this long, before it is failed */
#define VRB_RETIRED 16u         /* broken QPs draining at once (per NI) */
#define VRB_RETIRE_MS 200       /* a drained QP lives this long, so that late
                                 * receive completions are polled first */

/* The immediate data of an eager message (see "Wire facts"); a keep slot's
 * length carries VRB_IMM_ZIPPED too, so a resend sends the same. */
#define VRB_IMM_COUNT 0x7fffffffu
#define VRB_IMM_ZIPPED 0x80000000u

/* Kinds of work request, in the low 3 bits of wr_id. */
enum vrb_wr_kind {
	VRB_WR_SEND = 1,        /* (peer << 3) | (WRs its completion retires << 32):
	                         * 0 for an unsignaled one (it completes alone
	                         * only when flushed) */
	VRB_WR_CREDIT,          /* (peer << 3) */
	VRB_WR_BULK,            /* struct vrb_bulk * */
	VRB_WR_RECV,            /* (buffer << 32) */
	VRB_WR_CM_RECV,         /* (buffer << 32) */
	VRB_WR_CM_SEND,         /* (buffer << 32) */
};
#define VRB_WR(kind, peer, idx) ((uint64_t)(kind) | ((uint64_t)(uint32_t)(peer) << 3) | ((uint64_t)(idx) << 32))
#define VRB_WR_KIND(id) ((int)((id) & 7u))
#define VRB_WR_PEER(id) ((int)(((id) >> 3) & 0x1fffffffu))
#define VRB_WR_IDX(id) ((uint32_t)((id) >> 32))

/* What a rank publishes through lib/rt. */
struct vrb_addr {
	uint32_t magic;
	uint32_t ud_qpn;
	uint16_t lid;
	uint8_t port;
	uint8_t mtu;       /* enum ibv_mtu of the port */
	uint8_t is_global; /* address by GID (RoCE) rather than LID (IB) */
	uint8_t pad[3];
	uint8_t gid[16];
};

/* DROP: the sender failed the receiver (its connection broke too often). */
enum vrb_cm_type { VRB_CM_REQ = 1, VRB_CM_REP = 2, VRB_CM_BYE = 3, VRB_CM_DROP = 4 };

/* A handshake message (UD). */
struct vrb_cm {
	uint32_t magic;
	uint32_t type;
	uint32_t rank;      /* sender */
	uint32_t qpn;       /* sender's RC QP for the receiver */
	uint32_t psn;
	uint32_t credits;   /* eager buffers the sender posted for the receiver */
	uint64_t slot_addr; /* where the receiver writes its consumed count */
	uint32_t slot_rkey;
	uint32_t epoch;     /* connections made before this one (re-opens) */
	uint64_t consumed;  /* of the receiver's messages the sender handled */
	struct vrb_addr addr; /* sender's address, so the receiver needs no lookup */
	uint8_t key[32];      /* the job key */
};

enum vrb_state { VRB_IDLE, VRB_REQ_SENT, VRB_UP, VRB_FAILED };

struct vrb_bulk;

struct vrb_peer {
	enum vrb_state state;
	bool have_addr;
	struct vrb_addr addr;
	struct ibv_ah *ah;       /* UD address for the handshake */
	struct ibv_qp *qp;
	uint32_t psn, rqpn, rpsn;
	uint32_t epoch;          /* of the connection qp belongs to */
	unsigned reopens;        /* since reopen_t0 */
	uint64_t reopen_t0;
	int tries;
	uint64_t next_try_ms;
	/* Credits: ours toward the peer. */
	uint32_t grant;          /* buffers the peer posted for us */
	uint64_t sent;           /* messages sent to the peer */
	uint64_t resend;         /* first message to send again after a re-open;
	                          * == sent when none waits */
	char *keep;              /* copies of the last VRB_CREDITS messages sent
	                          * (message i at i % VRB_CREDITS): they are sent
	                          * from here and again after a re-open */
	uint32_t *keep_len;      /* bytes in each slot, | VRB_IMM_ZIPPED */
	struct ibv_mr *keep_mr;
	uint64_t resent;         /* messages sent again (tests show it) */
	uint64_t imm_back;       /* the peer's consumed count as its last
	                          * message carried it (immediate data) */
	uint64_t rslot_addr;     /* our slot in the peer's credit array */
	uint32_t rslot_rkey;
	/* The peer's toward us. */
	uint32_t granted;        /* buffers we posted for the peer */
	uint64_t consumed;       /* of its messages we have handled */
	uint64_t told;           /* consumed as last written to the peer */
	bool credit_owed;        /* a credit write waits for send-queue room */
	uint64_t credit_writes;  /* credit writes posted (not probes): tests
	                          * see that traffic both ways needs none */
	bool starved;            /* a send returned NAL_EAGAIN */
	unsigned sq_used;        /* WRs posted on qp and not known complete */
	unsigned unsig;          /* unsignaled SENDs on qp since its last
	                          * signaled one was posted */
	unsigned unsig_out;      /* unsignaled SENDs on qp not known complete
	                          * (within sq_used) */
	/* Liveness: completions involving the peer, as counted and as last seen
	 * by the keepalive scan; a probe in flight; the peer said BYE. */
	uint64_t acts, acts_seen;
	bool probing;
	bool bye;
	struct vrb_bulk *pend_head, *pend_tail; /* bulks waiting for queue room */
};

/* A broken QP waiting for its flushed WRs before it is destroyed. */
struct vrb_retired {
	struct ibv_qp *qp;
	int peer;
	unsigned out;      /* its signaled send WRs not yet completed (an
	                    * unsignaled one's flush CQE may come later:
	                    * VRB_RETIRE_MS covers it) */
	uint64_t since_ms; /* when out reached 0 */
};

/* One bulk() call: its WRs, and the cookie to report when all are done. */
struct vrb_bulk {
	struct vrb_bulk *next;
	int peer;
	int op;          /* enum nal_bulk_op */
	void *cookie;
	int left;        /* WRs posted and not yet completed */
	int status;
	int nsge, posted_sge; /* local pieces; how many are posted */
	int nreg;             /* pieces holding a registration (vrb_reg_put
	                       * at release), which nsge may undercount */
	uint64_t raddr;
	uint32_t rkey;
	struct ibv_sge *sge;  /* sge_inline or malloc'ed */
	struct ibv_sge sge_inline[8];
};

struct vrb_reg {
	uintptr_t start, end;
	uintptr_t ulo, uhi; /* the pages every request it served covers
	                     * (none when ulo >= uhi): vrb_reg.c */
	struct ibv_mr *mr;
	uint64_t *pfn;   /* page frame of every page when registered, or NULL:
	                  * never reused, freed when its last user is done */
	uint32_t lkey;   /* mr's, here so that a release reads no mr */
	unsigned refs;   /* users: lib/ptl exposures (mem_reg) and bulks */
};

struct nal {
	struct nal_open_args args;
	uint8_t key[32];
	/* device */
	struct ibv_device **devs;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t port;
	int gid_index;
	struct vrb_addr me;
	uint32_t max_sge, max_inline_data;
	char devname[64];
	/* queues */
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *ud;
	int efd;            /* kick() */
	unsigned tx_out;    /* signaled WRs not yet completed */
	unsigned unsig_total; /* the peers' unsig_out, summed */
	uint64_t sends_signaled; /* SENDs posted signaled (tests see the rest were not) */
	uint64_t sends_zipped;   /* messages zipped (vrb_zip.h; tests count them) */
	/* eager receive buffers */
	char *rbuf;
	struct ibv_mr *rbuf_mr;
	uint32_t nrbuf, rbuf_posted;
	uint32_t repost_due; /* 1 + the buffer to post again at the next poll, or 0 */
	/* handshake buffers: [0, VRB_CM_BUFS) receive, then send */
	char *cmbuf;
	struct ibv_mr *cm_mr;
	uint32_t cm_sfree[VRB_CM_BUFS];
	uint32_t ncm_sfree;
	/* credit slots the peers write */
	uint64_t *slots;
	struct ibv_mr *slots_mr;
	/* peers */
	struct vrb_peer *peers;
	int *qpn_map;       /* open-addressed qpn -> peer, size qpn_cap */
	uint32_t *qpn_key;
	uint32_t qpn_cap;
	struct vrb_retired retired[VRB_RETIRED];
	unsigned nretired;
	unsigned reopen_max; /* VRB_REOPEN_MAX; tests lower it */
	atomic_int waiting; /* peers starved or connecting: sleep() polls */
	atomic_int nup;     /* peers VRB_UP: sleep() wakes for the keepalive */
	atomic_bool app_polling; /* set_polling(1): an application thread polls the CQ */
	atomic_int sleepers;     /* threads inside sleep() */
	unsigned ka_ms;     /* keepalive period; 0: off */
	_Atomic uint64_t next_ka_ms;
	unsigned ka_polls;  /* progress() calls since the last keepalive clock read */
	/* An answer is due (vrb_due): a message went out and none came in
	 * since; since when a waiter first asked (0: not yet), and for how
	 * long it may poll on (0: never). Lock held for all three. */
	bool awaiting;
	uint64_t await_since_ms;
	unsigned due_ms;
	bool deferred;      /* a peer may have work progress() must redo (a
	                     * resend, a credit write, queued bulks): set where
	                     * such work appears, so a poll walks the peers only
	                     * then and stays O(1) in the job size otherwise */
	/* completions sleep() took off the CQ for progress(); cq_busy is the
	 * lock of the CQ and the stash (vrb_msg.c) */
	atomic_bool cq_busy;
	struct ibv_wc stash[VRB_STASH];
	unsigned nstash;
	/* bulk */
	struct vrb_bulk *bulk_free;
	struct vrb_reg *regs; /* most recent first; regs_cap of them */
	unsigned nregs, regs_cap;
	unsigned reg_peak;  /* the most nregs ever was */
	int pagemap_fd;     /* -1: page frames not visible, never reuse */
	/* registrations made, found remapped by a request, freed, and freed
	 * unused because ibv_reg_mr hit the memlock limit (tests; at close
	 * with PTL_VERBS_DEBUG) */
	uint64_t reg_made, reg_stale, reg_freed, reg_trimmed;
	bool debug;
};

/* vrb_dev.c */
uint64_t vrb_now_ms(void);
/* vrb_conn.c */
int vrb_conn_init(struct nal *n);
void vrb_conn_fini(struct nal *n);
int vrb_connect(struct nal *n, int peer, const void *addr, size_t len);
int vrb_reaches(struct nal *n, int peer);
void vrb_cm_recv(struct nal *n, const struct ibv_wc *wc, int *done);
void vrb_cm_bye(struct nal *n);
int vrb_cm_timers(struct nal *n);
void vrb_peer_fail(struct nal *n, int peer, const char *why);
void vrb_qp_error(struct nal *n, int peer, enum ibv_wc_status st);
int vrb_post_failed(struct nal *n, int peer, const char *what);
void vrb_retired_wc(struct nal *n, uint32_t qpn);
void vrb_retired_sweep(struct nal *n);
void vrb_retired_fini(struct nal *n);
int vrb_qpn_peer(struct nal *n, uint32_t qpn);
/* vrb_msg.c */
int vrb_post_recvs(struct nal *n, uint32_t count);
int vrb_send(struct nal *n, int peer, const void *hdr, size_t hdr_len, const void *payload, size_t len);
int vrb_progress(struct nal *n);
int vrb_sleep(struct nal *n, int timeout_ms);
void vrb_kick(struct nal *n);
void vrb_set_polling(struct nal *n, int on);
int vrb_due(struct nal *n);
/* Inline, as every eager send asks both of these. */
static inline bool vrb_sq_room(const struct nal *n, const struct vrb_peer *p, unsigned wrs)
{
	return p->sq_used + wrs <= VRB_SQ_DEPTH && n->tx_out + wrs <= VRB_TX_MAX;
}
static inline void vrb_sq_take(struct nal *n, struct vrb_peer *p, unsigned wrs)
{
	p->sq_used += wrs;
	n->tx_out += wrs;
}
int vrb_keepalive(struct nal *n, uint64_t now);
int vrb_keep_init(struct nal *n, struct vrb_peer *p);
/* The peer's consumed count of ours. It reaches us two ways: RDMA-written
 * into our slot and carried by its messages. The later of the two counts;
 * the slot is never written from here, so a write landing late cannot
 * move it back. Inline: every eager send and receive asks. */
static inline uint64_t vrb_peer_back(const struct nal *n, int peer)
{
	uint64_t back = __atomic_load_n(&n->slots[peer], __ATOMIC_ACQUIRE);
	return n->peers[peer].imm_back > back ? n->peers[peer].imm_back : back;
}
int vrb_resend(struct nal *n, int peer);
/* vrb_reg.c */
int vrb_mem_reg(struct nal *n, void *addr, size_t len, struct nal_mr *mr);
void vrb_mem_dereg(struct nal *n, struct nal_mr *mr);
struct ibv_mr *vrb_reg_get(struct nal *n, void *addr, size_t len);
void vrb_reg_put(struct nal *n, uint32_t lkey);
void vrb_reg_fini(struct nal *n);
int vrb_reg_init(struct nal *n);
/* vrb_bulk.c */
int vrb_bulk(struct nal *n, int peer, enum nal_bulk_op op, const struct iovec *local, int niov,
	     uint64_t raddr, uint64_t rkey, size_t len, void *cookie);
void vrb_bulk_wc(struct nal *n, const struct ibv_wc *wc);
int vrb_bulk_pending(struct nal *n, struct vrb_peer *p);
void vrb_bulk_drop(struct nal *n, struct vrb_peer *p);
void vrb_bulk_break(struct vrb_peer *p);

#endif /* PTL_VRB_H */
