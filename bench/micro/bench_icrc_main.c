/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* bench-icrc: nanoseconds per frame for the RoCEv2 ICRC, zlib's table crc32 against the
 * CRC lib/frame.c uses (frame_crc32: ISA-L's crc32_gzip_refl, PCLMULQDQ folding), in one
 * run on the same frames.
 *
 * For each payload size a RoCEv2 RC_WRITE_MIDDLE frame is built once; each round times
 * FRAMES ICRCs computed three ways over the spans the ICRC covers (8 bytes of 0xFF, the
 * masked IPv4 + UDP + BTH headers, then the rest up to the ICRC field):
 *   zlib        crc32() over the three spans (the masked header prepared once)
 *   isal        frame_crc32() over the same three spans
 *   frame_icrc  the whole frame_icrc(), header copy and masks included (what a soft host
 *               pays per frame sent or received)
 * and checks that all three give the ICRC the frame carries. Each figure is the median of
 * ROUNDS timed rounds after one warm-up round.
 *
 *   bench-icrc [-n FRAMES] [-r ROUNDS] [-j]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "qpace/frame.h"
#include "qpace/opt.h"
#include "qpace/out.h"
#include "qpace/time.h"

#define HDR (FRAME_IPV4_HLEN + FRAME_UDP_HLEN + FRAME_BTH_LEN)

static const size_t payloads[] = { 256, 1024, 4096 };
#define NPAYLOADS (sizeof(payloads) / sizeof(payloads[0]))

enum way { W_ZLIB, W_ISAL, W_FRAME, W_COUNT };
static const char *const way_name[W_COUNT] = { "zlib", "isal", "frame_icrc" };

struct frame {
	uint8_t buf[FRAME_ETH_HLEN + HDR + 4096 + FRAME_ICRC_LEN];
	uint8_t masked[HDR];          /* the headers as the ICRC sees them */
	const uint8_t *rest;
	size_t rest_len, len;
	struct frame_parsed p;
};

static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static void build(struct frame *f, size_t payload)
{
	static uint8_t data[4096];
	struct frame_roce_spec s = {
		.src = { .mac = { 2, 0, 0, 0, 0, 1 }, .ip = 0x0a000001, .port = 0xc000 },
		.dst = { .mac = { 2, 0, 0, 0, 0, 2 }, .ip = 0x0a000002 },
		.bth = { .opcode = FRAME_OP_RC_WRITE_MIDDLE, .dest_qp = 0x11, .psn = 0x1234 },
		.payload = data, .payload_len = payload,
	};
	int n;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + 7);
	n = frame_build_roce(f->buf, sizeof(f->buf), &s);
	if (n < 0 || frame_parse(&f->p, f->buf, (size_t)n) || !(f->p.layers & FRAME_L_ROCE)) {
		fprintf(stderr, "bench-icrc: cannot build a %zu-byte frame\n", payload);
		exit(1);
	}
	f->len = (size_t)n;
	memcpy(f->masked, f->buf + FRAME_ETH_HLEN, HDR);
	f->masked[1] = f->masked[8] = f->masked[10] = f->masked[11] = 0xff;
	f->masked[FRAME_IPV4_HLEN + 6] = f->masked[FRAME_IPV4_HLEN + 7] = 0xff;
	f->masked[FRAME_IPV4_HLEN + FRAME_UDP_HLEN + 4] = 0xff;
	f->rest = f->buf + FRAME_ETH_HLEN + HDR;
	f->rest_len = f->len - FRAME_ETH_HLEN - HDR - FRAME_ICRC_LEN;
}

static uint32_t icrc_way(enum way w, const struct frame *f)
{
	uint32_t c;

	switch (w) {
	case W_ZLIB:
		c = (uint32_t)crc32(0, ones, sizeof(ones));
		c = (uint32_t)crc32(c, f->masked, HDR);
		return (uint32_t)crc32(c, f->rest, (uInt)f->rest_len);
	case W_ISAL:
		c = frame_crc32(0, ones, sizeof(ones));
		c = frame_crc32(c, f->masked, HDR);
		return frame_crc32(c, f->rest, f->rest_len);
	default:
		return frame_icrc(f->buf, &f->p);
	}
}

/* One round of @n ICRCs; returns ns per frame. Each result feeds the next frame's first
 * payload byte, so no call can be hoisted or skipped. */
