/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Counters out: a CSV time series (--stats) and a JSON dump (--stats-json, SIGUSR1, written
 * by the printer, qpace/out.h). One table of fields drives both, so their names cannot
 * drift. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "qpace/addr.h"
#include "qpace/out.h"
#include "capture.h"
#include "io.h"
#include "sw.h"

struct field {
	const char *name;
	size_t off;
};

#define PS(f) { #f, offsetof(struct sw_port_stats, f) }
static const struct field port_fields[] = {
	PS(rx_frames), PS(rx_bytes), PS(tx_frames), PS(tx_bytes), PS(malformed),
	PS(ip_csum_drops), PS(icrc_checked), PS(icrc_bad), PS(filtered),
	PS(to_switch), PS(int_reports), PS(int_hops_full), PS(int_unwanted),
	PS(int_wants), PS(int_wants_refused), PS(notices), PS(cnps), PS(levels),
	PS(level_acks), PS(ctrl_frames), PS(ctrl_drops), PS(tx_errors), PS(rx_errors), PS(rx_skipped), PS(rx_kernel_drops), PS(rx_batches), PS(tx_batches),
	{ NULL, 0 },
};
#undef PS

#define QS(f) { #f, offsetof(struct sw_queue_stats, f) }
static const struct field queue_fields[] = {
	QS(enq_frames), QS(enq_bytes), QS(deq_frames), QS(deq_bytes), QS(drop_tail),
	QS(drop_tail_bytes), QS(drop_store), QS(ecn_marked), QS(ecn_not_ect),
	QS(flow_untracked), QS(max_qbytes),
	{ NULL, 0 },
};
#undef QS

#define FS(f) { "pfc_" #f, offsetof(struct sw_pfc_stats, f) }
static const struct field pfc_fields[] = {
	FS(pause_tx), FS(xon_tx), FS(pause_rx), FS(xon_rx), FS(ignored_rx), FS(headroom_drops),
	FS(headroom_drop_bytes), FS(ingress_max_bytes),
	{ NULL, 0 },
};
#undef FS

/* Counters that depend on the time they are read at. */
static qp_time_ns ingress_bytes(const struct sw_port *p, qp_time_ns now)
{
	(void)now;
	return p->pfc.in_bytes;
}

static const struct {
	const char *name;
	qp_time_ns (*fn)(const struct sw_port *p, qp_time_ns now);
} timed_fields[] = {
	{ "pfc_paused_ns", sw_pfc_paused_ns }, { "pfc_xoff_ns", sw_pfc_xoff_ns },
	{ "pfc_ingress_bytes", ingress_bytes },
};
#define NTIMED (sizeof(timed_fields) / sizeof(timed_fields[0]))

#define IS(f) { #f, offsetof(struct sw_impair_stats, f) }
static const struct field impair_fields[] = {
	IS(impair_loss), IS(impair_ge_loss), IS(impair_ge_bad), IS(impair_corrupt),
	IS(impair_corrupt_unchecked), IS(impair_dup), IS(impair_jitter), IS(impair_reorder), IS(impair_delay_ns),
	IS(impair_hold_drops),
	{ NULL, 0 },
};
#undef IS

/* A port without impairments counts none. */
static const struct sw_impair_stats *impair_stats(const struct sw_port *p)
{
	static const struct sw_impair_stats none;
	return p->imp ? sw_impair_stats(p->imp) : &none;
}

static const char *const kind_names[] = { "udp", "vxlan", "packet", "link", "sim", "shm" };

static uint64_t get(const void *base, size_t off)
{
	return *(const uint64_t *)((const char *)base + off);
}

static void json_fields(struct qp_out *o, const struct field *t, const void *base)
{
	for (; t->name; t++)
		qp_out_u64(o, t->name, get(base, t->off));
}

/* The port's PFC settings (xoff 0: PFC off). */
static void json_pfc_conf(struct qp_out *o, const struct sw_pfc_params *c)
{
	qp_out_u64(o, "pfc_xoff_bytes", c->on ? c->xoff_bytes : 0);
	qp_out_u64(o, "pfc_xon_bytes", c->on ? c->xon_bytes : 0);
	qp_out_u64(o, "pfc_headroom_bytes", c->on ? c->headroom_bytes : 0);
	qp_out_u64(o, "pfc_class", c->prio);
	qp_out_bool(o, "pfc_lossless", c->on && c->lossless);
}

