/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* perftest-compatible reports: see report.h. The format strings are perftest's, copied as
 * data (their odd spacing and tabs included) so that parsers of ib_*_bw output work. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "qpace/out.h"
#include "report.h"

#define FMT_BW " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]"
#define FMT_BW_G " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
#define FMT_LAT " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]" \
	"    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] "
#define FMT_LAT_DUR " #bytes        #iterations       t_avg[usec]    tps average"
#define ROW_BW " %-7" PRIu64 "    %-10" PRIu64 "       %-7.2lf            %-7.2lf\t\t     %-7.6lf"
/* perftest switches to six decimals when Gb/s figures are tiny (inc_accuracy). */
#define ROW_BW_EXT " %-7" PRIu64 "    %" PRIu64 "           %-7.6lf            %-7.6lf            %-7.6lf"
#define ROW_LAT " %-7" PRIu64 " %" PRIu64 "          %-7.2f        %-7.2f      %-7.2f  \t       " \
	"%-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f"
#define ROW_LAT_DUR " %-7" PRIu64 "       %" PRIu64 "            %-7.2f        %-7.2f"

void report_banner(FILE *out, const struct report_info *ri)
{
	fputs(REPORT_LINE, out);
	fprintf(out, "                    %s %s Test\n", ri->verb, ri->lat ? "Latency" : "BW");
	fprintf(out, " Dual-port       : OFF\t\tDevice         : %s\n", ri->device);
	fprintf(out, " Number of qps   : %u\t\tTransport type : IB\n", ri->qps);
	fprintf(out, " Connection type : RC\t\tUsing SRQ      : OFF\n");
	fprintf(out, " Backend         : %s%s%s%s\tCongestion ctl : %s%s\n", ri->backend,
		ri->frames ? " (" : "", ri->frames ? ri->frames : "", ri->frames ? ")" : "\t",
		ri->cc, ri->credits ? " + IA credits" : "");
	if (!ri->lat)
		fprintf(out, " TX depth        : %u\n", ri->tx_depth);
	fprintf(out, " Mtu             : %" PRIu32 "[B]\n", ri->mtu_bytes);
	fprintf(out, " Link type       : %s\n", ri->link_type);
	if (ri->gid_index >= 0)
		fprintf(out, " GID index       : %d\n", ri->gid_index);
	if (ri->outs)   /* perftest prints one or the other */
		fprintf(out, " Outstand reads  : %u\n", ri->outs);
	else
		fprintf(out, " Max inline data : 0[B]\n");
	fprintf(out, " rdma_cm QPs\t : OFF\n");
	fprintf(out, " Data ex. method : Ethernet\n");
	fputs(REPORT_LINE, out);
}

static void report_gid(FILE *out, const uint8_t *gid)
{
	fputs(" GID: ", out);
	for (int i = 0; i < 16; i++)
		fprintf(out, "%02d%s", gid[i], i < 15 ? ":" : "\n");
}

static void report_address(FILE *out, const char *who, const struct qp_conn_info *ci,
			   unsigned outs)
{
	fprintf(out, " %s address: LID %#04x QPN %#06" PRIx32 " PSN %#06" PRIx32, who, ci->lid,
		ci->qpn, ci->psn);
	if (outs)
		fprintf(out, " OUT %#04x", outs);
	fprintf(out, " RKey %#08" PRIx32 " VAddr %#016" PRIx64 "\n", ci->rkey, ci->addr);
	report_gid(out, ci->gid);
}

void report_addresses(FILE *out, const struct qp_conn_info *local, unsigned local_outs,
		      const struct qp_conn_info *remote, unsigned remote_outs)
{
	report_address(out, "local", local, local_outs);
	report_address(out, "remote", remote, remote_outs);
	fputs(REPORT_LINE, out);
}

void report_bw_header(FILE *out, bool gbits)
{
	fputs(gbits ? FMT_BW_G : FMT_BW, out);
	fputc('\n', out);
}

static bool bw_inc_accuracy(const struct stats_bw *bw, bool gbits)
{
	return gbits && bw->avg < 0.1;
}

void report_bw_row(FILE *out, uint64_t size, uint64_t iters, const struct stats_bw *bw,
		   bool gbits)
{
	fprintf(out, bw_inc_accuracy(bw, gbits) ? ROW_BW_EXT : ROW_BW, size, iters, bw->peak,
		bw->avg, bw->msg_rate_mpps);
	fputc('\n', out);
	fflush(out);
}

