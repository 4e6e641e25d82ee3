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
	if (nw > VRB_ZIP_MAX / 8 || map >> nw || words % 8 || words / 8 > nw)
		return -1;
	unsigned k = (unsigned)(words / 8);
	for (size_t i = tail; i-- > 0;)
		buf[8 * nw + i] = buf[words + i];
	for (unsigned j = nw; j-- > 0;) {
		uint64_t w = 0;
		if (map & ((uint32_t)1 << j)) {
			if (!k)
				return -1; /* more words marked than sent */
			memcpy(&w, buf + 8 * --k, 8);
		}
		memcpy(buf + 8 * j, &w, 8);
	}
	return k ? -1 : (long)(8 * nw + tail);
}