/* Signing: on or off, messages signed, level acks refused by reason. */
static void json_auth(struct qp_out *o, const struct sw_auth *a)
{
	qp_out_bool(o, "signed", a->on);
	qp_out_u64(o, "signed_messages", a->signed_msgs);
	qp_out_u64(o, "acks_rejected_notag", a->acks_notag);
	qp_out_u64(o, "acks_rejected_tag", a->acks_badtag);
	qp_out_u64(o, "acks_rejected_replay", a->acks_replay);
	qp_out_u64(o, "acks_rejected_future", a->acks_future);
}

/* The peer of a udp or vxlan port, and how often a udp port followed a new one or refused
 * to (0 for ports that never learn). */
static void json_peer(struct qp_out *o, const struct sw_io *io)
{
	char a[QP_HOSTPORT_STRLEN];

	if (io && io->ops != &sw_io_packet_ops)
		qp_out_str(o, "remote", qp_sockaddr_fmt(&io->remote, a, sizeof(a)));
	qp_out_u64(o, "remote_changes", io ? io->remote_changes : 0);
	qp_out_u64(o, "remote_refused", io ? io->remote_refused : 0);
	qp_out_u64(o, "tx_gso_runs", io ? io->gso.runs : 0);
	qp_out_bool(o, "tx_gso_off", io && io->gso.off);
}

/* A shm port's rings and doorbells (nothing for other ports). */
static void json_shm(struct qp_out *o, const struct sw_io *io)
{
	const struct sw_io_shm_stats *s = sw_io_shm_stats(io);

	if (!s)
		return;
	qp_out_str(o, "transport", s->ring_mode ? "shm" : "udp");
	qp_out_bool(o, "shm_offered", s->offered);
	qp_out_u64(o, "shm_attaches", s->attaches);
	qp_out_u64(o, "shm_mode_changes", s->mode_changes);
	qp_out_u64(o, "shm_rx_frames", s->rx.frames);
	qp_out_u64(o, "shm_rx_batches", s->rx.batches);
	qp_out_u64(o, "shm_rx_bad_len", s->rx.bad_len);
	qp_out_u64(o, "shm_rx_bad_index", s->rx.bad_index);
	qp_out_u64(o, "shm_rx_arms", s->rx.arms);
	qp_out_u64(o, "shm_tx_frames", s->tx.frames);
	qp_out_u64(o, "shm_tx_batches", s->tx.batches);
	qp_out_u64(o, "shm_tx_full", s->tx.full);
	qp_out_u64(o, "shm_tx_bad_index", s->tx.bad_index);
	qp_out_u64(o, "shm_tx_oversize", s->oversize);
	qp_out_u64(o, "shm_tx_deferred", s->deferred);
	qp_out_u64(o, "shm_tx_backlog_max", s->backlog_max);
	qp_out_u64(o, "shm_tx_lost", s->lost);
	qp_out_u64(o, "shm_ts_bad", s->ts_bad);
	qp_out_u64(o, "doorbells_rx", s->doorbells_rx);
	qp_out_u64(o, "doorbells_tx", s->doorbells_tx);
	qp_out_u64(o, "doorbell_errors", s->doorbell_errors);
}

void sw_stats_json(const struct sw_fabric *f, FILE *out, qp_time_ns now)
{
	struct qp_out o;

	qp_out_init(&o, out, QP_OUT_JSON_PRETTY);
	qp_out_obj(&o, NULL);
	qp_out_u64(&o, "time_ns", now);
	qp_out_u64(&o, "ctrl_unroutable", f->ctrl_unroutable);
	qp_out_u64(&o, "tx_late_max_ns", f->tx_late_max_ns);
	qp_out_u64(&o, "tx_late_total_ns", f->tx_late_total_ns);
	qp_out_u64(&o, "captured", sw_capture_count(f->cap));
	qp_out_arr(&o, "switches");
	for (int s = 0; s < f->nswitches; s++) {
		const struct sw_switch *sw = f->sw[s];

		qp_out_obj(&o, NULL);
		qp_out_str(&o, "name", sw->conf->name);
		qp_out_u64(&o, "id", sw->id);
		qp_out_u64(&o, "mac_moves", sw->fwd.moves);
		json_auth(&o, &sw->auth);
		qp_out_arr(&o, "ports");
		for (int i = 0; i < sw->nports; i++) {
			const struct sw_port *p = &sw->ports[i];
			const struct sw_queue_params *qp = sw_queue_params(p->q);
			char imp[200];

			qp_out_obj(&o, NULL);
			qp_out_str(&o, "name", p->conf->name);
			qp_out_str(&o, "kind", kind_names[p->conf->kind]);
			qp_out_u64(&o, "rate_bps", qp->rate_bps);
			qp_out_u64(&o, "delay_ns", qp->delay_ns);
			qp_out_u64(&o, "buffer_bytes", qp->buffer_bytes);
			json_pfc_conf(&o, &p->conf->pfc);
			qp_out_str(&o, "impair", sw_impair_format(&p->conf->impair, imp,
								  sizeof(imp)));
			qp_out_u64(&o, "queue_bytes", sw_queue_bytes_at(p->q, now));
			json_peer(&o, p->io);
			json_shm(&o, p->io);
			json_fields(&o, port_fields, &p->st);
			json_fields(&o, queue_fields, sw_queue_stats(p->q));
			json_fields(&o, pfc_fields, &p->pfc.st);
			for (size_t k = 0; k < NTIMED; k++)
				qp_out_u64(&o, timed_fields[k].name, timed_fields[k].fn(p, now));
			json_fields(&o, impair_fields, impair_stats(p));
			qp_out_end(&o);
		}
		qp_out_end(&o);
		qp_out_end(&o);
	}
	qp_out_end(&o);
	qp_out_end(&o);
}

