/*
 * The verbs NAL: opening the device, port and GID vrb_choose.c picks,
 * creating the NI's queues, and the ops table.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "nal/verbs/vrb.h"
#include "nal/verbs/vrb_choose.h"

/* Milliseconds for the keepalive and handshake timers, which progress()
 * reads on every call. The coarse clock (a jiffy, 1-10 ms) is read from the
 * vDSO without a system call even where the precise one is not (a clock
 * source the vDSO cannot read, as under QEMU TCG: there CLOCK_MONOTONIC was
 * a system call in every poll). */
uint64_t vrb_now_ms(void)
{
	struct timespec ts;
#ifdef CLOCK_MONOTONIC_COARSE
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
#else
	clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Opens the device and port to use. 1: done; 0: no usable device. */
static int vrb_pick_device(struct nal *n)
{
	int ndev = 0;
	n->devs = ibv_get_device_list(&ndev);
	if (!n->devs || ndev == 0)
		return 0;
	int i = vrb_choose_device(n->devs, ndev, &n->port, false);
	if (i < 0)
		return 0;
	n->ctx = ibv_open_device(n->devs[i]);
	if (!n->ctx)
		return 0;
	snprintf(n->devname, sizeof n->devname, "%s", ibv_get_device_name(n->devs[i]));
	return 1;
}

static int vrb_setup_port(struct nal *n)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	if (ibv_query_port(n->ctx, n->port, &pa) != 0 || ibv_query_device(n->ctx, &da) != 0)
		return NAL_EIO;
	n->me.magic = VRB_MAGIC;
	n->me.port = n->port;
	n->me.lid = pa.lid;
	n->me.mtu = (uint8_t)pa.active_mtu;
	n->me.is_global = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	n->gid_index = vrb_choose_gid(n->ctx, n->port, pa.gid_tbl_len);
	if (n->me.is_global && n->gid_index < 0) {
		fprintf(stderr, "ptl: verbs: %s port %u has no usable GID (no IP address on its netdev?)\n",
			n->devname, n->port);
		return NAL_EPERM;
	}
	if (n->gid_index >= 0) {
		union ibv_gid g;
		if (ibv_query_gid(n->ctx, n->port, n->gid_index, &g) != 0)
			return NAL_EIO;
		memcpy(n->me.gid, g.raw, 16);
	}
	n->max_sge = (uint32_t)(da.max_sge < 16 ? da.max_sge : 16);
	return 0;
}

static void vrb_close(struct nal *n);

static int vrb_open(const struct nal_open_args *args, struct nal **out)
{
	struct nal *n = calloc(1, sizeof *n);
	if (!n)
		return NAL_ENOMEM;
	n->args = *args;
	n->args.local_ranks = NULL;
	memcpy(n->key, args->job_key, args->job_key_len < 32 ? (size_t)args->job_key_len : 32);
	n->efd = -1;
	n->pagemap_fd = -1;
	n->debug = getenv("PTL_VERBS_DEBUG") != NULL;
	const char *ka = getenv("PTL_VERBS_KEEPALIVE_MS");
	n->ka_ms = ka && *ka ? (unsigned)strtoul(ka, NULL, 10) : VRB_KA_MS;
	const char *due = getenv("PTL_VERBS_DUE_MS");
	n->due_ms = due && *due ? (unsigned)strtoul(due, NULL, 10) : VRB_DUE_MS;
	atomic_store(&n->next_ka_ms, vrb_now_ms() + n->ka_ms);
	int rc = NAL_EPERM;
	if (!vrb_pick_device(n))
		goto fail; /* quietly: no RDMA here */
	if ((rc = vrb_setup_port(n)) != 0)
		goto fail;
	rc = NAL_EIO;
	n->pd = ibv_alloc_pd(n->ctx);
	n->chan = ibv_create_comp_channel(n->ctx);
	n->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!n->pd || !n->chan || n->efd < 0)
		goto fail;
	int fl = fcntl(n->chan->fd, F_GETFL);
	fcntl(n->chan->fd, F_SETFL, fl | O_NONBLOCK);

	/* Eager buffers: VRB_CREDITS for every peer and VRB_RECV_SPARE, within
	 * what the SRQ takes. */
	struct ibv_device_attr da;
	ibv_query_device(n->ctx, &da);
	uint32_t want = VRB_CREDITS * (uint32_t)(args->size > 1 ? args->size - 1 : 1) + VRB_RECV_SPARE;
	uint32_t cap = da.max_srq_wr > 0 ? (uint32_t)da.max_srq_wr - 1 : 1024;
	if (cap > 4096)
		cap = 4096;
	n->nrbuf = want < cap ? want : cap;
	/* Unsignaled SENDs of a broken QP flush with a CQE each; counted
	 * twice, as the count forgets them when the QP is retired, maybe
	 * before their CQEs are polled. */
	int cqe = (int)(n->nrbuf + VRB_TX_MAX + 2 * VRB_UNSIG_MAX + 2 * VRB_CM_BUFS + 64);
	if (cqe > da.max_cqe)
		cqe = da.max_cqe;
	n->cq = ibv_create_cq(n->ctx, cqe, n, n->chan, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = n->nrbuf, .max_sge = 1 } };
	n->srq = ibv_create_srq(n->pd, &sa);
	if (!n->cq || !n->srq) {
		fprintf(stderr, "ptl: verbs: cannot create the CQ or SRQ on %s: %s\n", n->devname, strerror(errno));
		goto fail;
	}
	size_t rbuf_bytes = VRB_PAGES((size_t)n->nrbuf * VRB_EAGER);
	n->rbuf = aligned_alloc(4096, rbuf_bytes);
	n->slots = aligned_alloc(64, ((size_t)args->size * 8 + 63) & ~(size_t)63);
	n->peers = calloc((size_t)args->size, sizeof *n->peers);
	if (!n->rbuf || !n->slots || !n->peers)
		goto fail;
	memset(n->slots, 0, (size_t)args->size * 8);
	int acc = IBV_ACCESS_LOCAL_WRITE;
	n->rbuf_mr = ibv_reg_mr(n->pd, n->rbuf, rbuf_bytes, acc);
	n->slots_mr = ibv_reg_mr(n->pd, n->slots, (size_t)args->size * 8, acc | IBV_ACCESS_REMOTE_WRITE);
	if (!n->rbuf_mr || !n->slots_mr) {
		fprintf(stderr, "ptl: verbs: cannot register buffers: %s (memlock limit? ulimit -l)\n",
			strerror(errno));
		goto fail;
	}
	if (vrb_post_recvs(n, VRB_RECV_SPARE) != 0) {
		fprintf(stderr, "ptl: verbs: cannot post receive buffers on %s\n", n->devname);
		goto fail;
	}
	if (vrb_reg_init(n) != 0 || (rc = vrb_conn_init(n)) != 0) {
		rc = rc ? rc : NAL_EIO;
		goto fail;
	}
	if (ibv_req_notify_cq(n->cq, 0) != 0)
		goto fail;
	*out = n;
	return 0;
