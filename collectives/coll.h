/* coll.h: collective schedules for ptl (libptlcoll).
 *
 * One collective call (allreduce, reduce_scatter, allgather, alltoall, bcast,
 * reduce, barrier, gather, scatter, scan, exscan) over N ranks becomes a schedule: for every rank, a list of
 * commands (send, receive, reduce-into, copy) with byte ranges, a step, a
 * direction and the ids of the commands it waits for. The same schedule feeds
 * the cost model (coll_cost) and an executor (coll_engine for one rank over a
 * real transport, coll_exec_run for all ranks in one process). Nothing here
 * touches a network: every function is a pure computation on its arguments.
 *
 * Errors are negative errno values (-EINVAL, -ENOMEM, -ENOTSUP, -E2BIG);
 * functions that can say more take a char buffer for a message.
 *
 * Ranks: a schedule works in logical ranks 0..N-1 (the index into the
 * participant list). coll_cmd.peer is logical; coll_cmd.peer_rank is
 * participants[peer] (or peer when no list was given).
 */
#ifndef COLL_H
#define COLL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

enum coll_op {
	COLL_OP_ALLREDUCE,
	COLL_OP_REDUCE_SCATTER,
	COLL_OP_ALLGATHER,
	COLL_OP_ALLTOALL,
	COLL_OP_BCAST,
	COLL_OP_REDUCE,
	COLL_OP_BARRIER,
	COLL_OP_GATHER,
	COLL_OP_SCATTER,
	COLL_OP_SCAN,
	COLL_OP_EXSCAN,
	COLL_OP_COUNT
};

/* Algorithm names as users type them: coll_algo_name/coll_algo_parse. */
enum coll_algo {
	COLL_ALGO_AUTO,              /* "auto": coll_choose decides */
	COLL_ALGO_RING,              /* "ring": one-way ring, chunk pipelined */
	COLL_ALGO_RING_SENDRECV,     /* "ring_sendrecv": ring whose receives land in
	                              * scratch and are reduced/copied by a local command */
	COLL_ALGO_RING_BIDIR,        /* "ring_bidir": both directions at once */
	COLL_ALGO_HALVING_DOUBLING,  /* "halving_doubling": recursive halving-doubling */
	COLL_ALGO_TREE,              /* "tree": double binary tree (allreduce),
	                              * merge tree of seed 003 (reduce) */
	COLL_ALGO_PAIRWISE,          /* "pairwise": alltoall */
	COLL_ALGO_BINOMIAL,          /* "binomial": bcast tree */
	COLL_ALGO_SCATTER_ALLGATHER, /* "scatter_allgather": bcast for large messages */
	COLL_ALGO_DISSEMINATION,     /* "dissemination": barrier */
	COLL_ALGO_OWNER,             /* "owner": reduce, root adds parts in rank order */
	COLL_ALGO_CHAIN,             /* "chain": scan/exscan passed along rank order */
	COLL_ALGO_RECURSIVE_DOUBLING,/* "recursive_doubling": scan/exscan, allreduce and
	                              * allgather (N = 2^k) in log2 N rounds */
	COLL_ALGO_LINEAR,            /* "linear": gather/scatter straight to/from the root,
	                              * alltoall with every transfer in one step */
	COLL_ALGO_BRUCK,             /* "bruck": allgather in ceil(log2 N) rounds, any N */
	COLL_ALGO_COUNT
};

enum coll_kind {
	COLL_SEND,   /* send len bytes at (buf, off) to peer */
	COLL_RECV,   /* receive len bytes from peer into (buf, off) */
	COLL_REDUCE, /* peer >= 0: receive len bytes from peer into (src_buf, src_off),
	              * then (buf, off) = (buf, off) OP (src_buf, src_off).
	              * peer == COLL_PEER_NONE: the same combine, locally.
	              * Either way with src_first (buf, off) = (src_buf,
	              * src_off) OP (buf, off). The source is apart from
	              * (buf, off), or (from_input) may be it: received there. */
	COLL_COPY    /* local: copy len bytes (src_buf, src_off) -> (buf, off) */
};

/* Buffers a command names. DATA is the rank's in-place buffer: on entry its
 * input, on exit its result. INPUT is the read-only send buffer of alltoall.
 * SCRATCH is the rank's temporary area (coll_info.scratch_bytes). */
enum coll_buf { COLL_BUF_DATA, COLL_BUF_INPUT, COLL_BUF_SCRATCH };

#define COLL_PEER_NONE (-1)
#define COLL_MAX_DEPS 4
#define COLL_MAX_CHUNKS 64
#define COLL_MAX_RANKS (1 << 24)

/* One command of one rank.
 *
 * Ids are unique in the whole schedule and ordered by (step, direction,
 * chunk, rank, sub), the order of seed 002; they are not dense (a slot that
 * carries nothing keeps its number). Every dependency has a smaller id and
 * belongs to the same rank, so a rank's commands in id order are a valid
 * order to post them in. A receive's `match` is the id of the peer's send it
 * pairs with (a send's `match` is its own id), so a transport can use it as
 * a tag: both sides know it without talking. */
