/* mpi_intercoll.c: collectives on intercommunicators (MPI-3.1 5.2.2):
 * each group's results come from the other group.
 *
 * Two shapes. Reductions and broadcasts go through the leaders (local
 * rank 0 of each group): a collective on the local intracommunicator
 * (c->local) to or from the leader, and one transfer between the leaders.
 * Gathers, scatters, all-gathers and all-to-alls are one direct exchange
 * with the remote ranks. Transfers between the groups use the
 * intercommunicator's collective context through the machinery of the
 * scheduled collectives (mpi_cx_*, mpi_coll.c), so they have the
 * deadline and the dead-member checks, and every call on the
 * intercommunicator - on every member, leader or not - takes the next
 * collective number, which keeps both groups' tags in step.
 *
 * Rooted calls: the root passes MPI_ROOT, the rest of its group
 * MPI_PROC_NULL, the other group the root's rank in it. Not provided
 * on intercommunicators: the nonblocking forms (refused by the callers);
 * MPI_Scan and MPI_Exscan are not defined there. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mpi_coll_int.h"
#include "mpi_impl.h"

/* A buffer for count elements of dt as a collective writes them (its
 * true extent), or NULL; free(*mem) after. */
static void *tmp_for(MPI_Datatype dt, int count, void **mem)
{
	struct mpi_dtype *t = mpi_dtype_get(dt);
	size_t span = count > 0 ? (size_t)(count - 1) * (size_t)t->extent + (size_t)(t->true_ub - t->true_lb) : 0;
	*mem = malloc(span ? span : 1);
	return *mem ? (char *)*mem - t->true_lb : NULL;
}

/* The root argument: ROOT (this process), NONE (its group's root is
 * another), or the remote rank of the root; < -3: the error. */
enum { ROOT = -1, NONE = -2 };
static int root_arg(struct mpi_comm *c, MPI_Comm comm, const char *fn, int root, int *rc)
{
	if (root == MPI_ROOT)
		return ROOT;
	if (root == MPI_PROC_NULL)
		return NONE;
	if (root >= 0 && root < c->size)
		return root;
	*rc = mpi_err(comm, MPI_ERR_ROOT, fn, "root %d: on an intercommunicator MPI_ROOT, MPI_PROC_NULL or a rank of the "
			    "remote group (0 to %d)", root, c->size - 1);
	return -4;
}

static bool leader(const struct mpi_comm *c)
{
	return c->rank == 0;
}

/* Waits for the transfers x holds (if any) and ends x. */
static int wait_end(struct cx *x, MPI_Comm comm, int rc)
{
	if (!rc && x->np)
		rc = mpi_cx_wait(x);
	return mpi_cx_end(x, comm, rc);
}

int mpi_inter_barrier(struct mpi_comm *c, MPI_Comm comm)
{
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Barrier");
	/* every local member is in; the leaders tell each other so; the
	 * members leave once their leader heard from the other group */
	char out = 1, in = 0;
	int rc = PMPI_Barrier(c->local);
	if (!rc && leader(c)) {
		rc = mpi_cx_recv(&x, &in, 1, MPI_BYTE, 0, 0);
		if (!rc)
			rc = mpi_cx_send(&x, &out, 1, MPI_BYTE, 0, 0);
		if (!rc)
			rc = mpi_cx_wait(&x);
	}
	if (!rc)
		rc = PMPI_Barrier(c->local);
	return mpi_cx_end(&x, comm, rc);
}

int mpi_inter_bcast(struct mpi_comm *c, MPI_Comm comm, void *buf, int count, MPI_Datatype dt, int root)
{
	int rc = MPI_SUCCESS;
	int r = root_arg(c, comm, "MPI_Bcast", root, &rc);
	if (rc)
		return rc;
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Bcast");
	if (r == ROOT)
		rc = mpi_cx_send(&x, buf, count, dt, 0, 0); /* to the other group's leader */
	else if (r >= 0) {
		if (leader(c) && !(rc = mpi_cx_recv(&x, buf, count, dt, r, 0)))
			rc = mpi_cx_wait(&x);
		if (!rc || leader(c)) {
			int brc = PMPI_Bcast(buf, count, dt, 0, c->local);
			rc = rc ? rc : brc;
		}
	}
	return wait_end(&x, comm, rc);
}

/* The reduction of this group's sendbufs at its leader (into *red), for
 * the other group. */
static int reduce_local(struct mpi_comm *c, const void *sendbuf, int count, MPI_Datatype dt, MPI_Op op, void **red,
			void **mem)
{
	*mem = NULL;
	*red = leader(c) ? tmp_for(dt, count, mem) : NULL;
	if (leader(c) && !*red)
		return MPI_ERR_NO_MEM;
	return PMPI_Reduce(sendbuf, *red, count, dt, op, 0, c->local);
}

int mpi_inter_reduce(struct mpi_comm *c, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count,
		     MPI_Datatype dt, MPI_Op op, int root)
{
	int rc = MPI_SUCCESS;
	int r = root_arg(c, comm, "MPI_Reduce", root, &rc);
	if (rc)
		return rc;
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Reduce");
	void *red = NULL, *mem = NULL;
	if (r == ROOT) {
		rc = mpi_cx_recv(&x, recvbuf, count, dt, 0, 0);
	} else if (r >= 0) {
		rc = reduce_local(c, sendbuf, count, dt, op, &red, &mem);
		if (!rc && leader(c))
			rc = mpi_cx_send(&x, red, count, dt, r, 0);
	}
	rc = wait_end(&x, comm, rc);
	free(mem);
	return rc;
}

