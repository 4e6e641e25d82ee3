/* mpi_regfree: 2 ranks that malloc and free large buffers around every
 * transfer, as an application does: the allocator hands back the same
 * addresses with new pages (a freed mmap'ed block mapped again, a heap
 * that shrank and grew), so a registration cache that does not follow the
 * memory moves freed pages (wrong data) or frees a registration a
 * transfer still uses (the connection breaks: "remote access error").
 * Every byte received is checked.
 *
 * Each round: whole buffers (rendezvous: RDMA), 40 KiB pieces at
 * offsets across them (eager sizes, moved by RDMA too), an allreduce of
 * the whole buffer; buffer sizes cycle so that a block of another size
 * lands where the last one was. First under glibc's own mmap threshold
 * (which moves up: large blocks then come from a heap that is trimmed
 * and grown again), then with it pinned at 128 KiB (every block mmap'ed
 * and unmapped), then blocks mmap'ed by hand at one fixed address; last,
 * a heap trimmed under a live block (heap_trim). Over
 * verbs only in the VM (tests/vm/vm-tests.sh), but any NAL runs it. */
#include "../mpi/mpi_test.h"

#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>

static unsigned char pat(int rank, int round, size_t i) { return (unsigned char)(i * 13 + (size_t)round * 7 + (size_t)rank * 101 + (i >> 12)); }

/* Buffers of one round: the allocator's (malloc/free), or mapped by hand
 * at the start of a reserved range and given back by mapping it
 * inaccessible again (its pages go; nothing else can move in). */
