/*
 * lib/nal/verbs/vrb_choose.h - which RDMA device, port and GID the verbs
 * NAL uses. Shared by the NAL (vrb_dev.c) and `ptltool info`, which shows
 * the choice, so the two can never disagree.
 *
 * Device: PTL_VERBS_DEVICE=name[:port] wins; otherwise the first ACTIVE
 * port of the device nearest this process (hwloc, when several devices
 * qualify), otherwise the first ACTIVE port found. GID: the RoCE v2 entry
 * holding an IPv4-mapped address, else any RoCE v2 entry, else any valid
 * one; on InfiniBand the LID addresses the port and the GID is optional.
 */
#ifndef PTL_VRB_CHOOSE_H
#define PTL_VRB_CHOOSE_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* Index in devs[0..ndev) of the device to use, its port in *port; -1 when
 * none qualifies (printing why when PTL_VERBS_DEVICE named one and !quiet). */
int vrb_choose_device(struct ibv_device **devs, int ndev, uint8_t *port, bool quiet);
/* GID index to use on port of ctx (gid_tbl_len entries); -1 when none. */
int vrb_choose_gid(struct ibv_context *ctx, uint8_t port, int tbl_len);
/* First ACTIVE port of ctx (only `want` when nonzero); 0 when none. */
uint8_t vrb_active_port(struct ibv_context *ctx, int want);
/* Whether g is an IPv4-mapped address (::ffff:a.b.c.d). */
bool vrb_gid_is_v4(const union ibv_gid *g);

#endif /* PTL_VRB_CHOOSE_H */