struct coll_cmd {
	uint64_t id;
	uint64_t match;
	uint64_t deps[COLL_MAX_DEPS];
	size_t off;         /* byte offset in buf */
	size_t len;         /* bytes */
	size_t src_off;     /* COLL_REDUCE, COLL_COPY: source offset in src_buf */
	uint32_t step;
	int32_t peer;       /* logical rank, or COLL_PEER_NONE */
	int32_t peer_rank;  /* participants[peer], or COLL_PEER_NONE */
	uint16_t chunk;
	uint8_t ndeps;
	uint8_t kind;       /* enum coll_kind */
	uint8_t dir;        /* thread id: 0 clockwise/default, 1 counter-clockwise
	                     * (ring_bidir) or second tree (tree allreduce) */
	uint8_t buf;        /* enum coll_buf */
	uint8_t src_buf;    /* enum coll_buf */
	/* COLL_REDUCE with the input apart: (buf, off) starts as INPUT's bytes
	 * at off, not as its own, so buf = INPUT OP src with the operands in
	 * the in-place order; an executor reads INPUT there and writes buf in
	 * one pass (no copy of INPUT into buf first). The expansions receive
	 * src into (buf, off) itself (ring_sendrecv's separate add aside), so
	 * that pass is buf OP= INPUT's bytes. */
	uint8_t from_input;
	/* COLL_REDUCE: the source holds the first operand (the lower ranks'
	 * part), buf the second, and the sum goes to buf: recursive
	 * doubling's upper rank adds into its own part in one pass, where it
	 * added into the received part in scratch and copied the sum back.
	 * Never with from_input. */
	uint8_t src_first;
};

/* The most ports a request may say a rank has. */
#define COLL_MAX_PORTS 64

/* What to expand. Zero means the default for elem_size (1), num_chunks (1)
 * and ports (1). */
struct coll_req {
	enum coll_op op;
	enum coll_algo algo;     /* requested algorithm, usually COLL_ALGO_AUTO */
	int nranks;              /* N, 1..COLL_MAX_RANKS */
	const int *participants; /* N physical ranks, or NULL for 0..N-1 */
	int root;                /* bcast and reduce: logical root */
	/* bytes: allreduce, reduce, bcast: the vector; reduce_scatter: the whole
	 * input vector, rank i keeps block i (coll_block; with counts, the sum
	 * of the blocks: coll_req_normalize sets it); allgather: the whole
	 * output, rank i contributes block i; alltoall: bytes sent to EACH peer
	 * (buffers hold N such blocks); barrier: ignored; gather, scatter: the
	 * block of EACH rank unless counts is given; scan, exscan: the vector.
	 *
	 * gather and scatter lay the blocks out in relative-rank order (v =
	 * rank - root mod N), each rank's DATA starting at its own block, so a
	 * tree's subtree is one contiguous range: the root's DATA holds every
	 * block (v = 0 first), a leaf's only its own. coll_data_span says how
	 * much of DATA a rank touches. exscan's DATA is two vectors: the input
	 * (bytes), then the result (bytes; rank 0's is left as it was). */
	size_t bytes;
	/* The v-variants' block sizes in bytes; NULL: the plain operation, sized
	 * by `bytes`. Not owned.
	 * gather, scatter, allgather: N sizes indexed by logical rank. The
	 * linear gather/scatter's rank r reads counts[r] only (the root reads
	 * all), so an MPI rank that knows just its own block can expand its
	 * part; a binomial tree's inner ranks need their subtree's sizes.
	 * allgather: DATA holds the blocks in rank order, block i at the sum of
	 * counts[0..i); every rank reads every size (MPI_Allgatherv's ranks all
	 * know them). bytes is ignored.
	 * alltoall: a matrix, N*N sizes row-major: counts[i*N + j] bytes go from
	 * rank i to rank j. Rank r's INPUT holds its row's blocks (to rank 0
	 * first) back to back, its DATA its column's (from rank 0 first). Rank
	 * r's part reads row r and column r only; see recv_counts.
	 * reduce_scatter: N sizes, whole elements each: block i (rank i's
	 * result) is counts[i] bytes at the sum of counts[0..i) of the vector,
	 * as MPI_Reduce_scatter's recvcounts; the ring family only (every rank
	 * reads every size). */
	const size_t *counts;
	/* alltoall only, the form an MPI_Alltoallv rank knows: counts is then
	 * this rank's row (N sizes: what it sends to each rank) and recv_counts
	 * its column (what it receives from each); both hold the rank's copy
	 * to itself, which must agree. Only coll_expand_rank takes this form:
	 * the other ranks' parts are unknown. Not owned. */
	const size_t *recv_counts;
	size_t elem_size;        /* blocks are cut at element boundaries */
	/* allreduce, reduce and reduce_scatter by any algorithm
	 * (coll_input_apart says which operations and algorithms take it):
	 * the input is apart, in INPUT (read only, info.input_bytes = bytes),
	 * and DATA only receives the result (a reduce's partial sums off the
	 * root, a reduce_scatter's partial sums beside its own block). Recursive doubling's
	 * first round sends INPUT and combines it with what arrives; the
	 * others send their first part from INPUT (the rings' first block,
	 * halving-doubling's first half, a tree leaf's part, a reduce's
	 * non-owner's whole) and a rank's first reduction of each byte reads
	 * its own part from INPUT (from_input), so nothing copies the whole
	 * input first (ptl's MPI_Allreduce and MPI_Reduce). The combinations
	 * and their bits are the same. */
	bool input;
	int num_chunks;          /* ring algorithms: chunks per block (1..64) */
	int ports;               /* concurrent transfers a rank can drive, 1-COLL_MAX_PORTS */
	/* Every rank on one host (shm joins every pair alike): coll_choose
	 * then takes halving-doubling over the one-port ring for a
	 * power-of-two allreduce past the short ones, the binomial bcast of
	 * up to 8 ranks and the recursive-doubling allgather of 4 or 8 at
	 * any size, and linear gathers, scatters and alltoalls of up to 8
	 * ranks. */
	bool one_host;
	/* The ranks outnumber the host's cores (they take turns on them):
	 * with one_host, a 4-rank allreduce past the short ones takes the
	 * rule for shared cores and a scan or exscan of a long vector the
	 * chain (coll_choose.c says why). */
	bool shared_cores;
};

