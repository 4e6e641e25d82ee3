/* mpi_impl.h: what the shim's files share. Private to lib/mpi-shim.
 *
 * Layers: the PMPI_* functions (mpi_env.c, mpi_dtype.c, mpi_pt2pt.c,
 * mpi_req.c, mpi_comm.c, mpi_coll.c, mpi_op.c) stand on the public Portals
 * API only (portals3.h, ptl_runtime.h) and on collectives/coll.h; the MPI_*
 * wrappers are generated (mpi_wrap.awk) and call the tracer's hooks. */
#ifndef MPI_IMPL_H
#define MPI_IMPL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>
#include <portals3.h>
#include <ptl_runtime.h>

/* On the point-to-point path's functions and state: the shim's own, so a
 * call from another of its files is a direct call, not one through the
 * PLT, and mpi_g is addressed directly, not through the GOT (a message
 * makes a dozen such calls between mpi_p2p_api.c, mpi_pt2pt.c,
 * mpi_keep.c and mpi_req.c). Not for the public MPI_ and PMPI_ entry
 * points, which other libraries interpose. */
#define MPI_HIDDEN __attribute__((visibility("hidden")))

/* ---------------------------------------------------------------- Portals use
 * Portal indices of the shim. */
#define MPI_PT_MSG 8   /* MPI messages: posted receives, then unexpected */
#define MPI_PT_RNDV 9  /* sender-exposed rendezvous buffers (the receiver gets) */
#define MPI_PT_PULL 10 /* receiver-exposed landing for pulled overflow eager data */
#define MPI_PT_CTRL 11 /* credits and pull requests */

/* Match bits of PT_MSG: context id, the ACK-free flag, source rank (in the
 * communicator), tag. The flag marks an eager message whose sender keeps no
 * copy (mpi_pt2pt.c): it steers it into the reserve buffers, and posted
 * receives ignore it. */
#define MPI_CTX_BITS 16
#define MPI_SRC_BITS 19
#define MPI_TAG_BITS 28
#define MPI_NOACK_BIT ((ptl_match_bits_t)1 << (MPI_SRC_BITS + MPI_TAG_BITS))
#define MPI_TAG_MAX ((1 << MPI_TAG_BITS) - 1)
#define MPI_SRC_MASK ((((ptl_match_bits_t)1 << MPI_SRC_BITS) - 1) << MPI_TAG_BITS)
#define MPI_TAG_MASK (((ptl_match_bits_t)1 << MPI_TAG_BITS) - 1)
#define MPI_MAX_CTX ((1 << MPI_CTX_BITS) - 2)
static inline ptl_match_bits_t mpi_bits(int ctx, int src, int tag)
{
	return ((ptl_match_bits_t)(unsigned)ctx << (MPI_SRC_BITS + 1 + MPI_TAG_BITS)) |
	       ((ptl_match_bits_t)(unsigned)src << MPI_TAG_BITS) | ((ptl_match_bits_t)(unsigned)tag & MPI_TAG_MASK);
}
#define MPI_BITS_CTX(b) ((int)((b) >> (MPI_SRC_BITS + 1 + MPI_TAG_BITS)))
#define MPI_BITS_SRC(b) ((int)(((b) >> MPI_TAG_BITS) & ((1u << MPI_SRC_BITS) - 1)))
#define MPI_BITS_TAG(b) ((int)((b) & MPI_TAG_MASK))

/* hdr_data of a PT_MSG put: protocol (4 bits), message length (32 bits),
 * the sender's operation id (28 bits: the request index and generation). */
enum { MPI_PROTO_EAGER = 0, MPI_PROTO_RNDV = 1 };
#define MPI_HDR(proto, len, id) (((uint64_t)(proto) << 60) | ((uint64_t)(len) << 28) | ((uint64_t)(id) & 0xfffffffu))
#define MPI_HDR_PROTO(h) ((int)((h) >> 60))
#define MPI_HDR_LEN(h) ((size_t)(((h) >> 28) & 0xffffffffu))
#define MPI_HDR_ID(h) ((uint32_t)((h) & 0xfffffffu))
#define MPI_MAX_MSG 0xffffffffu

/* PT_CTRL: hdr_data = kind << 60 | argument; match bits = kind-specific. */
enum { MPI_CTRL_CREDIT = 1, MPI_CTRL_PULL = 2, MPI_CTRL_NOACK = 3 };

/* ---------------------------------------------------------------- objects */
enum mpi_obj { MPI_OBJ_REQ = 1, MPI_OBJ_UXBUF, MPI_OBJ_OVERFLOW, MPI_OBJ_CTRL, MPI_OBJ_ESLOT, MPI_OBJ_DIRECT };

struct mpi_list {
	struct mpi_list *prev, *next;
};
static inline void mpi_list_init(struct mpi_list *l) { l->prev = l->next = l; }
static inline bool mpi_list_empty(const struct mpi_list *l) { return l->next == l; }
static inline void mpi_list_add_tail(struct mpi_list *n, struct mpi_list *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}
static inline void mpi_list_del(struct mpi_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}
#define mpi_container(p, T, m) ((T *)(void *)((char *)(p) - offsetof(T, m)))

/* Datatypes: a typemap flattened into byte segments. */
struct mpi_seg {
	MPI_Aint off;
	size_t len;
	uint32_t esize;  /* size of the basic elements in this segment */
	int basic;       /* their predefined type */
};
struct mpi_dtype {
	int refs;
	bool in_use, committed, predefined;
	size_t size;
	MPI_Aint lb, extent, true_lb, true_ub;
	bool contig;          /* one segment at 0 of size == extent */
	int basic;            /* the one basic type, or -1 if mixed */
	size_t nsegs;
	struct mpi_seg *segs;
	const char *name;
	size_t align;         /* of its most aligned basic part: a struct's extent is padded to it */
	bool resized;         /* bounds set by MPI_Type_create_resized, here or in a part: never padded */
	char label[MPI_MAX_OBJECT_NAME]; /* MPI_Type_set_name's, or empty */
	struct mpi_dtype_env *env; /* how it was made (mpi_dtenv.c); NULL: predefined */
};
/* Records how derived type h was made (MPI_Type_get_contents), holding
 * the types; MPI_ERR_NO_MEM without memory. */
