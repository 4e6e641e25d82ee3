/* Master-worker: rank 0 hands out tasks to whichever worker asks first
 * (MPI_ANY_SOURCE); a task number of -1 tells a worker to stop. */
#include "trc_prog.h"

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	int tasks = trc_prog_iters(argc, argv, 20);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size == 1) {
		MPI_Finalize();
		return 0;
	}
	if (rank == 0) {
		int next = 0, stopped = 0, done = 0;
		while (stopped < size - 1) {
			int msg;
			MPI_Status st;
			MPI_Recv(&msg, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
			if (msg >= 0)
				done++;
			int task = next < tasks ? next++ : -1;
			if (task < 0)
				stopped++;
			MPI_Send(&task, 1, MPI_INT, st.MPI_SOURCE, 2, MPI_COMM_WORLD);
		}
		trc_prog_check(done == tasks, "every task done once");
	} else {
		int result = -1, task;
		for (;;) {
			MPI_Send(&result, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
			MPI_Recv(&task, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (task < 0)
				break;
			result = task * task;
		}
	}
	MPI_Finalize();
	return 0;
}
