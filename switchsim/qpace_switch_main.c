/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-switch: a userspace switch emulator for RoCEv2 congestion-control experiments.
 * See `qpace-switch --help` and switchsim/sw.h. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include "qpace/addr.h"
#include "qpace/units.h"
#include "io.h"
#include "sw.h"

static const char *const kind_names[] = { "udp", "vxlan", "packet", "link", "sim", "shm" };

static void summary(const struct sw_conf *c, const struct sw_fabric *f)
{
	for (int s = 0; s < c->nswitches; s++) {
		const struct sw_switch_conf *sc = &c->sw[s];
		fprintf(stderr, "qpace-switch: switch %s id %u", sc->name, sc->id);
		if (f->sw[s]->auth.on)
			fprintf(stderr, ", telemetry signed (sender 0x%08x)",
				f->sw[s]->auth.signer.sender);
		fputc('\n', stderr);
		for (int i = 0; i < sc->nports; i++) {
			const struct sw_port_conf *p = &sc->ports[i];
			char r[32], d[32], a[64], b[64], imp[200];
			fprintf(stderr, "  %-8s %-6s %s %s buffer %llu", p->name, kind_names[p->kind],
				qp_fmt_rate(p->q.rate_bps, r, sizeof(r)),
				qp_fmt_time(p->q.delay_ns, d, sizeof(d)),
				(unsigned long long)p->q.buffer_bytes);
			if (p->kind == SW_PORT_UDP || p->kind == SW_PORT_VXLAN)
				fprintf(stderr, "  %s -> %s%s%s%s",
					qp_sockaddr_fmt(&p->local, a, sizeof(a)),
					qp_sockaddr_fmt(&p->remote, b, sizeof(b)),
					p->no_learn ? " (fixed)" : "",
					p->shm_ref ? ", rings offered at " : "",
					p->shm_ref ? sw_conf_shm_path(c, p) : "");
			else if (p->kind == SW_PORT_SHM)
				fprintf(stderr, "  %s, doorbells %s -> %s", sw_conf_shm_path(c, p),
					qp_sockaddr_fmt(&p->local, a, sizeof(a)),
					qp_sockaddr_fmt(&p->remote, b, sizeof(b)));
			else if (p->kind == SW_PORT_PACKET)
				fprintf(stderr, "  dev %s", p->dev);
			else
				fprintf(stderr, "  to %s:%s", c->sw[p->peer_switch].name,
					c->sw[p->peer_switch].ports[p->peer_port].name);
			if (sw_impair_on(&p->impair))
				fprintf(stderr, "  impair %s",
					sw_impair_format(&p->impair, imp, sizeof(imp)));
			fputc('\n', stderr);
		}
	}
}

int main(int argc, char **argv)
{
	static struct sw_conf conf;
	struct sw_fabric *fab;
	char err[512];
	int rc = sw_cli_parse(&conf, argc, argv);

	if (rc)
		return rc > 0 ? 0 : 2;
	fab = sw_fabric_create(&conf, err, sizeof(err));
	if (!fab) {
		fprintf(stderr, "qpace-switch: %s\n", err);
		return 1;
	}
	if (!conf.quiet)
		summary(&conf, fab);
	rc = sw_loop_run(fab, &conf, err, sizeof(err));
	if (rc)
		fprintf(stderr, "qpace-switch: %s\n", err);
	sw_fabric_destroy(fab);
	return rc ? 1 : 0;
}
