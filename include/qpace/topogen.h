/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Topology generators: star, dumbbell, leaf-spine, fat-tree and two sites joined by a WAN
 * link, as switches, host ports, links and static forwarding, written as the topology file
 * qpace-switch loads (-c FILE; switchsim/topo.c) and that virtual time loads the same way
 * (docs/workloads.md). Pure: parameters in, a description out, text into a buffer.
 *
 *   star       one switch, `hosts` hosts
 *   dumbbell   `hosts` hosts on each of two switches, one link between them at fabric_bps
 *              (default: host_bps), the bottleneck
 *   leaf-spine `leaves` leaves of `hosts_per_leaf` hosts, every leaf linked to each of
 *              `spines` spines; fabric links at fabric_bps, or when 0 at
 *              hosts_per_leaf x host_bps / (spines x oversub): `oversub` is a leaf's host
 *              capacity over its uplink capacity (1: non-blocking, 3: 3:1)
 *   fat-tree   Al-Fares et al. (SIGCOMM 2008): `k` pods of k/2 edge and k/2 aggregation
 *              switches, (k/2)^2 core switches, k/2 hosts per edge switch: k^3/4 hosts,
 *              5k^2/4 switches of k ports, every link at host_bps (or fabric_bps); k is
 *              even, 2..8 (k = 10's file, 1.1 MB, is more than qpace-switch reads)
 *   two-site   `hosts` hosts on each of two site switches joined by one WAN link (wan_bps,
 *              wan_delay_ns, wan_buffer_bytes); with site_leaf_spine each site is a
 *              leaf-spine as above (switches a_leaf1.., a_spine1.., b_leaf1..), the WAN
 *              between the two sites' first spines
 *
 * Hosts are numbered from 0 in switch order; host i is port "h<i>", a udp port
 * (local=127.0.0.1:base_port+2i, remote=127.0.0.1:base_port+2i+1, as qpace-switch --star),
 * with IPv4 10.0.0.0 + i + 1 (10.0.0.1 for host 0, as qpace-bench's incast numbers its
 * hosts) and the soft backend's MAC for it, 02:00 followed by the address
 * (soft_mac_from_ip).
 *
 * Forwarding is static, so the fabric never floods unicast: every switch has one MAC
 * entry per host. On loops (leaf-spine, fat-tree) the next hop towards a host is one of
 * the equal-cost (shortest-path) ports, in port order, number (host + r) mod (ports),
 * where r is a rotation drawn from the switch id (qp_mix64): deterministic, and each
 * switch spreads destinations evenly over its equal-cost ports. The source cannot enter
 * the choice: the switch forwards on the destination MAC alone, so all flows to one host
 * share a path from each switch on (ECMP per destination, not per host pair). Broadcast
 * follows a spanning tree (breadth first from the first switch): every other link is
 * flood=off at both ends, so no frame circles.
 */
#ifndef QPACE_TOPOGEN_H
#define QPACE_TOPOGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/fct.h"
#include "qpace/rate.h"
#include "qpace/strbuf.h"
#include "qpace/time.h"

/* Within what qpace-switch's topology loader accepts (switchsim/conf.h SW_MAX_*; a unit
 * test holds each at most the loader's). */
#define TOPOGEN_MAX_SWITCHES 128
#define TOPOGEN_MAX_PORTS 64          /* per switch */
#define TOPOGEN_MAX_HOSTS 512         /* static MAC entries per switch: one per host */
#define TOPOGEN_MAX_FILE (1u << 20)   /* bytes: the largest file sw_topo_load reads (its mac
				       * lines, switches x hosts, are most of it) */
#define TOPOGEN_NAME 32

enum topogen_kind {
	TOPOGEN_STAR, TOPOGEN_DUMBBELL, TOPOGEN_LEAF_SPINE, TOPOGEN_FAT_TREE, TOPOGEN_TWO_SITE,
	TOPOGEN_NKINDS
};

struct topogen_params {
	enum topogen_kind kind;
	uint32_t hosts;               /* star; dumbbell and two-site: on each side */
	uint32_t leaves, spines, hosts_per_leaf;
	double oversub;               /* leaf-spine, > 0 */
	uint32_t k;                   /* fat-tree: even, >= 2 */
	qp_rate_bps host_bps;         /* host links */
	qp_rate_bps fabric_bps;       /* links between switches; 0: as the kind says */
	qp_rate_bps wan_bps;          /* two-site */
	qp_time_ns delay_ns;          /* every link but the WAN */
	qp_time_ns wan_delay_ns;
	uint64_t buffer_bytes;        /* every port but the WAN's */
	uint64_t wan_buffer_bytes;
	bool site_leaf_spine;         /* two-site: each site a leaf-spine (leaves, spines, ...) */
	uint32_t base_port;           /* UDP ports of the hosts */
	const char *settings;         /* more SETTING=VALUE words for every switch line (ecn=,
				       * int=, ...), written as given; NULL: none */
};

struct topogen_port {
	char name[TOPOGEN_NAME];
	int32_t host;                 /* its host, or -1 on a link */
	int32_t peer_sw, peer_port;   /* a link's far end */
	qp_rate_bps rate_bps;
	qp_time_ns delay_ns;
	uint64_t buffer_bytes;
	bool no_flood;
};

struct topogen_switch {
	char name[TOPOGEN_NAME];
	uint32_t id;
	uint32_t nports;
	struct topogen_port ports[TOPOGEN_MAX_PORTS];
};

struct topogen_host {
	uint32_t sw, port;
	uint32_t ip;                  /* host order */
	uint8_t mac[6];
	qp_rate_bps nic_bps;          /* its link's rate */
};

struct topogen {
	struct topogen_params p;      /* as given, with the defaults and derived rates */
	uint32_t nswitches, nhosts, nlinks, nports;
	struct topogen_switch *sw;
	struct topogen_host *host;
	uint8_t *site;                /* [nhosts]: 0 or 1 (dumbbell: left, right; two-site);
				       * NULL for one site */
	int16_t *route;               /* [nswitches x nhosts]: the egress port towards a host */
};

/* Defaults for @kind: 10G hosts, 1us links, 1M buffers, base port 7000, and per kind: star
 * 8 hosts; dumbbell 4 a side; leaf-spine 2 x 2 with 2 hosts a leaf, oversub 1; fat-tree
 * k = 4; two-site 2 a site, WAN 1G, 10ms, 16M. */
void topogen_defaults(struct topogen_params *p, enum topogen_kind kind);
const char *topogen_kind_name(enum topogen_kind kind);
int topogen_kind_find(const char *name);          /* -1 when unknown */

/* Build @p's topology into @g (topogen_free it). 0, or -EINVAL with "KIND: what, the value,
 * the accepted range" (a parameter out of range, a fabric qpace-switch cannot load: too
 * many switches, ports or hosts, or a file over TOPOGEN_MAX_FILE), or -ENOMEM. */
int topogen_build(struct topogen *g, const struct topogen_params *p, char *err,
		  size_t errlen);
void topogen_free(struct topogen *g);

/* The topology file (comments saying what made it, then switch, port, link and mac lines)
 * appended to @out; false when the buffer ran out of memory. */
bool topogen_write(const struct topogen *g, struct qp_strbuf *out);

/* The links a frame from host @src to host @dst crosses, in order, following the static
 * tables: the source's own link, then each switch's egress port. Returns how many (at most
 * @max are stored), 0 when @src == @dst or a host is out of range. */
size_t topogen_path(const struct topogen *g, uint32_t src, uint32_t dst,
		    struct fct_hop *hops, size_t max);

#endif
