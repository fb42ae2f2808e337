/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Configuration: defaults, the per-port settings shared by the command line and topology
 * files (one parser per value, one message shape: "KEY 'VALUE': accepted ..."), the star
 * shorthand, and the last resolution step. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "qpace/opt.h"
#include "qpace/units.h"
#include "conf.h"

typedef int (*setting_fn)(struct sw_port_defaults *d, const char *key, const char *v,
			  char *err, size_t len);

static int set_rate(struct sw_port_defaults *d, const char *key, const char *v, char *err,
		    size_t len)
{
	if (qp_parse_rate(v, &d->q.rate_bps) || d->q.rate_bps < 1000 ||
	    d->q.rate_bps > 10000 * QP_GBPS)
		return qp_errmsg(-EINVAL, err, len,
				 "%s '%s': not a rate in 1K..10T bits/s (e.g. 1G, 100M)",
				 key, v);
	return 0;
}

static int set_buffer(struct sw_port_defaults *d, const char *key, const char *v, char *err,
		      size_t len)
{
	if (qp_parse_bytes(v, &d->q.buffer_bytes) || d->q.buffer_bytes < 1514 ||
	    d->q.buffer_bytes > (1ULL << 30))
		return qp_errmsg(-EINVAL, err, len,
				 "%s '%s': not a size in 1514..1G bytes (e.g. 128K, 1M)",
				 key, v);
	return 0;
}

static int parse_time_max(const char *key, const char *v, qp_time_ns max, qp_time_ns *out,
			  char *err, size_t len)
{
	if (qp_parse_time(v, out) || *out > max)
		return qp_errmsg(-EINVAL, err, len,
				 "%s '%s': not a time in 0..%llus (e.g. 5us, 2ms)",
				 key, v, (unsigned long long)(max / QP_NS_PER_S));
	return 0;
}

static int set_delay(struct sw_port_defaults *d, const char *key, const char *v, char *err,
		     size_t len)
{
	return parse_time_max(key, v, 10 * QP_NS_PER_S, &d->q.delay_ns, err, len);
}

static int set_notice_interval(struct sw_port_defaults *d, const char *key, const char *v,
			       char *err, size_t len)
{
	return parse_time_max(key, v, 100 * QP_NS_PER_S, &d->telem.notice_interval_ns, err, len);
}

static int set_level_repeat(struct sw_port_defaults *d, const char *key, const char *v,
			    char *err, size_t len)
{
	return parse_time_max(key, v, 100 * QP_NS_PER_S, &d->telem.level_repeat_ns, err, len);
}

static const char *const int_modes[] = { "off", "direct", "echo", NULL };

static int set_int(struct sw_port_defaults *d, const char *key, const char *v, char *err,
		   size_t len)
{
	for (int i = 0; int_modes[i]; i++)
		if (!strcmp(v, int_modes[i])) {
			d->telem.int_mode = (enum sw_int_mode)i;
			return 0;
		}
	return qp_errmsg(-EINVAL, err, len, "%s '%s': accepted direct, echo, off", key, v);
}

static const char *const int_flows_names[] = { "wanted", "all", NULL };

static int set_int_flows(struct sw_port_defaults *d, const char *key, const char *v,
			 char *err, size_t len)
{
	for (int i = 0; int_flows_names[i]; i++)
		if (!strcmp(v, int_flows_names[i])) {
			d->telem.int_flows = (enum sw_int_flows)i;
			return 0;
		}
	return qp_errmsg(-EINVAL, err, len, "%s '%s': accepted wanted, all", key, v);
}

static int set_int_sample(struct sw_port_defaults *d, const char *key, const char *v,
			  char *err, size_t len)
{
	if (qp_parse_int_sample(v, &d->telem.int_every, &d->telem.int_interval_ns))
		return qp_errmsg(-EINVAL, err, len, "%s '%s': accepted " QP_INT_SAMPLE_ACCEPTED,
				 key, v);
	return 0;
}

/* Three comma-separated fields of at most 63 characters: 0 or -EINVAL. */
static int split3(const char *arg, char f[3][64])
{
	const char *p = arg;

	for (int i = 0; i < 3; i++) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if ((i < 2) != (e != NULL) || n >= 64)
			return -EINVAL;
		memcpy(f[i], p, n);
		f[i][n] = 0;
		p = e ? e + 1 : p + n;
	}
	return 0;
}

