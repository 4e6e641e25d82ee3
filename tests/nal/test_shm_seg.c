/*
 * tests/nal/test_shm_seg.c - what the shm NAL refuses and how it says so:
 * a segment that is not this job's (another build's version, another job,
 * another local size, never initialized) is not attached; a leftover under
 * our name is removed with a message; a malformed or unservable copy
 * request (SHM_REC_HELP) is answered "do it yourself" or dropped with a
 * message, as is a pair leader's bulk pick of no class or method, and the
 * messages behind them still arrive. And what a segment holds: a ring and
 * a bounce area per ordered pair of distinct ranks (test_layout).
 */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "shm_job.h"

/* ---- stderr captured into a file while a call runs */

struct capture {
	int saved;
	FILE *f;
	char text[1024];
};

static void capture_begin(struct capture *c)
{
	fflush(stderr);
	c->f = tmpfile();
	assert_non_null(c->f);
	c->saved = dup(2);
	assert_true(c->saved >= 0);
	assert_int_equal(dup2(fileno(c->f), 2), 2);
}

static const char *capture_end(struct capture *c)
{
	size_t n;

	fflush(stderr);
	dup2(c->saved, 2);
	close(c->saved);
	rewind(c->f);
	n = fread(c->text, 1, sizeof(c->text) - 1, c->f);
	c->text[n] = '\0';
	fclose(c->f);
	return c->text;
}

/* ---- a segment made and attached by hand, in one process */

/* The NAL state shm_seg_* touch, for L local ranks. */
static struct nal *seg_nal(uint64_t jobid, int lrank, int L)
{
	struct nal *n = calloc(1, sizeof(*n));

	assert_non_null(n);
	n->rank = n->lrank = lrank;
	n->size = n->lsize = L;
	n->jobid = jobid;
	n->tx = calloc((size_t)L, sizeof(*n->tx));
	n->rx = calloc((size_t)L, sizeof(*n->rx));
	n->bp = calloc((size_t)L, sizeof(*n->bp));
	assert_true(n->tx && n->rx && n->bp);
	return n;
}

static void seg_nal_free(struct nal *n)
{
	if (n->base)
		munmap(n->base, n->seg_len);
	free(n->tx);
	free(n->rx);
	free(n->bp);
	free(n);
}

static uint64_t test_jobid(void)
{
	return ((uint64_t)getpid() << 24) ^ (sj_now_ns() & 0xffffff) ^ 0x7e00000000000000ULL;
}

enum spoil { SPOIL_NONE, SPOIL_VERSION, SPOIL_JOBID, SPOIL_LSIZE, SPOIL_UNINIT, SPOIL_MAGIC, SPOIL_PARTS, SPOIL_PARTS3 };

/* Local rank 0 creates the segment, the header is spoiled one way, and
 * local rank 1 tries to attach: the attach's result and its stderr. */
static int attach_spoiled(enum spoil how, struct capture *cap)
{
	uint64_t jobid = test_jobid();
	struct nal *creator = seg_nal(jobid, 0, 2), *joiner = seg_nal(jobid, 1, 2);
	int rc;

	assert_int_equal(shm_seg_create(creator), 0);
	switch (how) {
	case SPOIL_NONE:
		break;
	case SPOIL_VERSION: /* a build from before the record word's ack beside this one */
		creator->hdr->version = SHM_VERSION - 1;
		break;
	case SPOIL_JOBID:
		creator->hdr->jobid ^= 1;
		break;
	case SPOIL_LSIZE:
		creator->hdr->local_size = 3;
		break;
	case SPOIL_UNINIT: /* the creator died before publishing the header */
		atomic_store(&creator->hdr->initialized, 0);
		break;
	case SPOIL_MAGIC:
		creator->hdr->magic ^= 0xff;
		break;
	case SPOIL_PARTS: /* no part to walk: shm_slot_off would divide by zero */
		creator->hdr->slot_parts = 0;
		break;
	case SPOIL_PARTS3: /* three parts of a slot of eight: pieces would straddle the walk's laps */
		creator->hdr->slot_parts = 3;
		break;
	}
	capture_begin(cap);
	rc = shm_seg_attach(joiner);
	capture_end(cap);
	if (rc == 0) {
		/* Attached: it counts as a holder and sees the creator's rings,
		 * and walks its slots as the creator planned (2 ranks: 512 KiB
		 * slots, eight parts). */
		assert_int_equal(atomic_load(&joiner->hdr->attached), 2);
		assert_int_equal(joiner->chunk, 512u << 10);
		assert_int_equal(joiner->slot_parts, 8);
		assert_int_equal(joiner->slot_parts, creator->hdr->slot_parts);
		assert_int_equal(joiner->slot_parts, shm_slot_parts(2, joiner->chunk));
		assert_int_equal(creator->slot_parts, joiner->slot_parts);
	} else {
		assert_null(joiner->base);
	}
	shm_unlink(creator->name);
	seg_nal_free(joiner);
	seg_nal_free(creator);
	return rc;
}

