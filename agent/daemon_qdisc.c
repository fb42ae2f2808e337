/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced --enforce tc: fq where the departure times need it, the device put back as it was
 * on exit (qdisc_plan.h decides, qdisc.h does it through rtnetlink). What was there is
 * recorded in a file beside the control socket (qdisc-IFACE), so a qpaced that took over
 * a dead one's maps, or `qpaced --enforce off --dev IFACE`, puts it back as well. */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/pkt_sched.h>

#include "daemon_priv.h"
#include "qdisc_plan.h"
#include "qpace/errmsg.h"

#define RECORD_MAGIC 0x51504451u      /* "QPDQ" */
#define RECORD_VERSION 1u

struct qpaced_qdisc {
	int ifindex;
	char dev[IF_NAMESIZE];
	char record[QPACED_PATH_MAX + 32];
	bool installed;              /* our fq are on the device */
	qp_rate_bps maxrate;
	struct qd_plan plan;
};

struct record_head {
	uint32_t magic, version, nfq, nundo;
};

/* The record file's path: the control socket's directory, qdisc-IFACE. */
static void record_path(const struct qpaced *d, const char *dev, char *out, size_t len)
{
	const char *s = d->cfg.socket, *slash = strrchr(s, '/');
	int dir = slash ? (int)(slash - s) : 1;

	snprintf(out, len, "%.*s/qdisc-%s", dir, slash ? s : ".", dev);
}

static int record_write(const struct qpaced_qdisc *q)
{
	struct record_head h = { RECORD_MAGIC, RECORD_VERSION, q->plan.nfq, q->plan.nundo };
	int fd = open(q->record, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) &&
	     write(fd, &q->plan, sizeof(q->plan)) == (ssize_t)sizeof(q->plan);
	close(fd);
	return ok ? 0 : -EIO;
}

/* A record a qpaced left: the plan it applied. 0, -ENOENT, or -EPROTO (not ours, or cut). */
static int record_read(const char *path, struct qd_plan *p)
{
	struct record_head h;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -errno;
	ok = read(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) && h.magic == RECORD_MAGIC &&
	     h.version == RECORD_VERSION && read(fd, p, sizeof(*p)) == (ssize_t)sizeof(*p) &&
	     p->nfq == h.nfq && p->nundo == h.nundo && p->nfq <= QD_MAX && p->nundo <= QD_MAX;
	close(fd);
	for (unsigned i = 0; ok && i < p->nundo; i++)
		ok = p->undo[i].qd.opts_len <= QD_OPTS_MAX && p->undo[i].kind >= QD_UNDO_DEL_ROOT &&
		     p->undo[i].kind <= QD_UNDO_DEL &&
		     memchr(p->undo[i].qd.kind, 0, QD_KIND_MAX) != NULL;
	return ok ? 0 : -EPROTO;
}

/* Put the device back: the plan's undo steps in order. 0, or the first error (the others
 * are still tried), said in @err. */
static int undo(int ifindex, const struct qd_plan *p, char *err, size_t errlen)
{
	int rc = 0;

	for (unsigned i = 0; i < p->nundo; i++) {
		const struct qd_undo *u = &p->undo[i];
		char e[200];
		int r = 0;

		switch (u->kind) {
		case QD_UNDO_DEL_ROOT:
			r = qd_del(ifindex, TC_H_ROOT, 0, e, sizeof(e));
			break;
		case QD_UNDO_PUT:
			r = qd_put(ifindex, &u->qd, true, e, sizeof(e));
			break;
		case QD_UNDO_DEL:
			r = qd_del(ifindex, u->parent, u->handle, e, sizeof(e));
			break;
		}
		if (r && !rc) {
			rc = r;
			snprintf(err, errlen, "%s", e);
		}
	}
	return rc;
}