/* The result of coll_choose. warning is "" when the choice is the plain
 * reading of the request, otherwise one sentence naming the reason. */
struct coll_choice {
	enum coll_algo algo;
	char warning[160];
};

/* Figures of a whole schedule. */
struct coll_info {
	enum coll_op op;
	enum coll_algo algo;      /* what was expanded (after coll_choose) */
	int nranks;
	int ndirs;                /* directions (threads) the algorithm uses */
	int num_chunks;           /* chunks actually used (1 for non-ring) */
	uint32_t steps;           /* the algorithm's steps */
	uint64_t id_stride;       /* ids per (step, dir, chunk, rank) slot: id /
	                           * id_stride is seed 002's cmd_id numbering */
	uint64_t link_slots;      /* steps * N * ndirs: every link of every step,
	                           * carrying data or not (seed 002's V1.1 count) */
	uint64_t commands;        /* transfers that carry data: sends, each paired
	                           * with one receive (zero-byte ones for barrier) */
	uint64_t entries;         /* every command of every rank */
	uint64_t total_bytes;     /* sum of transfer lengths */
	size_t min_transfer;      /* smallest and largest transfer */
	size_t max_transfer;
	size_t data_bytes;        /* per-rank DATA buffer size (alltoall with
	                           * counts: the largest column's sum) */
	size_t input_bytes;       /* per-rank INPUT buffer size (alltoall; with
	                           * counts the largest row's sum) */
	size_t scratch_bytes;     /* per-rank SCRATCH size */
};

struct coll_rank_sched {
	int rank;               /* logical rank */
	size_t ncmds;
	struct coll_cmd *cmds;  /* sorted by id */
};

struct coll_sched {
	struct coll_req req;       /* normalized copy; participants not owned */
	struct coll_choice choice;
	struct coll_info info;     /* commands/entries/bytes cover the ranks held */
	int nheld;                 /* ranks held: N (coll_expand) or 1 (coll_expand_rank) */
	struct coll_rank_sched *ranks;
};

/* ---- names ---- */
const char *coll_op_name(enum coll_op op);
int coll_op_parse(const char *name, enum coll_op *op);        /* -EINVAL if unknown */
const char *coll_algo_name(enum coll_algo algo);
int coll_algo_parse(const char *name, enum coll_algo *algo);  /* -EINVAL if unknown */
const char *coll_kind_name(enum coll_kind kind);

/* Where block i of a vector cut into `parts` blocks lives: bytes cut into
 * element units as evenly as possible (earlier blocks get one more unit), and
 * a trailing partial element belongs to the last block. reduce_scatter and
 * allgather use coll_block(bytes, elem_size, N, i, ...) for rank i's block. */
void coll_block(size_t bytes, size_t unit, size_t parts, size_t i,
                size_t *off, size_t *len);

/* ---- choice (seed 002, R3/R4 and table V3.1) ----
 * allreduce: "tree", "ring_sendrecv", "halving_doubling" are kept as asked
 * (halving_doubling needs N a power of two, else the ring rule below applies
 * with a warning); "ring": ring_bidir with ports >= 2, else ring; "auto":
 * with ports >= 2 halving_doubling for N a power of two and ring_bidir
 * otherwise, with one port the ring; "ring_bidir" with ports < 2: ring and a
 * warning. reduce_scatter/allgather: ring, ring_sendrecv, ring_bidir the same
 * way; with counts (allgatherv) ring_bidir and ring_sendrecv are the
 * one-way ring, with a warning (a reduce_scatter with counts keeps them).
 * allgather "auto": up to 64 KiB in all, recursive_doubling for N a power
 * of two and bruck otherwise (log2 N latencies, the ring's bytes), on one
 * host recursive_doubling at any size for N = 2, 4 or 8, else the ring
 * rule; "recursive_doubling" on
 * N != 2^k is bruck with a warning. alltoall: pairwise (auto) or linear
 * (auto on one host of up to 8 ranks). bcast: binomial below 64 KiB or 8
 * ranks (on one host up to 8 ranks at any size), else scatter_allgather. reduce: tree (auto) or owner. barrier:
 * dissemination. gather, scatter: binomial (auto) or linear (auto on one
 * host of up to 8 ranks). scan, exscan: recursive_doubling (auto) or chain
 * (auto for long vectors where the ranks outnumber the cores); both combine
 * in an order fixed by ranks.
 * An unknown or out-of-range request is -EINVAL, an algorithm that does not
 * implement the op -ENOTSUP; msg (may be NULL) says which. */
int coll_choose(const struct coll_req *req, struct coll_choice *out,
                char *msg, size_t msglen);

/* Whether algo (as coll_choose resolved it) runs op with the input apart
 * (coll_req.input). */
bool coll_input_apart(enum coll_op op, enum coll_algo algo);

/* ---- expansion ----
 * coll_expand: every rank's commands. O(total commands) time and memory.
 * coll_expand_rank: rank `rank`'s commands only, in O(that rank's commands)
 * (O(steps) for the rings and trees; the owner form's root is O(N)); info
 * then counts only that rank, except steps/link_slots/sizes, which are the
 * schedule's. Both run coll_choose first (sched->choice keeps its warning).
 * On error *out is NULL and msg says why. */
int coll_expand(const struct coll_req *req, struct coll_sched **out,
                char *msg, size_t msglen);