static void test_attach_own(void **state)
{
	struct capture cap;

	(void)state;
	assert_int_equal(attach_spoiled(SPOIL_NONE, &cap), 0);
	assert_string_equal(cap.text, "");
}

/* The layout for L ranks: one ring and one bounce area per ordered pair
 * of distinct ranks and nothing more (none of a rank to itself: a lone
 * rank's segment is its header and rank block), each rank's ends of a
 * pair on the same ring and area as its peer's, no two pairs sharing
 * one, all within the segment; a rank's own entry points nowhere. */
static void check_layout(uint32_t L)
{
	uint64_t jobid = test_jobid();
	struct nal *n[8];
	struct shm_seg_hdr *h;
	uint64_t pairs = (uint64_t)L * (L - 1);

	assert_true(L >= 1 && L <= 8);
	for (uint32_t r = 0; r < L; r++)
		n[r] = seg_nal(jobid, (int)r, (int)L);
	assert_int_equal(shm_seg_create(n[0]), 0);
	shm_unlink(n[0]->name); /* mapped here; nothing attaches by name */
	h = n[0]->hdr;
	assert_true(h->bounce_off - h->ring_off == pairs * h->ring_stride);
	assert_true(h->seg_len >= h->bounce_off + pairs * h->bounce_stride);
	assert_true(h->seg_len < h->bounce_off + pairs * h->bounce_stride + 4096);
	if (L == 1)
		assert_true(h->seg_len <= 4096 * 2);
	for (uint32_t r = 1; r < L; r++) {
		n[r]->base = n[0]->base;
		n[r]->hdr = n[0]->hdr;
		shm_seg_layout(n[r]);
	}
	uint8_t *base = n[0]->base;
	for (uint32_t a = 0; a < L; a++) {
		assert_null(n[a]->tx[a].ctl);
		assert_null(n[a]->tx[a].data);
		assert_null(n[a]->rx[a].ctl);
		assert_null(n[a]->rx[a].data);
		assert_null(n[a]->bp[a].rq_slot);
		assert_null(n[a]->bp[a].rq_data);
		assert_null(n[a]->bp[a].sv_slot);
		assert_null(n[a]->bp[a].sv_data);
		for (uint32_t b = 0; b < L; b++) {
			if (a == b)
				continue;
			uint8_t *ring = (uint8_t *)n[a]->tx[b].ctl, *area = (uint8_t *)n[a]->bp[b].rq_slot;
			assert_ptr_equal(ring, n[b]->rx[a].ctl);
			assert_ptr_equal(n[a]->tx[b].data, n[b]->rx[a].data);
			assert_ptr_equal(area, n[b]->bp[a].sv_slot);
			assert_ptr_equal(n[a]->bp[b].rq_data, n[b]->bp[a].sv_data);
			assert_true(ring >= base + h->ring_off && ring + h->ring_stride <= base + h->bounce_off);
			assert_true(area >= base + h->bounce_off && area + h->bounce_stride <= base + h->seg_len);
			assert_int_equal((uint64_t)(ring - base - h->ring_off) % h->ring_stride, 0);
			assert_int_equal((uint64_t)(area - base - h->bounce_off) % h->bounce_stride, 0);
			/* no other pair's ring or area is this one */
			for (uint32_t c = 0; c < L; c++)
				for (uint32_t d = 0; d < L; d++)
					if (c != d && (c != a || d != b)) {
						assert_ptr_not_equal(ring, n[c]->tx[d].ctl);
						assert_ptr_not_equal(area, n[c]->bp[d].rq_slot);
					}
		}
	}
	for (uint32_t r = 1; r < L; r++)
		n[r]->base = NULL; /* n[0]'s mapping, unmapped once */
	for (uint32_t r = 0; r < L; r++)
		seg_nal_free(n[r]);
}

static void test_layout(void **state)
{
	(void)state;
	for (uint32_t L = 1; L <= 5; L++)
		check_layout(L);
	check_layout(8);
}

static void test_refuse_foreign(void **state)
{
	static const enum spoil ways[] = { SPOIL_VERSION, SPOIL_JOBID, SPOIL_LSIZE, SPOIL_UNINIT,
					   SPOIL_MAGIC, SPOIL_PARTS, SPOIL_PARTS3 };
	struct capture cap;

	(void)state;
	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		assert_int_equal(attach_spoiled(ways[i], &cap), NAL_EIO);
		assert_non_null(strstr(cap.text, "is not this job's segment"));
		assert_non_null(strstr(cap.text, "stale or foreign"));
	}
	/* The message shows what it found, so a version mismatch is visible. */
	attach_spoiled(SPOIL_VERSION, &cap);
	{
		char want[64];

		snprintf(want, sizeof(want), "version %u, this build's %u,", SHM_VERSION - 1, SHM_VERSION);
		assert_non_null(strstr(cap.text, want));
	}
	attach_spoiled(SPOIL_LSIZE, &cap);
	assert_non_null(strstr(cap.text, "3 local ranks, expected 2"));
	attach_spoiled(SPOIL_PARTS, &cap);
	assert_non_null(strstr(cap.text, "0 slot parts"));
}

static void test_attach_missing(void **state)
{
	struct nal *joiner = seg_nal(test_jobid(), 1, 2);
	struct capture cap;

	(void)state;
	capture_begin(&cap);
	assert_int_equal(shm_seg_attach(joiner), NAL_EIO);
	capture_end(&cap);
	assert_non_null(strstr(cap.text, "rank 1 cannot open"));
	seg_nal_free(joiner);
}

/* A leftover under our name (a crashed job with our id) is replaced. */
static void test_stale_replaced(void **state)
{
	uint64_t jobid = test_jobid();
	struct nal *creator = seg_nal(jobid, 0, 2), *joiner = seg_nal(jobid, 1, 2);
	struct capture cap;
	char name[64];
	int fd;

	(void)state;
	shm_seg_name(jobid, name, sizeof(name));
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "junk", 4), 4);
	close(fd);
	capture_begin(&cap);
	assert_int_equal(shm_seg_create(creator), 0);
	capture_end(&cap);
	assert_non_null(strstr(cap.text, "removing stale segment"));
	assert_int_equal(shm_seg_attach(joiner), 0);
	shm_unlink(creator->name);
	seg_nal_free(joiner);
	seg_nal_free(creator);
}

/* ---- copy requests (SHM_REC_HELP) between two processes */

static int nmsgs;
static void up_recv(void *arg, int peer, const void *msg, size_t len)
{
	(void)arg;
	(void)peer;
	(void)msg;
	(void)len;
	nmsgs++;
}
static void up_bulk_done(void *arg, void *cookie, int status)
{
	(void)arg;
	(void)cookie;
	(void)status;
}
static void up_peer_failed(void *arg, int peer, int status)
{
	(void)arg;
	(void)peer;
	(void)status;
}
static const struct nal_upcalls ups = {
	.recv = up_recv, .bulk_done = up_bulk_done, .peer_failed = up_peer_failed,
};

#define HELP_LEN 4096

/* Rank 0 asks rank 1 to copy into rank 0's buffer: requests whose answer
 * is "done" (1) or "copy it yourself" (2), then a short one and two bulk
 * picks of no class or method, which rank 1 drops with a message. Rank 1 answers through rank 0's done word; a plain
 * message after each request shows the ring still delivers. Rank 1's
 * stderr goes to the file named by arg, read by the parent. */
static int body_help(struct sj_ctx *c, void *arg)
{
	static uint8_t src[HELP_LEN], dst[HELP_LEN];
	static volatile uint64_t done;
	const char *errpath = arg;
	uint64_t deadline = sj_now_ns() + 20000000000ULL;

	if (c->rank == 1) {
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		SJ_CHECK(fd >= 0 && dup2(fd, 2) == 2);
		close(fd);
		for (int i = 0; i < HELP_LEN; i++)
			src[i] = (uint8_t)(i * 7 + 1);
		SJ_CHECK(sj_barrier(c) == 0); /* src filled */
		while (nmsgs < 6) {
			nal_shm_ops.progress(c->n);
			SJ_CHECK(sj_now_ns() < deadline);
		}
		fflush(stderr);
		return sj_barrier(c);
	}

	/* Rank 0. Each case asks rank 1 to write its src into our dst (a
	 * WRITE from its view: own_addr is its memory, their_addr ours). */
	struct {
		uint32_t op;
		uint64_t own_addr;
		uint64_t want; /* the done word rank 1 stores */
	} cases[] = {
		{ NAL_BULK_WRITE, (uint64_t)(uintptr_t)src, 1 }, /* a valid copy */
		{ 99, (uint64_t)(uintptr_t)src, 2 },             /* no such operation */
		{ NAL_BULK_WRITE, 8, 2 },                        /* unmapped in rank 1 */
	};
	SJ_CHECK(sj_barrier(c) == 0);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct shm_help_req r = {
			.op = cases[k].op,
			.their_addr = (uint64_t)(uintptr_t)dst,
			.own_addr = cases[k].own_addr,
			.len = HELP_LEN,
			.done_addr = (uint64_t)(uintptr_t)&done,
		};

		done = 0;
		memset(dst, 0, sizeof(dst));
		SJ_CHECK(shm_ring_put(c->n, 1, SHM_REC_HELP, &r, sizeof(r), NULL, 0) == 0);
		SJ_CHECK(nal_shm_ops.send(c->n, 1, "m", 1, NULL, 0) == 0);
		while (done == 0) {
			nal_shm_ops.progress(c->n);
			SJ_CHECK(sj_now_ns() < deadline);
		}
		SJ_CHECK(done == cases[k].want);
		if (done == 1)
			for (int i = 0; i < HELP_LEN; i++)
				SJ_CHECK(dst[i] == (uint8_t)(i * 7 + 1));
	}
	/* Too short to be a request: dropped, the next message still comes. */
	SJ_CHECK(shm_ring_put(c->n, 1, SHM_REC_HELP, "bad", 3, NULL, 0) == 0);
	SJ_CHECK(nal_shm_ops.send(c->n, 1, "m", 1, NULL, 0) == 0);
	/* A bulk pick (we lead the pair) of a class or method that is not
	 * one: ignored with a message, the next message still comes. */
	{
		struct shm_help_req bad_class = { .op = SHM_HELP_PICK, .len = 99, .own_addr = 0 };
		struct shm_help_req bad_method = { .op = SHM_HELP_PICK, .len = 0, .own_addr = 9 };

		SJ_CHECK(shm_ring_put(c->n, 1, SHM_REC_HELP, &bad_class, sizeof(bad_class), NULL, 0) == 0);
		SJ_CHECK(nal_shm_ops.send(c->n, 1, "m", 1, NULL, 0) == 0);
		SJ_CHECK(shm_ring_put(c->n, 1, SHM_REC_HELP, &bad_method, sizeof(bad_method), NULL, 0) == 0);
		SJ_CHECK(nal_shm_ops.send(c->n, 1, "m", 1, NULL, 0) == 0);
	}
	return sj_barrier(c);
}

static void test_help_requests(void **state)
{
	char path[] = "/tmp/ptl_test_shm_seg.XXXXXX";
	char text[2048] = "";
	uint64_t jobid;
	int fd = mkstemp(path);
	ssize_t n;

	(void)state;
	assert_true(fd >= 0);
	unsetenv("PTL_SHM_CMA");
	assert_int_equal(sj_run(2, ups, body_help, path, 30, -1, &jobid), 0);
	n = read(fd, text, sizeof(text) - 1);
	assert_true(n > 0);
	text[n] = '\0';
	close(fd);
	unlink(path);
	assert_non_null(strstr(text, "malformed copy request from rank 0 ignored"));
	assert_non_null(strstr(text, "rank 0 sent a bulk pick (class 99, method 0) it may not; ignored"));
	assert_non_null(strstr(text, "rank 0 sent a bulk pick (class 0, method 9) it may not; ignored"));
	assert_false(sj_seg_exists(jobid));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_own),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_refuse_foreign),
		cmocka_unit_test(test_attach_missing),
		cmocka_unit_test(test_stale_replaced),
		cmocka_unit_test(test_help_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
