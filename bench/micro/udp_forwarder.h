/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The baseline of switch-bench: a plain UDP forwarder, recvmmsg -> sendmmsg in batches
 * of 32, busy-polling like qpace-switch does under load, with no parsing and no model. */
#ifndef BENCH_UDP_FORWARDER_H
#define BENCH_UDP_FORWARDER_H

#include <netinet/in.h>

/* Receive on @in, send every datagram to @to, until SIGTERM. Never returns. */
void bench_udp_forward(int in, const struct sockaddr_in *to);

#endif
