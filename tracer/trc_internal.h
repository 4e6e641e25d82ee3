/* Private to the tracer core: shared between its .c files. */
#ifndef TRC_INTERNAL_H
#define TRC_INTERNAL_H

#include "trc.h"

#define TRC_RDIMS 3
struct trc_rblock {
	int64_t start;
	int nd;
	uint32_t count[TRC_RDIMS];
	int64_t stride[TRC_RDIMS];
};
/* Returns the number of blocks; writes at most max of them to out. */
size_t trc_rset_blocks(const struct trc_rset *s, struct trc_rblock *out, size_t max);
void trc_put_rset(struct trc_buf *b, const struct trc_rset *s);
uint64_t trc_node_rehash(struct trc_node *n);
int trc_peer_index(unsigned op);

#endif
