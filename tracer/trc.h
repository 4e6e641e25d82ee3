/* trc: the MPI-independent core of the ptl tracer.
 *
 * A trace is a list of nodes. A node is either one recorded MPI event or a
 * loop (an iteration count and a body list). Every node carries a
 * participant list: the set of world ranks that execute it (NULL means "the
 * same ranks as the enclosing loop", or the trace's own ranks at top level).
 * The loop nesting of an event is the path of loops above it (the seed's
 * PRSD stack); the tree form keeps each loop level's count and members in
 * one place.
 *
 * Promises:
 *  - trc_append() keeps a per-rank list compressed on the fly: loops fold,
 *    neighbour operations fold into parameter lists, and expanding the list
 *    yields exactly the events appended, in order.
 *  - trc_merge() joins two traces of disjoint rank sets; expanding the
 *    result for a rank yields that rank's sequence unchanged.
 *  - trc_read_*() never crash on any input; they fail with a message.
 * Nothing here calls MPI: ptltool links this library with the plain C
 * compiler.
 */
#ifndef TRC_H
#define TRC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trc_ops.h"

#define TRC_MAXF 10		/* most fields any recorded call has */
#define TRC_MAXPL 256		/* longest parameter list */

/* Field kinds; the spec file names them, trc_gen.awk copies them into
 * trc_optab. */
enum trc_kind {
	TRC_K_INT = 0,	/* plain integer: count, flag, color, required level */
	TRC_K_DTYPE,	/* datatype: (code << 32) | size in bytes */
	TRC_K_PEER,	/* world rank; also kept as an offset from the caller */
	TRC_K_TAG,	/* tag; TRC_ANY_TAG for MPI_ANY_TAG */
	TRC_K_COMM,	/* communicator id, equal on every rank */
	TRC_K_OP,	/* reduction op code */
	TRC_K_REQ,	/* request offset: creations since the request was made */
	TRC_K_INTS,	/* integer array (v-collective counts, group ranks) */
	TRC_K_REQS,	/* request-offset array */
	TRC_K_ROOT,	/* root rank in the communicator */
	TRC_NKINDS
};

/* Special values of peers, tags and request offsets. */
#define TRC_PROC_NULL (-1)
#define TRC_ANY_SOURCE (-2)
#define TRC_ANY_TAG (-1)
#define TRC_REQ_NULL (-1)
#define TRC_COMM_NULL (-1)

/* Datatype and op codes (what trc_mpi.c maps predefined handles to). */
enum trc_dtcode {
	TRC_DT_DERIVED = 0, TRC_DT_BYTE, TRC_DT_CHAR, TRC_DT_SHORT, TRC_DT_INT,
	TRC_DT_LONG, TRC_DT_LONG_LONG, TRC_DT_UNSIGNED, TRC_DT_UNSIGNED_LONG,
	TRC_DT_FLOAT, TRC_DT_DOUBLE, TRC_DT_LONG_DOUBLE, TRC_DT_INT8, TRC_DT_INT16,
	TRC_DT_INT32, TRC_DT_INT64, TRC_DT_UINT8, TRC_DT_UINT16, TRC_DT_UINT32,
	TRC_DT_UINT64, TRC_DT_DOUBLE_INT, TRC_DT_2INT, TRC_DT_PACKED, TRC_NDT
};
enum trc_opcode {
	TRC_MOP_USER = 0, TRC_MOP_SUM, TRC_MOP_PROD, TRC_MOP_MAX, TRC_MOP_MIN,
	TRC_MOP_LAND, TRC_MOP_LOR, TRC_MOP_LXOR, TRC_MOP_BAND, TRC_MOP_BOR,
	TRC_MOP_BXOR, TRC_MOP_MAXLOC, TRC_MOP_MINLOC, TRC_MOP_REPLACE,
	TRC_MOP_NULL, TRC_NMOP
};
extern const char *const trc_dt_names[TRC_NDT];
extern const char *const trc_mop_names[TRC_NMOP];

struct trc_opdesc {
	const char *name;	/* without the MPI_ prefix */
	unsigned nf;
	unsigned char kinds[TRC_MAXF];
	const char *fnames[TRC_MAXF];
};
extern const struct trc_opdesc trc_optab[TRC_NOPS];
int trc_op_lookup(const char *name);	/* -1 if unknown */

/* Peer flags: which interpretation of a peer holds on every participant. */
#define TRC_PF_ABS 1u
#define TRC_PF_REL 2u

struct trc_val {
	int64_t v;	/* the value; for peers the absolute world rank; arrays: length */
	int64_t rel;	/* peers: (v - rank) folded into (-n/2, n/2] */
	uint8_t pf;	/* peers: TRC_PF_* */
	uint16_t slot;	/* parameter-list entries: position in the caller's list */
};