#define FIXED_MAX (4u << 20)
static void *fixed_at;
static void *get(size_t sz, int how)
{
	if (how < 2)
		return malloc(sz);
	void *p = mmap(fixed_at, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}
static void put(void *p, size_t sz, int how)
{
	if (how < 2)
		free(p);
	else
		mmap(p, sz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

static void round_trip(int how, int round, size_t sz)
{
	int peer = 1 - t_rank;
	unsigned char *s = get(sz, how);
	CHECK(s, "allocating %zu bytes", sz);
	if (!s)
		return;
	for (size_t i = 0; i < sz; i++)
		s[i] = pat(t_rank, round, i);
	/* the receive buffer: the same address when mapped by hand, just
	 * after the send buffer's release */
	unsigned char *r = how < 2 ? get(sz, how) : malloc(sz);
	CHECK(r, "allocating %zu bytes", sz);
	if (!r)
		return;
	memset(r, 0, sz);
	OK(MPI_Sendrecv(s, (int)sz, MPI_BYTE, peer, round, r, (int)sz, MPI_BYTE, peer, round, MPI_COMM_WORLD,
			MPI_STATUS_IGNORE));
	size_t bad = 0;
	for (size_t i = 0; i < sz; i++)
		bad += r[i] != pat(peer, round, i);
	CHECK(!bad, "mode %d round %d: %zu of %zu bytes wrong", how, round, bad, sz);
	/* eager-size pieces from across the buffer */
	const size_t piece = 40u << 10;
	for (size_t off = 0; off + piece <= sz; off += sz / 4) {
		memset(r + off, 0, piece);
		OK(MPI_Sendrecv(s + off, (int)piece, MPI_BYTE, peer, round, r + off, (int)piece, MPI_BYTE, peer,
				round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		bad = 0;
		for (size_t i = off; i < off + piece; i++)
			bad += r[i] != pat(peer, round, i);
		CHECK(!bad, "mode %d round %d: piece at %zu: %zu bytes wrong", how, round, off, bad);
	}
	/* both buffers' lives end; the allreduce's are new */
	put(s, sz, how);
	how < 2 ? put(r, sz, how) : free(r);
	size_t n = sz / sizeof(int64_t);
	int64_t *in = get(n * sizeof *in, how);
	int64_t *out = how < 2 ? get(n * sizeof *out, how) : malloc(n * sizeof *out);
	CHECK(in && out, "allocating");
	if (!in || !out)
		return;
	for (size_t i = 0; i < n; i++)
		in[i] = (int64_t)(i + 1) * (t_rank + 1) + round;
	OK(MPI_Allreduce(in, out, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += out[i] != (int64_t)(i + 1) * 3 + 2 * round;
	CHECK(!bad, "mode %d round %d: allreduce of %zu: %zu wrong", how, round, n, bad);
	put(in, n * sizeof *in, how);
	how < 2 ? put(out, n * sizeof *out, how) : free(out);
}

static void fill_check(unsigned char *p, size_t sz, int rank, int round, bool check, const char *what)
{
	size_t bad = 0;
	for (size_t i = 0; i < sz; i++)
		if (check)
			bad += p[i] != pat(rank, round, i);
		else
			p[i] = pat(rank, round, i);
	CHECK(!bad, "trim round %d: %s: %zu of %zu bytes wrong", round, what, bad, sz);
}

/* A block that carried a transfer is freed, and two live blocks take
 * its place, one on pages it had, one on pages given back and taken
 * again, as a heap's top is trimmed and grown (done here by hand, so
 * that the layout does not depend on the allocator's mood). Both go at
 * once, rendezvous: a cache that frees the first one's registration
 * because the second's pages changed breaks the transfer of the first. */
static void heap_trim(int round)
{
	const size_t big = 2u << 20, bsz = 256u << 10, csz = 600u << 10;
	int peer = 1 - t_rank;
	unsigned char *r = malloc(big);
	unsigned char *l = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(r && l != MAP_FAILED, "allocating");
	if (!r || l == MAP_FAILED)
		return;
	fill_check(l, big, t_rank, round, false, "");
	OK(MPI_Sendrecv(l, (int)big, MPI_BYTE, peer, 1, r, (int)big, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
			MPI_STATUS_IGNORE));
	fill_check(r, big, peer, round, true, "whole block");
	/* the top from 2 * bsz on: new pages */
	unsigned char *bs = l, *br = l + bsz, *cs = l + 2 * bsz, *cr = cs + csz;
	CHECK(mmap(cs, big - 2 * bsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == cs,
	      "mapping the top again");
	fill_check(bs, bsz, t_rank, round + 1, false, "");
	fill_check(cs, csz, t_rank, round + 2, false, "");
	memset(br, 0, bsz);
	memset(cr, 0, csz);
	MPI_Request rq[4];
	OK(MPI_Irecv(br, (int)bsz, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Irecv(cr, (int)csz, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq[1]));
	OK(MPI_Isend(bs, (int)bsz, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &rq[2]));
	OK(MPI_Isend(cs, (int)csz, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq[3]));
	OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
	fill_check(br, bsz, peer, round + 1, true, "block on the old pages");
	fill_check(cr, csz, peer, round + 2, true, "block on new pages");
	munmap(l, big);
	free(r);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	if (t_size != 2) {
		if (t_rank == 0)
			fprintf(stderr, "mpi_regfree: needs 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	int rounds = argc > 1 ? atoi(argv[1]) : 12;
	/* sizes that cycle: each lands where a block of another size was */
	static const size_t sizes[] = { 560u << 10, 900u << 10, 300u << 10, 2u << 20 };
	static const char *modes[] = { "glibc's threshold", "threshold 128 KiB", "mmap at one address" };
	for (int how = 0; how < 3; how++) {
		if (how == 1)
			mallopt(M_MMAP_THRESHOLD, 128 << 10);
		if (how == 2) {
			fixed_at = mmap(NULL, FIXED_MAX, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			CHECK(fixed_at != MAP_FAILED, "reserving %u bytes", FIXED_MAX);
			if (fixed_at == MAP_FAILED)
				break;
		}
		for (int k = 0; k < rounds; k++)
			round_trip(how, k, sizes[k % 4]);
		if (t_rank == 0)
			printf("mpi_regfree: %s: %d rounds\n", modes[how], rounds);
	}
	for (int k = 0; k < rounds; k++)
		heap_trim(k);
	if (t_rank == 0)
		printf("mpi_regfree: heap trimmed under a live block: %d rounds\n", rounds);
	return t_finish("mpi_regfree");
}
