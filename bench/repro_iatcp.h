/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* reproduce ia-tcp's experiments B, C, D (repro_iatcp_bc.c, repro_iatcp_d.c): flows of
 * different sizes and start times on the topology + workload runner (repro_mix.h), at
 * experiment A's parameters (repro_iatcp.c): one switch, 1 Gb/s, 25 us links (100 us round
 * trip), 56 x 1500 = 84,000 bytes a port, RoCE MTU 1024; host 0 the aggregator. The same
 * three as A: TCP SACK -> tcp, 1-win TCP -> tcp with iw=1,max_cwnd=1, IA-TCP -> tcp+ia. */
#ifndef BENCH_REPRO_IATCP_H
#define BENCH_REPRO_IATCP_H

#include "repro_mix.h"

#define IATCP_SACK "TCP-SACK~tcp"
#define IATCP_ONEWIN "1-win-TCP~tcp-w1"
#define IATCP_IA "IA-TCP~tcp+ia"
#define IATCP_ONEWIN_PARAMS "iw=1,max_cwnd=1"
#define IATCP_NSERIES 3

extern const struct repro_mix_series repro_iatcp_mix_series[IATCP_NSERIES];

/* A's star of @hosts hosts. */
void repro_iatcp_star(struct topogen_params *g, uint32_t hosts);
/* Each adds its rows to ctx's table; 0 or -1 (said on stderr). */
int repro_iatcp_b(struct repro_ctx *ctx);
int repro_iatcp_c(struct repro_ctx *ctx);
int repro_iatcp_d(struct repro_ctx *ctx);

#endif
