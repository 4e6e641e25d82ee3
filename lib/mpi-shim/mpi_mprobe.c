/* mpi_mprobe.c: the MPI_Message handles of matched probes (MPI-3.1 3.8.2).
 *
 * A handle is a slot of one growing table (handle = index + 1) that holds
 * the unexpected-message record MPI_Mprobe or MPI_Improbe took out of
 * matching (mpi_ux_take), and the communicator it came on, until MPI_Mrecv
 * or MPI_Imrecv starts its receive. The table grows only when every slot
 * holds a message nobody has received yet, so a probe-receive loop reuses
 * one slot and allocates nothing. */
#include "config.h"

#include <stdlib.h>

#include "mpi_impl.h"

struct mpi_msg {
	struct mpi_ux *u;      /* NULL: the slot is free */
	struct mpi_comm *c;
};

static struct mpi_msg *msgs;
static int *free_idx;     /* free slots, a stack */
static int cap, nfree;

/* Doubles the table; false (nothing changed) when there is no memory. */
static bool msg_grow(void)
{
	int nc = cap ? cap * 2 : 16;
	struct mpi_msg *m = realloc(msgs, sizeof *m * (size_t)nc);
	if (!m)
		return false;
	msgs = m;
	int *f = realloc(free_idx, sizeof *f * (size_t)nc);
	if (!f)
		return false; /* msgs is only larger: still consistent with cap */
	free_idx = f;
	/* Lowest slots on top, so handles stay small. */
	for (int i = nc - 1; i >= cap; i--) {
		msgs[i].u = NULL;
		msgs[i].c = NULL;
		free_idx[nfree++] = i;
	}
	cap = nc;
	return true;
}

int mpi_improbe(int src, int tag, struct mpi_comm *c, int *flag, MPI_Status *st, MPI_Message *msg)
{
	*flag = 0;
	*msg = MPI_MESSAGE_NULL;
	/* A slot first: a message taken out of matching must get a handle. */
	if (!nfree && !msg_grow())
		return MPI_ERR_NO_MEM;
	struct mpi_ux *u = mpi_ux_take(src, tag, c, st);
	if (!u)
		return MPI_SUCCESS;
	int i = free_idx[--nfree];
	msgs[i].u = u;
	msgs[i].c = c;
	*flag = 1;
	*msg = (MPI_Message)(i + 1);
	return MPI_SUCCESS;
}

struct mpi_ux *mpi_message_get(MPI_Message m, struct mpi_comm **c)
{
	if (m < 1 || m > cap || !msgs[m - 1].u)
		return NULL;
	*c = msgs[m - 1].c;
	return msgs[m - 1].u;
}

void mpi_message_free(MPI_Message *m)
{
	msgs[*m - 1].u = NULL;
	msgs[*m - 1].c = NULL;
	free_idx[nfree++] = *m - 1;
	*m = MPI_MESSAGE_NULL;
}

void mpi_mprobe_fini(void)
{
	free(msgs);
	free(free_idx);
	msgs = NULL;
	free_idx = NULL;
	cap = nfree = 0;
}
