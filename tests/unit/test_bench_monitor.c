/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The bench's monitoring socket speaks the agent's control protocol: qpacectl's client sees
 * the QPs of every emulated host (LIST), one QP (SHOW), the summed counters (STATUS), can
 * override a rate (SET), and is refused registrations (the bench's QPs are its own). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "qpace/ctl_client.h"
#include "qpace/ratetable.h"
#include "tmpdir.h"
#include "../../bench/monitor.h"

#define HOSTS 2

struct fixture {
	char dir[128], path[160];
	struct qp_ratetable *table[HOSTS];
	struct agent *agent[HOSTS];
	struct monitor mon;
	pthread_t thread;
	atomic_bool stop;
};

static void *serve(void *arg)
{
	struct fixture *f = arg;
	struct timespec ts = { 0, 200000 };

	while (!atomic_load(&f->stop)) {
		monitor_serve(&f->mon);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Two hosts, one sending QP each (same QPN on both: each host is its own RNIC). */
static int setup(void **state)
{
	static struct fixture f;
	char err[256];

	memset(&f, 0, sizeof(f));
	if (tmpdir_make(f.dir, sizeof(f.dir), "monitor"))
		return -1;
	snprintf(f.path, sizeof(f.path), "%s/bench.sock", f.dir);
	for (int h = 0; h < HOSTS; h++) {
		struct agent_params p;
		agent_params_default(&p);
		p.max_qps = 8;
		if (qp_ratetable_create_mem(8, &f.table[h], err, sizeof(err)) < 0)
			return -1;
		f.agent[h] = agent_create(&p, f.table[h], 1000, err, sizeof(err));
		if (!f.agent[h])
			return -1;
		struct agent_qp_reg r = { .qpn = 0x11, .peer_qpn = 0x11 + (uint32_t)h,
					  .local_ip = 0x0a000002 + (uint32_t)h, .peer_ip = 0x0a000001,
					  .mtu_bytes = 1024, .link_bps = QP_GBPS,
					  .base_rtt_ns = 50 * QP_NS_PER_US };
		if (agent_register(f.agent[h], &r, 0, 0, 1000, err, sizeof(err)))
			return -1;
	}
	if (monitor_open(&f.mon, f.path, f.agent, HOSTS, err, sizeof(err)))
		return -1;
	if (pthread_create(&f.thread, NULL, serve, &f))
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	atomic_store(&f->stop, true);
	pthread_join(f->thread, NULL);
	monitor_close(&f->mon);
	for (int h = 0; h < HOSTS; h++) {
		agent_destroy(f->agent[h]);
		qp_ratetable_close(f->table[h]);
	}
	tmpdir_remove(f->dir);
	return 0;
}

struct seen {
	int qps, agents;
	uint32_t local_ips;
	uint64_t registrations;
	int overridden;
};

static void on_msg(void *arg, const struct ctl_msg *m)
{
	struct seen *s = arg;

	if (m->type == CTL_T_QP) {
		s->qps++;
		s->local_ips |= 1u << (m->u.qp.reg.local_ip & 31);
		s->overridden += m->u.qp.override && m->u.qp.rate_bps == 100 * QP_MBPS;
	} else if (m->type == CTL_T_AGENT) {
		s->agents++;
		s->registrations = m->u.agent.counters[AGENT_C_REG_OK];
	}
}

static void test_list_show_status_set(void **state)
{
	struct fixture *f = *state;
	struct ctl_client *c;
	struct ctl_reply reply;
	struct seen s = { 0 };
	char err[256];

	assert_int_equal(ctl_client_open(f->path, &c, err, sizeof(err)), 0);
	struct ctl_msg req = { .type = CTL_T_LIST };
	assert_int_equal(ctl_client_call(c, &req, on_msg, &s, QP_NS_PER_S, &reply, err,
					 sizeof(err)), 0);
	assert_int_equal(s.qps, 2);               /* both hosts' QPs, same QPN */
	assert_int_equal(reply.count, 2);
	assert_int_equal(s.local_ips, (1u << 2) | (1u << 3));
	print_message("LIST: %d QPs from %d hosts\n", s.qps, HOSTS);

	memset(&s, 0, sizeof(s));
	req = (struct ctl_msg){ .type = CTL_T_STATUS };
	assert_int_equal(ctl_client_call(c, &req, on_msg, &s, QP_NS_PER_S, &reply, err,
					 sizeof(err)), 0);
	assert_int_equal(s.agents, 1);
	assert_int_equal(s.registrations, 2);     /* summed over the hosts */

	req = (struct ctl_msg){ .type = CTL_T_SET, .u.set = { .qpn = 0x11, .what = CTL_SET_RATE,
							     .rate_bps = 100 * QP_MBPS } };
	assert_int_equal(ctl_client_call(c, &req, NULL, NULL, QP_NS_PER_S, &reply, err,
					 sizeof(err)), 0);
	memset(&s, 0, sizeof(s));
	req = (struct ctl_msg){ .type = CTL_T_SHOW, .u.qpn = 0x11 };
	assert_int_equal(ctl_client_call(c, &req, on_msg, &s, QP_NS_PER_S, &reply, err,
					 sizeof(err)), 0);
	assert_int_equal(s.qps, 2);
	assert_int_equal(s.overridden, 1);        /* SET reached the first host's QP only */
	req = (struct ctl_msg){ .type = CTL_T_SHOW, .u.qpn = 0x99 };
	assert_int_equal(ctl_client_call(c, &req, NULL, NULL, QP_NS_PER_S, &reply, err,
					 sizeof(err)), -ENOENT);

	/* Registering through the bench is refused, with a reason. */
	req = (struct ctl_msg){ .type = CTL_T_REGISTER,
				.u.reg = { .qpn = 0x40, .peer_qpn = 1, .local_ip = 1, .peer_ip = 2,
					   .mtu_bytes = 1024, .link_bps = QP_GBPS,
					   .base_rtt_ns = QP_NS_PER_US } };
	assert_int_equal(ctl_client_call(c, &req, NULL, NULL, QP_NS_PER_S, &reply, err,
					 sizeof(err)), -EPERM);
	assert_non_null(strstr(reply.text, "monitoring only"));
	ctl_client_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_list_show_status_set, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