int coll_expand_rank(const struct coll_req *req, int rank,
                     struct coll_sched **out, char *msg, size_t msglen);
void coll_free(struct coll_sched *sched);

/* Whole-schedule figures without holding the schedule: expands one rank at
 * a time (O(N * steps) time, O(steps) memory). */
int coll_summarize(const struct coll_req *req, struct coll_info *info,
                   struct coll_choice *choice, char *msg, size_t msglen);

/* ---- reading a schedule ---- */
/* Bytes of DATA from offset 0 that rank `rank`'s commands touch (0 if not
 * held): what a rank must provide when it need not hold data_bytes (a
 * gather's or scatter's non-root ranks hold only their subtree). */
size_t coll_data_span(const struct coll_sched *s, int rank);
/* The commands of logical rank `rank` (NULL, *n = 0 if not held). */
const struct coll_cmd *coll_rank_cmds(const struct coll_sched *s, int rank, size_t *n);
/* The command with this id on this rank, or NULL. O(log n). */
const struct coll_cmd *coll_find(const struct coll_sched *s, int rank, uint64_t id);

struct coll_iter {
	const struct coll_cmd *cmds;
	size_t n, pos;
};
/* Iterate one rank's commands in id order:
 *   struct coll_iter it; const struct coll_cmd *c;
 *   coll_iter_init(&it, s, rank);
 *   while ((c = coll_iter_next(&it))) ... */
void coll_iter_init(struct coll_iter *it, const struct coll_sched *s, int rank);
const struct coll_cmd *coll_iter_next(struct coll_iter *it);

/* Check a whole schedule's invariants: ids sorted and unique, every
 * dependency earlier on the same rank, every receive paired with exactly one
 * send of the same length and every send with one receive, buffer ranges
 * inside their buffers. 0 or -EINVAL with the first violation in msg. */
int coll_check(const struct coll_sched *s, char *msg, size_t msglen);

/* ---- cost model ----
 * The schedule runs as a DAG: a command starts when its dependencies are done;
 * a transfer also needs its peer's receive to be ready and a free port of the
 * sending rank (ports_per_rank at once; with one port the two directions of
 * ring_bidir take turns). A transfer takes alpha + bytes/beta; a reduction
 * adds bytes*gamma; a local copy is free. Needs a whole schedule.
 *
 * A rank is one thread: its CPU does one thing at a time, so its
 * reductions take turns. The software terms (o, call, ranks_per_core,
 * acked_sends; all 0 gives the alpha-beta-gamma model above) put more
 * on that CPU: its per-call cost and per-message overheads take turns with
 * its reductions. A send costs the sender o before the transfer,
 * a receive costs the receiver o after it (LogP's o), then its reduction.
 * A ping-pong's half round trip is then alpha + 2 o. */
