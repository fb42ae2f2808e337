/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What topogen.c's builders leave to topogen_route.c. Private to sim/. */
#ifndef SIM_TOPOGEN_PRIV_H
#define SIM_TOPOGEN_PRIV_H

#include "qpace/topogen.h"

/* Static forwarding (g->route) for every switch and host, and flood=off on every link off
 * the broadcast spanning tree. 0 or -ENOMEM. */
int topogen_route(struct topogen *g);

#endif
