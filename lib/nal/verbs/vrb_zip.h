/*
 * lib/nal/verbs/vrb_zip.h - small eager messages leave out their zero
 * 8-byte words on the wire.
 *
 * Why: on Soft-RoCE (rdma_rxe) every byte of a message is copied and
 * CRC'd twice (the ICRC, sender and receiver), and a payload of more than
 * 76 bytes makes the kernel's crc32 take its PCLMUL path, which saves and
 * restores the process's FPU state around it: under emulation that alone
 * costs more than the rest of the send. A put that waits for an answer
 * (an ACK, a bulk move) and every get carry the 72-byte struct ptl_hdr,
 * most of it zero for a plain put (no offset, header data, AC index...):
 * an 8-byte put with an ACK goes out as 80 bytes, zipped about half that.
 * A put that waits for none carries the 24-byte struct ptl_hdr_tiny up
 * to 32 bytes and from 81 to 96, the 40-byte struct ptl_hdr_short
 * otherwise (lib/ptl/ptl_proto.h): 32 or 48 bytes with 8 of data, under
 * that threshold already; zipping drops what zero words they still have
 * (header data; a short header's offset).
 *
 * Format of a zipped message of L bytes (L = 8 * nw + tail, tail < 8):
 * the nonzero words among its first nw, in order; then the tail bytes;
 * then 4 bytes: nw | tail << 5, and a little-endian 24-bit map whose bit
 * j is set when word j was sent. Both counts are spelled out so that the
 * receiver finds every piece without counting bits. Only messages of
 * VRB_ZIP_MAX bytes or fewer with at least one zero word are zipped (the
 * trailer costs 4 bytes, a zero word saves 8); the sender says which
 * messages are (vrb.h: the top bit of the immediate data).
 *
 * Zipping happens as the sender copies the message into its send slot;
 * unzipping in place, in the receive buffer, which has room for the
 * unzipped length.
 */
#ifndef PTL_VRB_ZIP_H
#define PTL_VRB_ZIP_H

#include <stdbool.h>
#include <stddef.h>

#define VRB_ZIP_MAX 192u /* 24 words: the map's bits */

/* Copies the message hdr[0, hdr_len) + payload[0, len) to dst, zipped when
 * that gains (*zipped says so): not when it is longer than VRB_ZIP_MAX, has
 * no zero word, or hdr_len is no multiple of 8. Returns the bytes written;
 * dst has room for hdr_len + len. */
size_t vrb_zip(unsigned char *dst, const void *hdr, size_t hdr_len, const void *payload, size_t len, bool *zipped);

/* Unzips the zipped message of len bytes at buf in place; buf has room
 * for VRB_ZIP_MAX + 8 bytes (the tail moves as a whole word). Returns the unzipped length, or -1 when the
 * bytes are no zipped message (a peer's bug: the caller drops it). */
long vrb_unzip(unsigned char *buf, size_t len);

#endif /* PTL_VRB_ZIP_H */