#define COLL_COST_RATES 12
struct coll_cost_params {
	double alpha;    /* seconds per transfer (beyond the two o's) */
	double beta;     /* bytes per second; <= 0 means infinite */
	double gamma;    /* seconds per reduced byte */
	int ports;       /* ports per rank; 0: the request's */
	double o;        /* seconds of a rank's CPU per message sent or received */
	double call;     /* seconds of every rank's CPU per call, before its first command */
	/* Ranks sharing one core (<= 1: a core each). A waiting rank keeps its
	 * share of the core (it polls), so each rank runs at 1/ranks_per_core
	 * speed: o, call, gamma and bytes/beta (on shared memory a copy is
	 * CPU work) all take that many times longer. alpha does not: what a
	 * shared core adds to latency (waiting to be scheduled) is a
	 * different figure, so calibrate alpha at the same sharing. */
	double ranks_per_core;
	/* Sends of more than 0 bytes are done only when the receiver's
	 * acknowledgement is back (ptl's MPI: a buffer may be reused, and a
	 * dependent reduction may overwrite it, only then): it leaves when the
	 * receiver has taken the message (o), takes ack_alpha (0: alpha), and
	 * costs the sender o. Zero-byte sends (a barrier's) are done at once.
	 * ack_alpha is its own figure because on shared cores alpha is mostly
	 * waiting for the peer to be scheduled, and a sender waiting for its
	 * ACK is polling already. */
	bool acked_sends;
	double ack_alpha;
	size_t noack_max;  /* with acked_sends: sends up to this many bytes are done
	                    * at once (ptl's MPI sends up to 1024 B without an ACK) */
	/* Sends of more than rndv_min bytes go by rendezvous, as ptl's MPI
	 * sends above its eager limit: the header (alpha), the receiver's o
	 * to ask for the data, alpha, then the sender's CPU copies the bytes
	 * (bytes/beta, in turn with its other CPU work: on shm the rank that
	 * serves a get copies), alpha back and the receiver's o. The send is
	 * done when its copy is (and o); no port is held, no ACK is waited
	 * for. rndv_cost: the sender's CPU per rendezvous beyond the bytes
	 * (exposing the buffer, serving the get, the copy's system call). Off
	 * when rndv is false. */
	bool rndv;
	size_t rndv_min;
	double rndv_cost;
	/* With rndv: a copy of at least split_min bytes is split, as ptl's
	 * shm NAL splits a CMA move of 64 KiB and up (SHM_REC_HELP): the
	 * sender asks the receiver (alpha) to copy the second half with its
	 * own CPU, and copies the first, half the bytes rounded down to
	 * 4 KiB; the copy is done when both halves are. One rank has one
	 * split copy at a time (ptl: one per peer; a second copy while one
	 * is split goes whole). A 2-rank ping-pong copies in parallel (its
	 * receiver is idle), an exchange does not (each CPU copies its own
	 * half and the peer's). 0: never split. split_cost: the receiver's
	 * CPU per split copy beyond its half's bytes (taking the request, its
	 * own copy call, telling the sender it is done). */
	size_t split_min;
	double split_cost;
	/* A receive of more than lazy_max bytes costs its rank recv_post of
	 * CPU when it is posted, before it can match (ptl's MPI posts an ME
	 * for it: four calls; a smaller one waits as an unexpected message:
	 * its message lands in the unexpected buffer and is copied out at
	 * the local copy rate, the rest is in o). recv_post 0: off. */
	double recv_post;
	size_t lazy_max;
	/* CPU a rank spends on every send and receive it posts, beyond o
	 * and recv_post: the collective's own bookkeeping for it (posting
	 * it, noting its completion, what it unblocks), paid when posted. */
	double cmd_cost;
	/* The ranks share `cores` cores (0, or at least as many cores as
	 * ranks: a core each), as ptl's ranks do on an oversubscribed host,
	 * where a waiting rank yields its core at every poll: CPU work is
	 * not stretched (ranks_per_core is ignored) but scheduled, each piece
	 * on the core where it can start first, so one rank's reduction and
	 * another's message take turns while a third's transfer overlaps
	 * them. A rank that waited pays switch_cost before its work (the
	 * core passes between its waiting ranks, and the one whose message
	 * came gets it when the other yields: most of the latency there);
	 * one that goes on from its own last piece keeps its core. */
	int cores;
	double switch_cost;
	/* With cores (core_wait_set): a rank that waits sees its message
	 * core_wait after it came, its core passing round its waiting ranks
	 * at every poll (ptl's waits yield at every poll) - latency, not
	 * core time, the same whenever in the wait the message comes (the
	 * mean a message pays: bench/mpi_bench.sh's pp4idle less the 2-rank
	 * ping-pong); after the core's own work, a switch later at the
	 * earliest. Unset: every rank that waited pays switch_cost (after the
	 * core's work, or its message). */
	bool core_wait_set;
	double core_wait;
	/* With cores: the switch of a rank that waited in a step where every
	 * rank sends to the next and receives from the one before (a shift:
	 * every rank has work at once) or where every message has one coming
	 * back (pair exchanges), where set; switch_cost in the other steps
	 * (chains, trees: one rank's message wakes a waiting rank). */
	bool switch_shift_set, switch_exch_set;
	double switch_shift, switch_exch;
	/* With cores, bound: rank r runs on core r % cores only (ptlrun
	 * --bind-to core), and a core's ranks take turns as the scheduler
	 * turns them: the rank that has the core keeps it while it has work
	 * (work that comes within poll_window of its last piece: the poll
	 * before its yield sees it); once it waits its core goes to the next
	 * of its ranks a switch later, which takes its turn if it has work
	 * (its message came) and else yields on, a switch a turn. Each
	 * switch takes switch_cost times 1 + u, u drawn from [-switch_jitter,
	 * switch_jitter] (one fixed sequence, so a prediction is the same
	 * every time): two real cores' switches drift apart, and where they
	 * keep in step (no jitter) every message between the cores finds its
	 * receiver on its core, which measured ones do not (the ranks of a
	 * 4-rank recursive doubling on 2 cores take one turn each a call,
	 * half of the lockstep model's). switch_shift, switch_exch and
	 * core_wait are not used. */
	bool bound;
	double poll_window, switch_jitter;
	/* Calls run back to back, as a benchmark's loop runs them: each
	 * rank enters the next as soon as its own part of the last is done
	 * (no barrier between), so one call's late ranks overlap the next
	 * call's early ones. time is then the period, (end of the last call
	 * - end of the first) / (calls - 1). 0 or 1: one call alone; at
	 * most COLL_COST_MAX_CALLS. */
	int calls;
	/* When set, called as each command finishes (call: which of the
	 * calls, from 0; t: seconds from the start of the first), in the
	 * simulation's time order: what ptltool coll --steps prints. */
	void (*on_finish)(void *ctx, int call, int rank, const struct coll_cmd *c, double t);
	void *on_finish_ctx;
	/* A send goes as soon as its sender is ready, not once its receive
	 * is posted too (ptl's MPI: a message that comes first waits as an
	 * unexpected one), and the receive takes it when it is ready, an
	 * eager one copied out of the unexpected buffer then (at the local
	 * copy rate); a rendezvous' header waits the same way. */
	bool unexpected;
	/* The sender's CPU copies an eager message's bytes (bytes/beta after
	 * its o; shm puts them through the ring), so the port holds alpha
	 * alone and the copy takes turns with the rank's other work. An eager
	 * message of more than inline_max bytes (0: none) is instead copied
	 * by its receiver's CPU when it takes it, recv_copy_cost plus
	 * bytes/beta after its o (or at read's or rates' rates, which hold
	 * the fixed cost, without it), and
	 * acknowledged after that (shm: an eager put that does not fit the
	 * ring inline is read by the receiver). */
	bool cpu_copies;
	size_t inline_max;
	double recv_copy_cost;
	/* Messages of 1 to small_max bytes (0: none) go request-free, as ptl's
	 * MPI sends its short allreduce rounds and a schedule's short
	 * messages (inline, ACK-free, no request on the send side): small_o
	 * at each end and small_alpha between instead of o and alpha, each
	 * measured on that path, and no cmd_cost at either end. */
	size_t small_max;
	double small_o;
	double small_alpha;
	/* With rndv: what a rendezvous copy moves per second by the message's
	 * size (nrates points, lengths ascending; 0 points: beta), measured
	 * at the sizes the schedules copy: a copy's rate depends on its size
	 * (which cache the lines come from, the system call and the split's
	 * fixed costs spread over the bytes). Between two points the rate is
	 * interpolated linearly; beyond the ends, the end's. */
	int nrates;
	struct coll_copy_rate {
		size_t len;
		double rate;  /* bytes per second, > 0 */
	} rates[COLL_COST_RATES];
	/* What taking a request-free message costs its receiver's CPU beyond
	 * small_o, by the message's size (points, lengths ascending,
	 * interpolated, beyond the ends the end's; none: 0): the cache lines
	 * it pulls over from the sender's core as it reads the message, one
	 * at a time at first (measured by ping-pongs of each size on that
	 * path beyond their ends' o, small_alpha and the sender's copy at
	 * beta). Receiver's CPU, not latency: it takes turns with the rank's
	 * other work and does not move the message's arrival. */
	struct coll_cost_table {
		int n;
		struct coll_cost_point {
			size_t len;
			double time;  /* seconds, >= 0 */
		} pt[COLL_COST_RATES];
	} small_recv;
	/* The same for an inline eager message with requests (not
	 * request-free, not read: inline_max; not by rendezvous), beyond o,
	 * up to the largest size given (none past it: the eager rates,
	 * measured on 1 KiB and up, hold the lines there). The lines are
	 * not linear in the size: a 256 B ping-pong cost 0.04 us over the
	 * 64 B one, as much as 512 B. */
	struct coll_cost_table recv;
	/* What a rank's local copy (a schedule's COLL_COPY: the input into
	 * DATA, a block into place) moves per second by its size (nlocal
	 * points, lengths ascending, interpolated; none: such copies are
	 * free): a memcpy on the rank's CPU, in turn with its other work. */
	int nlocal;
	struct coll_copy_rate local[COLL_COST_RATES];
	/* With cpu_copies: what the sender's CPU copies of an eager message
	 * (into shm's ring) moves per second by the message's size (neager
	 * points as rates, interpolated; none: beta); the rate holds the
	 * message's cost beyond o. Where the ranks outnumber the cores
	 * the 2-rank rate (each rank on a core of its own, its peer's on
	 * the other) overstates these copies: bench/mpi_bench.sh takes them
	 * from 4-rank shifts there (mpi_collcal's eshift4). A rank's first
	 * eager send of a step pays it, the others of that step beta
	 * (coll_cost.c, step_copy). Request-free messages (small_max) keep
	 * beta. */
	int neager;
	struct coll_copy_rate eager[COLL_COST_RATES];
	/* A rank pays this much CPU for each message it takes, whether it
	 * idled or was busy when the message came: the way back from the
	 * collective's wait (the poll that saw it, the pass over what it
	 * waits for), beyond o, which is measured on point-to-point
	 * messages that were there already. */
	double wake_cost;
	/* What an eager message costs its receiver's CPU beyond take's when
	 * it crossed one the receiver sent its sender (both in flight at
	 * once, as an exchange's: the two rings' lines move both ways), by
	 * size (points as small_recv; none: 0): an exchange beyond a
	 * ping-pong's half round trip. Inline messages only, lazy or into
	 * a posted receive, up to the largest size given; a read or a
	 * rendezvous has it in its rates. */
	struct coll_cost_table cross;
	/* The same for a request-free message (up to small_max), when given:
	 * its own path, measured on it (blocking exchanges of 8 B - 4 KiB),
	 * up to its largest size; cross stays for the messages with
	 * requests (whose 2 KiB exchanges read dearer than the
	 * request-free 4 KiB point makes them). */
	struct coll_cost_table small_cross;
	/* With cpu_copies and inline_max: the rate at which a receiver reads
	 * an eager message of more than inline_max bytes, by the message's
	 * size (nread points as rates, up to the last one's size), after o;
	 * the rate holds the read's fixed cost. Beyond the last point or with
	 * none: the rendezvous' rates (which hold theirs), else
	 * recv_copy_cost and beta. Its own table because it is its
	 * own path: ptl's shm reads such a put into the posted receive (a
	 * bulk move: bounce pieces the sender's progress copies out, or CMA)
	 * while the peer reads the one going back (an exchange's), where a
	 * rendezvous copy is the get's, served by the rank that owns it. */
	int nread;
	struct coll_copy_rate read[COLL_COST_RATES];
	/* With rndv: shm's moves through the segment (bounce or non-temporal
	 * stores, where it picks them: see bulk; nmove points as rates,
	 * 0: none). A rendezvous copy that goes one way (its receiver has no
	 * rendezvous send of its own to the sender in flight) is two copies
	 * pipelined over two CPUs: the sender's copies the bytes out into
	 * the segment, move_piece bytes per hand-over (0: 64 KiB), while the
	 * receiver's copies the pieces in, starting when the first is out;
	 * each CPU busy len / move rate (by the message's size), in turn
	 * with its other work (a busy or descheduled peer holds the move up),
	 * and the copy done when the last piece is in. An exchange's copies
	 * (both ways at once: each CPU copies both directions' pieces) are
	 * the sender's CPU's alone at rates, which exchanges measure. */
	int nmove;
	struct coll_copy_rate move[COLL_COST_RATES];
	/* With bound cores: what a rendezvous copy, an eager read or an
	 * eager message's copy into the ring between two ranks of one core
	 * moves per second by the message's size (nsame points as rates;
	 * none: rates, read and eager, as between cores), in place of rates,
	 * read and eager for such a pair, each copy whole at
	 * them (no moves, no bulk or read_bulk methods: the rates are
	 * measured so, an exchange's two copies one after the other on the
	 * core; a move there took the cross-core moves' rates and gap). Its
	 * lines stay in
	 * that core's caches where a pair on two cores moves them across:
	 * on the Zen 4 guest with its two vCPUs placed far apart (a cache
	 * line's round trip 380 ns, not 85), 4 ranks pinned two to a core
	 * exchanged 1 MiB in 79 us between ranks of one core and in 142 us
	 * between the cores (256 KiB 26 against 42), which the cores'
	 * exchange rates (measured between the cores) made recursive
	 * doubling's and halving-doubling's second steps pay. */
	int nsame;
	struct coll_copy_rate same[COLL_COST_RATES];
	size_t move_piece;
	/* With moves: time a one-way move takes beyond its CPU copies, by
	 * its size (points as small_recv; none: 0), latency that books no
	 * CPU: the hand-overs of its pieces, each side waiting for the
	 * other's (a woken peer, a slot coming free). A lone move's cores
	 * idle through it; where the ranks outnumber the cores, other ranks'
	 * copies fill it (two pairs' 1 MiB moves at once took 153 us a
	 * half round trip, one pair's alone 113, four ranks' each to the
	 * next 201), so there the move rates are the copies' own and this
	 * the rest. */
	struct coll_cost_table move_gap;
	/* With rndv: time an exchange's copy (a rendezvous copy whose
	 * receiver has one of its own outstanding to the sender, each side's
	 * at rates) takes beyond itself, by its size (points as small_recv;
	 * none: 0), latency that books no CPU as move_gap's: where the ranks
	 * outnumber the cores shm moves both ways through the segment, each
	 * side waiting on the other's pieces. A pair alone idles its cores
	 * through that; of two pairs at once on two cores, each core copies
	 * for one pair while the other waits (bound, the copies take turns
	 * and both pairs end together, or, where a gap outlasts the run's
	 * other copies, a copy and its gap from the run's start:
	 * coll_cost.c's runs):
	 * on the Zen 4 guest, 4 ranks bound two to a
	 * core, one pair's 512 KiB exchange alone took 100 us (the other two
	 * waiting in a barrier: bench/mpi_collcal's xch4one), two pairs' at
	 * once 153 (xch4; 128 KiB 30 against 39), where copies alone would
	 * make the lone one half the pair's. A tree's inner ranks exchange
	 * alone. None for a split copy, nor for a pair of one bound core
	 * that has same-core rates (nsame, bound, cores below the ranks),
	 * measured whole there. */
	struct coll_cost_table xch_gap;
	/* With rndv: how a rendezvous copy goes by its size, as shm's chooser
	 * picked per size class (PTL_SHM_BULK_REPORT=1 prints its picks):
	 * nbulk steps, lengths ascending, each from its len up to the next
	 * one's (below the first: as the first). COLL_BULK_COPY: all of it by
	 * the sender's CPU at rates (CMA below shm's SHM_SPLIT_MIN);
	 * COLL_BULK_SPLIT: split as described at split_min (CMA from
	 * SHM_SPLIT_MIN); COLL_BULK_MOVE: a bounce move at the move rates when
	 * it goes one way (bounce or non-temporal stores; without move rates
	 * a copy), an exchange's the sender's at rates. 0 steps: split_min
	 * decides the splits, and below it every one-way copy is a move when
	 * there are move rates. The chooser picks per size class (64K-256K,
	 * ...), so one threshold cannot say it: on the Zen 4 guest 2-rank
	 * ping-pongs went mostly by non-temporal moves below 64 KiB and by
	 * split CMA from there, while the allreduce rows' reads went NT up
	 * to 256 KiB. */
	int nbulk;
	struct coll_bulk_step {
		size_t len;
		int how; /* COLL_BULK_* */
	} bulk[COLL_COST_RATES];
	/* With cpu_copies and inline_max: how a receiver's read of an eager
	 * message goes by its size, as shm's chooser picked for the reads
	 * (steps as bulk; 0 steps: every read COLL_BULK_COPY). The bytes go
	 * at the read rates (read) whatever the method, each copy's share of
	 * them: COLL_BULK_COPY, one copy on the receiver's CPU (CMA);
	 * COLL_BULK_SPLIT, the receiver asks its sender (alpha) for the
	 * second half, copies the first meanwhile, and split_cost plus the
	 * second half take the sender's CPU (split CMA); COLL_BULK_MOVE,
	 * through the segment (bounce or NT): the receiver asks (alpha), the
	 * sender's CPU copies the bytes out and the receiver's copies them
	 * in from when the first piece (move_piece) is out, a piece after
	 * the copy out at the earliest. COLL_BULK_RING, an eager message
	 * above inline_max that still fits shm's ring inline (16 KiB and a
	 * header): the sender's CPU copies it into the ring as it sends,
	 * the receiver's copies it out when it takes it; no request between
	 * (a move would have the sender copy only once asked). Where the
	 * rows' reads go NT and the model booked only the receiver's copy,
	 * the sender's copy out (which
	 * takes turns with its reduction) went missing: the 2-rank rows at
	 * 32 KiB read 0.6-0.8x. */
	int nread_bulk;
	struct coll_bulk_step read_bulk[COLL_COST_RATES];
};
#define COLL_BULK_COPY 0
#define COLL_BULK_SPLIT 1
#define COLL_BULK_MOVE 2
#define COLL_BULK_RING 3
#define COLL_COST_MAX_CALLS 1024
struct coll_cost {
	double time;          /* seconds until the last command ends */
	double busiest_port;  /* seconds the busiest rank's ports were busy */
	double busiest_cpu;   /* seconds the busiest rank's CPU was busy (software terms) */
	double turns;         /* bound cores: switches a core makes a call (mean over the cores) */
};
int coll_cost(const struct coll_sched *s, const struct coll_cost_params *p,
              struct coll_cost *out);