/* Part of an array: the indices own[d][0..n[d]) (ascending) along each
 * dimension d of sizes[] in `order` (mpi_dtype.c; subarray and darray). */
int mpi_dtype_grid(const char *fn, int ndims, const int sizes[], int order, int *const own[], const int n[],
		   MPI_Datatype old, MPI_Datatype *newtype, int combiner, int ni, const int *ints);
int mpi_dtype_envelope(MPI_Datatype h, int combiner, int ni, const int *ints, int na, const MPI_Aint *aints, int nd,
		       const MPI_Datatype *dts);
void mpi_dtype_env_free(struct mpi_dtype *t);
/* A new handle to t (held), or t's own for a predefined type; MPI_DATATYPE_NULL when none is free. */
MPI_Datatype mpi_dtype_new_handle(struct mpi_dtype *t);
#define MPI_DT_MAX 65536
MPI_HIDDEN extern struct mpi_dtype *mpi_types[MPI_DT_MAX];
MPI_HIDDEN extern int mpi_ntypes; /* handles below it have been given out */
static inline struct mpi_dtype *mpi_dtype_get(MPI_Datatype dt)
{
	if (dt <= 0 || dt >= mpi_ntypes || !mpi_types[dt] || !mpi_types[dt]->in_use)
		return NULL;
	return mpi_types[dt];
}
/* A pending operation that still needs the type after its call returns
 * holds it: MPI_Type_free then takes only the handle away, and the type
 * goes when the last holder lets go (MPI-3.1 4.1.9). */
struct mpi_dtype *mpi_dtype_hold(struct mpi_dtype *t);
void mpi_dtype_release(struct mpi_dtype *t);
/* A message of len bytes as (count, type), past INT_MAX a type made for it (mpi_dtype.c). */
MPI_HIDDEN int mpi_bytes(size_t len, int *count, MPI_Datatype *dt);
MPI_HIDDEN void mpi_bytes_free(MPI_Datatype *dt);
int mpi_dtype_check(MPI_Datatype dt, int count);
void mpi_dtype_init(void);
void mpi_dtype_fini(void);
/* Pack count elements at buf into out (size*count bytes), and back. */
void mpi_pack(const struct mpi_dtype *t, const void *buf, int count, void *out);
void mpi_unpack(const struct mpi_dtype *t, void *buf, int count, const void *in, size_t bytes);

/* Groups and communicators. */
struct mpi_group {
	int refs;
	bool in_use;
	int size;
	int rank;      /* this process's index, or MPI_UNDEFINED */
	int *world;    /* world rank of each member */
};
struct mpi_coll_cache;
struct mpi_comm {
	bool in_use;
	int ctx;          /* point-to-point context; ctx + 1 for collectives */
	int rank, size;
	MPI_Group group;
	int *world;       /* = group's */
	MPI_Errhandler errh;
	char name[MPI_MAX_OBJECT_NAME];
	struct mpi_coll_cache *cache;
	struct mpi_coll_choice *choice; /* its hints' algorithms (mpi_coll.c), or NULL: the environment's */
	unsigned long ncoll;   /* collective calls so far (for messages and tests) */
	struct mpi_cart *cart; /* Cartesian topology (mpi_topo.c), or NULL */
	struct mpi_graph *graph; /* graph or distributed graph topology (mpi_graph.c), or NULL */
	/* An intercommunicator (mpi_inter.c): group, world and size above are
	 * the remote group's, rank this process's in the local group; local
	 * is a private intracommunicator over the local group. */
	bool inter;
	int local_size;
	MPI_Comm local;
};
/* The tables behind communicator and datatype handles (mpi_comm.c,
 * mpi_dtype.c), and their lookups inline: every send and receive makes
 * both, and a call to each from another of the shim's files was a dozen
 * instructions and two jumps through the PLT (a send's critical path in
 * a ping-pong: 24 of its 163). */
#define MPI_COMM_MAX 4096
MPI_HIDDEN extern struct mpi_comm mpi_comms[MPI_COMM_MAX];
static inline struct mpi_comm *mpi_comm_get(MPI_Comm c)
{
	if (c <= 0 || c >= MPI_COMM_MAX || !mpi_comms[c].in_use)
		return NULL;
	return &mpi_comms[c];
}
struct mpi_group *mpi_group_get(MPI_Group g);
MPI_Group mpi_group_new(int size, const int *world);
void mpi_comm_init(void);
void mpi_comm_fini(void);
/* Frees the nonblocking collectives' kept temporaries (mpi_coll.c), and
 * their kept schedules and states (mpi_icoll.c). */
void mpi_coll_req_tmp_fini(void);
void mpi_icoll_fini(void);
const char *mpi_comm_name(MPI_Comm c);
MPI_Comm mpi_comm_handle(const struct mpi_comm *c);
void mpi_topo_free(struct mpi_comm *c);
/* A communicator's neighbours for the neighbourhood collectives: in[] the
 * sources, out[] the destinations (MPI_PROC_NULL allowed), and the tag of
 * each transfer - a Cartesian one's tells directions apart, so the two
 * neighbours of a periodic dimension of 2 (one rank) take the right blocks.
 * One malloc'd block (free(in)); MPI_ERR_TOPOLOGY if c has no topology. */
