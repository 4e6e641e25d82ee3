/* mpi_xchg.c: collectives that are one direct exchange - every receive
 * and send posted at once, then waited for together with the deadline and
 * dead-member checks of the scheduled collectives (mpi_cx_wait, mpi_coll.c):
 * MPI_Alltoallw, whose per-peer datatypes no schedule carries, and the
 * neighbourhood collectives of Cartesian, graph and distributed graph
 * topologies (MPI-3.1 7.6), whose peers are the topology's neighbours
 * (mpi_topo_nbrs). Blocking forms only. Their blocks (struct mpi_xside)
 * and transfers serve the intercommunicators' exchanges too
 * (mpi_intercoll.c).
 *
 * Each call takes the communicator's next collective number (its tags),
 * so it never takes another collective's messages. A transfer to or from
 * MPI_PROC_NULL, or of no bytes, is not made: both ends know its size. */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_coll_int.h"
#include "mpi_impl.h"

/* Nothing to move: by bytes, not count - one of a zero-size type on one
 * side meets zero of another on the other (matching type signatures). */
static bool none(int peer, int count, MPI_Datatype dt)
{
	return peer == MPI_PROC_NULL || mpi_dtype_get(dt)->size * (size_t)count == 0;
}

static int xrecv(struct cx *x, void *buf, int count, MPI_Datatype dt, int peer, int tag)
{
	return none(peer, count, dt) ? MPI_SUCCESS : mpi_cx_recv(x, buf, count, dt, peer, tag);
}

static int xsend(struct cx *x, const void *buf, int count, MPI_Datatype dt, int peer, int tag)
{
	return none(peer, count, dt) ? MPI_SUCCESS : mpi_cx_send(x, buf, count, dt, peer, tag);
}

/* Block j's count and type: a negative count or a bad type is the error. */
static int check_block(MPI_Comm comm, const char *fn, const char *what, int j, int count, MPI_Datatype dt)
{
	if (count < 0)
		return mpi_err(comm, MPI_ERR_COUNT, fn, "%scounts[%d] = %d < 0", what, j, count);
	if (mpi_dtype_check(dt, count))
		return mpi_err(comm, MPI_ERR_TYPE, fn, "%stypes[%d]: invalid or uncommitted datatype %d", what, j, dt);
	return MPI_SUCCESS;
}

void *mpi_xside_block(const struct mpi_xside *s, int k, int *count, MPI_Datatype *dt)
{
	*count = s->counts ? s->counts[k] : s->count;
	*dt = s->types ? s->types[k] : s->type;
	MPI_Aint ext = mpi_dtype_get(*dt) ? mpi_dtype_get(*dt)->extent : 0;
	MPI_Aint d = s->same      ? 0
		     : s->adispls ? s->adispls[k]
		     : s->wdispls ? (MPI_Aint)s->wdispls[k]
		     : s->idispls ? (MPI_Aint)s->idispls[k] * ext
				  : (MPI_Aint)k * (MPI_Aint)*count * ext;
	return (char *)(uintptr_t)s->buf + d;
}

int mpi_xside_check(MPI_Comm comm, const char *fn, const char *what, const struct mpi_xside *s, int n)
{
	for (int k = 0; k < n; k++) {
		int count;
		MPI_Datatype dt;
		mpi_xside_block(s, k, &count, &dt);
		int rc = check_block(comm, fn, what, k, count, dt);
		if (rc)
			return rc;
	}
	return MPI_SUCCESS;
}

int mpi_xside_xfer(struct cx *x, bool recv, const struct mpi_xside *s, int k, int peer, int tag)
{
	int count;
	MPI_Datatype dt;
	void *b = mpi_xside_block(s, k, &count, &dt);
	return recv ? xrecv(x, b, count, dt, peer, tag) : xsend(x, b, count, dt, peer, tag);
}

/* ---------------------------------------------------------------- Alltoallw */

/* MPI_IN_PLACE: the blocks go out from the receive buffer, so they are
 * packed first (each as bytes) and come back into it. */
int mpi_xside_inplace(MPI_Comm comm, const char *fn, const struct mpi_xside *rcv, int n, int *cnt, int *at,
		      void *(*alloc)(void *arg, size_t bytes), void *arg, struct mpi_xside *snd)
{
	size_t total = 0;
	for (int j = 0; j < n; j++) {
		int count;
		MPI_Datatype dt;
		mpi_xside_block(rcv, j, &count, &dt);
		size_t len = mpi_dtype_get(dt)->size * (size_t)count;
		if (len > INT_MAX || total > INT_MAX - len)
			return mpi_err(comm, MPI_ERR_COUNT, fn, "MPI_IN_PLACE: the blocks add up to more than %d bytes",
				       INT_MAX);
		cnt[j] = (int)len;
		at[j] = (int)total;
		total += len;
	}
	char *img = alloc(arg, total ? total : 1);
	if (!img)
		return mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory for %zu bytes", total);
	for (int j = 0; j < n; j++) {
		int count;
		MPI_Datatype dt;
		const void *b = mpi_xside_block(rcv, j, &count, &dt);
		mpi_pack(mpi_dtype_get(dt), b, count, img + at[j]);
	}
	*snd = (struct mpi_xside){ .buf = img, .counts = cnt, .wdispls = at, .type = MPI_BYTE };
	return MPI_SUCCESS;
}

/* An all-to-all exchange's transfers: receives from every rank, then
 * sends starting after ourselves, so the ranks do not all send to rank 0
 * first. */