/* ---- executing ---- */
enum coll_dtype { COLL_INT32, COLL_INT64, COLL_FLOAT, COLL_DOUBLE, COLL_DTYPE_COUNT };
enum coll_redop { COLL_SUM, COLL_MAX, COLL_MIN, COLL_REDOP_COUNT };
size_t coll_dtype_size(enum coll_dtype dt);
const char *coll_dtype_name(enum coll_dtype dt);
const char *coll_redop_name(enum coll_redop op);

/* dst[i] = a[i] OP b[i] for len/size elements (integers wrap; a float or
 * double sum whose a[i] is a NaN gives that NaN, so the bits follow the
 * operands' order); a or b may be dst (in place), otherwise dst overlaps
 * neither. */
int coll_reduce_local(void *dst, const void *a, const void *b, size_t len,
                      enum coll_dtype dt, enum coll_redop op);

struct coll_bufs {
	void *data;          /* info.data_bytes */
	const void *input;   /* info.input_bytes */
	void *scratch;       /* info.scratch_bytes */
};

/* One rank's executor. It owns the ordering: it posts a command when its
 * dependencies are done, in id order except that of the commands ready at
 * once the sends above conf.send_first_min go first (a late rank's header
 * then reaches the peer ahead of its receive's request for the peer's
 * data) and the other sends last (an eager message finds its receive
 * posted), runs local commands itself and applies reductions. The
 * transport supplies the three callbacks below and reports every posted
 * send/receive back with coll_engine_done once it has completed (a send:
 * its buffer may be reused; a receive: the bytes are in place), but a
 * send whose callback returned 1 (over already). Callbacks must
 * not call coll_engine_done themselves; report completions afterwards. */