struct mpi_nbrs {
	int nin, nout;
	int *in, *out, *intag, *outtag;
};
int mpi_topo_nbrs(struct mpi_comm *c, struct mpi_nbrs *n);
/* The communicator a topology is made from (an intracommunicator), or the error to return. */
int mpi_topo_base(const char *fn, MPI_Comm comm, struct mpi_comm **c);
void mpi_graph_free(struct mpi_comm *c);
int mpi_graph_copy(struct mpi_comm *to, const struct mpi_comm *from);
int mpi_graph_kind(const struct mpi_comm *c);	/* MPI_GRAPH, MPI_DIST_GRAPH or MPI_UNDEFINED */
int mpi_graph_nbrs(struct mpi_comm *c, struct mpi_nbrs *n);
/* For mpi_inter.c: a communicator of group g (taken) with context ctx; a
 * context id agreed (mpi_comm.c) by rounds of round, which replaces the
 * two ints at v by their maxima over every member of the new communicator
 * (or returns the error), the refusal on comm. */
MPI_Comm mpi_comm_new(int ctx, MPI_Group g, const char *name);
int mpi_comm_ctx_agree(int (*round)(void *arg, int *v), void *arg, MPI_Comm comm, const char *fn, int *ctx);
int mpi_inter_dup(struct mpi_comm *c, MPI_Comm comm, MPI_Comm *newcomm);
void mpi_inter_free(struct mpi_comm *c);
/* MPI_Comm_split of intercommunicator c (MPI_Comm_create's too). */
int mpi_inter_split(struct mpi_comm *c, MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *fn);
/* One side of a direct exchange (mpi_xchg.c: Alltoallw, the neighbourhood
 * collectives; mpi_intercoll.c): block k is (buf + displacement, count,
 * type), given per block (v and w forms) or once for all. */
struct mpi_xside {
	const void *buf;
	const int *counts;        /* or NULL: count for every block */
	int count;
	const int *idispls;       /* in units of the type's extent (v forms), or */
	const int *wdispls;       /* in bytes (MPI_Alltoallw), or */
	const MPI_Aint *adispls;  /* in bytes (neighbourhood w), or none: k * count * extent */
	const MPI_Datatype *types;/* or NULL: type for every block */
	MPI_Datatype type;
	bool same;                /* the one block for every peer (an allgather's send side) */
};
/* Collectives on intercommunicators (mpi_intercoll.c), called by the
 * collectives' entry points (arguments of the buffer checked) once they
 * see c->inter. */
enum mpi_ic_kind { MPI_IC_GATHER, MPI_IC_SCATTER, MPI_IC_ALL };
int mpi_inter_barrier(struct mpi_comm *c, MPI_Comm comm);
int mpi_inter_bcast(struct mpi_comm *c, MPI_Comm comm, void *buf, int count, MPI_Datatype dt, int root);
int mpi_inter_reduce(struct mpi_comm *c, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count,
		     MPI_Datatype dt, MPI_Op op, int root);
int mpi_inter_allreduce(struct mpi_comm *c, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype dt, MPI_Op op);
int mpi_inter_reduce_scatter(struct mpi_comm *c, MPI_Comm comm, const char *fn, const void *sendbuf, void *recvbuf,
			     const int counts[], int count, MPI_Datatype dt, MPI_Op op);
/* Gathers and scatters (root as the rooted calls take it; the root's side
 * has a block per remote rank), all-gathers and all-to-alls (kind ALL). */
int mpi_inter_exchange(struct mpi_comm *c, MPI_Comm comm, const char *fn, enum mpi_ic_kind kind, int root,
		       const struct mpi_xside *send, const struct mpi_xside *recv);
int mpi_topo_copy(struct mpi_comm *to, const struct mpi_comm *from);

/* Requests. */
enum mpi_req_kind { MPI_REQ_SEND, MPI_REQ_RECV, MPI_REQ_NONE, MPI_REQ_COLL /* nonblocking collective (mpi_icoll.c) */ };
enum mpi_send_stage {
	MPI_SS_QUEUED,    /* waiting for a credit */
	MPI_SS_EAGER,     /* put out, waiting for the ACK */
	MPI_SS_PULLWAIT,  /* landed without data: waiting for the receiver's pull (a receive:
			   * its pull's landing posted, waiting for the data) */
	MPI_SS_PULLED,    /* data put to the receiver, waiting for its ACK */
	MPI_SS_RNDV,      /* exposed, RTS sent, waiting for the receiver's get */
	MPI_SS_DONE,
	MPI_SS_LANDQ      /* a receive's pull, waiting for a landing entry (mpi_pt2pt.c) */
};
struct mpi_ux;
struct mpi_eslot;
struct mpi_rme;
struct mpi_icoll;
/* The request of a nonblocking collective is released: its state goes. */
void mpi_icoll_free(struct mpi_icoll *q);
struct mpi_req {
	int obj;                 /* MPI_OBJ_REQ */
	int kind;
	uint32_t idx, gen;
	bool in_use;
	bool held;               /* someone (a user handle, or our caller) will look at it */
	bool busy;               /* the library still uses it (a send not yet finished) */
	bool done;               /* complete as far as the holder is concerned */
	bool matched;            /* receive: an arrival is taking it */
	bool cancelled;
	bool lazy;               /* receive without an ME: matched from the unexpected list */
	uint64_t ux_looked;      /* lazy: 1 + the count of unexpected arrivals when it last
				  * looked at them all and found none (mpi_recv_try) */
	int err;
	MPI_Status st;
	struct mpi_list link;    /* send queue of a peer; a receive: the pulls waiting for a landing */
	/* common */
	int myrank;              /* our rank in the communicator */
	int ctx, peer, tag;      /* peer: comm rank; tag; ctx used */
	int wpeer;               /* world rank of the peer (sends, receives from one source) */
	struct mpi_comm *comm;   /* where it was started (error handler, MPI_ANY_SOURCE members) */
	int dead;                /* world rank whose death failed it, or -1 */
	void *ubuf;              /* the user's buffer */
	int count;
	MPI_Datatype dt;
	struct mpi_dtype *dtp;   /* held while a receive's temporary image waits to be unpacked */
	void *pbuf;              /* contiguous image (ubuf, or a temporary) */
	size_t len;              /* bytes of the image */
	bool ptmp;               /* pbuf is ours to free */
	bool counted;            /* its copy (an eager send's, a failed collective's) in mpi_pt2pt.c's copies' budget */
	struct mpi_eslot *slot;  /* eager send: pbuf is this preallocated slot */
	bool direct;             /* eager send from the user's buffer (mpi_pt2pt.c) */
	bool reading;            /* a bulk put of its data not yet answered (its SEND_END to come) */
	ptl_handle_me_t me;
	ptl_handle_md_t md;
	/* send */
	int stage;
	int proto;
	bool sync, bsend;
	/* receive */
	uint32_t sid;            /* its message pulled or got: the send's id at its sender */
	struct mpi_rme *rme;     /* the kept ME armed for it (mpi_keep.c), until its message lands */
	bool kept;               /* its posted ME is a kept one: no UNLINK event follows the END */
	struct mpi_ux *ux;       /* matched unexpected message still arriving */
	size_t msglen;
	/* nonblocking collective: its state, freed with the request */
	struct mpi_icoll *icoll;
};
MPI_HIDDEN struct mpi_req *mpi_req_new(int kind);
/* Persistent requests (mpi_persist.c): handles from MPI_PERSIST_BASE up,
 * above every ordinary request's. mpi_req_get gives the request a
 * persistent handle started, NULL while it is inactive. Inline: every
 * Wait and Test asks. */
