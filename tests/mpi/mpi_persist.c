/* mpi_persist.c: persistent requests as stencil codes use them: set up
 * once, started every iteration with the buffer's new contents, completed
 * by every Wait/Test form, inactive (not null) in between, freed at the
 * end; each send mode; wildcard receives with their status; a datatype
 * freed after the setup; the errors of starting an active or a freed
 * request. */
#include "mpi_test.h"

enum { ITERS = 200, LEN = 3000 }; /* LEN ints: above the eager limit */

static void ring(void)
{
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	int *out = malloc(LEN * sizeof(int)), *in = malloc(LEN * sizeof(int)), small_out, small_in;
	MPI_Request rq[4];

	/* The big messages go as one element of a derived type, freed at once:
	 * the requests keep what they need of it. */
	MPI_Datatype block;
	OK(MPI_Type_contiguous(LEN, MPI_INT, &block));
	OK(MPI_Type_commit(&block));
	OK(MPI_Recv_init(in, 1, block, left, 1, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Send_init(out, 1, block, right, 1, MPI_COMM_WORLD, &rq[1]));
	OK(MPI_Type_free(&block));
	OK(MPI_Recv_init(&small_in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[2]));
	OK(MPI_Send_init(&small_out, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[3]));
	for (int it = 0; it < ITERS; it++) {
		for (int k = 0; k < LEN; k++)
			out[k] = it * 7 + k + t_rank;
		small_out = it * 1000 + t_rank;
		MPI_Status st[4];
		OK(MPI_Startall(4, rq));
		switch (it % 4) { /* every completion form */
		case 0:
			OK(MPI_Waitall(4, rq, st));
			break;
		case 1:
			for (int k = 0; k < 4; k++)
				OK(MPI_Wait(&rq[k], &st[k]));
			break;
		case 2: {
			int flag = 0;
			while (!flag)
				OK(MPI_Testall(4, rq, &flag, st));
			break;
		}
		default: {
			int left_to_do = 4, idx;
			MPI_Status s;
			while (left_to_do) {
				OK(MPI_Waitany(4, rq, &idx, &s));
				CHECK(idx >= 0 && idx < 4, "Waitany index %d", idx);
				if (idx >= 0 && idx < 4)
					st[idx] = s;
				left_to_do--;
			}
		}
		}
		for (int k = 0; k < 4; k++)
			CHECK(rq[k] != MPI_REQUEST_NULL, "iteration %d: request %d became MPI_REQUEST_NULL", it, k);
		int bad = 0;
		for (int k = 0; k < LEN; k++)
			bad += in[k] != it * 7 + k + left;
		CHECK(bad == 0, "iteration %d: %d of %d ints wrong", it, bad, LEN);
		CHECK(small_in == it * 1000 + left && st[2].MPI_SOURCE == left && st[2].MPI_TAG == 2,
		      "iteration %d: wildcard receive got %d from %d tag %d", it, small_in, st[2].MPI_SOURCE,
		      st[2].MPI_TAG);
	}
	/* Inactive: Wait and Test pass over it with an empty status; the
	 * handle stays. */
	MPI_Status st;
	int flag = 0, count = -1;
	OK(MPI_Wait(&rq[0], &st));
	OK(MPI_Get_count(&st, MPI_INT, &count));
	CHECK(rq[0] != MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG &&
	      count == 0, "wait on an inactive request: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
	OK(MPI_Test(&rq[1], &flag, MPI_STATUS_IGNORE));
	CHECK(flag == 1 && rq[1] != MPI_REQUEST_NULL, "test on an inactive request: flag %d", flag);
	for (int k = 0; k < 4; k++) {
		OK(MPI_Request_free(&rq[k]));
		CHECK(rq[k] == MPI_REQUEST_NULL, "freed request %d not null", k);
	}
	free(out);
	free(in);
}

static void modes_and_errors(void)
{
	if (t_size < 2 || t_rank > 1) {
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		return;
	}
	int peer = 1 - t_rank, v[4] = { 0 };
	MPI_Request s[3], r[3];
	static char bbuf[4096 + MPI_BSEND_OVERHEAD];
	OK(MPI_Buffer_attach(bbuf, sizeof bbuf));
	/* Rank 0 sends in three modes; rank 1 has its receives posted first
	 * (Rsend needs that), which the barrier orders. */
	if (t_rank == 1) {
		for (int k = 0; k < 3; k++)
			OK(MPI_Recv_init(&v[k], 1, MPI_INT, peer, 10 + k, MPI_COMM_WORLD, &r[k]));
		OK(MPI_Startall(3, r));
		MPI_Barrier(MPI_COMM_WORLD);
		OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
		CHECK(v[0] == 100 && v[1] == 101 && v[2] == 102, "modes gave %d %d %d", v[0], v[1], v[2]);
		/* Starting an active request is an error; the request stays usable. */
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		OK(MPI_Start(&r[0]));
		t_fails_with(MPI_Start(&r[0]), MPI_ERR_REQUEST, "is already active", "start of an active request");
		MPI_Barrier(MPI_COMM_WORLD);
		OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
		CHECK(v[0] == 200, "after the error: %d", v[0]);
		for (int k = 0; k < 3; k++)
			OK(MPI_Request_free(&r[k]));
		/* A freed handle is gone. */
		MPI_Request gone = r[0];
		t_fails_with(MPI_Start(&gone), MPI_ERR_REQUEST, "is not a persistent request", "start after free");
	} else {
		/* a is static: the send freed while active below reads it when
		 * the receiver gets it, which the barrier after it does not wait
		 * for (MPI-3.1 3.7.3: the buffer stays until the send is done). */
		static int a;
		int b = 101, c = 102;
		a = 100;
		OK(MPI_Ssend_init(&a, 1, MPI_INT, peer, 10, MPI_COMM_WORLD, &s[0]));
		OK(MPI_Bsend_init(&b, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &s[1]));
		OK(MPI_Rsend_init(&c, 1, MPI_INT, peer, 12, MPI_COMM_WORLD, &s[2]));
		MPI_Barrier(MPI_COMM_WORLD);
		OK(MPI_Startall(3, s));
		OK(MPI_Waitall(3, s, MPI_STATUSES_IGNORE));
		/* Freed while active: the send still arrives. */
		a = 200;
		OK(MPI_Start(&s[0]));
		OK(MPI_Request_free(&s[0]));
		MPI_Barrier(MPI_COMM_WORLD);
		OK(MPI_Request_free(&s[1]));
		OK(MPI_Request_free(&s[2]));
	}
	void *b;
	int bs;
	OK(MPI_Buffer_detach(&b, &bs));
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	ring();
	modes_and_errors();
	return t_finish("mpi_persist");
}