static int set_ecn(struct sw_port_defaults *d, const char *key, const char *v, char *err,
		   size_t len)
{
	struct sw_red_params r;
	char f[3][64];

	if (!strcmp(v, "off")) {
		d->q.red = (struct sw_red_params){ 0 };
		return 0;
	}
	if (split3(v, f) || qp_parse_bytes(f[0], &r.kmin_bytes) ||
	    qp_parse_bytes(f[1], &r.kmax_bytes) || qp_parse_double(f[2], &r.pmax) ||
	    !(r.pmax > 0 && r.pmax <= 1) || r.kmin_bytes >= r.kmax_bytes)
		return qp_errmsg(-EINVAL, err, len,
				 "%s '%s': accepted KMIN,KMAX,PMAX with KMIN < KMAX <= buffer "
				 "(bytes) and PMAX in (0,1], e.g. 20K,80K,0.2; or off", key, v);
	d->q.red = r;
	return 0;
}

static int set_early(struct sw_port_defaults *d, const char *key, const char *v, char *err,
		     size_t len)
{
	if (!strcmp(v, "off"))
		d->telem.early_bytes = 0;
	else if (!strcmp(v, "bdp"))
		d->telem.early_bytes = SW_EARLY_BDP;
	else if (qp_parse_bytes(v, &d->telem.early_bytes) || !d->telem.early_bytes ||
		 d->telem.early_bytes > (1ULL << 30))
		return qp_errmsg(-EINVAL, err, len,
				 "%s '%s': accepted bytes in 1..1G (e.g. 30K), bdp or off",
				 key, v);
	return 0;
}

static int set_levels(struct sw_port_defaults *d, const char *key, const char *v, char *err,
		      size_t len)
{
	uint64_t l[3];
	char f[3][64];

	if (!strcmp(v, "off")) {
		memset(d->telem.level_bytes, 0, sizeof(d->telem.level_bytes));
		return 0;
	}
	if (split3(v, f) || qp_parse_bytes(f[0], &l[0]) || qp_parse_bytes(f[1], &l[1]) ||
	    qp_parse_bytes(f[2], &l[2]) || !(l[0] > 0 && l[0] <= l[1] && l[1] <= l[2]))
		return qp_errmsg(-EINVAL, err, len,
				 "%s '%s': accepted MIN,MID,MAX bytes with 0 < MIN <= MID <= "
				 "MAX (e.g. 10K,30K,60K), or off", key, v);
	memcpy(d->telem.level_bytes, l, sizeof(l));
	return 0;
}

static int set_level_weight(struct sw_port_defaults *d, const char *key, const char *v,
			    char *err, size_t len)
{
	double w;

	if (qp_parse_double(v, &w) || !(w > 0 && w <= 1))
		return qp_errmsg(-EINVAL, err, len, "%s '%s': accepted a weight in (0, 1] "
				 "(RED's 0.002; 1 = the instantaneous queue)", key, v);
	d->telem.level_weight = w;
	return 0;
}

static int set_cnp(struct sw_port_defaults *d, const char *key, const char *v, char *err,
		   size_t len)
{
	char why[100];
	bool on;

	if (qp_onoff_parse(v, &on, why, sizeof(why)))
		return qp_errmsg(-EINVAL, err, len, "%s '%s': %s", key, v, why);
	d->telem.cnp = on;
	return 0;
}

static int set_flows(struct sw_port_defaults *d, const char *key, const char *v, char *err,
		     size_t len)
{
	uint64_t n;

	if (qp_parse_u64(v, &n) || n < 8 || n > (1u << 20) || (n & (n - 1)))
		return qp_errmsg(-EINVAL, err, len, "%s '%s': a power of two in 8..1048576",
				 key, v);
	d->q.flow_slots = (uint32_t)n;
	return 0;
}

static int set_flow_idle(struct sw_port_defaults *d, const char *key, const char *v,
			 char *err, size_t len)
{
	return parse_time_max(key, v, QP_NS_PER_S, &d->q.flow_idle_ns, err, len);
}

static int set_seed(struct sw_port_defaults *d, const char *key, const char *v, char *err,
		    size_t len)
{
	if (qp_parse_u64(v, &d->q.seed))
		return qp_errmsg(-EINVAL, err, len, "%s '%s': a whole number", key, v);
	return 0;
}