void report_lat_header(FILE *out, bool duration)
{
	fputs(duration ? FMT_LAT_DUR : FMT_LAT, out);
	fputc('\n', out);
}

void report_lat_row(FILE *out, uint64_t size, uint64_t iters, const struct stats_lat *l)
{
	fprintf(out, ROW_LAT, size, iters, l->min_us, l->max_us, l->typical_us, l->avg_us,
		l->stdev_us, l->p99_us, l->p999_us);
	fputc('\n', out);
}

void report_lat_dur_row(FILE *out, uint64_t size, uint64_t iters, double t_avg_us, double tps)
{
	fprintf(out, ROW_LAT_DUR, size, iters, t_avg_us, tps);
	fputc('\n', out);
}

/* perftest's write_test_info_to_file, the keys it writes. */
static void report_json_info(struct qp_out *o, const struct report_info *ri)
{
	char test[64];

	snprintf(test, sizeof(test), "%s_%s_Test", ri->verb, ri->lat ? "Latency" : "BW");
	qp_out_obj(o, "test_info");
	qp_out_str(o, "test", test);
	qp_out_str(o, "Dual_port", "OFF");
	qp_out_str(o, "Device", ri->device);
	qp_out_u64(o, "Number_of_qps", ri->qps);
	qp_out_str(o, "Transport_type", "IB");
	qp_out_str(o, "Connection_type", "RC");
	qp_out_str(o, "Using_SRQ", "OFF");
	qp_out_u64(o, "Mtu", ri->mtu_bytes);
	qp_out_str(o, "Link_type", ri->link_type);
	qp_out_str(o, "Backend", ri->backend);
	if (ri->frames)
		qp_out_str(o, "Frames", ri->frames);
	qp_out_str(o, "Congestion_control", ri->cc);
	qp_out_str(o, "Credits", ri->credits ? "ia" : "off");
	qp_out_end(o);
}

static FILE *report_json_open(const char *path, struct qp_out *o, const struct report_info *ri)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return NULL;
	qp_out_init(o, f, QP_OUT_JSON_PRETTY);
	qp_out_obj(o, NULL);
	report_json_info(o, ri);
	qp_out_obj(o, "results");
	return f;
}

static int report_json_close(FILE *f, struct qp_out *o)
{
	qp_out_end(o);
	qp_out_end(o);
	return fclose(f) ? -errno : 0;
}

int report_json_bw(const char *path, const struct report_info *ri, uint64_t size,
		   uint64_t iters, const struct stats_bw *bw, bool gbits)
{
	struct qp_out o;
	FILE *f = report_json_open(path, &o, ri);
	const char *fmt = bw_inc_accuracy(bw, gbits) ? "%.6f" : "%.2f";

	if (!f)
		return -errno;
	qp_out_u64(&o, "MsgSize", size);
	qp_out_u64(&o, "n_iterations", iters);
	qp_out_double(&o, "BW_peak", bw->peak, fmt);
	qp_out_double(&o, "BW_average", bw->avg, fmt);
	qp_out_double(&o, "MsgRate", bw->msg_rate_mpps, "%.6f");
	qp_out_str(&o, "BW_units", gbits ? "Gb/sec" : "MiB/sec");
	return report_json_close(f, &o);
}

int report_json_lat(const char *path, const struct report_info *ri, uint64_t size,
		    uint64_t iters, const struct stats_lat *l)
{
	struct qp_out o;
	FILE *f = report_json_open(path, &o, ri);

	if (!f)
		return -errno;
	qp_out_u64(&o, "MsgSize", size);
	qp_out_u64(&o, "n_iterations", iters);
	qp_out_double(&o, "t_min", l->min_us, "%.2f");
	qp_out_double(&o, "t_max", l->max_us, "%.2f");
	qp_out_double(&o, "t_typical", l->typical_us, "%.2f");
	qp_out_double(&o, "t_avg", l->avg_us, "%.2f");
	qp_out_double(&o, "t_stdev", l->stdev_us, "%.2f");
	qp_out_double(&o, "percentile_99", l->p99_us, "%.2f");
	qp_out_double(&o, "percentile_99.9", l->p999_us, "%.2f");
	return report_json_close(f, &o);
}