struct coll_engine;
struct coll_engine_ops {
	/* post a send/receive; `idx` names it in coll_engine_done. 0 or
	 * -errno; a send may also return 1: it is over already (its buffer
	 * may be reused), and no coll_engine_done follows for it. */
	int (*send)(void *ctx, int rank, size_t idx, const struct coll_cmd *cmd,
	            const void *buf, size_t len);
	int (*recv)(void *ctx, int rank, size_t idx, const struct coll_cmd *cmd,
	            void *buf, size_t len);
	/* combine: dst = a OP b in the schedule's order (a holds the lower
	 * ranks' part where the order matters), in one pass; a is dst (in
	 * place), the input (from_input) or the source (src_first), and b
	 * overlaps neither, or (from_input, src_first) is dst. NULL:
	 * coll_reduce_local */
	int (*reduce)(void *ctx, void *dst, const void *a, const void *b, size_t len,
	              enum coll_dtype dt, enum coll_redop op);
	/* COLL_COPY: len bytes from src to dst, which may overlap. NULL:
	 * memmove (a caller with a copy of its own for message data gives
	 * it here: glibc's rep movsb is many times slower at some offsets) */
	void (*copy)(void *ctx, void *dst, const void *src, size_t len);
};
struct coll_engine_conf {
	enum coll_dtype dtype;
	enum coll_redop redop;
	/* A deadline for the transport's waits, in its own clock (0: none). The
	 * engine never reads a clock; coll_engine_waiting tells what a timed-out
	 * wait was waiting for. */
	uint64_t deadline_ns;
	/* Sends of more than this many bytes are posted ahead of the
	 * receives ready with them (see coll_engine.c); smaller ones after
	 * them, so an eager message finds its receive posted. 0: every send
	 * with data goes first. */
	size_t send_first_min;
};
int coll_engine_new(const struct coll_sched *s, int rank, const struct coll_bufs *bufs,
                    const struct coll_engine_conf *conf, const struct coll_engine_ops *ops,
                    void *ctx, struct coll_engine **out);
