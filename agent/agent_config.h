/* qpaced's configuration: one option table drives the command line, the config file and
 * --help, so a flag and its config key cannot drift apart.
 *
 * Config file (-c FILE): one "key = value" per line; '#' starts a comment; blank lines are
 * skipped; keys are the long flag names without "--"; each key at most once per file. The
 * command line overrides the file. Example:
 *
 *     # /etc/qpace/qpaced.conf
 *     feedback = 0.0.0.0:4792
 *     allow = 10.0.0.254, 10.0.0.0/24
 *     cc = hpcc
 *     cc-params = eta=0.95,max_stage=5
 *     credits = ia
 *
 * The parser opens no file: it is fed lines from outside (qpaced_config_line) and reports
 * "FILE:LINE: key: message" for each error, so it can be fuzzed on its own
 * (tests/fuzz/fuzz_config.c).
 */
#ifndef QPACE_AGENT_CONFIG_H
#define QPACE_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/agent.h"

#define QPACED_PATH_MAX 108          /* sun_path */
#define QPACED_LINE_MAX 1024

struct qpaced_config {
	uint32_t fb_ip;                  /* feedback socket, host order */
	uint16_t fb_port;
	uint32_t metrics_ip;
	uint16_t metrics_port;           /* 0 = no metrics endpoint */
	char socket[QPACED_PATH_MAX];
	char rate_table[128];
	char key_file[256];              /* "" = no authentication */
	char cc[AGENT_ALGO_MAX];
	char cc_params[AGENT_PARAMS_MAX];
	qp_time_ns heartbeat_ns;
	qp_time_ns busy_poll_ns;         /* keep polling feedback this long after traffic */
	struct agent_params agent;       /* cc, cc_params point into the strings above */
};

/* One option: its long name (= config key), short flag (0 = none), argument name, help,
 * default as shown, and its parser. */
struct qpaced_option {
	const char *name;
	char short_flag;
	const char *arg;
	const char *help;
	const char *def;
	int (*parse)(struct qpaced_config *c, const char *value, char *err, size_t errlen);
};

/* The table, ending with { .name = NULL }. */
const struct qpaced_option *qpaced_options(void);

/* Defaults (the "def" column). */
void qpaced_config_init(struct qpaced_config *c);
/* Set one option by name: 0, or -ENOENT (unknown key, known ones listed) / -EINVAL with
 * "KEY: message" in @err. */
int qpaced_config_set(struct qpaced_config *c, const char *key, const char *value,
		      char *err, size_t errlen);

/* Feeding a file, line by line. */
struct qpaced_config_reader {
	struct qpaced_config *c;
	const char *file;                /* for messages */
	unsigned line;                   /* lines read so far */
	uint64_t seen;                   /* options set by this file (bit = table index) */
};

void qpaced_config_reader_init(struct qpaced_config_reader *r, struct qpaced_config *c,
			       const char *file);
/* One line (no newline needed; a trailing one is ignored). 0 or -EINVAL with
 * "FILE:LINE: KEY: message" in @err. */
int qpaced_config_line(struct qpaced_config_reader *r, const char *line, char *err,
		       size_t errlen);

/* After the file and the command line: cross-field checks (the cc parameters against the
 * algorithm). 0 or -EINVAL with the message in @err. */
int qpaced_config_finish(struct qpaced_config *c, char *err, size_t errlen);

/* Write --help's option list into @buf. */
int qpaced_config_help(char *buf, size_t len);

#endif
