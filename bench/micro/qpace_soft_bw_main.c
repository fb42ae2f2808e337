/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-soft-bw: RDMA WRITE throughput between two soft-backend hosts in this process,
 * either wired to each other directly over loopback UDP or through a running qpace-switch
 * (--switch P: the hosts take star ports 0 and 1). The data is checked byte for byte.
 *
 *   qpace-soft-bw [-s 256M] [-m 1M] [-d 16] [--mtu 1024] [--switch P | --port P]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/gate.h"
#include "qpace/opt.h"
#include "qpace/out.h"
#include "qpace/soft_bw.h"
#include "qpace/units.h"

struct opts {
	struct soft_bw_params p;
	unsigned long port, sw_port;
	unsigned long mtu, window;
	int json, verbose;
};

static int opt_mtu(const struct qp_opt *opt, void *conf, const char *s, char *err, size_t len)
{
	struct opts *o = conf;
	uint64_t v;

	(void)opt;
	if (qp_parse_u64(s, &v) || v < 256 || v > 4096 || (v & (v - 1)))
		return qp_errmsg(-EINVAL, err, len, "not one of 256, 512, 1024, 2048, 4096");
	o->mtu = (unsigned long)v;
	return 0;
}

#define AT(field) QP_OPT_AT(struct opts, field)

static const struct qp_opt opts[] = {
	{ "size", 's', QP_OPT_BYTES, "BYTES", AT(p.bytes), .min = 1, .max = 1ull << 40,
	  .help = "bytes to WRITE, 1..1T", .def = "256M" },
	{ "msg", 0, QP_OPT_BYTES, "BYTES", AT(p.msg_bytes), .min = 1, .max = 1ull << 30,
	  .old_short = 'm', .help = "bytes per WR, 1..1G", .def = "1M" },
	{ "buffer", 0, QP_OPT_BYTES, "BYTES", AT(p.buf_bytes), .min = 4096, .max = 4ull << 30,
	  .old_short = 'b',
	  .help = "target region; WRs wrap around it (default min(size, 256M))" },
	{ "depth", 0, QP_OPT_UINT, "N", AT(p.sq_depth), .min = 1, .max = 4096,
	  .old_short = 'd', .help = "WRs in flight, 1..4096", .def = "16" },
	{ "mtu", 'M', QP_OPT_FN, "BYTES", .fn = opt_mtu,
	  .help = "RoCE MTU: 256, 512, 1024, 2048, 4096", .def = "1024" },
	{ "window", 0, QP_OPT_UINT, "N", AT(window), .min = 1, .max = 4096,
	  .old_short = 'w', .help = "unacknowledged packets per QP, 1..4096", .def = "128" },
	{ "timeout", 0, QP_OPT_UINT, "N", AT(p.timeout), .min = 1, .max = 31,
	  .old_short = 't',
	  .help = "local ACK timeout 4.096us << N, 1..31 (14: 67 ms)", .def = "14" },
	{ "rate", 0, QP_OPT_RATE, "RATE", AT(p.rate_bps), .min = QP_GATE_MIN_BPS,
	  .max = QP_GATE_MAX_BPS, .old_short = 'r',
	  .help = "pace the sender at RATE through the gate (default: unpaced)" },
	{ "switch", 'S', QP_OPT_UINT, "P", AT(sw_port), .min = 1, .max = 65532,
	  .help = "hosts on star ports 0 and 1 of a qpace-switch with --base-port P" },
	{ "port", 'p', QP_OPT_UINT, "P", AT(port), .min = 1024, .max = 65534,
	  .help = "no switch: host A receives on P, B on P+1", .def = "18500" },
	{ "json", 'j', QP_OPT_FLAG, NULL, AT(json), .help = "one JSON object instead of the table" },
	{ "verbose", 'v', QP_OPT_FLAG, NULL, AT(verbose),
	  .help = "also every counter of both hosts (stderr)" },
	QP_OPT_STD_ROWS,
};

static const struct qp_opt_prog prog = {
	.name = "qpace-soft-bw",
	.head = "usage: qpace-soft-bw [options]\n\n"
		"RDMA WRITE throughput between two soft-backend hosts (userspace RoCEv2) in one\n"
		"process, directly over loopback UDP or through qpace-switch; data checked.\n\n"
		"Options:\n",
	.t = opts,
	.n = sizeof(opts) / sizeof(opts[0]),
	.max_args = 0,
};

static void print_side(const char *name, const struct rc_stats *rs,
		       const struct soft_host_stats *hs, const struct qp_soft_io_stats *io)
{
	fprintf(stderr, "%s: rc tx %llu pkts (%llu retrans, %llu timeouts, %llu NAKs in, "
		"%llu RNR in), rx %llu pkts, %llu ACKs/%llu NAKs out; drops:",
		name, (unsigned long long)rs->tx_pkts, (unsigned long long)rs->retrans_pkts,
		(unsigned long long)rs->timeouts, (unsigned long long)rs->naks_rx,
		(unsigned long long)rs->rnr_rx, (unsigned long long)rs->rx_pkts,
		(unsigned long long)rs->acks_tx, (unsigned long long)rs->naks_tx);
	for (int d = 0; d < RC_DROP_COUNT; d++)
		if (rs->drops[d])
			fprintf(stderr, " %s %llu", rc_drop_str((enum rc_drop)d),
				(unsigned long long)rs->drops[d]);
	fprintf(stderr, "\n%s: host rx %llu frames, tx %llu; drops:", name,
		(unsigned long long)hs->rx_frames, (unsigned long long)hs->tx_frames);
	for (int d = 0; d < SOFT_DROP_COUNT; d++)
		if (hs->drops[d])
			fprintf(stderr, " %s %llu", soft_drop_str((enum soft_drop)d),
				(unsigned long long)hs->drops[d]);
	fprintf(stderr, "\n%s: io rx %llu datagrams in %llu batches (%llu oversize), tx %llu in "
		"%llu batches (%llu not sent), SQ full %llu\n", name,
		(unsigned long long)io->rx_datagrams, (unsigned long long)io->rx_batches,
		(unsigned long long)io->rx_oversize, (unsigned long long)io->tx_datagrams,
		(unsigned long long)io->tx_batches, (unsigned long long)io->tx_errors,
		(unsigned long long)io->sq_full_waits);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct soft_bw_result r;
	char a[160], b[160];
	int rc;

	rc = qp_opt_main(&prog, argc, argv, &o, NULL);
	if (rc)
		return rc > 0 ? QP_EXIT_OK : QP_EXIT_USAGE;
	if (!o.p.buf_bytes)
		o.p.buf_bytes = o.p.bytes < (256ull << 20) ? o.p.bytes : 256ull << 20;
	if (o.sw_port) {
		snprintf(a, sizeof(a), "attach=127.0.0.1:%lu,ip=10.0.0.1,mtu=%lu,window=%lu",
			 o.sw_port, o.mtu, o.window);
		snprintf(b, sizeof(b), "attach=127.0.0.1:%lu,ip=10.0.0.2,mtu=%lu,window=%lu",
			 o.sw_port + 2, o.mtu, o.window);
	} else {
		snprintf(a, sizeof(a), "bind=%lu,peer=127.0.0.1:%lu,ip=10.0.0.1,mtu=%lu,window=%lu",
			 o.port, o.port + 1, o.mtu, o.window);
		snprintf(b, sizeof(b), "bind=%lu,peer=127.0.0.1:%lu,ip=10.0.0.2,mtu=%lu,window=%lu",
			 o.port + 1, o.port, o.mtu, o.window);
	}
	o.p.opts_a = a;
	o.p.opts_b = b;
	o.p.quiet = true;
	rc = soft_bw_run(&o.p, &r);
	if (o.verbose) {
		print_side("A", &r.ra, &r.ha, &r.ia);
		print_side("B", &r.rb, &r.hb, &r.ib);
	}
	if (rc) {
		fprintf(stderr, "qpace-soft-bw: %s\n", r.err);
		return 1;
	}
	if (o.json) {
		struct qp_out j;
		char crc[16];

		snprintf(crc, sizeof(crc), "%08x", r.crc_dst);
		qp_out_init(&j, stdout, QP_OUT_JSON);
		qp_out_obj(&j, NULL);
		qp_out_u64(&j, "bytes", r.bytes);
		qp_out_double(&j, "seconds", (double)r.elapsed_ns / 1e9, "%.6f");
		qp_out_double(&j, "gbps", r.gbps, "%.3f");
		qp_out_u64(&j, "mtu", o.mtu);
		qp_out_str(&j, "path", o.sw_port ? "switch" : "direct");
		qp_out_u64(&j, "retransmissions", r.ra.retrans_pkts);
		qp_out_u64(&j, "timeouts", r.ra.timeouts);
		qp_out_u64(&j, "naks", r.ra.naks_rx);
		qp_out_str(&j, "crc32", crc);
		qp_out_bool(&j, "exact", r.exact);
		qp_out_end(&j);
	} else {
		printf("%-12s %-9s %-8s %-8s %-8s %-8s %-10s %s\n", "bytes", "seconds", "Gb/s",
		       "retrans", "timeouts", "naks", "crc32", "exact");
		printf("%-12llu %-9.3f %-8.3f %-8llu %-8llu %-8llu %08x   %s\n",
		       (unsigned long long)r.bytes, (double)r.elapsed_ns / 1e9, r.gbps,
		       (unsigned long long)r.ra.retrans_pkts, (unsigned long long)r.ra.timeouts,
		       (unsigned long long)r.ra.naks_rx, r.crc_dst, r.exact ? "yes" : "NO");
	}
	return r.exact ? 0 : 2;
}