/* Makes a finished (or never started) engine ready to run its schedule
 * again over other buffers, without building it anew; -EBUSY while a
 * posted command is outstanding. */
int coll_engine_reset(struct coll_engine *e, const struct coll_bufs *bufs, void *ctx);
int coll_engine_start(struct coll_engine *e);           /* posts what is ready */
int coll_engine_done(struct coll_engine *e, size_t idx); /* a posted command completed */
bool coll_engine_finished(const struct coll_engine *e);
uint64_t coll_engine_deadline(const struct coll_engine *e);
/* The first posted command not yet done (NULL if none), to name in a timeout:
 * "rank R step S: receive from rank P did not arrive". */
const struct coll_cmd *coll_engine_waiting(const struct coll_engine *e);
void coll_engine_free(struct coll_engine *e);

/* Reference executor: all N ranks of a whole schedule in this process, over an
 * in-memory transport with rendezvous semantics (a transfer happens only when
 * both the send and its receive are posted; the bytes are read from the
 * sender's buffer at that moment). seed 0 delivers in posting order; any other
 * seed picks among deliverable transfers at random, to show the result does
 * not depend on arrival order. bufs[r] are rank r's buffers. A deadlock is
 * -EDEADLK with the stuck rank, step and peer in msg. */
struct coll_exec_opts {
	enum coll_dtype dtype;
	enum coll_redop redop;
	unsigned seed;
};
int coll_exec_run(const struct coll_sched *s, const struct coll_bufs *bufs,
                  const struct coll_exec_opts *opts, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif
