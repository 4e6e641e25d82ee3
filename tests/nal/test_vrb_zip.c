/*
 * tests/nal/test_vrb_zip.c - the verbs NAL's zero-word elision
 * (lib/nal/verbs/vrb_zip.c) on its own, no RDMA device needed: every
 * length, header split and many zero patterns come back byte for byte;
 * messages that cannot gain are sent as they are; a small Portals put
 * fits the 76 bytes under which Soft-RoCE's CRC stays cheap; malformed
 * bytes from a peer are refused, not read out of bounds.
 */
#include "config.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nal/verbs/vrb_zip.h"
#include "ptl/ptl_proto.h"

#define ROOM (VRB_ZIP_MAX + 64)

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* len bytes of random data; each 8-byte word is zero with odds 1 in
 * 1 << zero_bits; a kept word may still hold zero bytes. */
static void fill(unsigned char *b, size_t len, unsigned zero_bits)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(next() % 3 ? next() : 0);
	for (size_t j = 0; j + 8 <= len; j += 8)
		if (next() % (1u << zero_bits) == 0)
			memset(b + j, 0, 8);
		else if (!memcmp(b + j, "\0\0\0\0\0\0\0\0", 8))
			b[j + 3] = 1;
}

static size_t zero_words(const unsigned char *b, size_t len)
{
	size_t z = 0;
	for (size_t j = 0; j + 8 <= len; j += 8)
		z += !memcmp(b + j, "\0\0\0\0\0\0\0\0", 8);
	return z;
}

/* Zips orig[0, len), split into a header of hdr_len bytes and a payload,
 * into a buffer that held other bytes; checks what the sender sends and
 * that the receiver gets orig back. */
static void zip_one(const unsigned char *orig, size_t len, size_t hdr_len)
{
	unsigned char buf[ROOM];
	memset(buf, 0x5a, sizeof buf);
	bool zipped;
	size_t z = vrb_zip(buf, orig, hdr_len, orig + hdr_len, len - hdr_len, &zipped);
	size_t zw = zero_words(orig, len);
	/* nothing written beyond the message */
	for (size_t i = len; i < ROOM; i++)
		assert_int_equal(buf[i], 0x5a);
	if (len > VRB_ZIP_MAX || zw == 0 || hdr_len % 8) {
		/* nothing to gain (or no word boundary): sent as it is */
		assert_false(zipped);
		assert_int_equal(z, len);
		assert_memory_equal(buf, orig, len);
		return;
	}
	assert_true(zipped);
	/* 8 bytes saved per zero word, 4 spent on the trailer */
	assert_int_equal(z, len - 8 * zw + 4);
	assert_int_equal(vrb_unzip(buf, z), (long)len);
	assert_memory_equal(buf, orig, len);
	/* unzipping stays within the room vrb_zip.h promises to need */
	for (size_t i = VRB_ZIP_MAX + 8; i < ROOM; i++)
		assert_int_equal(buf[i], 0x5a);
}

static void test_round_trip(void **state)
{
	(void)state;
	unsigned char orig[ROOM];
	for (size_t len = 0; len <= VRB_ZIP_MAX + 16; len++) {
		for (unsigned round = 0; round < 200; round++) {
			fill(orig, len, round % 4);
			/* headers of whole words, as lib/ptl's, now and then not */
			size_t hdr_len = round % 7 == 6 ? next() % (len + 1) : 8 * (next() % (len / 8 + 1));
			zip_one(orig, len, hdr_len);
		}
	}
}

/* An 8-byte put (no ACK, no header data, offset 0) as lib/ptl sends it:
 * zipped to at most 76 bytes, where 80 went before. */
static void test_small_put(void **state)
{
	(void)state;
	unsigned char buf[ROOM], payload[8];
	struct ptl_hdr h = { .type = PTL_MSG_PUT, .pt_index = 3, .uid = 1000, .jid = 77,
			     .match_bits = 0x5150, .rlength = 8 };
	memset(payload, 1, sizeof payload);
	bool zipped;
	size_t z = vrb_zip(buf, &h, sizeof h, payload, sizeof payload, &zipped);
	assert_true(zipped && z <= 76);
	assert_int_equal(vrb_unzip(buf, z), (long)(sizeof h + 8));
	assert_memory_equal(buf, &h, sizeof h);
	assert_memory_equal(buf + sizeof h, payload, 8);
}

/* Sets the 4-byte trailer at the end of buf[0, len). */
static void trailer(unsigned char *buf, size_t len, unsigned nw, unsigned tail, uint32_t map)
{
	buf[len - 4] = (unsigned char)(nw | tail << 5);
	for (int b = 0; b < 3; b++)
		buf[len - 3 + b] = (unsigned char)(map >> (8 * b));
}

static void test_malformed(void **state)
{
	(void)state;
	unsigned char buf[ROOM];
	memset(buf, 0, sizeof buf);
	assert_int_equal(vrb_unzip(buf, 0), -1);
	assert_int_equal(vrb_unzip(buf, 3), -1);
	trailer(buf, 4, 2, 0, 3); /* two words marked, none sent */
	assert_int_equal(vrb_unzip(buf, 4), -1);
	trailer(buf, 16, 2, 0, 1); /* two words sent, one marked */
	assert_int_equal(vrb_unzip(buf, 16), -1);
	trailer(buf, 7, 1, 7, 0); /* a 7-byte tail in 3 bytes */
	assert_int_equal(vrb_unzip(buf, 7), -1);
	trailer(buf, 9, 1, 0, 0); /* 5 bytes: no whole word */
	assert_int_equal(vrb_unzip(buf, 9), -1);
	trailer(buf, 4, 1, 0, 2); /* a word marked beyond the count */
	assert_int_equal(vrb_unzip(buf, 4), -1);
	trailer(buf, 4, 25, 0, 0); /* longer than anything zipped */
	assert_int_equal(vrb_unzip(buf, 4), -1);
	/* the smallest valid one: one zero word */
	memset(buf, 0xee, sizeof buf);
	trailer(buf, 4, 1, 0, 0);
	assert_int_equal(vrb_unzip(buf, 4), 8);
	assert_memory_equal(buf, "\0\0\0\0\0\0\0\0", 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_small_put),
		cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
