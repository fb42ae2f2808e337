/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Topology files: several switches, their ports and the links between them.
 *
 *   # a comment; blank lines are ignored
 *   switch NAME [id=N] [mac=02:00:00:00:00:01] [ip=A.B.C.D] [key=FILE|none]
 *               [SETTING=VALUE...]
 *   port SWITCH NAME udp    local=IP:PORT [remote=IP:PORT] [learn=off] [SETTING=VALUE...]
 *   port SWITCH NAME vxlan  local=IP[:PORT] remote=IP[:PORT] vni=N  [SETTING=VALUE...]
 *   port SWITCH NAME packet dev=IFNAME                               [SETTING=VALUE...]
 *   port SWITCH NAME shm    path=FILE local=IP:PORT remote=IP:PORT [slots=N] [SETTING=...]
 *   link SWITCH:PORT SWITCH:PORT [flood=off] [SETTING=VALUE...]
 *   mac SWITCH MAC PORT
 *
 * SETTINGs are the per-port options of the command line without the dashes (rate, buffer,
 * delay, ecn, early, notice-interval, levels, level-repeat, int, int-sample, cnp, flows,
 * seed, pfc, impair: e.g. pfc=xoff=40K,xon=20K,headroom=auto,lossless; impair=loss=1%,
 * reorder=1%:20us,seed=3 impairs the link out of that port).
 * A switch line's settings are the defaults of the ports declared after it; a port or link
 * line's settings are for that port (a link: both of its ends, each end being the egress
 * queue towards the other switch). vxlan ports default to UDP port 4789. flood=off (on
 * ports and links) keeps broadcast and unknown-destination frames off a port, to cut
 * loops out of flooding (there is no spanning tree). key= is the switch's signing key
 * (default: --key's; auth.h). learn=off keeps a udp port on its remote= for good: frames
 * from any other address are skipped, where by default a well-formed frame from a new
 * address re-points the port (io.h). shm: a soft host on this machine in shared memory
 * (io.h, qpace/shm_ring.h), its region published at path=, its doorbells from local= to
 * remote= (the host's attach= address plus one), slots=N per ring (a power of two,
 * default 512). Every error names the file, the line and the key.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "qpace/keyfile.h"
#include "qpace/opt.h"
#include "qpace/units.h"
#include "conf.h"

#define MAX_TOKENS 32
#define STR_(x) #x
#define STR(x) STR_(x)   /* a limit in a message: "128" */

struct topo {
	struct sw_conf *c;
	const char *file;
	int line;
	char *err;
	size_t len;
};

/* The message "FILE:LINE: ..." and -EINVAL: every topology error is one of the file. */
static int fail(struct topo *t, const char *fmt, const char *a, const char *b)
{
	char msg[800];
	snprintf(msg, sizeof(msg), fmt, a, b);
	return qp_errmsg(-EINVAL, t->err, t->len, "%s:%d: %s", t->file, t->line, msg);
}

static int find_switch(const struct sw_conf *c, const char *name)
{
	for (int i = 0; i < c->nswitches; i++)
		if (!strcmp(c->sw[i].name, name))
			return i;
	return -1;
}

static int find_port(const struct sw_switch_conf *s, const char *name)
{
	for (int i = 0; i < s->nports; i++)
		if (!strcmp(s->ports[i].name, name))
			return i;
	return -1;
}

/* IPv4[:PORT], PORT 1..65535; a bare address takes @def_port (0: the port is required). */
static int parse_addr(const char *v, uint16_t def_port, struct sockaddr_in *out)
{
	struct sockaddr_in a = qp_sockaddr_in(0, def_port);

	if (qp_sockaddr_parse(v, 1, 65535, QP_HOSTPORT_BARE, &a, NULL, 0) || !a.sin_port)
		return -EINVAL;
	*out = a;
	return 0;
}

static int parse_mac(const char *v, uint8_t mac[6])
{
	unsigned m[6];
	char tail;

	if (sscanf(v, "%2x:%2x:%2x:%2x:%2x:%2x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5],
		   &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
	return 0;
}

/* A KEY=VALUE that is a per-port setting. */
static int setting(struct topo *t, struct sw_port_defaults *d, const char *kv,
		   const char *what, const char *own_keys)
{
	char key[64], msg[700];
	const char *eq = strchr(kv, '=');

	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(key))
		return fail(t, "%s: expected KEY=VALUE, got '%s'", what, kv);
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = 0;
	if (sw_conf_setting(d, key, eq + 1, msg, sizeof(msg))) {
		if (!strncmp(msg, "unknown setting", 15)) {
			char keys[300];
			snprintf(keys, sizeof(keys), "%s%s", own_keys, sw_conf_setting_names());
			snprintf(msg, sizeof(msg), "%s: unknown key '%s' (accepted: %s)", what, key,
				 keys);
		}
		return fail(t, "%s%s", msg, "");
	}
	return 0;
}

static const char *value_of(const char *kv, const char *key)
{
	size_t n = strlen(key);
	return !strncmp(kv, key, n) && kv[n] == '=' ? kv + n + 1 : NULL;
}

static int do_switch(struct topo *t, char **tok, int n)
{
	struct sw_conf *c = t->c;
	struct sw_switch_conf *s;
	const char *v;
	uint64_t id;

	if (n < 2)
		return fail(t, "switch: expected 'switch NAME [key=value...]'%s%s", "", "");
	if (strlen(tok[1]) >= SW_NAME_LEN || find_switch(c, tok[1]) >= 0)
		return fail(t, "switch: name '%s' %s", tok[1],
			    strlen(tok[1]) >= SW_NAME_LEN ? "too long" : "declared twice");
	if (c->nswitches == SW_MAX_SWITCHES)
		return fail(t, "switch: more than %s switches%s", STR(SW_MAX_SWITCHES), "");
	s = &c->sw[c->nswitches++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", tok[1]);
	s->id = (uint32_t)c->nswitches;
	s->def = c->def;
	s->have_key = c->have_key;
	memcpy(s->key, c->key, sizeof(s->key));
	for (int i = 2; i < n; i++) {
		if ((v = value_of(tok[i], "id"))) {
			if (qp_parse_u64(v, &id) || id < 1 || id > UINT32_MAX)
				return fail(t, "id '%s': a whole number in 1..4294967295%s", v, "");
			s->id = (uint32_t)id;
		} else if ((v = value_of(tok[i], "mac"))) {
			if (parse_mac(v, s->mac))
				return fail(t, "mac '%s': expected six hex bytes like 02:00:00:00:00:01%s",
					    v, "");
		} else if ((v = value_of(tok[i], "ip"))) {
			if (qp_ipv4_parse(v, &s->ip))
				return fail(t, "ip '%s': expected an IPv4 address%s", v, "");
		} else if ((v = value_of(tok[i], "key"))) {
			char msg[400];

			s->have_key = strcmp(v, "none") != 0;
			if (s->have_key && qp_keyfile_read(v, s->key, NULL, msg, sizeof(msg)))
				return fail(t, "key: %s%s", msg, "");
		} else if (setting(t, &s->def, tok[i], "switch", "id, mac, ip, key, ")) {
			return -EINVAL;
		}
	}
	return 0;
}

static struct sw_port_conf *new_port(struct topo *t, int sw, const char *name)
{
	struct sw_switch_conf *s = &t->c->sw[sw];
	struct sw_port_conf *p;

	if (strlen(name) >= SW_NAME_LEN || find_port(s, name) >= 0) {
		fail(t, "port name '%s' %s", name,
		     strlen(name) >= SW_NAME_LEN ? "too long" : "used twice on this switch");
		return NULL;
	}
	if (s->nports == SW_MAX_PORTS) {
		fail(t, "switch '%s': more than %s ports", s->name, STR(SW_MAX_PORTS));
		return NULL;
	}
	p = &s->ports[s->nports++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->q = s->def.q;
	p->telem = s->def.telem;
	p->pfc = s->def.pfc;
	p->impair = s->def.impair;
	p->line = t->line;
	return p;
}

static const char *const kinds[] = { "udp", "vxlan", "packet" };

static int flood_key(struct topo *t, struct sw_port_conf *p, const char *v)
{
	char why[100];
	bool on;

	if (qp_onoff_parse(v, &on, why, sizeof(why)))
		return fail(t, "flood '%s': %s", v, why);
	p->no_flood = !on;
	return 0;
}

static int learn_key(struct topo *t, struct sw_port_conf *p, const char *v)
{
	char why[100];
	bool on;

	if (qp_onoff_parse(v, &on, why, sizeof(why)))
		return fail(t, "learn '%s': %s", v, why);
	if (p->kind != SW_PORT_UDP)
		return fail(t, "learn '%s': on udp ports only%s", v, "");
	p->no_learn = !on;
	return 0;
}

static int port_key(struct topo *t, struct sw_port_conf *p, const char *kv)
{
	struct sw_port_defaults d = { .q = p->q, .telem = p->telem, .pfc = p->pfc,
				      .impair = p->impair };
	const char *v;
	uint64_t vni;

	if ((v = value_of(kv, "flood"))) {
		return flood_key(t, p, v);
	} else if ((v = value_of(kv, "learn"))) {
		return learn_key(t, p, v);
	} else if ((v = value_of(kv, "local"))) {
		if (parse_addr(v, p->kind == SW_PORT_VXLAN ? 4789 : 0, &p->local))
			return fail(t, "local '%s': expected IPv4:PORT (port 1..65535)%s", v, "");
	} else if ((v = value_of(kv, "remote"))) {
		if (parse_addr(v, p->kind == SW_PORT_VXLAN ? 4789 : 0, &p->remote))
			return fail(t, "remote '%s': expected IPv4:PORT (port 1..65535)%s", v, "");
	} else if ((v = value_of(kv, "vni"))) {
		if (qp_parse_u64(v, &vni) || vni > 0xffffff)
			return fail(t, "vni '%s': a whole number in 0..16777215%s", v, "");
		p->vni = (uint32_t)vni;
	} else if ((v = value_of(kv, "path")) && p->kind == SW_PORT_SHM) {
		char msg[300];
		if (sw_conf_shm_set(t->c, p, v, msg, sizeof(msg)))
			return fail(t, "%s%s", msg, "");
	} else if ((v = value_of(kv, "slots")) && p->kind == SW_PORT_SHM) {
		uint64_t n;
		if (qp_parse_u64(v, &n) || n < 2 || n > SHM_SLOTS_MAX || (n & (n - 1)))
			return fail(t, "slots '%s': a power of two in 2..65536%s", v, "");
		p->shm_slots = (uint32_t)n;
	} else if ((v = value_of(kv, "dev"))) {
		if (!*v || strlen(v) >= sizeof(p->dev))
			return fail(t, "dev '%s': an interface name of 1..15 characters%s", v, "");
		snprintf(p->dev, sizeof(p->dev), "%s", v);
	} else {
		if (setting(t, &d, kv, "port", "local, remote, vni, dev, flood, learn, "))
			return -EINVAL;
		p->q = d.q;
		p->telem = d.telem;
		p->pfc = d.pfc;
		p->impair = d.impair;
	}
	return 0;
}

static int do_port(struct topo *t, char **tok, int n)
{
	struct sw_port_conf *p;
	int sw, k;

	if (n < 4)
		return fail(t, "port: expected 'port SWITCH NAME udp|vxlan|packet "
			    "[key=value...]'%s%s", "", "");
	sw = find_switch(t->c, tok[1]);
	if (sw < 0)
		return fail(t, "port: switch '%s' is not declared above%s", tok[1], "");
	for (k = 0; k < 3 && strcmp(tok[3], kinds[k]); k++)
		;
	if (k == 3 && strcmp(tok[3], "shm"))
		return fail(t, "port kind '%s': accepted udp, vxlan, packet, shm%s", tok[3], "");
	p = new_port(t, sw, tok[2]);
	if (!p)
		return -EINVAL;
	p->kind = k == 3 ? SW_PORT_SHM : (enum sw_port_kind)k;
	for (int i = 4; i < n; i++)
		if (port_key(t, p, tok[i]))
			return -EINVAL;
	if (p->kind != SW_PORT_PACKET && !p->local.sin_family)
		return fail(t, "port %s: local=IP:PORT is required for %s ports", p->name, tok[3]);
	if (p->kind == SW_PORT_VXLAN && !p->remote.sin_family)
		return fail(t, "port %s: remote=IP is required for vxlan ports%s", p->name, "");
	if (p->kind == SW_PORT_SHM && (!p->shm_ref || !p->remote.sin_family))
		return fail(t, "port %s: path=FILE and remote=IP:PORT (the host's doorbell) are "
			    "required for shm ports%s", p->name, "");
	if (p->kind == SW_PORT_PACKET && !p->dev[0])
		return fail(t, "port %s: dev=IFNAME is required for packet ports%s", p->name, "");
	if (p->no_learn && !p->remote.sin_family)
		return fail(t, "port %s: learn=off needs remote=IP:PORT (the one peer)%s", p->name,
			    "");
	return 0;
}

static int do_link(struct topo *t, char **tok, int n)
{
	int sw[2], idx[2];
	struct sw_port_conf *p[2];

	if (n < 3)
		return fail(t, "link: expected 'link SWITCH:PORT SWITCH:PORT [key=value...]'%s%s",
			    "", "");
	for (int e = 0; e < 2; e++) {
		char *colon = strchr(tok[1 + e], ':');
		if (!colon)
			return fail(t, "link end '%s': expected SWITCH:PORT%s", tok[1 + e], "");
		*colon = 0;
		sw[e] = find_switch(t->c, tok[1 + e]);
		if (sw[e] < 0)
			return fail(t, "link: switch '%s' is not declared above%s", tok[1 + e], "");
		p[e] = new_port(t, sw[e], colon + 1);
		if (!p[e])
			return -EINVAL;
		p[e]->kind = SW_PORT_LINK;
		idx[e] = t->c->sw[sw[e]].nports - 1;
	}
	for (int e = 0; e < 2; e++) {
		p[e]->peer_switch = sw[1 - e];
		p[e]->peer_port = idx[1 - e];
		for (int i = 3; i < n; i++) {
			struct sw_port_defaults d = { .q = p[e]->q, .telem = p[e]->telem,
						      .pfc = p[e]->pfc, .impair = p[e]->impair };
			const char *v = value_of(tok[i], "flood");
			if (v) {
				if (flood_key(t, p[e], v))
					return -EINVAL;
				continue;
			}
			if (setting(t, &d, tok[i], "link", "flood, "))
				return -EINVAL;
			p[e]->q = d.q;
			p[e]->telem = d.telem;
			p[e]->pfc = d.pfc;
			p[e]->impair = d.impair;
		}
	}
	return 0;
}

static int do_mac(struct topo *t, char **tok, int n)
{
	struct sw_switch_conf *s;
	int sw, port;

	if (n != 4)
		return fail(t, "mac: expected 'mac SWITCH MAC PORT'%s%s", "", "");
	sw = find_switch(t->c, tok[1]);
	if (sw < 0)
		return fail(t, "mac: switch '%s' is not declared above%s", tok[1], "");
	s = &t->c->sw[sw];
	port = find_port(s, tok[3]);
	if (port < 0)
		return fail(t, "mac: port '%s' is not declared on switch '%s'", tok[3], s->name);
	if (s->nstatic == SW_MAX_STATIC)
		return fail(t, "mac: more than %s static entries on '%s'", STR(SW_MAX_STATIC), s->name);
	if (parse_mac(tok[2], s->statics[s->nstatic].mac))
		return fail(t, "mac '%s': expected six hex bytes like 02:00:00:00:00:01%s", tok[2], "");
	s->statics[s->nstatic++].port = port;
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(struct topo *t, char **tok, int n);
} directives[] = {
	{ "switch", do_switch }, { "port", do_port }, { "link", do_link }, { "mac", do_mac },
};

static int parse_line(struct topo *t, char *line)
{
	char *tok[MAX_TOKENS], *save = NULL, *hash = strchr(line, '#');
	int n = 0;

	if (hash)
		*hash = 0;
	for (char *w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == MAX_TOKENS)
			return fail(t, "more than %s words on a line%s", "32", "");
		tok[n++] = w;
	}
	if (!n)
		return 0;
	for (size_t i = 0; i < sizeof(directives) / sizeof(directives[0]); i++)
		if (!strcmp(tok[0], directives[i].name))
			return directives[i].fn(t, tok, n);
	return fail(t, "unknown directive '%s' (accepted: switch, port, link, mac)%s", tok[0], "");
}

int sw_topo_parse(struct sw_conf *c, const char *text, const char *name, char *err,
		  size_t errlen)
{
	struct topo t = { .c = c, .file = name, .err = err, .len = errlen };
	const char *p = text;
	char line[1024];
	int rc;

	c->nswitches = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		t.line++;
		if (n >= sizeof(line))
			return fail(&t, "line longer than %s characters%s", "1023", "");
		memcpy(line, p, n);
		line[n] = 0;
		rc = parse_line(&t, line);
		if (rc)
			return rc;
		p += n + (nl ? 1 : 0);
	}
	if (!c->nswitches)
		return fail(&t, "no switch declared%s%s", "", "");
	for (int s = 0; s < c->nswitches; s++)
		if (!c->sw[s].nports) {
			t.line = 0;
			return fail(&t, "switch '%s' has no ports%s", c->sw[s].name, "");
		}
	return 0;
}

int sw_topo_load(struct sw_conf *c, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text;
	long size;
	int rc;

	if (!f)
		return qp_errmsg(-errno, err, errlen, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	if (size < 0 || size > (1 << 20)) {
		fclose(f);
		return qp_errmsg(-EFBIG, err, errlen, "%s: not a topology file (over 1 MB)", path);
	}
	text = calloc(1, (size_t)size + 1);
	if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) {
		rc = text ? -EIO : -ENOMEM;
		fclose(f);
		free(text);
		return qp_errmsg(rc, err, errlen, "%s: cannot read", path);
	}
	fclose(f);
	rc = sw_topo_parse(c, text, path, err, errlen);
	free(text);
	return rc;
}
