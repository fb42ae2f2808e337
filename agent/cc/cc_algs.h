/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The algorithms qpace ships; each is one file in agent/cc/. */
#ifndef QPACE_CC_ALGS_H
#define QPACE_CC_ALGS_H

#include "qpace/cc.h"

extern const struct cc_ops cc_none_ops;   /* agent/cc/none.c  */
extern const struct cc_ops cc_hpcc_ops;   /* agent/cc/hpcc.c  */
extern const struct cc_ops cc_acc_ops;    /* agent/cc/acc.c   */
extern const struct cc_ops cc_dcqcn_ops;  /* agent/cc/dcqcn.c */
extern const struct cc_ops cc_ffd_ops;    /* agent/cc/ffd.c   */
extern const struct cc_ops cc_idcc_ops;   /* agent/cc/idcc.c  */
extern const struct cc_ops cc_tcp_ops;    /* agent/cc/tcp.c   */
extern const struct cc_ops cc_dctcp_ops;  /* agent/cc/dctcp.c */
extern const struct cc_ops cc_timely_ops; /* agent/cc/timely.c */
extern const struct cc_ops cc_swift_ops;  /* agent/cc/swift.c */

#endif