void sw_stats_csv_header(FILE *out)
{
	fputs("time_s,switch,port,queue_bytes", out);
	for (const struct field *t = port_fields; t->name; t++)
		fprintf(out, ",%s", t->name);
	for (const struct field *t = queue_fields; t->name; t++)
		fprintf(out, ",%s", t->name);
	for (const struct field *t = pfc_fields; t->name; t++)
		fprintf(out, ",%s", t->name);
	for (size_t k = 0; k < NTIMED; k++)
		fprintf(out, ",%s", timed_fields[k].name);
	for (const struct field *t = impair_fields; t->name; t++)
		fprintf(out, ",%s", t->name);
	fputc('\n', out);
}

/* A CSV row is rendered in memory and reaches the FILE in one fwrite per 8 KB (every port
 * of a call, normally): the real-time switch writes a row per port every millisecond (17
 * ports x 63 fields in a 16 -> 1 incast), and fprintf per field was 5.2% of such a run's
 * CPU samples. The bytes are fprintf's ("%" PRIu64, the time as "%.6f";
 * tests/unit/test_sw_stats_csv.c checks them against the JSON dump's printer). */
struct row {
	FILE *out;
	size_t n;
	char b[8192];
};

static void row_flush(struct row *r)
{
	if (r->n)
		fwrite(r->b, 1, r->n, r->out);
	r->n = 0;
}

static void row_put(struct row *r, const char *s, size_t len)
{
	if (r->n + len > sizeof(r->b)) {
		row_flush(r);
		if (len > sizeof(r->b)) {
			fwrite(s, 1, len, r->out);
			return;
		}
	}
	memcpy(r->b + r->n, s, len);
	r->n += len;
}

static void row_str(struct row *r, const char *s)
{
	row_put(r, s, strlen(s));
}

/* ",DIGITS" */
static void row_u64(struct row *r, uint64_t v)
{
	char d[1 + 20];
	size_t k = sizeof(d);

	do {
		d[--k] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	d[--k] = ',';
	row_put(r, d + k, sizeof(d) - k);
}

static void row_fields(struct row *r, const struct field *t, const void *base)
{
	for (; t->name; t++)
		row_u64(r, get(base, t->off));
}

void sw_stats_csv_row(struct sw_fabric *f, FILE *out, qp_time_ns now, qp_time_ns start)
{
	struct row r;
	char ts[48];

	r.out = out;
	r.n = 0;
	snprintf(ts, sizeof(ts), "%.6f,", (double)(now - start) / 1e9);
	for (int s = 0; s < f->nswitches; s++) {
		struct sw_switch *sw = f->sw[s];
		for (int i = 0; i < sw->nports; i++) {
			struct sw_port *p = &sw->ports[i];

			row_str(&r, ts);
			row_str(&r, sw->conf->name);
			row_put(&r, ",", 1);
			row_str(&r, p->conf->name);
			row_u64(&r, sw_queue_bytes_at(p->q, now));
			row_fields(&r, port_fields, &p->st);
			row_fields(&r, queue_fields, sw_queue_stats(p->q));
			row_fields(&r, pfc_fields, &p->pfc.st);
			for (size_t k = 0; k < NTIMED; k++)
				row_u64(&r, timed_fields[k].fn(p, now));
			row_fields(&r, impair_fields, impair_stats(p));
			row_put(&r, "\n", 1);
		}
	}
	row_flush(&r);
}