#define MPI_PERSIST_BASE ((MPI_Request)1 << 24)
static inline bool mpi_persist_handle(MPI_Request h)
{
	return h >= MPI_PERSIST_BASE;
}
bool mpi_persist_inactive(MPI_Request h);
/* MPI_REQUEST_NULL or an inactive persistent request: Wait/Test pass it over. */
static inline bool mpi_req_null(MPI_Request h)
{
	return h == MPI_REQUEST_NULL || (mpi_persist_handle(h) && mpi_persist_inactive(h));
}
struct mpi_req *mpi_persist_req(MPI_Request h);
int mpi_persist_free(MPI_Request *request);
void mpi_persist_fini(void);
void mpi_info_fini(void);
/* MPI_ERR_INFO unless info is an info object or MPI_INFO_NULL (none). */
int mpi_info_check(const char *fn, MPI_Info info);
/* The values of info's (checked: mpi_info_check) keys ptl_coll_algo and
 * ptl_coll_ports, NULL where absent (MPI_INFO_NULL: both); they last
 * while info is not changed. */
void mpi_info_hints(MPI_Info info, const char **algo, const char **ports);
/* Attribute caching (mpi_attr.c), on communicators (type false) and
 * datatypes (type true): a duplicate's copies (an error means no
 * duplicate: forget what it took), the delete functions when an object
 * goes (an error means it stays), and the predefined keys' values. */
int mpi_attr_copy(bool type, int from, int to, const char *fn);
int mpi_attr_drop(bool type, int obj, const char *fn);
void mpi_attr_forget(bool type, int obj);
void mpi_attr_fini(void);
int mpi_env_attr(int keyval, void *val, int *flag);
int mpi_err_lastused(void);
void mpi_err_fini(void);
/* The request table's free slots (mpi_req.c): the release, completion and
 * drop below are inline, as a receive's completion and its caller's drop
 * are on a ping-pong's path from the arrival to the reply. */
MPI_HIDDEN extern uint32_t *mpi_req_freelist;
MPI_HIDDEN extern uint32_t mpi_req_nfree;
static inline void mpi_req_release(struct mpi_req *r)
{
	if (!r->in_use)
		return;
	if (r->icoll) {
		mpi_icoll_free(r->icoll);
		r->icoll = NULL;
	}
	r->in_use = false;
	mpi_req_freelist[mpi_req_nfree++] = r->idx;
}
MPI_HIDDEN struct mpi_req *mpi_req_get(MPI_Request h);
static inline MPI_Request mpi_req_handle(const struct mpi_req *r) { return (MPI_Request)(r->idx + 1); }
MPI_HIDDEN struct mpi_req *mpi_req_by_id(uint32_t id);
static inline uint32_t mpi_req_id(const struct mpi_req *r) { return (r->idx & 0xfffff) | ((r->gen & 0xff) << 20); }
static inline void mpi_req_complete(struct mpi_req *r)
{
	r->done = true;
	if (!r->held && !r->busy)
		mpi_req_release(r);
}
/* The holder lets go: released once done and not busy. */
static inline void mpi_req_drop(struct mpi_req *r)
{
	r->held = false;
	if (r->done && !r->busy)
		mpi_req_release(r);
}

/* ---------------------------------------------------------------- engine */
struct mpi_state {
	bool initialized, finalized;
	int thread_level;
	int wrank, wsize;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_process_id_t *ids;    /* world rank -> id */
	size_t eager_limit;
	size_t ux_bufsize;
	int ux_nbufs;
	int credits;              /* per peer */
	double coll_timeout;      /* seconds, 0: none */
	int stall_rank;           /* PTL_TEST_STALL_RANK, or -1 */
	int coll_ports;
	char coll_algo[256];
	int next_ctx;
	bool in_fatal;
	/* Bsend */
	void *bsend_buf;
	size_t bsend_size, bsend_used;
	unsigned long pending_ops; /* internal operations not yet done */
	/* Dead peers (mpi_fail.c): world rank -> known gone, and how many. */
	unsigned char *dead;
	int ndead;
	unsigned icoll_live;      /* nonblocking collectives under way (mpi_icoll.c) */
};
MPI_HIDDEN extern struct mpi_state mpi_g;

