/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The soft backend's options (see soft_opts.h): one parser per value, one table. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "qpace/soft_host.h"
#include "qpace/units.h"
#include "soft_opts.h"

#define SOFT_OPTS_MAX 512

static bool parse_ulong(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static bool opt_attach(struct soft_opts *o, const char *v)
{
	if (qp_sockaddr_parse(v, 1, 65534, 0, &o->peer, NULL, 0))
		return false;
	o->bind = o->peer;
	o->bind.sin_port = htons((uint16_t)(ntohs(o->peer.sin_port) + 1));
	return true;
}

static bool opt_peer(struct soft_opts *o, const char *v)
{
	return qp_sockaddr_parse(v, 1, 65535, 0, &o->peer, NULL, 0) == 0;
}

static bool opt_bind(struct soft_opts *o, const char *v)
{
	unsigned long port;

	if (strchr(v, ':'))
		return qp_sockaddr_parse(v, 0, 65535, 0, &o->bind, NULL, 0) == 0;
	if (!parse_ulong(v, 0, 65535, &port))
		return false;
	o->bind = qp_sockaddr_in(INADDR_LOOPBACK, (uint16_t)port);
	return true;
}

static bool opt_ip(struct soft_opts *o, const char *v)
{
	uint32_t ip;

	if (qp_ipv4_parse(v, &ip) || !ip || ip == 0xffffffffu || (ip >> 28) == 0xe)
		return false;
	o->ip = ip;
	return true;
}

static bool opt_mac(struct soft_opts *o, const char *v)
{
	unsigned b[FRAME_ETH_ALEN];
	char tail;

	if (strlen(v) != 17 || sscanf(v, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
				      &b[4], &b[5], &tail) != 6 || (b[0] & 1))
		return false;
	for (int i = 0; i < FRAME_ETH_ALEN; i++)
		o->mac[i] = (uint8_t)b[i];
	return true;
}

static bool opt_mtu(struct soft_opts *o, const char *v)
{
	unsigned long m;

	if (!parse_ulong(v, 256, 4096, &m) || (m & (m - 1)))
		return false;
	o->mtu_bytes = (uint32_t)m;
	return true;
}

static bool opt_window(struct soft_opts *o, const char *v)
{
	unsigned long w;

	if (!parse_ulong(v, 1, RC_WINDOW_MAX, &w))
		return false;
	o->window_pkts = (uint32_t)w;
	return true;
}

static bool opt_max_qps(struct soft_opts *o, const char *v)
{
	unsigned long n;

	if (!parse_ulong(v, 1, SOFT_HOST_QPS_MAX, &n))
		return false;
	o->max_qps = (uint32_t)n;
	return true;
}

static bool opt_telemetry_port(struct soft_opts *o, const char *v)
{
	unsigned long p;

	if (!parse_ulong(v, 1, 65535, &p) || p == FRAME_ROCEV2_PORT)
		return false;
	o->telemetry_port = (uint16_t)p;
	return true;
}

static bool opt_link_rate(struct soft_opts *o, const char *v)
{
	return !qp_parse_rate(v, &o->link_bps) && o->link_bps >= 1000 &&
	       o->link_bps <= 10000 * QP_GBPS;
}

static bool opt_icrc(struct soft_opts *o, const char *v)
{
	if (strcmp(v, "on") && strcmp(v, "off"))
		return false;
	o->icrc_skip = !strcmp(v, "off");
	return true;
}

static bool opt_shm(struct soft_opts *o, const char *v)
{
	o->shm_off = !strcmp(v, "off");
	o->shm_path[0] = 0;
	if (o->shm_off || !strcmp(v, "auto"))
		return true;
	if (!*v || strlen(v) >= sizeof(o->shm_path))
		return false;
	snprintf(o->shm_path, sizeof(o->shm_path), "%s", v);
	return true;
}

static const struct soft_opt {
	const char *name;
	bool (*parse)(struct soft_opts *o, const char *v);
	unsigned flag;
	const char *accepted;
} opts[] = {
	{ "attach", opt_attach, SOFT_OPT_ATTACH,
	  "HOST:P, a numeric IPv4 address and port 1..65534: send to P, receive on P+1 "
	  "(qpace-switch --star: port i is P+2i)" },
	{ "peer", opt_peer, SOFT_OPT_PEER, "HOST:PORT: send frames there (instead of attach)" },
	{ "bind", opt_bind, SOFT_OPT_BIND, "[ADDR:]PORT: receive frames there (default 127.0.0.1)" },
	{ "ip", opt_ip, SOFT_OPT_IP, "A.B.C.D: the host's unicast IPv4 address (required)" },
	{ "mac", opt_mac, SOFT_OPT_MAC, "xx:xx:xx:xx:xx:xx unicast (default 02:00 + the IP)" },
	{ "mtu", opt_mtu, 0, "256, 512, 1024, 2048 or 4096: the active RoCE MTU (default 1024)" },
	{ "window", opt_window, 0, "1..4096 unacknowledged packets per QP (default 128)" },
	{ "max_qps", opt_max_qps, 0, "1..65536 QPs on this host (default 1024)" },
	{ "telemetry_port", opt_telemetry_port, 0,
	  "1..65535 but not 4791: UDP port of telemetry (default 4792)" },
	{ "link_rate", opt_link_rate, 0,
	  "1K..10T bits/s: the port's line rate, which PFC pause times are counted in "
	  "(default 1G; give the switch port's --rate)" },
	{ "shm", opt_shm, SOFT_OPT_SHM,
	  "auto, off or PATH (1..95 bytes): auto (default) = through the shared-memory "
	  "rings a qpace-switch --star port offers on this machine when attach= (or peer=) "
	  "names it, else each frame a UDP datagram; off = datagrams; PATH = the rings "
	  "of an shm port (--star N --shm PREFIX: port i is PREFIX.pI), doorbells on "
	  "attach='s addresses" },
	{ "icrc", opt_icrc, 0,
	  "on or off: off computes no ICRC for frames out and checks none in (virtual "
	  "time's --icrc off; default on)" },
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

const char *soft_opts_help(void)
{
	static char help[4096];

	if (!help[0])
		for (size_t i = 0; i < NOPTS; i++)
			snprintf(help + strlen(help), sizeof(help) - strlen(help), "  %s=%s\n",
				 opts[i].name, opts[i].accepted);
	return help;
}

static int parse_one(struct soft_opts *o, char *tok, char *err, size_t errlen)
{
	char *eq = strchr(tok, '=');

	if (!eq)
		return qp_errmsg(-EINVAL, err, errlen, "soft: option '%s' is not key=value", tok);
	*eq = 0;
	for (size_t i = 0; i < NOPTS; i++) {
		if (strcmp(tok, opts[i].name) != 0)
			continue;
		if (!opts[i].parse(o, eq + 1))
			return qp_errmsg(-EINVAL, err, errlen, "soft: %s '%s': accepted %s", tok,
					 eq + 1, opts[i].accepted);
		o->given |= opts[i].flag;
		return 0;
	}
	return qp_errmsg(-EINVAL, err, errlen,
			 "soft: unknown option '%s'; accepted: attach, peer, bind, ip, mac, mtu, "
			 "window, max_qps, telemetry_port, link_rate, shm, icrc", tok);
}

static int opts_parse(struct soft_opts *o, const char *s, bool wire, char *err, size_t errlen)
{
	char buf[SOFT_OPTS_MAX], *save = NULL, *tok;
	int rc;

	memset(o, 0, sizeof(*o));
	o->mtu_bytes = 1024;
	o->window_pkts = 128;
	o->max_qps = 1024;
	o->telemetry_port = 4792;
	o->link_bps = QP_GBPS;
	if (!s || strlen(s) >= sizeof(buf))
		return qp_errmsg(-EINVAL, err, errlen,
				 "soft: options are required (at most %d bytes): "
				 "attach=HOST:P,ip=A.B.C.D", SOFT_OPTS_MAX - 1);
	memcpy(buf, s, strlen(s) + 1);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		rc = parse_one(o, tok, err, errlen);
		if (rc)
			return rc;
	}
	if (!(o->given & SOFT_OPT_IP))
		return qp_errmsg(-EINVAL, err, errlen, "soft: ip=A.B.C.D is required");
	if (wire && (o->given & (SOFT_OPT_ATTACH | SOFT_OPT_PEER | SOFT_OPT_BIND | SOFT_OPT_SHM)))
		return qp_errmsg(-EINVAL, err, errlen,
				 "soft: attach=, peer=, bind= and shm= name a socket or a port; this "
				 "host's frames are moved by its driver (virtual time), which has none");
	if (wire)
		goto done;
	if ((o->given & SOFT_OPT_ATTACH) && (o->given & (SOFT_OPT_PEER | SOFT_OPT_BIND)))
		return qp_errmsg(-EINVAL, err, errlen,
				 "soft: attach= replaces peer= and bind=; give one or the other");
	if (!(o->given & SOFT_OPT_ATTACH) &&
	    (o->given & (SOFT_OPT_PEER | SOFT_OPT_BIND)) != (SOFT_OPT_PEER | SOFT_OPT_BIND))
		return qp_errmsg(-EINVAL, err, errlen,
				 "soft: attach=HOST:P (or both peer=HOST:PORT and bind=PORT) is "
				 "required");
done:
	if (!(o->given & SOFT_OPT_MAC))
		soft_mac_from_ip(o->ip, o->mac);
	return 0;
}

int soft_opts_parse(struct soft_opts *o, const char *s, char *err, size_t errlen)
{
	return opts_parse(o, s, false, err, errlen);
}

int soft_opts_parse_wire(struct soft_opts *o, const char *s, char *err, size_t errlen)
{
	return opts_parse(o, s, true, err, errlen);
}