/* Compute time before a call (nanoseconds), summarized. */
struct trc_tstat {
	uint64_t n, sum, min, max;
};

/* Histogram of an integer field or a loop count (histogram mode only). */
#define TRC_HBINS 8
struct trc_histo {
	unsigned nb;
	int64_t v[TRC_HBINS];
	uint64_t n[TRC_HBINS];
};

struct trc_ev {
	uint16_t op;
	uint32_t sig;
	struct trc_val f[TRC_MAXF];
	uint32_t narr;		/* total length of the array fields */
	int64_t *arr;
	uint32_t npl;		/* parameter list on the first peer field: 0 = none */
	struct trc_val *pl;
	struct trc_rset **plr;	/* per list entry: who calls it (NULL: all of the node) */
	struct trc_histo *h;	/* per field, NULL unless histogram mode merged values */
	struct trc_tstat t;
};

struct trc_rset {
	uint32_t n, cap;
	int32_t *r;		/* sorted, unique */
};

struct trc_node;
struct trc_list {
	struct trc_node *head, *tail;
	size_t n;
};

struct trc_node {
	struct trc_node *next, *prev;
	struct trc_rset *ranks;	/* NULL: inherit */
	uint64_t hash;
	int is_loop;
	struct trc_ev ev;		/* !is_loop */
	uint64_t iters;			/* is_loop */
	struct trc_histo *ih;		/* is_loop, histogram mode */
	struct trc_list body;		/* is_loop */
};

/* Trace levels and flags. */
enum trc_level { TRC_LEVEL_DUMP = 0, TRC_LEVEL_NODE = 1, TRC_LEVEL_GLOB = 2 };
#define TRC_FL_LOSSY 1u		/* histogram mode merged unequal values */
#define TRC_FL_INCOMPLETE 2u	/* a rank stopped recording (see message) */

struct trc_trace {
	int level;
	uint32_t flags;
	int32_t nranks;		/* world size */
	int32_t rank;		/* owner for per-rank traces, -1 merged */
	int window;		/* compression window in nodes, -1 none */
	int fold;		/* compress on append (0 at level dump) */
	double histo;		/* histogram tolerance in percent, < 0 lossless */
	struct trc_rset all;	/* ranks of this trace */
	struct trc_list top;
	/* Index of top's nodes for on-the-fly folding (trc_core.c): their
	 * pointers and hashes in arrays, so the search back from the tail
	 * reads contiguous memory. Kept only while recording. */
	struct trc_node **tv;
	uint64_t *th;
	uint32_t *tk;		/* body length of loops, 0 for events */
	size_t tn, tcap;
};

/* ---- rank sets ---- */
void trc_rset_init(struct trc_rset *s);
void trc_rset_free(struct trc_rset *s);
int trc_rset_add(struct trc_rset *s, int32_t r);
int trc_rset_union(struct trc_rset *dst, const struct trc_rset *src);
int trc_rset_has(const struct trc_rset *s, int32_t r);
int trc_rset_eq(const struct trc_rset *a, const struct trc_rset *b);
struct trc_rset *trc_rset_dup(const struct trc_rset *s);
/* Compact form: blocks of nested strided ranges. trc_rset_format writes
 * e.g. "0-7" or "1-3,5+4x2" into buf. */
size_t trc_rset_encoded_size(const struct trc_rset *s);
void trc_rset_format(const struct trc_rset *s, char *buf, size_t len);

/* ---- traces and per-rank recording ---- */
void trc_trace_init(struct trc_trace *t, int level, int32_t rank, int32_t nranks, int window);
void trc_trace_free(struct trc_trace *t);
/* Append one event (copied; arrays duplicated). Returns 0 or -ENOMEM. */
int trc_append(struct trc_trace *t, const struct trc_ev *ev);
/* Fill rel/pf of peer fields for the caller's rank. */
void trc_ev_setpeers(struct trc_ev *ev, int32_t rank, int32_t nranks);
void trc_val_peer(struct trc_val *v, int64_t peer, int32_t rank, int32_t nranks);
void trc_ev_free(struct trc_ev *ev);
int trc_ev_copy(struct trc_ev *dst, const struct trc_ev *src);
void trc_tstat_add(struct trc_tstat *t, uint64_t ns);
void trc_tstat_merge(struct trc_tstat *dst, const struct trc_tstat *src);
void trc_node_free(struct trc_node *n);
void trc_list_free(struct trc_list *l);
void trc_list_append(struct trc_list *l, struct trc_node *n);
void trc_list_remove(struct trc_list *l, struct trc_node *n);

/* ---- merge: b's ranks must be disjoint from a's; b is consumed ---- */
int trc_merge(struct trc_trace *a, struct trc_trace *b);