int mpi_pt2pt_init(void);
void mpi_pt2pt_fini(void);
/* mpi_progress(0), a test's pass (mpi_pt2pt.c): with nothing to settle,
 * retry or move on, it is one PtlEQGet and its answer, with no frame of
 * its own while that finds the queue empty. */
MPI_HIDDEN int mpi_poll(void);
/* mpi_progress's pass, returning as soon as until is done (mpi_pt2pt.c). */
MPI_HIDDEN int mpi_progress_until(int wait_ms, struct mpi_req *until);
/* Drains the event queue; with wait_ms > 0 sleeps up to that long for the
 * first event. Returns how many events it handled (0: none came). */
static inline int mpi_progress(int wait_ms)
{
	return wait_ms ? mpi_progress_until(wait_ms, NULL) : mpi_poll();
}
/* Starts a send / receive on communicator c (ranks in c); tag < 0 allowed
 * for internal contexts. The request is not user-visible. */
MPI_HIDDEN int mpi_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, struct mpi_comm *c,
			 int ctx, int mode, struct mpi_req **out);
MPI_HIDDEN int mpi_irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, struct mpi_comm *c, int ctx,
			 struct mpi_req **out);
/* The same with dt's type t looked up already (mpi_dtype_get). */
MPI_HIDDEN int mpi_isend_t(const void *buf, int count, MPI_Datatype dt, struct mpi_dtype *t, int dest, int tag,
			   struct mpi_comm *c, int ctx, int mode, struct mpi_req **out);
/* A receive with its ME posted, whatever its size; MPI_Recv and
 * MPI_Sendrecv post theirs so too (mpi_pt2pt.c's irecv_post says why). */
MPI_HIDDEN int mpi_irecv_t(void *buf, int count, MPI_Datatype dt, struct mpi_dtype *t, int src, int tag,
			   struct mpi_comm *c, int ctx, struct mpi_req **out);
/* MPI_Isend the long way (mpi_p2p_api.c), for what PMPI_Isend's own put
 * (mpi_pt2pt.c) does not take: checks, starts and reports. */
MPI_HIDDEN int mpi_isend_slow(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
			      MPI_Request *request);
/* MPI_Irecv the long way (mpi_p2p_api.c), for what PMPI_Irecv's own post
 * (mpi_pt2pt.c) does not take: checks, posts and reports. */
MPI_HIDDEN int mpi_irecv_slow(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
			      MPI_Request *request);
enum { MPI_MODE_STD, MPI_MODE_SYNC, MPI_MODE_READY, MPI_MODE_BUFFERED };
/* A blocking standard or ready send (arguments checked) on context ctx
 * (c->ctx, or a collective's c->ctx + 1) that is done once it is out,
 * with no request: small, contiguous, with the credits it needs at hand
 * and nothing queued before it. Returns true if it sent it; false:
 * nothing happened, start it as mpi_isend. */
MPI_HIDDEN bool mpi_send_small_ctx(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
				   struct mpi_comm *c, int ctx);
/* The same for len bytes at p, to a rank of c (not MPI_PROC_NULL). */
MPI_HIDDEN bool mpi_send_bytes(const void *p, size_t len, int dest, int tag, struct mpi_comm *c, int ctx);
/* An MPI_Isend or MPI_Irsend (arguments checked, dest a rank of c) that
 * goes out at once as mpi_send_bytes sends it, if t is contiguous: *out
 * is a request complete already, which only answers the user's Wait or
 * Test. False: nothing was sent, start it as mpi_isend_t. */
MPI_HIDDEN bool mpi_isend_now(const void *buf, int count, const struct mpi_dtype *t, int dest, int tag,
			      struct mpi_comm *c, int ctx, struct mpi_req **out);
/* Or-ed into a standard or ready mode by MPI_Isend and MPI_Irsend: the
 * caller looks for completion later, so an eager send may go from its
 * buffer and complete on the receiver's ACK instead of being copied to a
 * bounce slot and complete at once (mpi_pt2pt.c). */
#define MPI_MODE_NB 0x100
/* Or-ed into a standard or ready mode by MPI_Send and MPI_Rsend: the
 * caller waits for the send at once, so a contiguous one goes eagerly up
 * to MPI_BLOCKING_EAGER times the eager limit (mpi_pt2pt.c). */
#define MPI_MODE_BLOCKING 0x200
/* Or-ed with MPI_MODE_BLOCKING by a schedule's sends on a 2-rank
 * communicator of one host (mpi_coll.c): eager up to MPI_PULL_EAGER times
 * the eager limit, so the receiver reads the data into its own buffer
 * (mpi_pt2pt.c). */
#define MPI_MODE_PULL 0x400
/* A receive of len contiguous bytes that posts no ME: the message lands as
 * unexpected and mpi_recv_try matches it. For a context whose receives never
 * overlap in what they match (a schedule's: exact source, a tag per step, one
 * collective at a time), or for a blocking call's own receive, waited for at
 * once (MPI_Sendrecv: every other receive of its context has an ME, which an
 * arrival meets first, and no thread posts one meanwhile, FUNNELED at most),
 * where it saves the ME's insert, attach, enable and unlink on small
 * messages. */
MPI_HIDDEN int mpi_irecv_lazy(void *buf, size_t len, int src, int tag, struct mpi_comm *c, int ctx,
			      struct mpi_req **out);
/* Matches a lazy receive against the unexpected messages; true once done. */
MPI_HIDDEN bool mpi_recv_try(struct mpi_req *r);
/* Whether another of the library's own match entries (a rendezvous
 * send's exposed buffer, a schedule's receive) may be taken
 * (mpi_pt2pt.c): the rooms of the others stay free as if all were in
 * use - every unexpected buffer's (a buffer emptied always finds its
 * entry again), the receives' left (PTL_MPI_MAX_MES less those kept,
 * mpi_keep.c) and the pulls' landings' whole - so the library's own stay
 * within MPI_MES_OWN less the buffers in the list. A process with more
 * sends above the eager limit in flight than that had filled the NI, and
 * then a receive could not be posted, or the job aborted at the next
 * buffer that went back. */