/* ---- pfc=xoff=BYTES[,xon=BYTES][,headroom=BYTES|auto][,class=N][,quanta=N][,lossless] ---- */

static bool pfc_bytes(const char *v, uint64_t lo, uint64_t *out)
{
	return v && !qp_parse_bytes(v, out) && *out >= lo && *out <= (1ULL << 30);
}

static bool pfc_xoff(struct sw_pfc_params *c, const char *v)
{
	return pfc_bytes(v, 1, &c->xoff_bytes);
}

static bool pfc_xon(struct sw_pfc_params *c, const char *v)
{
	return pfc_bytes(v, 0, &c->xon_bytes);
}

static bool pfc_headroom(struct sw_pfc_params *c, const char *v)
{
	if (v && !strcmp(v, "auto")) {
		c->headroom_bytes = SW_PFC_HEADROOM_AUTO;
		return true;
	}
	return pfc_bytes(v, 0, &c->headroom_bytes);
}

static bool pfc_class(struct sw_pfc_params *c, const char *v)
{
	uint64_t n;

	if (!v || qp_parse_u64(v, &n) || n >= FRAME_PFC_PRIOS)
		return false;
	c->prio = (uint8_t)n;
	return true;
}

static bool pfc_quanta(struct sw_pfc_params *c, const char *v)
{
	uint64_t n;

	if (!v || qp_parse_u64(v, &n) || n < 1 || n > 65535)
		return false;
	c->quanta = (uint16_t)n;
	return true;
}

static bool pfc_lossless(struct sw_pfc_params *c, const char *v)
{
	if (v && strcmp(v, "on") && strcmp(v, "off"))
		return false;
	c->lossless = !v || !strcmp(v, "on");
	return true;
}

static const struct {
	const char *name;
	bool (*fn)(struct sw_pfc_params *c, const char *v);
	const char *accepted;
} pfc_keys[] = {
	{ "xoff", pfc_xoff, "bytes in 1..1G (e.g. 40K)" },
	{ "xon", pfc_xon, "bytes in 0..1G, below xoff (e.g. 20K)" },
	{ "headroom", pfc_headroom, "bytes in 0..1G (e.g. 30K) or auto" },
	{ "class", pfc_class, "a priority in 0..7" },
	{ "quanta", pfc_quanta, "a pause time in 1..65535 quanta of 512 bit times" },
	{ "lossless", pfc_lossless, "lossless, lossless=on or lossless=off" },
};
#define PFC_SPEC "xoff=BYTES[,xon=BYTES][,headroom=BYTES|auto][,class=0..7][,quanta=1..65535]" \
		 "[,lossless], or off"

/* One KEY[=VALUE] item of a pfc spec: 0, or -EINVAL with the item's message. */
static int pfc_item(struct sw_pfc_params *c, char *tok, bool *have_xon, const char *key,
		    const char *v, char *err, size_t len)
{
	char *val = strchr(tok, '=');

	if (val)
		*val++ = 0;
	for (size_t i = 0; i < sizeof(pfc_keys) / sizeof(pfc_keys[0]); i++) {
		if (strcmp(tok, pfc_keys[i].name))
			continue;
		if (!pfc_keys[i].fn(c, val))
			return qp_errmsg(-EINVAL, err, len, "%s '%s': %s '%s': accepted %s", key,
					 v, tok, val ? val : "", pfc_keys[i].accepted);
		*have_xon |= !strcmp(tok, "xon");
		return 0;
	}
	return qp_errmsg(-EINVAL, err, len, "%s '%s': unknown item '%s': accepted %s", key, v, tok,
			 PFC_SPEC);
}

static int set_pfc(struct sw_port_defaults *d, const char *key, const char *v, char *err,
		   size_t len)
{
	struct sw_pfc_params c = { .on = true, .prio = 3, .quanta = 65535,
				   .headroom_bytes = SW_PFC_HEADROOM_AUTO };
	char buf[256], *save = NULL;
	bool have_xon = false;

	if (!strcmp(v, "off")) {
		d->pfc = (struct sw_pfc_params){ 0 };
		return 0;
	}
	if (strlen(v) >= sizeof(buf))
		return qp_errmsg(-EINVAL, err, len, "%s: longer than %zu characters: accepted %s",
				 key, sizeof(buf) - 1, PFC_SPEC);
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int rc = pfc_item(&c, tok, &have_xon, key, v, err, len);
		if (rc)
			return rc;
	}
	if (!c.xoff_bytes)
		return qp_errmsg(-EINVAL, err, len, "%s '%s': xoff=BYTES is required: accepted %s",
				 key, v, PFC_SPEC);
	if (!have_xon)
		c.xon_bytes = c.xoff_bytes / 2;
	if (c.xon_bytes >= c.xoff_bytes)
		return qp_errmsg(-EINVAL, err, len,
				 "%s '%s': xon %" PRIu64 " must be below xoff %" PRIu64, key, v,
				 c.xon_bytes, c.xoff_bytes);
	d->pfc = c;
	return 0;
}

