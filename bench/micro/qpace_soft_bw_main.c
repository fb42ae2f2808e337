/* qpace-soft-bw: RDMA WRITE throughput between two soft-backend hosts in this process,
 * either wired to each other directly over loopback UDP or through a running qpace-switch
 * (--switch P: the hosts take star ports 0 and 1). The data is checked byte for byte.
 *
 *   qpace-soft-bw [-s 256M] [-m 1M] [-d 16] [--mtu 1024] [--switch P | --port P]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/optable.h"
#include "qpace/out.h"
#include "qpace/soft_bw.h"
#include "qpace/units.h"

struct opts {
	struct soft_bw_params p;
	unsigned long port, sw_port;
	unsigned long mtu, window;
	int json, verbose;
};

static int parse_bytes32(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	return qp_parse_bytes(s, out) == 0 && *out >= lo && *out <= hi ? 0 : -EINVAL;
}

static int opt_size(struct opts *o, const char *s)
{
	return parse_bytes32(s, 1, 1ull << 40, &o->p.bytes);
}

static int opt_msg(struct opts *o, const char *s)
{
	uint64_t v = 0;
	int rc = parse_bytes32(s, 1, 1ull << 30, &v);

	o->p.msg_bytes = (uint32_t)v;
	return rc;
}

static int opt_buf(struct opts *o, const char *s)
{
	return parse_bytes32(s, 4096, 4ull << 30, &o->p.buf_bytes);
}

static int opt_ulong(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	uint64_t v;

	if (qp_parse_u64(s, &v) || v < lo || v > hi)
		return -EINVAL;
	*out = (unsigned long)v;
	return 0;
}

static int opt_depth(struct opts *o, const char *s)
{
	unsigned long v = 0;

	if (opt_ulong(s, 1, 4096, &v))
		return -EINVAL;
	o->p.sq_depth = (uint32_t)v;
	return 0;
}

static int opt_mtu(struct opts *o, const char *s)
{
	return opt_ulong(s, 256, 4096, &o->mtu) || (o->mtu & (o->mtu - 1)) ? -EINVAL : 0;
}

static int opt_window(struct opts *o, const char *s)
{
	return opt_ulong(s, 1, 4096, &o->window);
}

static int opt_timeout(struct opts *o, const char *s)
{
	unsigned long v = 0;

	if (opt_ulong(s, 1, 31, &v))
		return -EINVAL;
	o->p.timeout = (uint8_t)v;
	return 0;
}

static int opt_rate(struct opts *o, const char *s)
{
	return qp_parse_rate(s, &o->p.rate_bps) || o->p.rate_bps < QP_GATE_MIN_BPS ||
	       o->p.rate_bps > QP_GATE_MAX_BPS ? -EINVAL : 0;
}

static int opt_switch(struct opts *o, const char *s)
{
	return opt_ulong(s, 1, 65532, &o->sw_port);
}

static int opt_port(struct opts *o, const char *s)
{
	return opt_ulong(s, 1024, 65534, &o->port);
}

/* One table: getopt_long, usage and the parser of each option. */
static const struct qp_optdoc docs[] = {
	{ "size", 's', "BYTES", "bytes to WRITE, 1..1T (default 256M)" },
	{ "msg", 'm', "BYTES", "bytes per WR, 1..1G (default 1M)" },
	{ "buffer", 'b', "BYTES", "target region; WRs wrap around it (default min(size, 256M))" },
	{ "depth", 'd', "N", "WRs in flight, 1..4096 (default 16)" },
	{ "mtu", 'M', "BYTES", "RoCE MTU: 256, 512, 1024, 2048, 4096 (default 1024)" },
	{ "window", 'w', "N", "unacknowledged packets per QP, 1..4096 (default 128)" },
	{ "timeout", 't', "N", "local ACK timeout 4.096us << N, 1..31 (default 14: 67 ms)" },
	{ "rate", 'r', "RATE", "pace the sender at RATE through the gate (default: unpaced)" },
	{ "switch", 'S', "P", "hosts on star ports 0 and 1 of a qpace-switch with --base-port P" },
	{ "port", 'p', "P", "no switch: host A receives on P, B on P+1 (default 18500)" },
	{ "json", 'j', NULL, "one JSON object instead of the table" },
	{ "verbose", 'v', NULL, "also every counter of both hosts (stderr)" },
	{ "help", 'h', NULL, "this text" },
};
#define NDOCS (sizeof(docs) / sizeof(docs[0]))

static int (*const parsers[128])(struct opts *o, const char *s) = {
	['s'] = opt_size, ['m'] = opt_msg, ['b'] = opt_buf, ['d'] = opt_depth,
	['M'] = opt_mtu, ['w'] = opt_window, ['t'] = opt_timeout, ['r'] = opt_rate,
	['S'] = opt_switch, ['p'] = opt_port,
};

static void usage(FILE *f)
{
	fprintf(f, "usage: qpace-soft-bw [options]\n\n"
		   "RDMA WRITE throughput between two soft-backend hosts (userspace RoCEv2) in one\n"
		   "process, directly over loopback UDP or through qpace-switch; data checked.\n\n"
		   "Options:\n");
	qp_optable_usage(f, docs, NDOCS);
}

static const char *help_of(int key)
{
	for (size_t i = 0; i < NDOCS; i++)
		if (docs[i].key == key)
			return docs[i].help;
	return "";
}

static int parse_args(struct opts *o, int argc, char **argv)
{
	struct option lo[NDOCS + 1];
	char so[2 * NDOCS + 1];
	int c;

	qp_optable_build(docs, NDOCS, lo, so);
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == 'j' || c == 'v') {
			*(c == 'j' ? &o->json : &o->verbose) = 1;
			continue;
		}
		if (c < 0 || c >= 128 || !parsers[c]) {
			usage(stderr);
			return -EINVAL;
		}
		if (parsers[c](o, optarg)) {
			fprintf(stderr, "qpace-soft-bw: -%c '%s': %s\n", c, optarg, help_of(c));
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "qpace-soft-bw: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

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
	struct opts o = { .p = { .bytes = 256ull << 20 }, .port = 18500, .mtu = 1024,
			  .window = 128 };
	struct soft_bw_result r;
	char a[160], b[160];
	int rc;

	if (parse_args(&o, argc, argv))
		return 1;
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
