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

#define SW_MAX_SWITCHES 128       /* generated fabrics: a fat-tree of k = 8 has 80 */
#define SW_MAX_PORTS 128          /* per switch: a 127-sender star in virtual time */
#define SW_MAX_STATIC 512         /* static MAC entries per switch: one per host of a
				   * generated fabric (sim/topogen.c) */
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
	int nports;
	struct sw_port_conf ports[SW_MAX_PORTS];
	int nstatic;
	struct sw_static_mac statics[SW_MAX_STATIC];
};

struct sw_conf {
	int nswitches;
	struct sw_switch_conf sw[SW_MAX_SWITCHES];
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

/* Defaults for everything (one switch, no ports). */
void sw_conf_defaults(struct sw_conf *c);
/* Resolve per-port defaults: early threshold BDP, telemetry, PFC headroom. Call after
 * parsing. */
void sw_conf_finish(struct sw_conf *c);

/* One per-port setting (rate, buffer, delay, ecn, early, notice-interval, levels,
 * level-repeat, int, int-sample, cnp, flows, seed, pfc, impair) from text: 0, or -EINVAL with
 * "KEY 'VALUE': accepted ..." in @err. */
int sw_conf_setting(struct sw_port_defaults *d, const char *key, const char *val, char *err,
		    size_t len);
const char *sw_conf_setting_names(void);

/* The command line; topology file through -c. 0, 1 (--help printed: exit 0) or -1 (error
 * printed to stderr). */
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
