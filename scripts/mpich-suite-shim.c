/*
 * scripts/mpich-suite-shim.c - for scripts/mpich-suite.sh only: the calls
 * MPICH's test harness (util/mtest.c) makes outside ptl's MPI subset, so
 * its communicator generator runs. Never part of libptlmpi.
 *
 * The harness makes "a dup of WORLD through MPI_Intercomm_merge": here the
 * intercommunicator is a placeholder and the merge is the MPI_Comm_split of
 * WORLD it would give. Anything that would use an intercommunicator as one
 * aborts.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int MPI_Intercomm_create(MPI_Comm local, int local_leader, MPI_Comm peer, int remote_leader, int tag,
			 MPI_Comm *newcomm)
{
	(void)local, (void)local_leader, (void)peer, (void)remote_leader, (void)tag;
	return MPI_Comm_dup(MPI_COMM_SELF, newcomm);
}

/* high: this side's ranks come after the other side's. */
int MPI_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm *newcomm)
{
	int rank, size;

	(void)inter;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	return MPI_Comm_split(MPI_COMM_WORLD, 0, high ? rank + size : rank, newcomm);
}

int MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
	(void)comm, (void)size;
	fprintf(stderr, "mpich-suite-shim: MPI_Comm_remote_size: no intercommunicators in ptl's MPI\n");
	abort();
}

void MTest_finalize_gpu(void)
{
}
