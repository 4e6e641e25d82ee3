/*
 * Zero-word elision for small eager messages (vrb_zip.h).
 *
 * In place both ways: zipping moves every kept word to the left (to or
 * below where it was), so a forward pass never overwrites a word it has
 * yet to read; unzipping moves them back to the right, so it runs
 * backwards, the tail first. Words go through a register (fixed-size
 * memcpy, which compilers inline) and the few tail bytes one by one: both
 * run once per small message, where a library call per word cost more
 * than the rest of the work (under emulation, calls are what is slow).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "nal/verbs/vrb_zip.h"

size_t vrb_zip(unsigned char *buf, size_t len)
{
	if (len > VRB_ZIP_MAX)
		return 0;
	size_t nw = len / 8, tail = len % 8, out = 0;
	uint32_t map = 0;
	for (size_t j = 0; j < nw; j++) {
		uint64_t w;
		memcpy(&w, buf + 8 * j, 8);
		if (!w)
			continue;
		memcpy(buf + out, &w, 8);
		out += 8;
		map |= (uint32_t)1 << j;
	}
	if (out == 8 * nw)
		return 0; /* no zero word: the trailer would only cost */
	for (size_t i = 0; i < tail; i++)
		buf[out++] = buf[8 * nw + i];
	buf[out++] = (unsigned char)(nw | tail << 5);
	for (int b = 0; b < 3; b++)
		buf[out++] = (unsigned char)(map >> (8 * b));
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
