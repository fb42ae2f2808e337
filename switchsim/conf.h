/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What a qpace-switch run is made of, as parsed from the command line (cli.c) and a
 * topology file (topo.c), before anything is opened. fabric.c builds it. */
#ifndef SW_CONF_H
#define SW_CONF_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include "impair.h"
#include "pfc.h"
#include "qpace/shm_ring.h"
#include "qpace/siphash.h"
#include "queue.h"
#include "telem.h"

/* The loader's limits: what the indices hold (a port of a switch is an int16 in the
 * forwarding tables, a port of the fabric a uint32 in its schedule), not what fits in
 * memory, which the driver estimates (sim/: a run too big is refused before it starts).
 * The arrays are sized to the file. */
#define SW_MAX_SWITCHES 65536
#define SW_MAX_PORTS 1024         /* per switch */
#define SW_MAX_STAR 128           /* --star N: a 127-sender star in virtual time */
#define SW_MAX_STATIC 4096        /* mac lines per switch: its table's slots */
#define SW_MAX_ROUTED 1048576     /* hosts a routes line covers */
#define SW_SEED_STRIDE 128        /* RED and impairment seeds: switch x this + port */
#define SW_TOPO_FILE_MAX (64u << 20)   /* bytes of a topology file */
#define SW_NAME_LEN 32
#define SW_MAX_SHM_PORTS 128      /* shm ports per run: hosts on this machine */
#define SW_EARLY_BDP UINT64_MAX   /* early_bytes: one BDP of each port */
#define SW_ICRC_EVERY 16          /* default of --icrc-check */

/* SW_PORT_SIM: a port whose frames a virtual-time driver moves (io_sim.c); a driver turns
 * the I/O ports of a configuration into these (sim/), no file or flag names them. */
enum sw_port_kind { SW_PORT_UDP = 0, SW_PORT_VXLAN, SW_PORT_PACKET, SW_PORT_LINK, SW_PORT_SIM,
		   SW_PORT_SHM };

struct sw_port_conf {
	char name[SW_NAME_LEN];
	enum sw_port_kind kind;
	struct sockaddr_in local;    /* udp, vxlan; shm: where doorbells arrive */
	struct sockaddr_in remote;   /* udp: until another address is heard; vxlan: the VTEP;
				      * shm: where doorbells go */
	uint16_t shm_ref;            /* shm: 1 + its region's link in sw_conf.shm_paths (kept
				      * out of here: a conf holds 16,384 port confs) */
	uint32_t shm_slots;          /* shm: slots per ring, 0 = SHM_SLOTS_DEFAULT */
	uint32_t vni;                /* vxlan, 24 bits */
	char dev[IF_NAMESIZE];       /* packet */
	int peer_switch, peer_port;  /* link: the other end */
	bool no_flood;               /* flood=off: broadcast and unknown frames skip it */
	bool no_learn;               /* udp, learn=off: only the configured remote, for good */
	struct sw_queue_params q;
	struct sw_telem_params telem;
	struct sw_pfc_params pfc;
	struct sw_impair_params impair;  /* the link out of this port (impair.h) */
	int line;                    /* topology file line, 0 for the command line */
};

/* What a port takes unless told otherwise: from the command line, then a topology
 * file's switch line, then its port or link line. */
struct sw_port_defaults {
	struct sw_queue_params q;
	struct sw_telem_params telem;
	struct sw_pfc_params pfc;
	struct sw_impair_params impair;
};

struct sw_static_mac {
	uint8_t mac[6];
	int port;
};

struct sw_switch_conf {
	char name[SW_NAME_LEN];
	uint32_t id;
	struct sw_port_defaults def;
	uint8_t mac[6];              /* telemetry source */
	uint32_t ip;                 /* telemetry source, host order */
	bool have_key;               /* sign telemetry, check level acks (auth.h) */
	uint8_t key[QP_SIPHASH_KEY_BYTES];
	int nports, cap_ports;
	struct sw_port_conf *ports;
	int nstatic, cap_static;
	struct sw_static_mac *statics;
};

/* Forwarding computed from the topology (a routes line): the host behind the i-th I/O
 * port of the file (udp, vxlan, packet, shm, switch by switch, port by port) has IPv4
 * first_ip + i and the soft backend's MAC for it (02:00 and the address); every switch
 * forwards to it along a shortest path, at one of its equal-cost ports (route.c). */
struct sw_routes_conf {
	bool on;
	uint32_t first_ip;            /* host order */
	int line;                     /* the routes line */
};

