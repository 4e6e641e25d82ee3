/* coll_names.c: names, block layout, request validation. */
#include <stdio.h>
#include <string.h>

#include "coll_int.h"

static const char *const coll_op_names[COLL_OP_COUNT] = {
	"allreduce", "reduce_scatter", "allgather", "alltoall", "bcast", "reduce", "barrier",
	"gather", "scatter", "scan", "exscan",
};

static const char *const coll_algo_names[COLL_ALGO_COUNT] = {
	"auto", "ring", "ring_sendrecv", "ring_bidir", "halving_doubling", "tree",
	"pairwise", "binomial", "scatter_allgather", "dissemination", "owner",
	"chain", "recursive_doubling", "linear", "bruck",
};

const char *coll_op_name(enum coll_op op)
{
	return (unsigned)op < COLL_OP_COUNT ? coll_op_names[op] : "?";
}

int coll_op_parse(const char *name, enum coll_op *op)
{
	for (int i = 0; name && i < COLL_OP_COUNT; i++)
		if (!strcmp(name, coll_op_names[i])) {
			*op = (enum coll_op)i;
			return 0;
		}
	return -EINVAL;
}

const char *coll_algo_name(enum coll_algo algo)
{
	return (unsigned)algo < COLL_ALGO_COUNT ? coll_algo_names[algo] : "?";
}

int coll_algo_parse(const char *name, enum coll_algo *algo)
{
	for (int i = 0; name && i < COLL_ALGO_COUNT; i++)
		if (!strcmp(name, coll_algo_names[i])) {
			*algo = (enum coll_algo)i;
			return 0;
		}
	return -EINVAL;
}

const char *coll_kind_name(enum coll_kind kind)
{
	switch (kind) {
	case COLL_SEND: return "send";
	case COLL_RECV: return "recv";
	case COLL_REDUCE: return "reduce";
	case COLL_COPY: return "copy";
	}
	return "?";
}

void coll_block(size_t bytes, size_t unit, size_t parts, size_t i, size_t *off, size_t *len)
{
	if (unit == 0)
		unit = 1;
	if (parts == 0 || i >= parts) {
		*off = bytes;
		*len = 0;
		return;
	}
	size_t units = bytes / unit, rem = bytes % unit;
	size_t base = units / parts, extra = units % parts;
	*off = (i * base + (i < extra ? i : extra)) * unit;
	*len = (base + (i < extra)) * unit;
	if (i == parts - 1)
		*len += rem;
}