/* ---- expansion ---- */
struct trc_flat {
	uint16_t op;
	uint32_t sig;
	int64_t v[TRC_MAXF];	/* peers resolved to absolute ranks; arrays: length */
	uint32_t narr;
	const int64_t *arr;
	uint64_t tns;		/* compute time before the call (mean when compressed) */
};
typedef int (*trc_emit_fn)(const struct trc_flat *e, void *ctx);
/* Calls fn for every event of rank, in order; stops early if fn returns
 * non-zero and returns that value. */
int trc_expand(const struct trc_trace *t, int32_t rank, trc_emit_fn fn, void *ctx);
/* One line, without timing: "Isend count=4 dt=double:8 dest=1 ... @sig". */
void trc_flat_format(const struct trc_flat *e, char *buf, size_t len);

struct trc_stats {
	uint64_t events;	/* events represented (all ranks) */
	uint64_t nodes, loops, events_nodes;
	uint64_t flat_bytes;	/* size of the flat binary records of all ranks */
};
void trc_stats(const struct trc_trace *t, struct trc_stats *st);

/* ---- files ----
 * Binary compressed form: magic "PTLTRC01", version, flags, header, a
 * signature table, the node tree with varint fields, CRC-32 trailer.
 * Flat form: magic "PTLFLT01", header, one record per event, CRC trailer.
 * Errors: return -1 and write a message naming the problem into err. */
#define TRC_FMT_RSD 0
#define TRC_FMT_ASCII 1
#define TRC_FMT_BINARY 2

struct trc_buf {
	uint8_t *p;
	size_t len, cap;
	int oom;
};
void trc_buf_free(struct trc_buf *b);
int trc_serialize(const struct trc_trace *t, struct trc_buf *out);
int trc_deserialize(struct trc_trace *t, const uint8_t *p, size_t len, char *err, size_t errlen);
int trc_write_file(const struct trc_trace *t, int fmt, const char *path, char *err, size_t errlen);
/* Reads a compressed (rsd) or flat file. */
int trc_read_file(struct trc_trace *t, const char *path, char *err, size_t errlen);
int trc_read_mem(struct trc_trace *t, const uint8_t *p, size_t len, char *err, size_t errlen);
void trc_print(const struct trc_trace *t, FILE *out);

/* Streaming writer of flat records (one rank). */
struct trc_flatw {
	FILE *f;
	uint32_t crc;
	int32_t rank;
};
int trc_flatw_open(struct trc_flatw *w, const char *path, int32_t rank, int32_t nranks);
int trc_flatw_put(struct trc_flatw *w, const struct trc_flat *e);
int trc_flatw_close(struct trc_flatw *w);

uint32_t trc_crc32(uint32_t crc, const void *p, size_t len);

/* ---- request offsets ----
 * Handles are opaque integers. Offsets are counted in request creations,
 * so they agree across ranks that run the same code even when handle
 * values do not, and stay right when one handle value is outstanding
 * several times (MPICH reuses one handle for sends that completed at once). */
struct trc_reqtab {
	uint64_t *h;		/* ring of handles, oldest first */
	uint8_t *live;
	uint64_t cap, head, next;	/* sequence numbers */
	int overflow;
};
int trc_reqtab_init(struct trc_reqtab *rt, uint64_t cap);
void trc_reqtab_free(struct trc_reqtab *rt);
/* Record a new request; -1 when cap would be exceeded. */
int trc_reqtab_add(struct trc_reqtab *rt, uint64_t handle);
/* Offset of the oldest live, not yet claimed entry with this handle, and
 * its sequence number; claimed entries are skipped so repeats map to
 * distinct entries. Returns TRC_REQ_NULL if unknown. */
int64_t trc_reqtab_lookup(struct trc_reqtab *rt, uint64_t handle, uint64_t *seq);
void trc_reqtab_unclaim(struct trc_reqtab *rt, uint64_t seq);
void trc_reqtab_retire(struct trc_reqtab *rt, uint64_t seq);

/* ---- configuration: record.in, then environment ---- */
struct trc_config {
	int fmt;		/* TRC_FMT_* */
	int window;
	long reqbuf;
	char out[4096];
	int level;
	double histo;		/* < 0: lossless */
	int depth;		/* stack signature depth */
	char flat[4096];	/* PTL_TRACE_FLAT: also stream flat records here */
};
/* Fills defaults, reads path (may be NULL or absent), then env. Problems
 * are appended to msgs (one line each) and the default is kept. Returns
 * the number of problems. */
int trc_config_load(struct trc_config *c, const char *path, char *msgs, size_t msglen);

/* ---- stack signatures: module + offset, stable under ASLR ---- */
uint32_t trc_sig_of(void *const *pcs, int n);

#endif
