/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A client of the agent's control socket (qpace/ctl.h), for qpacectl and for applications
 * (the verbs library registers its QPs through it). Blocking, with a timeout per call.
 *
 *     ctl_client_open(path, &c, err)             connect (NULL path: $QPACE_SOCKET, else the
 *                                                default)
 *     ctl_client_call(c, &req, on_msg, arg, ...) send a request; on_msg sees each QP / AGENT
 *                                                message; returns the REPLY's status
 *     ctl_client_send(c, &msg)                   EVENT / STATS: no reply
 *     ctl_client_close(c)                        the agent unregisters this connection's QPs
 */
#ifndef QPACE_CTL_CLIENT_H
#define QPACE_CTL_CLIENT_H

#include <stddef.h>
#include "qpace/ctl.h"

struct ctl_client;

/* The socket path to use: @path, else $QPACE_SOCKET, else CTL_DEFAULT_SOCKET. */
const char *ctl_client_path(const char *path);

/* 0, or -errno with a message naming the path ("is qpaced running?"). */
int ctl_client_open(const char *path, struct ctl_client **out, char *err, size_t errlen);
void ctl_client_close(struct ctl_client *c);

/* Send @req (its id is set here) and read until its REPLY, passing every other message of
 * the same id to @on_msg (may be NULL). Returns the reply's status (0 or -errno, text in
 * @reply when not NULL), or -ETIMEDOUT / -EPROTO / -errno for transport failures, with a
 * message in @err. */
int ctl_client_call(struct ctl_client *c, struct ctl_msg *req,
		    void (*on_msg)(void *arg, const struct ctl_msg *m), void *arg,
		    qp_time_ns timeout_ns, struct ctl_reply *reply, char *err, size_t errlen);

/* Send a message that gets no reply (EVENT, STATS). 0 or -errno. */
int ctl_client_send(struct ctl_client *c, const struct ctl_msg *m);

#endif
