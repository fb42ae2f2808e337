/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Incast arithmetic with no I/O: algorithm specs and the totals of a run (incast.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/cc.h"
#include "qpace/errmsg.h"
#include "incast.h"

int incast_algo_parse(const char *spec, char *cc, size_t cclen, bool *credits, char *err,
		      size_t errlen)
{
	const char *plus = strchr(spec, '+');
	size_t len = plus ? (size_t)(plus - spec) : strlen(spec);

	*credits = false;
	if (plus) {
		if (strcmp(plus + 1, "ia") != 0)
			return qp_errmsg(-EINVAL, err, errlen,
					 "algorithm '%s': after '+' only 'ia' (IA credits)",
					 spec);
		*credits = true;
	}
	if (len == 0 || len >= cclen)
		return qp_errmsg(-EINVAL, err, errlen, "algorithm '%s': not ALGO or ALGO+ia",
				 spec);
	memcpy(cc, spec, len);
	cc[len] = '\0';
	if (!cc_find(cc)) {
		char names[256];
		cc_names(names, sizeof(names), ", ");
		return qp_errmsg(-ENOENT, err, errlen, "algorithm '%s': not one of %s", cc, names);
	}
	return 0;
}

void incast_summarize(struct incast_result *r, const struct incast_flow *f, size_t n,
		      const qp_time_ns *round_ns, uint32_t rounds, qp_time_ns base_rtt_ns)
{
	double *tput = calloc(n ? n : 1, sizeof(*tput));
	qp_time_ns *fct = calloc(n ? n : 1, sizeof(*fct));
	size_t done = 0;
	uint64_t bytes = 0;
	double elapsed_ns = 0;

	r->retransmits = r->timeouts = r->rounds_with_timeout = 0;
	if (!tput || !fct) {         /* report nothing rather than something wrong */
		free(tput);
		free(fct);
		r->flows = n;
		r->flows_done = 0;
		r->jain = r->goodput_bps = r->goodput_ratio = NAN;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		r->retransmits += f[i].retransmits;
		r->timeouts += f[i].timeouts;
		if (!f[i].done || f[i].fct_ns == 0)
			continue;
		bytes += f[i].bytes;
		tput[done] = (double)f[i].bytes * 8e9 / (double)f[i].fct_ns;
		fct[done++] = f[i].fct_ns;
	}
	for (uint32_t k = 0; k < rounds; k++) {
		bool timed_out = false;

		elapsed_ns += (double)round_ns[k];
		for (size_t i = 0; i < n && !timed_out; i++)
			timed_out = f[i].round == k && f[i].timeouts > 0;
		r->rounds_with_timeout += timed_out;
	}
	r->flows = n;
	r->flows_done = done;
	r->elapsed_s = elapsed_ns / 1e9;
	r->payload_bps = stats_payload_bps(r->link_bps, r->mtu_bytes, STATS_ROCE_PKT_OVERHEAD);
	r->goodput_bps = elapsed_ns > 0 ? (double)bytes * 8e9 / elapsed_ns : 0;
	r->goodput_ratio = r->payload_bps > 0 ? r->goodput_bps / r->payload_bps : 0;
	/* A flow that never finished counts as zero throughput: unfairness, not absence. */
	for (size_t i = done; i < n; i++)
		tput[i] = 0;
	r->jain = stats_jain(tput, n);
	stats_fct_summary(fct, done, stats_standalone_fct_ns(r->bytes_per_sender, r->mtu_bytes,
							     STATS_ROCE_PKT_OVERHEAD, r->link_bps,
							     base_rtt_ns), &r->fct);
	free(tput);
	free(fct);
}
