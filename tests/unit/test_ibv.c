/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The ibv backend where there is no RDMA device (this machine's kernel has no InfiniBand):
 * opening fails with one line that names the soft backend and the Soft-RoCE guide
 * (docs/soft-roce.md), a non-zero error, and nothing else on stderr. Bad options are named too. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <infiniband/verbs.h>

#include "qpace/qp.h"

static bool host_has_rdma_device(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (list)
		ibv_free_device_list(list);
	return list && n > 0;
}

/* Open with stderr captured; returns the rc, the message and what reached stderr. */
static int open_captured(const struct qp_ctx_attr *attr, struct qp_ctx **ctx, char *err,
			 size_t errlen, char *stderr_text, size_t stderr_len)
{
	int pfd[2], saved, rc;
	ssize_t n;

	assert_int_equal(pipe(pfd), 0);
	fflush(stderr);
	saved = dup(2);
	dup2(pfd[1], 2);
	rc = qp_ctx_open("ibv", attr, ctx, err, errlen);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	n = read(pfd[0], stderr_text, stderr_len - 1);
	stderr_text[n > 0 ? n : 0] = 0;
	close(pfd[0]);
	return rc;
}

static void test_no_device_one_clear_line(void **state)
{
	struct qp_ctx *ctx = (struct qp_ctx *)0x1;
	char err[300] = "", noise[512];
	int rc;
	(void)state;

	if (host_has_rdma_device())
		skip(); /* a device exists here: the no-device path cannot be reached */
	rc = open_captured(NULL, &ctx, err, sizeof(err), noise, sizeof(noise));
	print_message("rc %d: %s\n", rc, err);
	assert_int_equal(rc, -ENODEV);
	assert_non_null(strstr(err, "soft backend"));
	assert_non_null(strstr(err, "--backend soft"));
	assert_non_null(strstr(err, "docs/soft-roce.md"));
	assert_null(strchr(err, '\n'));              /* one line */
	assert_string_equal(noise, "");               /* and nothing else printed */
	assert_ptr_equal(ctx, (struct qp_ctx *)0x1);  /* untouched on failure */
}

static void test_named_device_absent(void **state)
{
	struct qp_ctx *ctx = NULL;
	char err[300] = "", noise[512];
	struct qp_ctx_attr attr = { .device = "qpace-no-such-device" };
	int rc;
	(void)state;

	rc = open_captured(&attr, &ctx, err, sizeof(err), noise, sizeof(noise));
	print_message("rc %d: %s\n", rc, err);
	assert_int_equal(rc, -ENODEV);
	assert_null(ctx);
	/* No device at all names the soft backend; a device list without it names the name. */
	assert_true(strstr(err, "soft backend") || strstr(err, "qpace-no-such-device"));
}

static void test_bad_options_named(void **state)
{
	struct qp_ctx *ctx = NULL;
	char err[300] = "", noise[512];
	struct qp_ctx_attr attr = { .options = "gid=7,speed=fast" };
	(void)state;

	assert_int_equal(open_captured(&attr, &ctx, err, sizeof(err), noise, sizeof(noise)),
			 -EINVAL);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "unknown option 'speed=fast'"));
	attr.options = "gid=300";
	assert_int_equal(open_captured(&attr, &ctx, err, sizeof(err), noise, sizeof(noise)),
			 -EINVAL);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "0..255"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_device_one_clear_line),
		cmocka_unit_test(test_named_device_absent),
		cmocka_unit_test(test_bad_options_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
