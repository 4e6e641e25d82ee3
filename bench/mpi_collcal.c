/*
 * mpi_collcal: the cost model's per-mechanism figures that
 * bench/mpi_allreduce.c does not measure, between ranks 0 and 1 (others
 * wait in barriers; on 4 ranks or more the shared-core ones alone). bench/mpi_bench.sh feeds them to ptltool coll; none
 * comes from a collective. Prints "<figure> <bytes> <median us> <min> <max>"
 * (over trials):
 *   sovh 8        CPU per request-free message (the mean of a blocking
 *                 MPI_Send's and an MPI_Recv's of an 8-byte message that
 *                 is there already, neither waiting on the wire): ptl's
 *                 MPI sends those without a request, inline and ACK-free,
 *                 as its short allreduce rounds (mpi_send_small_ctx) do
 *   spp B         half round trip of blocking MPI_Send / MPI_Recv of B
 *                 bytes (8 B - 4 KiB, as far as direct recursive doubling
 *                 sends request-free): the request-free exchange
 *   epp B         half round trip of MPI_Isend + MPI_Wait / MPI_Recv of B
 *                 bytes, 1 - 8 KiB: an eager message with its request,
 *                 inline and ACK-free, from the user's buffer into the
 *                 posted receive (a schedule's sends and receives up to
 *                 the eager limit); the slope is what its bytes cost
 *   bcroot 8      what a 2-rank MPI_Bcast of 8 bytes takes its root (rank
 *                 0, whose send goes at once): the call and one message's
 *                 CPU, no waiting; beside the 8-byte MPI_Bcast from
 *                 alternating roots (mpi_allreduce's "bcast"), whose leaf
 *                 waits, what a collective's wait for a message costs its
 *                 rank when the message comes (the poll that sees it, the
 *                 pass over what the collective waits for). Each call
 *                 timed alone, the clock's own cost taken off, then the
 *                 leaf receives it and answers by MPI_Send, so the next
 *                 call starts with nothing in flight
 *   ssend 8       half round trip of MPI_Ssend / MPI_Recv of 8 bytes: a
 *                 rendezvous that copies nothing to speak of (header, the
 *                 receiver's get, the reply): the rendezvous' own cost
 *   xch B         one exchange of B bytes, 16 KiB - 1 MiB (the sizes a 2-
 *                 or 4-rank allreduce's schedules move by rendezvous, CMA
 *                 copies split between the two cores from 64 KiB on): each rank
 *                 posts MPI_Irecv, then MPI_Isend, and MPI_Waitall, as a
 *                 2-rank schedule's step does: both CPUs copy at once
 *                 (each serves the other's get, or with the split its own
 *                 half and the other's), from a buffer only this rank
 *                 writes (as a schedule sends its input or what it just
 *                 reduced) into one the peer then reads (a word of each
 *                 cache line, as its reduction will read them all: the
 *                 lines move to its core before the next copy writes
 *                 them again)
 *   rxch B        one exchange of B bytes, 16 - 64 KiB, as xch but the
 *                 send a blocking MPI_Send: eager up to 8 times the eager
 *                 limit (mpi_pt2pt.c's MPI_BLOCKING_EAGER), its bytes read
 *                 by the receiver (CMA on shm) into its posted receive,
 *                 both ranks at once - what a schedule's sends above the
 *                 eager limit do (mpi_coll.c's COLL_EAGER_TIMES, and a
 *                 2-rank allreduce's MPI_MODE_PULL): the rate of that read
 *   rxch B        (mpi_collcal [trials] reads16) 16 - 64 KiB alone, for
 *                 mpi_bench.sh's launches that force shm's method
 *                 (PTL_SHM_CMA=0: through the segment; 1: CMA)
 *   rxch B        (mpi_collcal [trials] reads) 128 - 512 KiB, the same
 *                 exchange in a launch whose eager limit is raised to 64 KiB
 *                 (PTL_MPI_EAGER_LIMIT=65536, from mpi_bench.sh; "reads1m":
 *                 1 MiB, the limit 128 KiB): eager up to
 *                 8 times that, so these stay reads as a 2-rank allreduce's
 *                 sends do (MPI_MODE_PULL) and no rendezvous stands in for
 *                 them (through shm's bounce area a read exchange of 512 KiB
 *                 took 100 us against a rendezvous exchange's 65-70)
 *   sxch B        one exchange of B bytes (8 B - 4 KiB) by blocking
 *                 MPI_Send then MPI_Recv at both ranks: request-free
 *                 messages both ways at once, as direct recursive
 *                 doubling's rounds go (a ping-pong has one in flight)
 *   srx B         (8 B, 64 B) the same by MPI_Sendrecv, which below
 *                 512 B received (mpi_p2p_api.c's SENDRECV_SEND_FIRST)
 *                 takes the direct rounds' own path: the receive first,
 *                 posting no ME, then the request-free send, in one
 *                 call as a round is; from there its send goes first and
 *                 its receive posts an ME, which the rounds' do not
 *   rxch4 B       (4 ranks or more) rxch between ranks 0 and 1 while 2
 *                 and 3 exchange too, unpinned: the reads where the ranks
 *                 outnumber the cores, as a 4-rank schedule's step reads
 *   xch4 B        (4 ranks or more) xch between ranks 0 and 1 while 2
 *                 and 3 exchange too, unpinned, 128 KiB - 1 MiB: the
 *                 rendezvous copies of a 4-rank schedule's pair exchanges
 *                 (halving-doubling's, recursive doubling's) where the
 *                 ranks outnumber the cores
 *   rxch4s B, xch4s B  (4 ranks or more) the same between ranks 0 and 2
 *                 while 1 and 3 exchange too: pinned two to a core (rank r
 *                 on core r mod 2, as mpi_bench.sh launches them), each
 *                 pair on one core, whose lines stay in its caches (on two
 *                 vCPUs placed far apart, 1 MiB in 79 us against 142
 *                 between the cores): the second step of a 4-rank
 *                 recursive doubling or the middle ones of halving-doubling;
 *                 and xch4s 8: rounds of 8 bytes, each rank's message there
 *                 when its core-mate yields it the core, a switch a round
 *                 and little else (mpi_bench.sh solves the switch of bound
 *                 cores from it)
 *   shift4 B      (4 ranks or more) each of ranks 0-3 receives B bytes
 *                 from its left and sends B to its right at once
 *                 (MPI_Irecv, MPI_Isend, MPI_Waitall), unpinned, 128 KiB -
 *                 1 MiB: one-way rendezvous moves, four at once, as a
 *                 4-rank ring's step makes them (a lone move, the 2-rank
 *                 ping-pong's, leaves its cores idle between pieces: 1 MiB
 *                 112 us alone, two pairs' at once 153 us, not 2 x 112)
 *   eshift4 B     (4 ranks or more) shift4 of 1, 4 and 8 KiB: eager
 *                 messages (inline through the shm ring, ACK-free, up to
 *                 the eager limit), four at once, as a 4-rank schedule's
 *                 steps send their blocks up to the eager limit (a ring's
 *                 8 KiB at 32 KiB): what their copies cost where the ranks
 *                 outnumber the cores (the 2-rank eager rate, epp's, is
 *                 each rank on a core of its own)
 *   pp4one B      (4 ranks or more) half a round trip of B bytes (MPI_Isend
 *                 + MPI_Wait, MPI_Recv) between ranks 0 and 1 while 2 and 3
 *                 wait in a barrier, 128 KiB - 1 MiB, unpinned: a lone move
 *                 where the ranks outnumber the cores, its cores idle
 *                 between its pieces (beside shift4: the moves' gaps)
 *   xch4one B     (4 ranks or more) xch4's exchange between ranks 0 and 1
 *                 while 2 and 3 wait in a barrier, 128 KiB - 1 MiB: a pair
 *                 exchanging alone where the ranks outnumber the cores, as
 *                 a tree's inner ranks do, each side waiting on the
 *                 other's pieces (beside xch4: the exchanges' gaps)
 *   pp4 8, pp4idle 8  (4 ranks or more, alone: ptlrun -n 4) half a round
 *                 trip of 8 bytes between ranks 0 and 1 while the ranks
 *                 outnumber the cores, unpinned: while ranks 2 and 3
 *                 ping-pong too (pp4), or wait as a collective's idle
 *                 ranks do, polling and yielding (pp4idle): how soon a
 *                 rank that waited gets its core back
 *   tok4 8        (4 ranks or more) an 8-byte token passed round ranks
 *                 0-3 (MPI_Recv from the left, MPI_Send to the right),
 *                 us per hop, unpinned: every rank waits in the
 *                 library's own wait, a few hops at a time, as a
 *                 collective's ranks wait on shared cores
 *   xch4 8, eshift4 8  (4 ranks or more) the same waits with every
 *                 rank sending at once: two pairs' 8-byte exchanges (a
 *                 recursive doubling round), the 8-byte shift (a ring's
 *                 step), us per round
 *   ptl's and any MPI: ptlrun -n 2 bench/mpi_collcal [trials] [reads|reads1m]
 */