void coll_msg(char *msg, size_t len, const char *fmt, ...)
{
	if (!msg || !len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
}

int coll_req_normalize(const struct coll_req *in, struct coll_req *out, char *msg, size_t msglen)
{
	*out = *in;
	if ((unsigned)in->op >= COLL_OP_COUNT) {
		coll_msg(msg, msglen, "unknown collective operation %d", (int)in->op);
		return -EINVAL;
	}
	if ((unsigned)in->algo >= COLL_ALGO_COUNT) {
		coll_msg(msg, msglen, "unknown algorithm %d", (int)in->algo);
		return -EINVAL;
	}
	if (in->nranks < 1 || in->nranks > COLL_MAX_RANKS) {
		coll_msg(msg, msglen, "ranks must be 1 to %d, not %d", COLL_MAX_RANKS, in->nranks);
		return -EINVAL;
	}
	if (out->elem_size == 0)
		out->elem_size = 1;
	if (out->num_chunks == 0)
		out->num_chunks = 1;
	if (out->ports == 0)
		out->ports = 1;
	if (out->num_chunks < 1 || out->num_chunks > COLL_MAX_CHUNKS) {
		coll_msg(msg, msglen, "chunks must be 1 to %d, not %d", COLL_MAX_CHUNKS, in->num_chunks);
		return -EINVAL;
	}
	if (out->ports < 1 || out->ports > COLL_MAX_PORTS) {
		coll_msg(msg, msglen, "ports must be 1 to %d, not %d", COLL_MAX_PORTS, in->ports);
		return -EINVAL;
	}
	if (coll_op_rooted(in->op)
	    && (in->root < 0 || in->root >= in->nranks)) {
		coll_msg(msg, msglen, "root %d is not a rank of a group of %d", in->root, in->nranks);
		return -EINVAL;
	}
	if (coll_op_reduces(in->op) && out->bytes % out->elem_size) {
		coll_msg(msg, msglen, "%s of %zu bytes: not a whole number of %zu-byte elements",
		         coll_op_name(in->op), out->bytes, out->elem_size);
		return -EINVAL;
	}
	if (in->input && in->op != COLL_OP_ALLREDUCE && in->op != COLL_OP_REDUCE
	    && in->op != COLL_OP_REDUCE_SCATTER) {
		coll_msg(msg, msglen, "%s: only allreduce, reduce and reduce_scatter take their input apart "
		         "(input)", coll_op_name(in->op));
		return -EINVAL;
	}
	if (in->op == COLL_OP_BARRIER)
		out->bytes = 0;
	if (in->participants)
		for (int i = 0; i < in->nranks; i++)
			if (in->participants[i] < 0) {
				coll_msg(msg, msglen, "participant %d has a negative rank %d", i,
				         in->participants[i]);
				return -EINVAL;
			}
	if (in->counts && in->op != COLL_OP_GATHER && in->op != COLL_OP_SCATTER
	    && in->op != COLL_OP_ALLGATHER && in->op != COLL_OP_ALLTOALL && in->op != COLL_OP_REDUCE_SCATTER) {
		coll_msg(msg, msglen, "%s takes no per-rank counts (gather, scatter, allgather, "
		         "alltoall and reduce_scatter do)", coll_op_name(in->op));
		return -EINVAL;
	}
	if (in->op == COLL_OP_REDUCE_SCATTER && in->counts) {
		/* the blocks of their own sizes make the vector; each is whole
		 * elements, as the reductions go element by element */
		size_t total = 0;
		for (int i = 0; i < in->nranks; i++) {
			size_t c = in->counts[i];
			if (c % out->elem_size) {
				coll_msg(msg, msglen, "reduce_scatter: block %d of %zu bytes is not a whole "
				         "number of %zu-byte elements", i, c, out->elem_size);
				return -EINVAL;
			}
			if (c > SIZE_MAX / 2 - total) {
				coll_msg(msg, msglen, "reduce_scatter: the blocks of %d ranks overflow a "
				         "buffer size", in->nranks);
				return -EINVAL;
			}
			total += c;
		}
		out->bytes = total;
	}
	if (in->recv_counts && (in->op != COLL_OP_ALLTOALL || !in->counts)) {
		coll_msg(msg, msglen, "recv_counts is a rank's column of alltoall counts, and %s",
		         in->op != COLL_OP_ALLTOALL ? "this is not an alltoall" : "counts is missing");
		return -EINVAL;
	}
	if (in->op == COLL_OP_GATHER || in->op == COLL_OP_SCATTER
	    || (in->op == COLL_OP_ALLGATHER && in->counts)) {
		/* the root (every rank, for allgather) holds every block: their
		 * sum must be a size_t */
		size_t total = 0;
		for (int i = 0; i < in->nranks; i++) {
			size_t c = in->counts ? in->counts[i] : out->bytes;
			if (c > SIZE_MAX / 2 - total) {
				coll_msg(msg, msglen, "%s: the blocks of %d ranks overflow a buffer size",
				         coll_op_name(in->op), in->nranks);
				return -EINVAL;
			}
			total += c;
		}
	}
	if (in->op == COLL_OP_ALLTOALL && in->counts && coll_a2a_sums(out, NULL, NULL)) {
		coll_msg(msg, msglen, "alltoall: the blocks of a row or column of %d ranks overflow "
		         "a buffer size", in->nranks);
		return -EINVAL;
	}
	if (in->op == COLL_OP_EXSCAN && out->bytes > SIZE_MAX / 2) {
		coll_msg(msg, msglen, "exscan of %zu bytes overflows a buffer size", out->bytes);
		return -EINVAL;
	}
	/* alltoall moves N*N*bytes; keep offsets inside size_t */
	if (in->op == COLL_OP_ALLTOALL && !in->counts && out->bytes
	    && (size_t)in->nranks > SIZE_MAX / 2 / out->bytes) {
		coll_msg(msg, msglen, "alltoall of %zu bytes to %d peers overflows a buffer size",
		         out->bytes, in->nranks);
		return -EINVAL;
	}
	return 0;
}
