/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* htsim's connection matrices, read as a workload (docs/workloads.md): the flows of an
 * htsim experiment (github.com/ultraethernet/uet-htsim, datacenter/connection_matrices/
 * *.cm, read by its datacenter/connection_matrix.cpp) run here unchanged.
 *
 *   Nodes N                        the hosts 0..N-1 (N at most the topology's hosts)
 *   Connections M                  how many connection lines follow (checked)
 *   Triggers T                     how many trigger lines (checked; default 0)
 *   Failures 0                     link failures are not modelled: only 0
 *   SRC->DST [id I] start T size B [prio P] [msg [I]]
 *   SRC->DST [id I] trigger X size B [send_done_trigger Y] [recv_done_trigger Z]
 *   trigger id X oneshot|multishot|barrier [count C]
 *
 * A connection is a flow of B bytes from host SRC to host DST (0: it never ends, as in
 * htsim), starting at T picoseconds (htsim's time unit; here the nanosecond below it), or
 * when trigger X fires. A flow that ends activates its send_done and recv_done triggers (a
 * flow ends here when its sender has every byte acknowledged: both at once). A oneshot
 * trigger fires at its one activation and starts every flow waiting on it; a barrier at
 * its C-th; a multishot starts its next waiting flow (in file order) at each activation.
 * prio and msg are read and not modelled (no priorities; each line is one message). The
 * header lines come before the first connection or trigger line; '#' starts a comment.
 *
 * The parser is fed text and opens no files (cm_parse; the fuzz target drives it); a
 * file is read whole (cm_load). Errors are "FILE:LINE: what, the value, the accepted
 * range" and -EINVAL; the counts and references are checked at the end, naming the line
 * that declared or used them. */
#ifndef QPACE_CONNMATRIX_H
#define QPACE_CONNMATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/time.h"

#define CM_MAX_NODES (1u << 20)
#define CM_MAX_CONNS 4000000u         /* as a workload's flows (WL_DEFAULT_MAX_FLOWS) */
#define CM_MAX_TRIGGERS 4000000u
#define CM_MAX_BYTES (1ull << 40)
#define CM_MAX_START_PS 3600e12       /* an hour */
#define CM_FILE_MAX (256u << 20)      /* bytes of a file */

enum cm_trigger_kind { CM_ONESHOT = 1, CM_MULTISHOT, CM_BARRIER };

struct cm_conn {
	uint32_t src, dst;
	uint64_t bytes;               /* 0: never ends */
	qp_time_ns start_ns;          /* without a trigger */
	uint32_t id;                  /* 0: none given */
	uint32_t trigger;             /* 0: starts at start_ns; else when it fires */
	uint32_t send_done, recv_done;   /* triggers it activates when it ends; 0: none */
	int line;
};

struct cm_trigger {
	uint32_t id;
	enum cm_trigger_kind kind;
	uint32_t count;               /* barrier: activations it waits for */
	int line;
};

struct cm_matrix {
	uint32_t nodes;
	uint64_t want_conns, want_triggers;   /* the header's counts */
	int nodes_line, conns_line, triggers_line;
	size_t nconn, capconn;
	struct cm_conn *conn;
	size_t ntrig, captrig;
	struct cm_trigger *trig;      /* sorted by id after cm_finish */
	/* parse state */
	const char *file;             /* for messages; not copied */
	int lineno;
	bool body;                    /* past the header */
};

/* Fed line by line (no '\n'), then finished; cm_parse does all three (@m zeroed, or from
 * an earlier parse: freed first). 0 or -EINVAL (with "FILE:LINE: ..." in @err) or
 * -ENOMEM; a failed parse leaves nothing allocated. */
void cm_init(struct cm_matrix *m, const char *file);
int cm_line(struct cm_matrix *m, const char *line, size_t len, char *err, size_t errlen);
int cm_finish(struct cm_matrix *m, char *err, size_t errlen);
int cm_parse(struct cm_matrix *m, const char *text, size_t len, const char *file, char *err,
	     size_t errlen);
/* The file @path (at most CM_FILE_MAX bytes) through cm_parse. */
int cm_load(struct cm_matrix *m, const char *path, char *err, size_t errlen);
void cm_free(struct cm_matrix *m);
/* Is @text a connection matrix (its first word, past blank and comment lines, Nodes)? */
bool cm_is_matrix(const char *text, size_t len);
/* The trigger @id (after cm_finish), NULL when there is none. */
const struct cm_trigger *cm_trigger_find(const struct cm_matrix *m, uint32_t id);

#endif