struct sw_conf {
	int nswitches, cap_switches;
	struct sw_switch_conf *sw;
	struct sw_routes_conf routes;
	/* with routes: [nswitches x nroutes] the egress port of each switch towards each
	 * host, SW_ROUTE_NONE where it has none (sw_conf_finish: route.c) */
	uint16_t *route;
	uint32_t nroutes;
	struct sw_port_defaults def;  /* from the command line */
	bool have_key;                /* --key: every switch's unless its line says key= */
	uint8_t key[QP_SIPHASH_KEY_BYTES];
	uint32_t auth_sender;         /* first switch's sender id; 0 = a random one */
	qp_time_ns driver_clock_ns;   /* virtual time: the driver's clock at create; then the
				       * fabric reads no clock (sequences from it, no wall
				       * offset) and a random sender id is 1. 0 = real time */
	/* run */
	const char *pcap_path;
	const char *pcap_port;        /* "SWITCH:PORT" or "PORT", NULL = all */
	const char *stats_path;
	const char *stats_json_path;
	qp_time_ns stats_interval_ns;
	qp_time_ns duration_ns;       /* 0 = until a signal */
	qp_time_ns spin_ns;           /* busy-poll when the next departure is this close */
	qp_time_ns tx_early_ns;       /* I/O ports may send this much before the model */
	uint32_t icrc_every;          /* check the ICRC of every N-th RoCEv2 frame a port
				       * receives (1: all, 0: none); ~1 us per KB with zlib */
	bool quiet;
	bool gso;                     /* udp ports send runs of frames with UDP GSO (--gso) */
	int nshm;                     /* shm ports' region links (qpace/shm_ring.h) */
	char shm_paths[SW_MAX_SHM_PORTS][SHM_PATH_MAX];
};

/* Give shm port @p the region link @path: 0, or -EINVAL with a message (too long, or
 * more than SW_MAX_SHM_PORTS shm ports). */
int sw_conf_shm_set(struct sw_conf *c, struct sw_port_conf *p, const char *path, char *err,
		    size_t errlen);
/* Port @p's region link, "" when it has none. */
const char *sw_conf_shm_path(const struct sw_conf *c, const struct sw_port_conf *p);

/* Defaults for everything (no switch yet). A conf that holds switches is given back with
 * sw_conf_free before it is set to defaults again. */
void sw_conf_defaults(struct sw_conf *c);
/* The switches', ports' and routes' arrays freed; the conf holds no switch. */
void sw_conf_free(struct sw_conf *c);
/* @dst (holding nothing) a copy of @src, arrays and all: 0 or -ENOMEM (@dst then holds
 * nothing). */
int sw_conf_copy(struct sw_conf *dst, const struct sw_conf *src);
/* A new switch at the end, zeroed (an array reused keeps its slots' storage); NULL when
 * out of memory. Pointers into c->sw may move. */
struct sw_switch_conf *sw_conf_add_switch(struct sw_conf *c);
/* A new port at the end of @s, zeroed; NULL when out of memory. Pointers into s->ports
 * may move. */
struct sw_port_conf *sw_conf_add_port(struct sw_switch_conf *s);
/* Room for one more static MAC on @s: 0 or -ENOMEM. */
int sw_conf_static_room(struct sw_switch_conf *s);
/* Resolve per-port defaults: early threshold BDP, telemetry, PFC headroom; with a routes
 * line, compute the routes (route.c). Call after parsing. 0, or -ENOMEM. */
int sw_conf_finish(struct sw_conf *c);

#define SW_ROUTE_NONE UINT16_MAX
/* Compute c->route from the links (route.c): 0 or -ENOMEM. */
int sw_routes_build(struct sw_conf *c);
/* Host @h of a routes line: its switch and port (the h-th I/O port); false when there is
 * none. */
bool sw_routes_host(const struct sw_conf *c, uint32_t h, int *sw, int *port);

/* One per-port setting (rate, buffer, delay, ecn, early, notice-interval, levels,
 * level-repeat, int, int-sample, cnp, flows, seed, pfc, impair) from text: 0, or -EINVAL with
 * "KEY 'VALUE': accepted ..." in @err. */
int sw_conf_setting(struct sw_port_defaults *d, const char *key, const char *val, char *err,
		    size_t len);
const char *sw_conf_setting_names(void);

/* The command line; topology file through -c. @c zeroed, or holding a configuration (freed
 * first). 0, 1 (--help printed: exit 0) or -1 (error printed to stderr). */
int sw_cli_parse(struct sw_conf *c, int argc, char **argv);

/* A topology file (see topo.c for the grammar). 0, or -EINVAL with "FILE:LINE: key: why"
 * in @err (-errno when the file cannot be read). */
int sw_topo_load(struct sw_conf *c, const char *path, char *err, size_t errlen);
/* The same from a string (tests, fuzzing); @name is used in messages. */
int sw_topo_parse(struct sw_conf *c, const char *text, const char *name, char *err,
		  size_t errlen);

/* A star: one switch, @n udp ports on 127.0.0.1, port i receiving on base+2i, sending
 * to base+2i+1. */
int sw_conf_star(struct sw_conf *c, int n, unsigned base_port, char *err, size_t errlen);
/* The star's ports as shm ports (--shm): port i's region at PREFIX.pI, its doorbells on
 * the udp addresses above. */
int sw_conf_star_shm(struct sw_conf *c, const char *prefix, char *err, size_t errlen);
/* The star's udp ports offering their rings too (udp+shm, io.h): each port's region at
 * shm_offer_path(its local address). */
int sw_conf_star_offer(struct sw_conf *c, char *err, size_t errlen);

#endif