#include <mpi.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CAL_MSGS = 64, CAL_MAXT = 100 };

static int cal_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void cal_print(int rank, const char *fig, size_t bytes, double *v, int trials)
{
	qsort(v, (size_t)trials, sizeof *v, cal_cmp);
	if (rank == 0)
		printf("%s %zu %.4f %.4f %.4f\n", fig, bytes, v[trials / 2], v[0], v[trials - 1]);
}

/* One trial of sovh: rank 1 sends CAL_MSGS blocking 8-byte messages
 * (timed: the send side), and once a barrier says they have landed rank
 * 0 receives them (timed: the receive side). us per message, the mean
 * of the two sides. */
static double cal_sovh(int rank)
{
	double buf[CAL_MSGS] = { 0 }, ts = 0, tr = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1) {
		double t0 = MPI_Wtime();
		for (int k = 0; k < CAL_MSGS; k++)
			MPI_Send(&buf[k], 1, MPI_DOUBLE, 0, k, MPI_COMM_WORLD);
		ts = MPI_Wtime() - t0;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		double t0 = MPI_Wtime();
		for (int k = 0; k < CAL_MSGS; k++)
			MPI_Recv(&buf[k], 1, MPI_DOUBLE, 1, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		tr = MPI_Wtime() - t0;
	}
	MPI_Bcast(&ts, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
	return (ts + tr) / 2 / CAL_MSGS * 1e6;
}

enum cal_kind { CAL_BLOCKING, CAL_SYNC, CAL_NONBLOCKING };

static void cal_send(enum cal_kind k, char *b, int n, int to)
{
	MPI_Request rq;
	if (k == CAL_BLOCKING)
		MPI_Send(b, n, MPI_BYTE, to, 0, MPI_COMM_WORLD);
	else if (k == CAL_SYNC)
		MPI_Ssend(b, n, MPI_BYTE, to, 0, MPI_COMM_WORLD);
	else {
		MPI_Isend(b, n, MPI_BYTE, to, 0, MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
	}
}

/* One trial: half a round trip of n bytes between ranks 0 and 1, us,
 * after 50 untimed ones (right after a barrier a round trip is slower for
 * a while). */
static double cal_pingpong(int rank, enum cal_kind k, char *b, int n)
{
	enum { PP_ITERS = 2000 };
	double t0 = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = -50; i < PP_ITERS; i++) {
		if (i == 0)
			t0 = MPI_Wtime();
		if (rank == 0) {
			cal_send(k, b, n, 1);
			MPI_Recv(b, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(b, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			cal_send(k, b, n, 0);
		}
	}
	return (MPI_Wtime() - t0) / PP_ITERS / 2 * 1e6;
}

/* One trial of bcroot: us per root's 2-rank MPI_Bcast of n bytes. The
 * clock's own cost taken off is its cheapest read of the trial, not each
 * call's: a read that another process's time slice stretched would take
 * more off than the call's clock paid (a trial of -0.20 us at load 8). */
static double cal_bcast_root(int rank, char *b, int n)
{
	enum { BR_CALLS = 64 };
	double sum = 0, clock = 1;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = -8; i < BR_CALLS; i++) {
		double t0 = MPI_Wtime(), t1 = MPI_Wtime();
		if (rank == 0) {
			MPI_Bcast(b, n, MPI_BYTE, 0, MPI_COMM_WORLD);
			double t2 = MPI_Wtime();
			if (t1 - t0 < clock)
				clock = t1 - t0;
			if (i >= 0)
				sum += t2 - t1;
			MPI_Recv(b, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Bcast(b, n, MPI_BYTE, 0, MPI_COMM_WORLD);
			if (rank == 1)
				MPI_Send(b, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
		}
	}
	return (sum / BR_CALLS - clock) * 1e6;
}

static volatile unsigned cal_sink;

/* us per round of n bytes from sb to rank `to` and into rb from rank
 * `from` (blocking: MPI_Send, else MPI_Isend; the receive posted first),
 * ranks below `active` taking part, each then reading what came (a word
 * of each line: the lines move to its core, as a schedule's reduction
 * reads them, before the next round writes them again). With `alone`,
 * also the round itself without that read (*alone, rank 0's: each
 * round's MPI calls timed apart, less the clock's cheapest read, ~20 ns
 * of the ~28 a read takes here; the whole round less three): a
 * schedule's step is the exchange, and the reduction that reads what
 * came is a term of its own (gamma), after the first step of a 2-rank
 * allreduce and after none of its second. The read is a loop-carried
 * add per line, ~0.55-0.85 ns a line whatever the size, a tenth of the
 * exchange at every size (512 KiB by CMA 59-62 us alone, 67-70 with it). */
static double cal_trade(int rank, const char *sb, char *rb, int n, int from, int to, int tag, bool blocking,
			int active, double *alone)
{
	int iters = n <= 131072 ? 400 : 100;
	double t0 = 0, sum = 0, clock = 1;
	MPI_Request rq[2];
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = -50; i < iters && rank < active; i++) {
		if (i == 0)
			t0 = MPI_Wtime(), sum = 0;
		double ta = alone ? MPI_Wtime() : 0, tc = alone ? MPI_Wtime() : 0;
		MPI_Irecv(rb, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, &rq[0]);
		if (blocking) {
			MPI_Send(sb, n, MPI_BYTE, to, tag, MPI_COMM_WORLD);
			MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
		} else {
			MPI_Isend(sb, n, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq[1]);
			MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		}
		if (alone) {
			sum += MPI_Wtime() - tc;
			if (tc - ta < clock)
				clock = tc - ta;
		}
		for (int k = 0; k < n; k += 64)
			cal_sink += (unsigned char)rb[k];
	}
	if (!alone)
		return (MPI_Wtime() - t0) / iters * 1e6;
	/* the round with the read as before: less the three clock reads */
	*alone = (sum / iters - clock) * 1e6;
	return ((MPI_Wtime() - t0) / iters - 3 * clock) * 1e6;
}

/* One trial of xch (rxch: blocking): us per exchange of n bytes between
 * ranks 0 and 1 (and at once 2 and 3, when active is 4), from sb into the
 * peer's rb, which the peer then reads; *alone (when not NULL) the
 * exchange without that read (xchs, rxchs). */
static double cal_exchange(int rank, const char *sb, char *rb, int n, bool blocking, int active, double *alone)
{
	return cal_trade(rank, sb, rb, n, rank ^ 1, rank ^ 1, 1, blocking, active, alone);
}

/* One trial of xch4s (rxch4s: blocking): as cal_exchange's 4-rank one
 * between ranks 0 and 2, and 1 and 3. */
static double cal_exchange_same(int rank, const char *sb, char *rb, int n, bool blocking)
{
	return cal_trade(rank, sb, rb, n, rank ^ 2, rank ^ 2, 6, blocking, 4, NULL);
}

/* One trial of shift4: us per shift of n bytes round ranks 0-3 (each
 * receives from its left, sends to its right, at once), as a 4-rank
 * ring's step moves its blocks; the others wait in the barrier. */
static double cal_shift(int rank, const char *sb, char *rb, int n)
{
	return cal_trade(rank, sb, rb, n, (rank + 3) % 4, (rank + 1) % 4, 4, false, 4, NULL);
}

/* One trial of sxch: us per exchange of n bytes by blocking send then
 * receive, both ranks at once; of srx (sendrecv), by MPI_Sendrecv. */
static double cal_exchange_blocking(int rank, const char *sb, char *rb, int n, bool sendrecv)
{
	enum { SX_ITERS = 400 };
	int peer = 1 - rank;
	double t0 = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = -50; i < SX_ITERS && rank < 2; i++) {
		if (i == 0)
			t0 = MPI_Wtime();
		if (sendrecv) {
			MPI_Sendrecv(sb, n, MPI_BYTE, peer, 2, rb, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			continue;
		}
		MPI_Send(sb, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
		MPI_Recv(rb, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	return (MPI_Wtime() - t0) / SX_ITERS * 1e6;
}

/* Ping-pongs of 8 bytes on 4 ranks (or more) where the ranks outnumber
 * the cores, unpinned as mpi_bench.sh's 4-rank rows are: what a message
 * costs when its receiver, having waited, must get a core back (ptl's
 * waiting ranks poll and yield the core at every poll). One trial: half
 * a round trip between ranks 0 and 1, us, while ranks 2 and 3 ping-pong
 * too (busy: every core has work when a message comes), or wait as a
 * collective's idle rank does (each poll a yield) for a message that
 * comes at the end (idle). Ranks above 3 wait in the barrier. */
static double cal_shared(int rank, bool busy, char *b)
{
	enum { SH_ITERS = 1000 };
	int partner = rank ^ 1;
	double t0 = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank >= 2 && rank < 4 && !busy) {
		MPI_Request rq;
		int flag = 0;
		MPI_Irecv(b, 8, MPI_BYTE, rank - 2, 9, MPI_COMM_WORLD, &rq);
		while (MPI_Test(&rq, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag)
			sched_yield();
		return 0;
	}
	for (int i = -50; i < SH_ITERS && rank < 4; i++) {
		if (i == 0)
			t0 = MPI_Wtime();
		if (rank < partner) {
			MPI_Send(b, 8, MPI_BYTE, partner, 0, MPI_COMM_WORLD);
			MPI_Recv(b, 8, MPI_BYTE, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(b, 8, MPI_BYTE, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(b, 8, MPI_BYTE, partner, 0, MPI_COMM_WORLD);
		}
	}
	double t = (MPI_Wtime() - t0) / SH_ITERS / 2 * 1e6;
	if (!busy && rank < 2)
		MPI_Send(b, 8, MPI_BYTE, rank + 2, 9, MPI_COMM_WORLD);
	return t;
}

/* One trial of tok4: an 8-byte token passed round ranks 0-3 (each
 * MPI_Recv from its left, then MPI_Send to its right; rank 0 starts it),
 * us per hop. Every rank waits in the library's own wait (polling, a
 * yield at every poll) for three hops at a time, well short of the polls
 * after which it would sleep: the waits a collective's ranks make on
 * shared cores, where pp4idle's idle ranks loop on MPI_Test and
 * sched_yield instead. Ranks above 3 wait in the barrier. */
static double cal_token(int rank, char *b)
{
	enum { TK_ITERS = 1000 };
	int left = (rank + 3) % 4, right = (rank + 1) % 4;
	double t0 = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = -50; i < TK_ITERS && rank < 4; i++) {
		if (i == 0)
			t0 = MPI_Wtime();
		if (rank == 0) {
			MPI_Send(b, 8, MPI_BYTE, right, 5, MPI_COMM_WORLD);
			MPI_Recv(b, 8, MPI_BYTE, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(b, 8, MPI_BYTE, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(b, 8, MPI_BYTE, right, 5, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) / TK_ITERS / 4 * 1e6;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, trials = argc > 1 ? atoi(argv[1]) : 5;
	if (trials < 1 || trials > CAL_MAXT)
		trials = 5;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	char *b = calloc(1, 1 << 20), *sb = calloc(1, 1 << 20);
	if (size < 2 || !b || !sb) {
		if (rank == 0)
			fprintf(stderr, "mpi_collcal: needs 2 ranks (and 1 MiB)\n");
		MPI_Finalize();
		return 1;
	}
	/* written once, as a program's data is (untouched calloc'd pages all
	 * read as the one zero page, which no copy of real data does) */
	memset(b, 1, 1 << 20);
	memset(sb, 2, 1 << 20);
	/* Trials go round all the figures, so a stretch of time another
	 * process takes slows one trial of several figures, not every trial
	 * of one (each figure's best trial is what the model takes). */
	static const struct cal_fig {
		const char *name;
		int kind; /* -1: sovh, -2: xch, -3: bcroot, -4: sxch, -5: rxch, -6: srx, else enum cal_kind's ping-pong */
		int bytes;
	} figs[] = {
		{ "sovh", -1, 8 }, { "spp", CAL_BLOCKING, 8 }, { "spp", CAL_BLOCKING, 64 },
		{ "spp", CAL_BLOCKING, 128 }, { "spp", CAL_BLOCKING, 256 }, { "spp", CAL_BLOCKING, 512 }, { "spp", CAL_BLOCKING, 1024 }, { "spp", CAL_BLOCKING, 2048 },
		{ "spp", CAL_BLOCKING, 4096 }, { "epp", CAL_NONBLOCKING, 1024 },
		{ "epp", CAL_NONBLOCKING, 2048 }, { "epp", CAL_NONBLOCKING, 4096 }, { "epp", CAL_NONBLOCKING, 8192 },
		{ "ssend", CAL_SYNC, 8 }, { "bcroot", -3, 8 }, { "xch", -2, 16384 }, { "xch", -2, 32768 }, { "xch", -2, 65536 },
		{ "xch", -2, 131072 }, { "xch", -2, 262144 }, { "xch", -2, 524288 }, { "xch", -2, 1 << 20 },
		{ "sxch", -4, 8 }, { "sxch", -4, 64 }, { "sxch", -4, 512 }, { "sxch", -4, 1024 },
		{ "sxch", -4, 2048 }, { "sxch", -4, 4096 }, { "srx", -6, 8 }, { "srx", -6, 64 },
		{ "rxch", -5, 16384 }, { "rxch", -5, 32768 }, { "rxch", -5, 65536 },
	};
	enum { NFIGS = sizeof figs / sizeof figs[0] };
	if (size >= 4) {
		/* 4 ranks or more: the shared-core figures alone */
		static const int rx4[] = { 16384, 32768, 65536 }, bk4[] = { 131072, 262144, 524288, 1 << 20 }, es4[] = { 1024, 4096, 8192 };
		enum { NRX4 = sizeof rx4 / sizeof rx4[0], NBK4 = sizeof bk4 / sizeof bk4[0], NES4 = sizeof es4 / sizeof es4[0] };
		enum { ES0 = 2 + NRX4 + 4 * NBK4, TK = ES0 + NES4, PX = TK + 1, SX = TK + 2, SS = TK + 3 };
		static double sv[SS + 1][CAL_MAXT], ss[NRX4 + NBK4][CAL_MAXT];
		for (int t = 0; t < trials; t++) {
			sv[TK][t] = cal_token(rank, b);
			sv[PX][t] = cal_exchange(rank, sb, b, 8, false, 4, NULL);
			sv[SX][t] = cal_shift(rank, sb, b, 8);
			sv[SS][t] = cal_exchange_same(rank, sb, b, 8, false);
			for (int f = 0; f < 2 + NRX4; f++)
				sv[f][t] = f < 2 ? cal_shared(rank, f == 0, b) : cal_exchange(rank, sb, b, rx4[f - 2], true, 4, NULL);
			for (int f = 0; f < NBK4; f++) {
				sv[2 + NRX4 + f][t] = cal_exchange(rank, sb, b, bk4[f], false, 4, NULL);
				sv[2 + NRX4 + NBK4 + f][t] = cal_shift(rank, sb, b, bk4[f]);
				sv[2 + NRX4 + 2 * NBK4 + f][t] = cal_pingpong(rank, CAL_NONBLOCKING, b, bk4[f]);
				sv[2 + NRX4 + 3 * NBK4 + f][t] = cal_exchange(rank, sb, b, bk4[f], false, 2, NULL);
			}
			for (int f = 0; f < NRX4 + NBK4; f++)
				ss[f][t] = f < NRX4 ? cal_exchange_same(rank, sb, b, rx4[f], true)
						    : cal_exchange_same(rank, sb, b, bk4[f - NRX4], false);
			for (int f = 0; f < NES4; f++)
				sv[ES0 + f][t] = cal_shift(rank, sb, b, es4[f]);
		}
		cal_print(rank, "pp4", 8, sv[0], trials);
		cal_print(rank, "pp4idle", 8, sv[1], trials);
		cal_print(rank, "tok4", 8, sv[TK], trials);
		cal_print(rank, "xch4", 8, sv[PX], trials);
		cal_print(rank, "eshift4", 8, sv[SX], trials);
		cal_print(rank, "xch4s", 8, sv[SS], trials);
		for (int f = 0; f < NRX4; f++)
			cal_print(rank, "rxch4", (size_t)rx4[f], sv[2 + f], trials);
		for (int f = 0; f < NBK4; f++)
			cal_print(rank, "xch4", (size_t)bk4[f], sv[2 + NRX4 + f], trials);
		for (int f = 0; f < NBK4; f++)
			cal_print(rank, "shift4", (size_t)bk4[f], sv[2 + NRX4 + NBK4 + f], trials);
		for (int f = 0; f < NBK4; f++)
			cal_print(rank, "pp4one", (size_t)bk4[f], sv[2 + NRX4 + 2 * NBK4 + f], trials);
		for (int f = 0; f < NBK4; f++)
			cal_print(rank, "xch4one", (size_t)bk4[f], sv[2 + NRX4 + 3 * NBK4 + f], trials);
		for (int f = 0; f < NES4; f++)
			cal_print(rank, "eshift4", (size_t)es4[f], sv[ES0 + f], trials);
		for (int f = 0; f < NRX4 + NBK4; f++)
			cal_print(rank, f < NRX4 ? "rxch4s" : "xch4s", (size_t)(f < NRX4 ? rx4[f] : bk4[f - NRX4]), ss[f],
				  trials);
		free(sb);
		free(b);
		MPI_Finalize();
		return 0;
	}
	static double v[NFIGS][CAL_MAXT], va[NFIGS][CAL_MAXT];
	if (argc > 2 && strncmp(argv[2], "reads", 5) == 0) {
		/* the long reads alone (the launch's eager limit raised):
		 * "reads" 128 - 512 KiB, "reads1m" 1 MiB; "reads16" the
		 * short ones alone (16 - 64 KiB, the limit as it is), for
		 * launches that force shm's method (PTL_SHM_CMA=0 or 1) */
		static const int rl[] = { 131072, 262144, 524288 }, r1m[] = { 1 << 20 }, r16[] = { 16384, 32768, 65536 };
		bool one = strcmp(argv[2], "reads1m") == 0, shortr = strcmp(argv[2], "reads16") == 0;
		const int *sz = one ? r1m : shortr ? r16 : rl;
		int nrl = one ? 1 : (int)(sizeof rl / sizeof rl[0]); /* r16 as many */
		for (int t = 0; t < trials; t++)
			for (int f = 0; f < nrl; f++)
				v[f][t] = cal_exchange(rank, sb, b, sz[f], true, 2, &va[f][t]);
		for (int f = 0; f < nrl; f++)
			cal_print(rank, "rxch", (size_t)sz[f], v[f], trials);
		for (int f = 0; f < nrl; f++)
			cal_print(rank, "rxchs", (size_t)sz[f], va[f], trials);
		free(sb);
		free(b);
		MPI_Finalize();
		return 0;
	}
	for (int t = 0; t < trials; t++)
		for (int f = 0; f < NFIGS; f++)
			v[f][t] = figs[f].kind == -1   ? cal_sovh(rank)
				  : figs[f].kind == -2 ? cal_exchange(rank, sb, b, figs[f].bytes, false, 2, &va[f][t])
				  : figs[f].kind == -5 ? cal_exchange(rank, sb, b, figs[f].bytes, true, 2, &va[f][t])
				  : figs[f].kind == -3 ? cal_bcast_root(rank, b, figs[f].bytes)
				  : figs[f].kind == -4 || figs[f].kind == -6
					? cal_exchange_blocking(rank, sb, b, figs[f].bytes, figs[f].kind == -6)
						       : cal_pingpong(rank, (enum cal_kind)figs[f].kind, b, figs[f].bytes);
	for (int f = 0; f < NFIGS; f++)
		cal_print(rank, figs[f].name, (size_t)figs[f].bytes, v[f], trials);
	for (int f = 0; f < NFIGS; f++) /* the exchanges alone: xchs, rxchs */
		if (figs[f].kind == -2 || figs[f].kind == -5) {
			char name[16];
			snprintf(name, sizeof name, "%ss", figs[f].name);
			cal_print(rank, name, (size_t)figs[f].bytes, va[f], trials);
		}
	free(sb);
	free(b);
	MPI_Finalize();
	return 0;
}
