/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The soft backend's options: qp_ctx_attr.options, "key=value,..." (see qpace/soft.h). */
#ifndef QPACE_SOFT_OPTS_H
#define QPACE_SOFT_OPTS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/frame.h"
#include "qpace/rate.h"
#include "qpace/shm_ring.h"

struct soft_opts {
	struct sockaddr_in peer;       /* frames go here (the switch port's receive address) */
	struct sockaddr_in bind;       /* frames arrive here */
	uint32_t ip;                   /* host order */
	uint8_t mac[FRAME_ETH_ALEN];
	uint32_t mtu_bytes;            /* the port's active MTU */
	uint32_t window_pkts;
	uint32_t max_qps;
	uint16_t telemetry_port;
	qp_rate_bps link_bps;          /* for PAUSE times */
	bool icrc_skip;                /* icrc=off: no ICRC computed or checked */
	char shm_path[SHM_PATH_MAX];   /* shm=PATH: frames in a switch's shm port */
	bool shm_off;                  /* shm=off: datagrams, even where the switch offers
					* rings; else (shm=auto, the default) offered rings
					* (shm_region_attach_offer) when there are */
	unsigned given;                /* SOFT_OPT_* */
};

enum {
	SOFT_OPT_ATTACH = 1u << 0,
	SOFT_OPT_PEER = 1u << 1,
	SOFT_OPT_BIND = 1u << 2,
	SOFT_OPT_IP = 1u << 3,
	SOFT_OPT_MAC = 1u << 4,
	SOFT_OPT_SHM = 1u << 5,
};

/* Parse and check: defaults filled, the MAC derived from the IP unless given. 0, or
 * -EINVAL with one line naming the option, the value and what is accepted. */
int soft_opts_parse(struct soft_opts *o, const char *s, char *err, size_t errlen);
/* The same for a host whose frames a driver moves (qp_soft_arg.tx_ready: virtual time):
 * no socket, so attach, peer and bind are refused rather than required. */
int soft_opts_parse_wire(struct soft_opts *o, const char *s, char *err, size_t errlen);
/* "attach=HOST:P  ..." one line per option, for --help. */
const char *soft_opts_help(void);

#endif
