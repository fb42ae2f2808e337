/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifndef BENCH_REPRO_HPCC_H
#define BENCH_REPRO_HPCC_H
#include "repro.h"
/* HPCC's incast with 30% WebSearch background (repro_hpcc_bg.c): its rows into @ctx. 0 or -1. */
int repro_hpcc_background(struct repro_ctx *ctx);
#endif