MPI_HIDDEN bool mpi_entry_ok(void);
/* ... and whether a posted receive's may: only an interface the program
 * opened before MPI_Init is asked (its entries may have gone to the
 * program since); in one MPI_Init opened receives are bounded by
 * PTL_MPI_MAX_MES alone. */
MPI_HIDDEN bool mpi_recv_entry_ok(void);
/* A receive whose pull waits for a landing (MPI_SS_LANDQ) waits for the
 * pulls that hold them: asks after their senders (mpi_rank_dead), so
 * that a dead one's landings go to the next. */
MPI_HIDDEN void mpi_landings_check(void);
int mpi_iprobe(int src, int tag, struct mpi_comm *c, int *flag, MPI_Status *st);
int mpi_cancel_recv(struct mpi_req *r);
/* The caller gives receive r up (a collective that failed, an exchange
 * that timed out) and may free or reuse its buffer once this returns:
 * unmatched, it is cancelled; matched, what of its message is still to
 * come lands elsewhere: a pull (from a sender that may answer long
 * after) or a copy out of an unexpected buffer nowhere, a rendezvous
 * get not yet made in memory of the library's own, freed when it has.
 * A transfer libptl has under way into the buffer is waited for: the
 * peer's libptl ends it, landed or failed (with its progress thread,
 * without its MPI calls). */
MPI_HIDDEN void mpi_recv_abandon(struct mpi_req *r);
/* The caller gives send r up (a collective that failed) and may free or
 * change its buffer once this returns, while r may go on (its peer may
 * still take it): what of the caller's memory is still to be read (a
 * buffer exposed for a get, an eager put's data a pull may ask for) is
 * read from a copy of the library's instead, and a put whose data may
 * still be moving is waited for (the peer's libptl ends it: with its
 * progress thread, without its MPI calls). With no memory for the copy,
 * what the peer has yet to ask for is taken back and fails. */
MPI_HIDDEN void mpi_send_abandon(struct mpi_req *r);
/* The caller is done with r, done or not: abandoned (a receive or a
 * send, above), and r dropped (mpi_req_drop: a send the library
 * finishes on its own). */
MPI_HIDDEN void mpi_req_give_up(struct mpi_req *r);
/* Waits for r (timeout > 0: gives up after about that many seconds,
 * returning MPI_ERR_TIMEOUT; the clock is read lazily, so up to 100 ms
 * late). */
MPI_HIDDEN int mpi_wait_req(struct mpi_req *r, double timeout);
double mpi_now(void);
void mpi_drain_internal(void);

/* A send's (recv false) or receive's arguments checked as MPI_Send's and
 * MPI_Recv's are, each fault reported under fn as they report it: for the
 * persistent inits (mpi_persist.c), which record the arguments for later
 * and must refuse what MPI_Start would (mpi_p2p_api.c). */
int mpi_p2p_check(const char *fn, const void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
		  bool recv);

/* The arguments of a send or receive as nearly every call has them, in
 * one test and two lookups: MPI running, a valid communicator and a
 * committed type, count >= 0, the peer a rank of the communicator (a
 * receive's also MPI_ANY_SOURCE), the tag in range (a receive's also
 * MPI_ANY_TAG), a buffer that is not NULL (MPI_BOTTOM) unless count is
 * 0 (check_buffer says when NULL is right). MPI_PROC_NULL fails it. False: check_send or check_recv
 * runs and finds what is wrong or unusual; true: *cp and *tp are set as
 * they would have set them. Check_buffer's early returns for the error
 * reports cost a send or receive some forty instructions each. In this
 * header for mpi_send_std (mpi_pt2pt.c) and mpi_p2p_api.c. */
static inline bool mpi_args_ok(const void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
			       bool recv, struct mpi_comm **cp, struct mpi_dtype **tp)
{
	if (!mpi_g.initialized || mpi_g.finalized || count < 0 || (!buf && count))
		return false;
	struct mpi_comm *c = mpi_comm_get(comm);
	struct mpi_dtype *t = mpi_dtype_get(dt);
	if (!c || !t || !t->committed)
		return false;
	if ((unsigned)peer >= (unsigned)c->size && !(recv && peer == MPI_ANY_SOURCE))
		return false;
	if ((unsigned)tag > (unsigned)MPI_TAG_MAX && !(recv && tag == MPI_ANY_TAG))
		return false;
	*cp = c;
	*tp = t;
	return true;
}

/* MPI_Send (mpi_pt2pt.c): as it goes most of the time - arguments as
 * mpi_args_ok likes them, contiguous, out at once ACK-free with no request
 * (mpi_send_bytes) - in one frame, the put's; anything else goes on to
 * mpi_send_slow (mpi_p2p_api.c: send_mode, standard mode), which checks again
 * and reports. PMPI_Send tail-calls it: its frame and mpi_send_bytes' were
 * two on a ping-pong's path from the arrival to the reply. */
MPI_HIDDEN int mpi_send_std(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm);
MPI_HIDDEN int mpi_send_slow(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm);

/* ---------------------------------------------------------------- dead peers
 * (mpi_fail.c). A wait that has brought nothing for MPI_DEAD_CHECK_S asks
 * libptl whether the peers it depends on are still there (on shm a system
 * call or two per peer, so never on a pass that brought an event); the
 * first time a rank is found dead every pending operation that depends on
 * it fails with MPI_ERR_PROC_FAILED, and later ones fail when started. */
#define MPI_DEAD_CHECK_S 0.1
struct mpi_idle {
	double next;       /* when the next look is due (0: not yet started) */
	unsigned passes;   /* eventful passes (or tests) since the last clock read */
};
/* A pass of a wait (empty: it brought no event): true when it is time to
 * look for dead peers. Reads the clock on empty passes and on every 64th
 * other one, never more (mpi_idle_due_clock, in mpi_fail.c: the count
 * inline, where a test that found nothing pays it on every call). */
