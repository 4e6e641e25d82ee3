/* trc_hooks.h: what an MPI wrapper calls to record one MPI call.
 *
 * The generated PMPI wrappers (trc_wrappers.c) call these, and so will
 * ptl's own MPI layer: for each call, trc_begin() (0 means "not
 * recording, just call PMPI"), one trc_f_KIND() per recorded field in the
 * order trc_mpi.spec lists them, the PMPI call, the post actions, then
 * trc_end(). Include after mpi.h. Not thread-safe: the tracer records
 * MPI_THREAD_SINGLE/FUNNELED/SERIALIZED programs. */
#ifndef TRC_HOOKS_H
#define TRC_HOOKS_H

#include <mpi.h>
#include "trc.h"

#define TRC_CALLER __builtin_return_address(0)
#define TRC_INLINE_ARR 64

struct trc_call {
	struct trc_ev ev;
	unsigned nf;
	uint64_t t0;
	void *caller;
	int64_t abuf[TRC_INLINE_ARR];	/* array fields, inline when small */
	uint32_t acap;
	uint64_t sbuf[TRC_INLINE_ARR];	/* claimed request sequence numbers */
	uint64_t *seq;
	uint32_t nseq, scap;
	int nosq;			/* request lookups that found nothing */
};

/* Whether the tracer records: a wrapper that finds it off calls PMPI at
 * once, before it has set up a call's record (a frame of over 1 KiB). */
extern int trc_on;

void trc_start(void);		/* after PMPI_Init: read configuration */
void trc_finish(void);		/* before PMPI_Finalize: merge and write */
void trc_abort(void);		/* before PMPI_Abort: flush what streams */
int trc_begin(struct trc_call *c, int op, void *caller);
void trc_end(struct trc_call *c);

void trc_f_int(struct trc_call *c, int v);
void trc_f_index(struct trc_call *c, int idx);	/* MPI_UNDEFINED as -1 */
void trc_f_tag(struct trc_call *c, int tag);
void trc_f_root(struct trc_call *c, int root);
void trc_f_dtype(struct trc_call *c, MPI_Datatype dt);
/* A datatype field from its value taken earlier (trc_dtype_value), for a
 * type the program may have freed since (persistent requests). */
int64_t trc_dtype_value(MPI_Datatype dt);
void trc_f_dtype_value(struct trc_call *c, int64_t v);
void trc_f_op(struct trc_call *c, MPI_Op op);
void trc_f_peer(struct trc_call *c, int peer, MPI_Comm comm);
void trc_f_comm(struct trc_call *c, MPI_Comm comm);
void trc_f_newcomm(struct trc_call *c, MPI_Comm comm);
void trc_f_group(struct trc_call *c, MPI_Group g);
void trc_f_ints(struct trc_call *c, int n, const int *v);
/* n datatypes as their field values (trc_dtype_value), in an int array. */
void trc_f_dtypes(struct trc_call *c, int n, const MPI_Datatype *v);
void trc_f_req(struct trc_call *c, MPI_Request r);
void trc_f_reqs(struct trc_call *c, int n, const MPI_Request *r);

void trc_a_newreq(struct trc_call *c, MPI_Request r);
void trc_a_retire_all(struct trc_call *c);
void trc_a_retire_if(struct trc_call *c, int flag);
void trc_a_retire_index(struct trc_call *c, int idx);
void trc_a_retire_some(struct trc_call *c, int n, const int *idx);
void trc_a_keep_all(struct trc_call *c);
void trc_a_forget_comm(struct trc_call *c, MPI_Comm comm);
void trc_a_forget_persist(struct trc_call *c, MPI_Request h); /* trc_persist.c */
/* Matched probes (trc_mprobe.c): a message the probe took when flag is
 * set, and a message named by how many such probes ago it was taken. */
void trc_a_newmsg(struct trc_call *c, int flag, MPI_Message m);
void trc_f_msg(struct trc_call *c, MPI_Message m);

int trc_comm_size(MPI_Comm comm);
int trc_at_root(int root, MPI_Comm comm);
int trc_cart_ndims(MPI_Comm comm);	/* 0 where comm has no Cartesian topology */
/* How many neighbours comm's topology gives this rank: out (1) or in (0). */
int trc_nbrs(MPI_Comm comm, int out);
/* A weights argument: 0 MPI_UNWEIGHTED, 1 an array, 2 MPI_WEIGHTS_EMPTY. */
int trc_weights(const int *w);
int trc_sum(int n, const int *v);

#endif