/* The spec's own message is "KEY 'VALUE': ..." for the item at fault. */
static int set_impair(struct sw_port_defaults *d, const char *key, const char *v, char *err,
		      size_t len)
{
	char msg[400];

	if (sw_impair_parse(&d->impair, v, msg, sizeof(msg)))
		return qp_errmsg(-EINVAL, err, len, "%s '%s': %s", key, v, msg);
	return 0;
}

static const struct {
	const char *key;
	setting_fn fn;
} settings[] = {
	{ "rate", set_rate }, { "buffer", set_buffer }, { "delay", set_delay },
	{ "ecn", set_ecn }, { "early", set_early }, { "notice-interval", set_notice_interval },
	{ "levels", set_levels }, { "level-repeat", set_level_repeat },
	{ "level-weight", set_level_weight }, { "int", set_int },
	{ "int-sample", set_int_sample }, { "int-flows", set_int_flows }, { "cnp", set_cnp },
	{ "flows", set_flows }, { "flow-idle", set_flow_idle },
	{ "seed", set_seed }, { "pfc", set_pfc }, { "impair", set_impair },
};

int sw_conf_setting(struct sw_port_defaults *d, const char *key, const char *val, char *err,
		    size_t len)
{
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		if (!strcmp(key, settings[i].key))
			return settings[i].fn(d, key, val, err, len);
	return qp_errmsg(-EINVAL, err, len, "unknown setting '%s'", key);
}

const char *sw_conf_setting_names(void)
{
	return "rate, buffer, delay, ecn, early, notice-interval, levels, level-repeat, level-weight, flow-idle, int, "
	       "int-sample, int-flows, cnp, flows, seed, pfc, impair";
}

void sw_conf_defaults(struct sw_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->def.q = (struct sw_queue_params){
		.rate_bps = QP_GBPS, .delay_ns = 5 * QP_NS_PER_US, .buffer_bytes = 128 * 1024,
		.flow_slots = 1024, .seed = 1,
	};
	c->def.telem = (struct sw_telem_params){
		.early_bytes = SW_EARLY_BDP, .notice_interval_ns = 10 * QP_NS_PER_US,
		.level_repeat_ns = 100 * QP_NS_PER_US, .level_weight = 0.002, .int_mode = SW_INT_DIRECT, .int_every = 1,
	};
	c->stats_interval_ns = 10 * QP_NS_PER_MS;
	c->spin_ns = 50 * QP_NS_PER_US;
	c->tx_early_ns = 10 * QP_NS_PER_US;
	c->icrc_every = SW_ICRC_EVERY;
}

int sw_conf_star(struct sw_conf *c, int n, unsigned base_port, char *err, size_t len)
{
	struct sw_switch_conf *s = &c->sw[0];

	if (n < 1 || n > SW_MAX_PORTS || base_port + 2u * (unsigned)n > 65535)
		return qp_errmsg(-EINVAL, err, len,
				 "--star %d with --base-port %u: ports beyond 65535",
				 n, base_port);
	c->nswitches = 1;
	snprintf(s->name, sizeof(s->name), "s1");
	s->id = 1;
	s->def = c->def;
	s->have_key = c->have_key;
	memcpy(s->key, c->key, sizeof(s->key));
	s->nports = n;
	for (int i = 0; i < n; i++) {
		struct sw_port_conf *p = &s->ports[i];
		uint16_t port = (uint16_t)(base_port + 2u * (unsigned)i);

		snprintf(p->name, sizeof(p->name), "p%d", i);
		p->kind = SW_PORT_UDP;
		p->local = qp_sockaddr_in(INADDR_LOOPBACK, port);
		p->remote = qp_sockaddr_in(INADDR_LOOPBACK, (uint16_t)(port + 1));
		p->q = s->def.q;
		p->telem = s->def.telem;
		p->pfc = s->def.pfc;
		p->impair = s->def.impair;
	}
	return 0;
}

