/*
 * rt_proto.c - helpers shared by the rank side (rt_ptlrun.c) and ptlrun.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "rt_proto.h"

void rt_hex_encode(char *dst, const void *src, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *p = src;

	for (size_t i = 0; i < len; i++) {
		dst[2 * i] = digits[p[i] >> 4];
		dst[2 * i + 1] = digits[p[i] & 15];
	}
	dst[2 * len] = '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int rt_hex_decode(void *dst, size_t dstlen, const char *src, size_t srclen,
		  size_t *outlen)
{
	uint8_t *p = dst;

	if (srclen % 2 != 0 || srclen / 2 > dstlen)
		return -1;
	for (size_t i = 0; i < srclen / 2; i++) {
		int hi = hexval(src[2 * i]), lo = hexval(src[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		p[i] = (uint8_t)(hi << 4 | lo);
	}
	*outlen = srclen / 2;
	return 0;
}

int rt_parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int rt_wait_timeout(void)
{
	long v;

	if (rt_parse_int(getenv(RT_ENV_TIMEOUT), 1, INT_MAX / 1000, &v) == 0)
		return (int)v;
	return 600;
}

int rt_key_valid(const char *key)
{
	size_t n;

	if (key == NULL)
		return 0;
	n = strlen(key);
	if (n == 0 || n >= RT_KEY_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isgraph((unsigned char)key[i]))
			return 0;
	return 1;
}