int mpi_xchg_post(struct cx *x, const struct mpi_xside *snd, const struct mpi_xside *rcv)
{
	int n = x->c->size, rc = MPI_SUCCESS;
	for (int j = 0; j < n && !rc; j++)
		rc = mpi_xside_xfer(x, true, rcv, j, j, 0);
	for (int k = 0; k < n && !rc; k++)
		rc = mpi_xside_xfer(x, false, snd, (x->c->rank + k) % n, (x->c->rank + k) % n, 0);
	return rc;
}

static void *heap(void *arg, size_t bytes)
{
	(void)arg;
	return malloc(bytes);
}

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
		   void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
		   MPI_Comm comm)
{
	static const char fn[] = "MPI_Alltoallw";
	COLL_ENTER_ANY(fn, comm, c);
	if (c->inter)
		return mpi_inter_exchange(c, comm, fn, MPI_IC_ALL, 0,
					  &(struct mpi_xside){ .buf = sendbuf, .counts = sendcounts, .wdispls = sdispls,
								 .types = sendtypes },
					  &(struct mpi_xside){ .buf = recvbuf, .counts = recvcounts, .wdispls = rdispls,
								 .types = recvtypes });
	bool inplace = sendbuf == MPI_IN_PLACE;
	for (int j = 0; j < c->size; j++) {
		int rc = check_block(comm, fn, "recv", j, recvcounts[j], recvtypes[j]);
		if (!rc && !inplace)
			rc = check_block(comm, fn, "send", j, sendcounts[j], sendtypes[j]);
		if (rc)
			return rc;
	}
	struct mpi_xside snd = { .buf = sendbuf, .counts = sendcounts, .wdispls = sdispls, .types = sendtypes };
	struct mpi_xside rcv = { .buf = recvbuf, .counts = recvcounts, .wdispls = rdispls, .types = recvtypes };
	int *cnt = NULL;
	if (inplace) {
		cnt = malloc(sizeof(int) * 2 * (size_t)c->size);
		int rc = cnt ? mpi_xside_inplace(comm, fn, &rcv, c->size, cnt, cnt + c->size, heap, NULL, &snd)
			     : mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
		if (rc) {
			free(cnt);
			return rc;
		}
	}
	struct cx x;
	mpi_cx_init(&x, c, fn);
	int rc = mpi_xchg_post(&x, &snd, &rcv);
	if (!rc)
		rc = mpi_cx_wait(&x);
	if (inplace)
		free((void *)(uintptr_t)snd.buf);
	free(cnt);
	return mpi_cx_end(&x, comm, rc);
}

/* ---------------------------------------------------------------- neighbourhood */

/* A neighbourhood exchange: block k of the receive side from in[k], of
 * the send side to out[k] (struct mpi_xside: mpi_impl.h). */
static int neighbor(const char *fn, MPI_Comm comm, const struct mpi_xside *snd, const struct mpi_xside *rcv)
{
	COLL_ENTER(fn, comm, c);
	if (snd->buf == MPI_IN_PLACE)
		return mpi_err(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed here");
	struct mpi_nbrs nb;
	int rc = mpi_topo_nbrs(c, &nb);
	if (rc == MPI_ERR_TOPOLOGY)
		return mpi_err(comm, rc, fn, "%s has no topology (Cartesian, graph or distributed graph)", c->name);
	if (rc)
		return mpi_err(comm, rc, fn, "out of memory");
	rc = mpi_xside_check(comm, fn, "recv", rcv, nb.nin);
	if (!rc)
		rc = mpi_xside_check(comm, fn, "send", snd, nb.nout);
	if (rc) {
		free(nb.in);
		return rc;
	}
	struct cx x;
	mpi_cx_init(&x, c, fn);
	for (int k = 0; k < nb.nin && !rc; k++)
		rc = mpi_xside_xfer(&x, true, rcv, k, nb.in[k], nb.intag[k]);
	for (int k = 0; k < nb.nout && !rc; k++)
		rc = mpi_xside_xfer(&x, false, snd, k, nb.out[k], nb.outtag[k]);
	if (!rc)
		rc = mpi_cx_wait(&x);
	free(nb.in);
	return mpi_cx_end(&x, comm, rc);
}

int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			    int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	struct mpi_xside s = { .buf = sendbuf, .count = sendcount, .type = sendtype, .same = true };
	struct mpi_xside r = { .buf = recvbuf, .count = recvcount, .type = recvtype };
	return neighbor("MPI_Neighbor_allgather", comm, &s, &r);
}

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			     const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
	struct mpi_xside s = { .buf = sendbuf, .count = sendcount, .type = sendtype, .same = true };
	struct mpi_xside r = { .buf = recvbuf, .counts = recvcounts, .idispls = displs, .type = recvtype };
	return neighbor("MPI_Neighbor_allgatherv", comm, &s, &r);
}

int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	struct mpi_xside s = { .buf = sendbuf, .count = sendcount, .type = sendtype };
	struct mpi_xside r = { .buf = recvbuf, .count = recvcount, .type = recvtype };
	return neighbor("MPI_Neighbor_alltoall", comm, &s, &r);
}

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
			    void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
			    MPI_Comm comm)
{
	struct mpi_xside s = { .buf = sendbuf, .counts = sendcounts, .idispls = sdispls, .type = sendtype };
	struct mpi_xside r = { .buf = recvbuf, .counts = recvcounts, .idispls = rdispls, .type = recvtype };
	return neighbor("MPI_Neighbor_alltoallv", comm, &s, &r);
}

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
			    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	struct mpi_xside s = { .buf = sendbuf, .counts = sendcounts, .adispls = sdispls, .types = sendtypes };
	struct mpi_xside r = { .buf = recvbuf, .counts = recvcounts, .adispls = rdispls, .types = recvtypes };
	return neighbor("MPI_Neighbor_alltoallw", comm, &s, &r);
}