int sw_conf_shm_set(struct sw_conf *c, struct sw_port_conf *p, const char *path, char *err,
		    size_t errlen)
{
	if (!*path || strlen(path) >= SHM_PATH_MAX)
		return qp_errmsg(-EINVAL, err, errlen, "path '%s': a file name of 1..%d bytes",
				 path, SHM_PATH_MAX - 1);
	if (!p->shm_ref) {
		if (c->nshm >= SW_MAX_SHM_PORTS)
			return qp_errmsg(-EINVAL, err, errlen, "path '%s': more than %d shm ports",
					 path, SW_MAX_SHM_PORTS);
		p->shm_ref = (uint16_t)++c->nshm;
	}
	snprintf(c->shm_paths[p->shm_ref - 1], SHM_PATH_MAX, "%s", path);
	return 0;
}

const char *sw_conf_shm_path(const struct sw_conf *c, const struct sw_port_conf *p)
{
	return p->shm_ref && p->shm_ref <= c->nshm ? c->shm_paths[p->shm_ref - 1] : "";
}

int sw_conf_star_shm(struct sw_conf *c, const char *prefix, char *err, size_t len)
{
	struct sw_switch_conf *s = &c->sw[0];

	for (int i = 0; i < s->nports; i++) {
		struct sw_port_conf *p = &s->ports[i];
		char path[SHM_PATH_MAX + 8];
		int n = snprintf(path, sizeof(path), "%s.p%d", prefix, i);

		if (!*prefix || n < 0 || (size_t)n >= SHM_PATH_MAX)
			return qp_errmsg(-EINVAL, err, len, "--shm '%s': accepted a path prefix "
					 "of 1..%d bytes", prefix, SHM_PATH_MAX - 6);
		if (sw_conf_shm_set(c, p, path, err, len))
			return -EINVAL;
		p->kind = SW_PORT_SHM;
	}
	return 0;
}

int sw_conf_star_offer(struct sw_conf *c, char *err, size_t len)
{
	struct sw_switch_conf *s = &c->sw[0];

	for (int i = 0; i < s->nports; i++) {
		char path[SHM_PATH_MAX];

		if (shm_offer_path(&s->ports[i].local, path, sizeof(path)))
			return qp_errmsg(-EINVAL, err, len, "the offered rings' path is longer "
					 "than %d bytes: a shorter QPACE_SHM_DIR", SHM_PATH_MAX - 1);
		if (sw_conf_shm_set(c, &s->ports[i], path, err, len))
			return -EINVAL;
	}
	return 0;
}

void sw_conf_finish(struct sw_conf *c)
{
	for (int s = 0; s < c->nswitches; s++) {
		struct sw_switch_conf *sc = &c->sw[s];
		static const uint8_t zero[6];
		if (!memcmp(sc->mac, zero, 6)) {   /* locally administered, from the id */
			const uint8_t mac[6] = { 0x02, 0x51, 0x46, (uint8_t)(sc->id >> 16),
						 (uint8_t)(sc->id >> 8), (uint8_t)sc->id };
			memcpy(sc->mac, mac, 6);
		}
		if (!sc->ip)   /* 169.254.255.ID: link-local, the telemetry source */
			sc->ip = 0xa9feff00u | (sc->id & 0xff);
		for (int i = 0; i < sc->nports; i++) {
			struct sw_port_conf *p = &sc->ports[i];
			if (p->telem.early_bytes == SW_EARLY_BDP) {
				uint64_t bdp = qp_bytes_in(p->q.rate_bps, 2 * p->q.delay_ns);
				p->telem.early_bytes = bdp < 1500 ? 1500 : bdp;
			}
			p->q.seed += (uint64_t)s * SW_MAX_PORTS + (uint64_t)i;
			p->impair.seed += (uint64_t)s * SW_MAX_PORTS + (uint64_t)i;
			if (p->pfc.headroom_bytes == SW_PFC_HEADROOM_AUTO)
				p->pfc.headroom_bytes = sw_pfc_auto_headroom(p->q.rate_bps,
									     p->q.delay_ns);
		}
	}
}