int mpi_inter_allreduce(struct mpi_comm *c, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype dt, MPI_Op op)
{
	if (sendbuf == MPI_IN_PLACE)
		return mpi_err(comm, MPI_ERR_BUFFER, "MPI_Allreduce", "MPI_IN_PLACE on an intercommunicator");
	struct cx x;
	mpi_cx_init(&x, c, "MPI_Allreduce");
	void *red = NULL, *mem = NULL;
	/* each group's reduction to its leader; the leaders swap them; each
	 * leader gives its group the other's */
	int rc = reduce_local(c, sendbuf, count, dt, op, &red, &mem);
	if (!rc && leader(c)) {
		rc = mpi_cx_recv(&x, recvbuf, count, dt, 0, 0);
		if (!rc)
			rc = mpi_cx_send(&x, red, count, dt, 0, 0);
		if (!rc)
			rc = mpi_cx_wait(&x);
	}
	if (!rc || leader(c)) {
		int brc = PMPI_Bcast(recvbuf, count, dt, 0, c->local);
		rc = rc ? rc : brc;
	}
	rc = mpi_cx_end(&x, comm, rc);
	free(mem);
	return rc;
}

/* MPI_Reduce_scatter(_block): each group's vectors (as long as the other
 * group's recvcounts add up to) reduced at its leader, swapped between
 * the leaders, and scattered by each leader over its group by its own
 * recvcounts (counts NULL: count each). */
int mpi_inter_reduce_scatter(struct mpi_comm *c, MPI_Comm comm, const char *fn, const void *sendbuf, void *recvbuf,
			     const int counts[], int count, MPI_Datatype dt, MPI_Op op)
{
	if (sendbuf == MPI_IN_PLACE)
		return mpi_err(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE on an intercommunicator");
	int n = c->local_size, total = 0;
	int *displs = counts ? malloc(sizeof(int) * (size_t)n) : NULL;
	if (counts && !displs)
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	for (int i = 0; i < n; i++) {
		int ci = counts ? counts[i] : count;
		if (ci < 0) {
			free(displs);
			return mpi_err(comm, MPI_ERR_COUNT, fn, "recvcounts[%d] = %d < 0", i, ci);
		}
		if (displs)
			displs[i] = total;
		total += ci;
	}
	struct cx x;
	mpi_cx_init(&x, c, fn);
	void *red = NULL, *mem = NULL, *theirs = NULL, *tmem = NULL;
	int rc = reduce_local(c, sendbuf, total, dt, op, &red, &mem);
	if (!rc && leader(c)) {
		theirs = tmp_for(dt, total, &tmem);
		rc = theirs ? mpi_cx_recv(&x, theirs, total, dt, 0, 0) : MPI_ERR_NO_MEM;
		if (!rc)
			rc = mpi_cx_send(&x, red, total, dt, 0, 0);
		if (!rc)
			rc = mpi_cx_wait(&x);
	}
	if (!rc || leader(c)) {
		int src = counts ? PMPI_Scatterv(theirs, counts, displs, dt, recvbuf, counts[c->rank], dt, 0, c->local)
				 : PMPI_Scatter(theirs, count, dt, recvbuf, count, dt, 0, c->local);
		rc = rc ? rc : src;
	}
	rc = mpi_cx_end(&x, comm, rc);
	free(mem);
	free(tmem);
	free(displs);
	return rc;
}

/* ------------------------------------------------------------ direct exchanges */

int mpi_inter_exchange(struct mpi_comm *c, MPI_Comm comm, const char *fn, enum mpi_ic_kind kind, int root,
		       const struct mpi_xside *send, const struct mpi_xside *recv)
{
	int rc = MPI_SUCCESS, r = 0;
	if (kind == MPI_IC_GATHER || kind == MPI_IC_SCATTER) {
		r = root_arg(c, comm, fn, root, &rc);
		if (rc)
			return rc;
	}
	if (send->buf == MPI_IN_PLACE || recv->buf == MPI_IN_PLACE)
		return mpi_err(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE on an intercommunicator");
	/* which sides this process has: the root of a gather only receives, ... */
	bool sends = kind == MPI_IC_ALL || (kind == MPI_IC_GATHER && r >= 0) || (kind == MPI_IC_SCATTER && r == ROOT);
	bool recvs = kind == MPI_IC_ALL || (kind == MPI_IC_GATHER && r == ROOT) || (kind == MPI_IC_SCATTER && r >= 0);
	int nsend = kind == MPI_IC_ALL || r == ROOT ? c->size : 1, nrecv = nsend;
	if (sends)
		rc = mpi_xside_check(comm, fn, "send", send, nsend);
	if (!rc && recvs)
		rc = mpi_xside_check(comm, fn, "recv", recv, nrecv);
	if (rc)
		return rc;
	struct cx x;
	mpi_cx_init(&x, c, fn);
	/* receives first, then sends starting after this rank, so the ranks
	 * do not all send to remote rank 0 first */
	bool to_root = kind != MPI_IC_ALL && r >= 0; /* one peer: the remote root */
	for (int k = 0; recvs && !rc && k < nrecv; k++)
		rc = mpi_xside_xfer(&x, true, recv, k, to_root ? r : k, 0);
	for (int i = 0; sends && !rc && i < nsend; i++) {
		int k = (c->rank + i) % nsend;
		rc = mpi_xside_xfer(&x, false, send, k, to_root ? r : k, 0);
	}
	return wait_end(&x, comm, rc);
}
