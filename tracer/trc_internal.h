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
/* Histogram mode: integers within pct percent are equal (pct < 0: exact). */
int trc_close_enough(int64_t a, int64_t b, double pct);
/* Fold value sv (or src's bins) into dst, which starts from dv. */
void trc_histo_merge(struct trc_histo *dst, const struct trc_histo *src, int64_t dv, int64_t sv);
int64_t trc_histo_mode(const struct trc_histo *h);

#endif
