/* ptlreplay.h: what the replayer's files share (tools/ptlreplay.c: calls,
 * requests, communicators; tools/ptlreplay_coll.c: collectives). */
#ifndef PTLREPLAY_H
#define PTLREPLAY_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "trc.h"

_Noreturn void rp_die(const char *what, const char *detail);
/* *p grown to at least n bytes (new bytes zeroed), or the job ends. */
char *rp_scratch(char **p, size_t *cap, size_t n);
MPI_Datatype rp_dtype(int64_t v, size_t *size);
MPI_Op rp_mop(int64_t v);
MPI_Comm rp_comm(int64_t id);
/* A new request in creation order; buf (may be NULL) is freed when it completes. */
void rp_req_new(MPI_Request r, void *buf);
/* A recorded collective, blocking or not: 0 if e is no collective. */
int rp_coll(const struct trc_flat *e);

#endif