fail:
	vrb_close(n);
	return rc;
}

static void vrb_close(struct nal *n)
{
	if (!n)
		return;
	vrb_cm_bye(n);
	if (n->peers)
		for (int i = 0; i < n->args.size; i++) {
			struct vrb_peer *p = &n->peers[i];
			vrb_bulk_drop(n, p);
			if (p->qp)
				ibv_destroy_qp(p->qp);
			if (p->ah)
				ibv_destroy_ah(p->ah);
			if (p->keep_mr)
				ibv_dereg_mr(p->keep_mr);
			free(p->keep);
			free(p->keep_len);
		}
	vrb_retired_fini(n);
	vrb_conn_fini(n);
	vrb_reg_fini(n);
	if (n->srq)
		ibv_destroy_srq(n->srq);
	if (n->cq)
		ibv_destroy_cq(n->cq);
	if (n->chan)
		ibv_destroy_comp_channel(n->chan);
	if (n->rbuf_mr)
		ibv_dereg_mr(n->rbuf_mr);
	if (n->slots_mr)
		ibv_dereg_mr(n->slots_mr);
	if (n->pd)
		ibv_dealloc_pd(n->pd);
	if (n->ctx)
		ibv_close_device(n->ctx);
	if (n->devs)
		ibv_free_device_list(n->devs);
	if (n->efd >= 0)
		close(n->efd);
	while (n->bulk_free) {
		struct vrb_bulk *b = n->bulk_free;
		n->bulk_free = b->next;
		free(b);
	}
	free(n->rbuf);
	free(n->slots);
	free(n->peers);
	free(n->qpn_map);
	free(n->qpn_key);
	free(n);
}

static int vrb_addr_get(struct nal *n, void *buf, size_t *len)
{
	memcpy(buf, &n->me, sizeof n->me);
	*len = sizeof n->me;
	return 0;
}

static int vrb_start(struct nal *n, const int *local_ranks, int nlocal)
{
	(void)n;
	(void)local_ranks;
	(void)nlocal;
	return 0;
}

static void vrb_props(struct nal *n, struct nal_props *out)
{
	(void)n;
	out->name = "verbs";
	out->max_inline = VRB_EAGER;
	out->ports = 1;
	out->latency_class = 2;
	out->has_bulk = 1;
}

/* Opens only where it is wanted: ranks on other hosts, or PTL_NAL=verbs. */
static int vrb_open_if_wanted(const struct nal_open_args *args, struct nal **out)
{
	const char *force = getenv("PTL_NAL");
	bool forced = force && !strcmp(force, "verbs");
	if (!forced && args->local_size >= args->size)
		return NAL_EPERM;
	return vrb_open(args, out);
}

const struct nal_ops nal_verbs_ops = {
	.name = "verbs",
	.open = vrb_open_if_wanted,
	.addr = vrb_addr_get,
	.start = vrb_start,
	.connect = vrb_connect,
	.reaches = vrb_reaches,
	.close = vrb_close,
	.props = vrb_props,
	.send = vrb_send,
	.mem_reg = vrb_mem_reg,
	.mem_dereg = vrb_mem_dereg,
	.bulk = vrb_bulk,
	.progress = vrb_progress,
	.sleep = vrb_sleep,
	.kick = vrb_kick,
	.set_polling = vrb_set_polling,
	.due = vrb_due,
};
