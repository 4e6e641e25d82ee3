/*
 * tracer/trc_mprobe.c - matched probes in the trace. MPI_Mprobe and a
 * successful MPI_Improbe take a message out of matching and hand back an
 * MPI_Message; MPI_Mrecv / MPI_Imrecv later receive it. Handle values mean
 * nothing in another run (and MPI_MESSAGE_NO_PROC is one value for every
 * probe of MPI_PROC_NULL), so a receive records its message as "taken n
 * matched probes ago" (1 = the latest), like request offsets: equal across
 * ranks running the same code, and the replay keeps its own messages in
 * probe order and picks the same one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trc_hooks.h"

struct trc_msg {
	MPI_Message h;
	uint64_t seq;	/* 1 for the first message taken */
};

static struct trc_msg *mtab;	/* taken, not yet received, oldest first */
static size_t mn, mcap;
static uint64_t mseq;

void trc_a_newmsg(struct trc_call *c, int flag, MPI_Message m)
{
	(void)c;
	if (!flag)
		return;
	mseq++;
	if (mn == mcap) {
		size_t nc = mcap ? 2 * mcap : 16;
		struct trc_msg *t = realloc(mtab, nc * sizeof *t);
		if (!t)
			return;	/* its receive then records offset 0: unknown */
		mtab = t;
		mcap = nc;
	}
	mtab[mn++] = (struct trc_msg){ m, mseq };
}

/* The latest probe that took this handle: with one value for many
 * messages (MPI_MESSAGE_NO_PROC) any of them is the same to the replay. */
void trc_f_msg(struct trc_call *c, MPI_Message m)
{
	uint64_t off = 0;
	for (size_t i = mn; i-- > 0;)
		if (mtab[i].h == m) {
			off = mseq - mtab[i].seq + 1;
			memmove(&mtab[i], &mtab[i + 1], (--mn - i) * sizeof *mtab);
			break;
		}
	trc_f_int(c, (int)off);
}