MPI_HIDDEN bool mpi_idle_due_clock(struct mpi_idle *w, bool empty);
static inline bool mpi_idle_due(struct mpi_idle *w, bool empty)
{
	if (!empty && (++w->passes & 63))
		return false;
	return mpi_idle_due_clock(w, empty);
}
int mpi_fail_init(void);
void mpi_fail_fini(void);
/* Whether world rank w is known dead; ask: find out now (and, on a new
 * death, fail everything that waits on it). */
bool mpi_rank_dead(int w, bool ask);
/* The first dead member of c (world rank), or -1; ask as above. */
int mpi_comm_dead(const struct mpi_comm *c, bool ask);
/* Looks at the peers r waits on (its source or destination; every member
 * of the communicator for MPI_ANY_SOURCE) and fails r if one is dead. */
void mpi_req_check(struct mpi_req *r);
/* mpi_wait_req(r, 0) inline, for a blocking call's own receive or send
 * (MPI_Recv, MPI_Send and MPI_Sendrecv); a lazy receive (a short
 * MPI_Sendrecv's) goes to mpi_wait_req itself, which hands it arrivals.
 * Otherwise, with no deadline, a wait is only its passes, and without
 * mpi_wait_req's frame the receive's caller returns - and a ping-pong
 * replies - about 30 instructions sooner. */
static inline void mpi_wait_plain(struct mpi_req *r)
{
	if (r->lazy) {
		mpi_wait_req(r, 0);
		return;
	}
	struct mpi_idle idle = { 0, 0 };
	while (!r->done) {
		bool empty = mpi_progress_until(100, r) == 0;
		if (!r->done && mpi_idle_due(&idle, empty))
			mpi_req_check(r);
	}
}
/* mpi_wait_plain of each of rs[0, n), taking the events of one after
 * another in the same call as long as they come (mpi_pt2pt.c): for
 * MPI_Waitall. */
MPI_HIDDEN void mpi_wait_all_plain(struct mpi_req *const *rs, int n);
/* Fails r, which depends on dead world rank w, unless a transfer of it is
 * under way (then libptl's failed event ends it). In mpi_pt2pt.c. */
void mpi_req_fail_dead(struct mpi_req *r, int w);
/* Calls fn on every request in use (mpi_req.c). */
void mpi_req_each(void (*fn)(struct mpi_req *r, void *arg), void *arg);
/* "rank 1 of MPI_COMM_WORLD died", or "rank 0 of mine (rank 2 of
 * MPI_COMM_WORLD) died", into buf. */
void mpi_dead_msg(char *buf, size_t n, const struct mpi_comm *c, int w);
/* The error of a request failed by a death, on its communicator. */
int mpi_err_dead(const char *fn, const struct mpi_req *r);

/* ---------------------------------------------------------------- errors */
/* Reports an error on communicator c (MPI_COMM_NULL: world's handler):
 * returns the code to give back, or does not return (ERRORS_ARE_FATAL). */