static double round_ns(enum way w, struct frame *f, uint64_t n, uint32_t *sink)
{
	qp_time_ns t0 = qp_now_ns();
	uint8_t keep = f->buf[FRAME_ETH_HLEN + HDR];

	for (uint64_t i = 0; i < n; i++) {
		uint32_t c = icrc_way(w, f);

		*sink += c;
		f->buf[FRAME_ETH_HLEN + HDR] = (uint8_t)c;
	}
	f->buf[FRAME_ETH_HLEN + HDR] = keep;
	return (double)(qp_now_ns() - t0) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct opts {
	uint64_t n, rounds;
	bool json;
};

#define AT(field) QP_OPT_AT(struct opts, field)

static const struct qp_opt opts[] = {
	{ "frames", 'n', QP_OPT_UINT, "FRAMES", AT(n), .min = 1000, .max = 100000000,
	  .help = "ICRCs per round, 1000..100000000", .def = "200000" },
	{ "rounds", 0, QP_OPT_UINT, "ROUNDS", AT(rounds), .min = 1, .max = 100,
	  .old_short = 'r', .help = "timed rounds, 1..100; the median is printed", .def = "7" },
	{ "json", 'j', QP_OPT_FLAG, NULL, AT(json), .help = "one JSON object instead of the table" },
	QP_OPT_STD_ROWS,
};

static const struct qp_opt_prog prog = {
	.name = "bench-icrc",
	.head = "usage: bench-icrc [-n FRAMES] [-r ROUNDS] [-j]\n"
		"  Nanoseconds per RoCEv2 ICRC: zlib's crc32 against frame_crc32 (ISA-L).\n",
	.t = opts,
	.n = sizeof(opts) / sizeof(opts[0]),
	.max_args = 0,
};

int main(int argc, char **argv)
{
	static struct frame f;
	struct opts a = { 0 };
	uint32_t sink = 0;
	struct qp_out o;
	int rc = qp_opt_main(&prog, argc, argv, &a, NULL);
	double *ns;

	if (rc)
		return rc > 0 ? QP_EXIT_OK : QP_EXIT_USAGE;
	ns = calloc(a.rounds, sizeof(*ns));
	if (!ns) {
		fprintf(stderr, "bench-icrc: out of memory\n");
		return 1;
	}
	qp_out_init(&o, stdout, QP_OUT_JSON);
	if (a.json) {
		qp_out_obj(&o, NULL);
		qp_out_u64(&o, "frames_per_round", a.n);
		qp_out_u64(&o, "rounds", a.rounds);
		qp_out_arr(&o, "results");
	} else {
		printf("%8s %6s %-11s %12s %10s %10s\n", "payload", "frame", "crc",
		       "ns/frame p50", "min", "max");
	}
	for (size_t k = 0; k < NPAYLOADS; k++) {
		build(&f, payloads[k]);
		for (int w = 0; w < W_COUNT; w++) {
			if (icrc_way((enum way)w, &f) != f.p.icrc) {
				fprintf(stderr, "bench-icrc: %s gives %08x, the frame carries %08x\n",
					way_name[w], icrc_way((enum way)w, &f), f.p.icrc);
				free(ns);
				return 1;
			}
			round_ns((enum way)w, &f, a.n, &sink);   /* warm-up */
			for (uint64_t r = 0; r < a.rounds; r++)
				ns[r] = round_ns((enum way)w, &f, a.n, &sink);
			qsort(ns, a.rounds, sizeof(ns[0]), cmp_double);
			if (a.json) {
				qp_out_obj(&o, NULL);
				qp_out_u64(&o, "payload", payloads[k]);
				qp_out_u64(&o, "frame_bytes", f.len);
				qp_out_str(&o, "crc", way_name[w]);
				qp_out_double(&o, "ns_per_frame_p50", ns[a.rounds / 2], "%.1f");
				qp_out_double(&o, "min", ns[0], "%.1f");
				qp_out_double(&o, "max", ns[a.rounds - 1], "%.1f");
				qp_out_end(&o);
			} else {
				printf("%8zu %6zu %-11s %12.1f %10.1f %10.1f\n", payloads[k], f.len,
				       way_name[w], ns[a.rounds / 2], ns[0], ns[a.rounds - 1]);
			}
		}
	}
	if (a.json) {
		qp_out_end(&o);
		qp_out_end(&o);
	}
	if (sink == 42)   /* keep the results alive */
		fprintf(stderr, "\n");
	free(ns);
	return 0;
}
