/*
 * lib/nal/tcp/tcp.h - the TCP NAL's private state (nal_tcp_ops is in
 * nal.h). For clusters without RDMA and for hosts made of network
 * namespaces on one machine.
 *
 * Connections: each rank listens on one port; the first send to a peer
 * opens a connection to it that carries only our traffic to it. The peer's
 * traffic to us comes on the connection it opened. Two one-way streams per
 * pair need no tie-break for simultaneous connects and keep per-peer order
 * trivially (one stream per direction). Every connection starts with a
 * HELLO frame carrying the job id and the per-job key; the acceptor closes
 * and counts a connection whose HELLO is wrong (tcp_refused()).
 *
 * Framing: a struct tcp_fh, then len bytes. A MSG frame is one send() of
 * lib/ptl (header and payload contiguous). Bulk moves are messages too,
 * served by the peer's progress(): READ asks the peer to stream RDATA from
 * its registered memory, WRITE streams WDATA into it and waits for WACK.
 * So bulk needs the peer's progress engine (its progress thread), unlike
 * shm's CMA or verbs' RDMA.
 *
 * A broken connection (EOF without BYE, reset, a bad frame) closes both
 * streams of that peer, drops its pending moves without bulk_done, and
 * reports peer_failed once.
 */
#ifndef PTL_TCP_H
#define PTL_TCP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "nal/nal.h"

#define TCP_MAGIC 0x70746c7463703031ULL /* "ptltcp01" */
#define TCP_MAX_INLINE (16384u + NAL_HDR_ROOM) /* hdr + payload of a MSG */
#define TCP_CHUNK (64u << 10)           /* bytes of one RDATA/WDATA frame */
#define TCP_FRAME_MAX (TCP_CHUNK + 64u) /* longer frames are a protocol error */
#define TCP_OUT_LIMIT (1u << 20)        /* queued bytes before send() says EAGAIN */
#define TCP_MAX_ADDRS 8

enum tcp_ftype {
	TCP_F_HELLO = 1, /* payload struct tcp_hello */
	TCP_F_MSG,       /* payload: one message */
	TCP_F_RREQ,      /* id, raddr, rkey, status = bytes wanted */
	TCP_F_RDATA,     /* id, raddr = offset into the move; payload: bytes */
	TCP_F_RERR,      /* id, status: the READ failed */
	TCP_F_WDATA,     /* id, raddr (absolute), rkey; flags LAST; payload */
	TCP_F_WACK,      /* id, status */
	TCP_F_BYE,       /* the sender closes cleanly: EOF after this is no failure */
};
#define TCP_FL_LAST 1u

struct tcp_fh {
	uint32_t len;   /* payload bytes after this header */
	uint16_t type;
	uint16_t flags;
	uint64_t status;
	uint64_t id;
	uint64_t raddr;
	uint64_t rkey;
};

struct tcp_hello {
	uint64_t magic;
	uint64_t jobid;
	uint8_t key[16];
	int32_t rank;
	int32_t size;
};

/* The published address: port and up to TCP_MAX_ADDRS IPv4 addresses,
 * both in network order; tried in order. */
struct tcp_addr {
	uint32_t magic;
	uint16_t port;
	uint16_t naddr;
	uint32_t ip[TCP_MAX_ADDRS];
};

enum tcp_ckind { TCP_C_IN, TCP_C_OUT };

struct tcp_conn {
	enum tcp_ckind kind;
	int fd;
	int peer;             /* -1 on an accepted connection before its HELLO */
	char *in;             /* unparsed bytes (TCP_C_IN) */
	size_t inlen, incap;
	struct tcp_conn *next; /* accepted, not yet identified */
	bool closed;
	struct sockaddr_in from;
};

/* A bulk move we started (READ or WRITE) and its progress. */
struct tcp_move {
	struct tcp_move *next;
	uint64_t id;
	enum nal_bulk_op op;
	void *cookie;
	uint64_t raddr, rkey;
	size_t len, done;     /* READ: bytes arrived; WRITE: bytes queued */
	int niov;
	struct iovec iov[];
};

/* A READ a peer asked of us, streamed back as RDATA. */
struct tcp_serve {
	struct tcp_serve *next;
	uint64_t id;
	uint64_t raddr;
	size_t len, off;
};

enum tcp_pstate { TCP_P_IDLE, TCP_P_CONNECTING, TCP_P_UP, TCP_P_FAILED };

struct tcp_peer {
	enum tcp_pstate state;
	struct tcp_conn *out;  /* ours to the peer */
	struct tcp_conn *in;   /* the peer's to us */
	struct sockaddr_in addr[TCP_MAX_ADDRS];
	int naddr, cur;
	char *ob;              /* bytes queued on out: [ooff, olen) */
	size_t ooff, olen, ocap;
	bool watch_out;        /* EPOLLOUT registered */
	bool bye;              /* the peer said BYE */
	bool fail_pending;     /* broken; peer_failed not yet reported */
	bool active;           /* has moves or serves (counted in nstream) */
	struct tcp_move *moves, *moves_tail;
	struct tcp_serve *serves, *serves_tail;
};

struct nal {
	int rank, size;
	uint64_t jobid;
	uint8_t key[16];
	struct nal_upcalls up;
	int epfd, lfd, evfd;
	uint16_t port;
	struct tcp_addr self;
	uint64_t mr_key;       /* random per instance: READ/WRITE must name it */
	uint64_t next_id;
	struct tcp_peer *peers;
	bool *local;           /* peer is on this host (start()) */
	struct tcp_conn *pending; /* accepted, waiting for HELLO */
	int in_progress;
	int nfail_pending;
	int nstream;           /* peers with moves or serves to stream */
	uint64_t refused;
	struct tcp_conn *dead;    /* closed, freed at the end of progress() */
};

/* tcp_conn.c: sockets, handshake, queues. */
int tcp_listen(struct nal *n);
int tcp_peer_connect(struct nal *n, int peer);
int tcp_queue(struct nal *n, int peer, const struct tcp_fh *fh,
	      const void *p1, size_t l1, const void *p2, size_t l2);
/* Reserves a frame of fh->len payload bytes at the tail of peer's queue
 * and copies fh; the caller fills the payload and calls tcp_flush(). NULL
 * when the peer failed or memory ran out. */
char *tcp_queue_space(struct nal *n, int peer, const struct tcp_fh *fh);
void tcp_flush(struct nal *n, int peer);
void tcp_peer_break(struct nal *n, int peer, const char *why, int err);
void tcp_peer_drop_moves(struct tcp_peer *p);
void tcp_accept(struct nal *n);
void tcp_conn_event(struct nal *n, struct tcp_conn *c, uint32_t events);
void tcp_conn_free(struct tcp_conn *c);
/* tcp_nal.c: one frame arrived from peer (after the HELLO). 0, or -1 when
 * the frame is bad (the caller breaks the link). */
int tcp_frame(struct nal *n, int peer, const struct tcp_fh *fh, const char *payload);

/* Connections refused so far for a missing or wrong job key (for tests and
 * diagnostics; each refusal is also printed). */
uint64_t tcp_refused(const struct nal *n);

#endif /* PTL_TCP_H */