int qpaced_qdisc_open(struct qpaced *d, const char *dev, qp_rate_bps maxrate, char *err,
		      size_t errlen)
{
	struct qpaced_qdisc *q = calloc(1, sizeof(*q));
	struct qd *all = calloc(QD_MAX, sizeof(*all));
	struct qd_plan *left = calloc(1, sizeof(*left));
	unsigned n = 0, put = 0;
	bool failed;
	char e[300];
	int rc = 0;

	if (!q || !all || !left) {
		free(q);
		free(all);
		free(left);
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	}
	d->qdisc = q;
	q->maxrate = maxrate;
	snprintf(q->dev, sizeof(q->dev), "%s", dev);
	record_path(d, dev, q->record, sizeof(q->record));
	q->ifindex = (int)if_nametoindex(dev);
	if (!q->ifindex) {
		rc = qp_errmsg(-ENODEV, err, errlen, "--dev %s: no such device", dev);
		goto out;
	}
	/* A dead qpaced's fq are there: put the device back first, then plan afresh. */
	if (record_read(q->record, left) == 0) {
		if (undo(q->ifindex, left, e, sizeof(e)))
			qpaced_log(AGENT_LOG_WARN, "tc egress: putting %s back as a dead qpaced "
				   "found it: %s", dev, e);
		else
			qpaced_log(AGENT_LOG_INFO, "tc egress: %s put back as a dead qpaced found it "
				   "(%s)", dev, left->what);
		unlink(q->record);
	}
	if ((rc = qd_dump(q->ifindex, all, QD_MAX, &n, e, sizeof(e)))) {
		rc = qp_errmsg(rc, err, errlen, "--enforce tc --dev %s: %s", dev, e);
		goto out;
	}
	if ((rc = qd_plan(all, n, (unsigned)d->cfg.wire_qdisc, d->cfg.wire_fq_parent, &q->plan, e,
			  sizeof(e)))) {
		rc = qp_errmsg(rc, err, errlen, "--enforce tc --dev %s: %s", dev, e);
		goto out;
	}
	if (!q->plan.nfq) {
		qpaced_log(AGENT_LOG_INFO, "tc egress: %s: %s", dev, q->plan.what);
		goto out;
	}
	if ((rc = record_write(q)))
		qpaced_log(AGENT_LOG_WARN, "tc egress: %s: %s: %s (a crash then leaves our fq for "
			   "`--enforce off` to find by hand)", dev, q->record, strerror(-rc));
	rc = 0;
	failed = false;
	if (q->plan.mq_root) {   /* an mq of ours whose queues fq can be named under */
		struct qd mq = { .handle = QD_FQ_MAJOR << 16, .parent = TC_H_ROOT, .kind = "mq" };

		failed = qd_put(q->ifindex, &mq, true, e, sizeof(e)) != 0;
	}
	for (put = 0; !failed && put < q->plan.nfq; put++)
		failed = qd_fq(q->ifindex, q->plan.fq_parent[put], q->plan.fq_handle[put], maxrate,
			       false, e, sizeof(e)) != 0;
	if (failed) {
		char u[200];

		if ((put > 1 || q->plan.mq_root) && undo(q->ifindex, &q->plan, u, sizeof(u)))
			qpaced_log(AGENT_LOG_WARN, "tc egress: %s: putting it back: %s", dev, u);
		unlink(q->record);
		qpaced_log(AGENT_LOG_WARN, "tc egress: could not install fq on %s (%s%s): frames get "
			   "departure times but nothing holds them to those times, so QPs are NOT "
			   "paced; counting and --enforce observe work; %s left as it was", dev, e,
			   strstr(e, "No such file") ? ": this kernel has no sch_fq?" : "", dev);
		goto out;
	}
	q->installed = true;
	snprintf(e, sizeof(e), "%llu kb/s", (unsigned long long)(maxrate / 1000));
	qpaced_log(AGENT_LOG_INFO, "tc egress: fq on %s (%u qdisc%s; horizon 2s, capped; per-flow "
		   "maxrate %s): it had %s", dev, q->plan.nfq, q->plan.nfq == 1 ? "" : "s",
		   maxrate ? e : "none", q->plan.what);
out:
	free(all);
	free(left);
	return rc;
}

bool qpaced_qdisc_installed(const struct qpaced *d)
{
	return d->qdisc && d->qdisc->installed;
}

qp_rate_bps qpaced_qdisc_maxrate(const struct qpaced *d)
{
	return d->qdisc ? d->qdisc->maxrate : 0;
}

int qpaced_qdisc_set_maxrate(struct qpaced *d, qp_rate_bps maxrate, char *err, size_t errlen)
{
	struct qpaced_qdisc *q = d->qdisc;
	int rc = 0;

	if (!qpaced_qdisc_installed(d))
		return -ENODEV;
	for (unsigned i = 0; i < q->plan.nfq && !rc; i++)
		rc = qd_fq(q->ifindex, q->plan.fq_parent[i], q->plan.fq_handle[i], maxrate, true,
			   err, errlen);
	if (!rc)
		q->maxrate = maxrate;
	return rc;
}

void qpaced_qdisc_close(struct qpaced *d)
{
	struct qpaced_qdisc *q = d->qdisc;
	char e[300];

	if (!q)
		return;
	if (q->installed) {
		if (undo(q->ifindex, &q->plan, e, sizeof(e)))
			qpaced_log(AGENT_LOG_WARN, "tc egress: putting %s back: %s", q->dev, e);
		unlink(q->record);
	}
	free(q);
	d->qdisc = NULL;
}

int qpaced_qdisc_left(struct qpaced *d, const char *dev, char *what, size_t len)
{
	char path[QPACED_PATH_MAX + 32], e[300];
	struct qd_plan *p = calloc(1, sizeof(*p));
	int ifindex = (int)if_nametoindex(dev), rc;

	if (!p)
		return -ENOMEM;
	record_path(d, dev, path, sizeof(path));
	rc = record_read(path, p);
	if (rc == 0 && !ifindex)
		rc = -ENODEV;
	if (rc == 0) {
		rc = undo(ifindex, p, e, sizeof(e));
		snprintf(what, len, "%s", rc ? e : p->what);
		if (!rc)
			unlink(path);
	}
	free(p);
	return rc;
}