int mpi_err(MPI_Comm c, int cls, const char *fn, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define MPI_CHECK_INIT(fn)                                                          \
	do {                                                                        \
		if (!mpi_g.initialized || mpi_g.finalized)                          \
			return mpi_err(MPI_COMM_NULL, MPI_ERR_OTHER, fn,            \
				       "called %s MPI_Init", mpi_g.finalized ? "after MPI_Finalize" : "before"); \
	} while (0)
void mpi_fatal(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* The start of a call on a communicator: MPI running, and c the struct of
 * comm, or the call returns the MPI_ERR_COMM error (on MPI_COMM_WORLD's
 * handler: an invalid communicator has none of its own). */
#define MPI_COMM_ARG(fn, comm, c)                                                                   \
	MPI_CHECK_INIT(fn);                                                                          \
	struct mpi_comm *c = mpi_comm_get(comm);                                                      \
	if (!c)                                                                                     \
	return mpi_err_comm(fn, comm)
int mpi_err_comm(const char *fn, MPI_Comm comm);
/* The same check where the call needs only a valid communicator, not it. */
#define MPI_COMM_VALID(fn, comm)                                                                   \
	do {                                                                                        \
		MPI_CHECK_INIT(fn);                                                                  \
		if (!mpi_comm_get(comm))                                                            \
			return mpi_err_comm(fn, comm);                                              \
	} while (0)
/* A completed operation's status into the caller's: all but MPI_ERROR,
 * which only the calls completing several requests write (MPI-3.1 3.2.5). */
static inline void mpi_status_copy(MPI_Status *to, const MPI_Status *from)
{
	int e = to->MPI_ERROR;
	*to = *from;
	to->MPI_ERROR = e;
}

/* ---------------------------------------------------------------- ops */
struct mpi_opdef;
/* MPI_SUCCESS if op applies to dt (MPI-3.1 5.9.2's table for a predefined
 * op), else the class: MPI_ERR_OP, or MPI_ERR_TYPE for no type. A pure
 * function of the pair, so every rank of a collective refuses it alike. */
int mpi_op_check(MPI_Op op, MPI_Datatype dt);
/* mpi_op_check's refusal rc reported under fn: which op, which type, and
 * what the op takes. */
int mpi_op_refused(MPI_Comm comm, const char *fn, MPI_Op op, MPI_Datatype dt, int rc);
bool mpi_op_commutative(MPI_Op op);
/* inout[i] = in[i] OP inout[i] for count elements of dt (contiguous).
 * MPI_ERR_NO_MEM when a user op's type needs copies in its own layout and
 * there is no memory for them: inout is then unchanged, not the result,
 * and the caller must fail. */
int mpi_op_apply(MPI_Op op, MPI_Datatype dt, const void *in, void *inout, int count);
/* A user's op (MPI_Op_create), not a predefined one. */
bool mpi_op_user(MPI_Op op);
/* out[i] = in[i] OP io[i], in one pass where the op is predefined; out is
 * io, or overlaps neither in nor io, or is in for the ops a reduction
 * takes, not a user's (its function writes a copy of io there first).
 * Fails as mpi_op_apply. */
int mpi_op_apply3(MPI_Op op, MPI_Datatype dt, const void *in, const void *io, void *out, int count);
/* mpi_op_apply's failure rc reported under fn. */
int mpi_op_failed(MPI_Comm comm, const char *fn, MPI_Op op, MPI_Datatype dt, int count, int rc);
void mpi_op_init(void);
/* A real floating sum or product r = a OP b whose first operand a is a
 * NaN gives that NaN as it is; otherwise r, the arithmetic's own result.
 * x86's SSE gives the first source's NaN when both are NaNs (x87 the one
 * with the larger significand), and the compiler orders a + b or a * b
 * either way in each loop it builds (mpi_op.c's AVX2 and baseline copies
 * of three loops and their scalar tails, mpi_coll.c's combine_fast):
 * without the rule MPI_Reduce_scatter_block and MPI_Ireduce_scatter_block,
 * whose loops differ, gave different NaN bits. With it the one NaN left
 * to pick between is fixed, so every loop and every rank gives the same
 * bits. Complex sums are taken by parts; a complex product is the
 * runtime's one call (__mulsc3, __muldc3, __mulxc3) with the operands in
 * source order in every loop. r is computed before, not in an arm of the
 * choice: GCC vectorizes no arithmetic that could trap in one arm only (a
 * compare and a blend per vector then). */
#define MPI_OP_NAN_FIRST(a, r) (isnan(a) ? (a) : (r))

/* ---------------------------------------------------------------- collectives */
void mpi_coll_init(void);
/* c's collective state: cached schedules, temporaries, hints. */
void mpi_coll_comm_free(struct mpi_comm *c);
/* Communicator hints (mpi_coll.c). *out: base's (NULL: none, the
 * environment's) with ptl_coll_algo (PTL_COLL_ALGO's syntax) and
 * ptl_coll_ports (PTL_COLL_PORTS') over them where not NULL ("": the
 * hint removed); NULL where none are left, else malloc'd. Both checked
 * before anything is made: MPI_ERR_INFO_VALUE (reported on comm) for a
 * value that is not one. */
int mpi_coll_hints_make(const struct mpi_comm *base, MPI_Comm comm, const char *algo, const char *ports,
			const char *fn, struct mpi_coll_choice **out);
/* c takes ch (from mpi_coll_hints_make, NULL: none) in place of its own. */
void mpi_coll_hints_put(struct mpi_comm *c, struct mpi_coll_choice *ch);
/* The hints set on c (NULL, 0: not set). */
void mpi_coll_hints_get(const struct mpi_comm *c, const char **algo, int *ports);
/* Internal collectives used by communicator creation. */
int mpi_allreduce_int_max(struct mpi_comm *c, int *v, int n);
int mpi_allgather_ints(struct mpi_comm *c, const int *mine, int n, int *all);
/* Nonblocking collectives (mpi_icoll.c): advances every one under way
 * (empty: the progress pass brought no event, so time to look at
 * deadlines and dead peers). mpi_pt2pt.c's progress calls it at the end of
 * every pass while mpi_g.icoll_live; it ignores calls made from within
 * itself. */
void mpi_icoll_progress(bool empty);
/* The message of a failed nonblocking collective's request. */
const char *mpi_icoll_msg(const struct mpi_icoll *q);
/* A nonblocking agreement over intracommunicator c (mpi_comm.c's
 * MPI_Comm_idup): rounds of an allreduce (MPI_MAX) of n ints, the first
 * round's from v0. After each round step(arg, v, MPI_SUCCESS), v the
 * maxima, returns MPI_ICOLL_AGAIN (v refilled: another round) or the
 * call's result; a round that fails gives step (arg, NULL, its error)
 * instead, for it to clean up (its return ignored). step has been called
 * with an error when this returns one. */
#define MPI_ICOLL_AGAIN (-1)
int mpi_icoll_rounds(struct mpi_comm *c, const char *fn, const int *v0, int n, int (*step)(void *arg, int *v, int rc),
		     void *arg, MPI_Request *request);

/* ---------------------------------------------------------------- matched probes
 * A matched message is an unexpected-message record taken out of the
 * index (mpi_ux.c); its MPI_Message handle is a slot of mpi_mprobe.c's
 * table until MPI_Mrecv or MPI_Imrecv takes it. */
/* Takes the earliest unexpected message of c that (src, tag) matches out
 * of matching, its envelope into *st (if not NULL); NULL if none. */
struct mpi_ux *mpi_ux_take(int src, int tag, struct mpi_comm *c, MPI_Status *st);
/* Starts the receive of u (from mpi_ux_take) into buf, as a receive of
 * its source and tag on c would have. */
int mpi_mrecv_start(void *buf, int count, MPI_Datatype dt, struct mpi_ux *u, struct mpi_comm *c,
		    struct mpi_req **out);
/* MPI_Improbe with its arguments checked and source not MPI_PROC_NULL. */
int mpi_improbe(int src, int tag, struct mpi_comm *c, int *flag, MPI_Status *st, MPI_Message *msg);
/* The record and communicator of message m, or NULL if m names no
 * matched message (MPI_MESSAGE_NULL, one received already, garbage). */
struct mpi_ux *mpi_message_get(MPI_Message m, struct mpi_comm **c);
/* Frees handle *m (its receive has started) and sets it to MPI_MESSAGE_NULL. */
void mpi_message_free(MPI_Message *m);
/* Finalize: the records go with mpi_ux.c's slabs. */
void mpi_mprobe_fini(void);

#endif
