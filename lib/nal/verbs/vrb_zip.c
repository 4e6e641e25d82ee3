/*
 * Zero-word elision for small eager messages (vrb_zip.h).
 *
 * Zipping copies the message into the send slot on the way (the send made
 * that copy anyway); unzipping works in place, moving the words back to
 * the right, so it runs backwards, the tail first. Words go through a
 * register (fixed-size memcpy, which compilers inline) and the few tail
 * bytes one by one: both run once per small message, where a library call
 * per word cost more than the rest of the work (under emulation, calls are
 * what is slow).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "nal/verbs/vrb_zip.h"

/* Appends the nonzero ones of nw words at src to dst + out, marking them in
 * *map from bit j0 on; returns the new out. */
static size_t vrb_zip_words(unsigned char *dst, size_t out, const unsigned char *src, size_t nw, size_t j0,
			    uint32_t *map)
{
	for (size_t j = 0; j < nw; j++) {
		uint64_t w;
		memcpy(&w, src + 8 * j, 8);
		if (!w)
			continue;
		memcpy(dst + out, &w, 8);
		out += 8;
		*map |= (uint32_t)1 << (j0 + j);
	}
	return out;
}

/* Bits set in m (the words a zipped message carries). */
static unsigned vrb_zip_count(uint32_t m)
{
	m = m - ((m >> 1) & 0x55555555u);
	m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
	return (((m + (m >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

size_t vrb_zip(unsigned char *dst, const void *hdr, size_t hdr_len, const void *payload, size_t len, bool *zipped)
{
	size_t total = hdr_len + len;
	*zipped = false;
	if (total > VRB_ZIP_MAX || hdr_len % 8) {
		memcpy(dst, hdr, hdr_len);
		if (len)
			memcpy(dst + hdr_len, payload, len);
		return total;
	}
	size_t hw = hdr_len / 8, pw = len / 8, tail = len % 8;
	uint32_t map = 0;
	size_t out = vrb_zip_words(dst, 0, hdr, hw, 0, &map);
	if (pw)
		out = vrb_zip_words(dst, out, payload, pw, hw, &map);
	const unsigned char *t = (const unsigned char *)payload + 8 * pw;
	for (size_t i = 0; i < tail; i++)
		dst[out + i] = t[i];
	if (out == 8 * (hw + pw))
		return total; /* no zero word: sent as it is */
	out += tail;
	dst[out++] = (unsigned char)((hw + pw) | tail << 5);
	for (int b = 0; b < 3; b++)
		dst[out++] = (unsigned char)(map >> (8 * b));
	*zipped = true;
	return out;
}

long vrb_unzip(unsigned char *buf, size_t len)
{
	if (len < 4)
		return -1;
	const unsigned char *t = buf + len - 4;
	unsigned nw = t[0] & 31u, tail = t[0] >> 5;
	uint32_t map = t[1] | (uint32_t)t[2] << 8 | (uint32_t)t[3] << 16;
	if (tail > len - 4)
		return -1;
	size_t words = len - 4 - tail;
	/* As many words marked as sent, none beyond nw (so no more sent than
	 * nw either): every move below stays inside the buffer. */
	if (nw > VRB_ZIP_MAX / 8 || map >> nw || words % 8 || vrb_zip_count(map) != words / 8)
		return -1;
	/* The tail first, as one word through a register: it reads at most
	 * the trailer beyond it and writes at most a word past the unzipped
	 * end (the buffer's room, vrb_zip.h). */
	uint64_t tw;
	memcpy(&tw, buf + words, 8);
	memcpy(buf + 8 * nw, &tw, 8);
	/* Then the words, backwards, each moved right to its place or zeroed:
	 * k counts the sent words before j, so buf + 8 * k is never past j
	 * and a zero word's masked load reads inside the message. */
	unsigned k = (unsigned)(words / 8);
	for (unsigned j = nw; j-- > 0;) {
		uint64_t bit = map >> j & 1u;
		k -= (unsigned)bit;
		uint64_t w;
		memcpy(&w, buf + 8 * k, 8);
		w &= -bit;
		memcpy(buf + 8 * j, &w, 8);
	}
	return (long)(8 * nw + tail);
}
