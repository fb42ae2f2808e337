/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: link impairments. The first line is an --impair spec (the parser a
 * command line or topology file feeds); when it parses, the rest is frames, each a
 * 2-byte length, a 1-byte time step (us) and the bytes, judged and taken out of the delay
 * lines as a port would (corruption parses the frame it flips). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../switchsim/impair.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t n = nl ? (size_t)(nl - data) : size;
	struct sw_impair_params p;
	struct sw_impair_out o;
	struct sw_impair *im;
	uint8_t frame[9216], meta[64] = { 0 };
	char spec[300], err[400];
	qp_time_ns t = 0;

	if (n >= sizeof(spec))
		return 0;
	memcpy(spec, data, n);
	spec[n] = 0;
	if (sw_impair_parse(&p, spec, err, sizeof(err)) || !sw_impair_on(&p))
		return 0;
	sw_impair_format(&p, spec, sizeof(spec));
	im = sw_impair_create(&p, 10000000, sizeof(meta), err, sizeof(err));   /* 10 Mb/s: small lines */
	if (!im)
		return 0;
	data += n + (nl != NULL);
	size -= n + (nl != NULL);
	while (size >= 3) {
		size_t len = (size_t)data[0] << 8 | data[1];
		t += (qp_time_ns)data[2] * 1000;
		data += 3;
		size -= 3;
		len = len < size ? len : size;
		memcpy(frame, data, len);
		data += len;
		size -= len;
		while (sw_impair_next_ns(im) <= t && sw_impair_take(im, &o))
			sw_impair_release(im);
		sw_impair_frame(im, frame, (uint16_t)len, len & 1 ? meta : NULL, sizeof(meta), t);
	}
	while (sw_impair_take(im, &o))
		;
	sw_impair_release(im);
	sw_impair_destroy(im);
	return 0;
}
