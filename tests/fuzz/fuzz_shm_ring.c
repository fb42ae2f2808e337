/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: a shm port's rings (qpace/shm_ring.h) under a hostile peer. The input
 * is a script: each step either writes a 32-bit word anywhere in the region's control page
 * or a slot header (what a peer can do at any time), or the honest side pushes a frame,
 * publishes, pops, releases, arms. Properties: no out-of-bounds access (ASan), every pop
 * returns a length within the buffer or an error, and the consumer's counters account for
 * every pop: frames, or bad lengths and indices. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/shm_ring.h"
#include "fuzz_input.h"

#define NSLOTS 8u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t mem[4096 + 2 * NSLOTS * SHM_SLOT_BYTES] __attribute__((aligned(4096)));
	/* frame: one byte more than a slot takes, to push an oversized frame too */
	static uint8_t out[SHM_FRAME_MAX], frame[SHM_FRAME_MAX + 1];
	struct shm_region sw, host;
	struct fz f = { data, size };
	uint64_t frames = 0, errors = 0;

	memset(mem, 0, sizeof(mem));
	shm_region_over(&sw, mem, NSLOTS, true);
	shm_region_over(&host, mem, NSLOTS, false);
	for (int step = 0; step < 400 && f.n; step++) {
		uint8_t op = fz_u8(&f);
		qp_time_ns ts;
		int len;

		switch (op % 8) {
		case 0: {   /* the peer writes a word of the control page */
			uint32_t off = (uint32_t)fz_num(&f, 2) % (4096 / 4) * 4;
			uint32_t v = (uint32_t)fz_num(&f, 4);
			memcpy(mem + off, &v, 4);
			break;
		}
		case 1: {   /* the peer writes a slot's length or time stamp */
			uint32_t slot = (uint32_t)fz_num(&f, 1) % (2 * NSLOTS);
			uint32_t v = (uint32_t)fz_num(&f, 4);
			memcpy(mem + 4096 + (size_t)slot * SHM_SLOT_BYTES + (op & 8 ? 8 : 0), &v, 4);
			break;
		}
		case 2:
		case 3:     /* the honest host pushes and publishes */
			len = (int)(fz_num(&f, 2) % (SHM_FRAME_MAX + 2));
			memset(frame, op, (size_t)len);
			shm_ring_push(&host.tx, frame, (size_t)len, 1);
			shm_ring_publish(&host.tx);
			break;
		case 4:
		case 5: {   /* the switch pops into a buffer of some size */
			size_t cap = (size_t)fz_num(&f, 2) % (SHM_FRAME_MAX + 1);
			len = shm_ring_pop(&sw.rx, out, cap, &ts);
			if (len > (int)cap)
				abort();
			frames += len > 0;
			errors += len < 0;
			break;
		}
		case 6:
			shm_ring_release(&sw.rx);
			break;
		default:    /* the switch arms, the host publishes, the switch disarms */
			shm_ring_arm(&sw.rx);
			shm_ring_publish(&host.tx);
			shm_ring_disarm(&sw.rx);
			break;
		}
		/* the switch's own ring, with the host consuming: the same, the other way */
		if (op & 16) {
			shm_ring_push(&sw.tx, frame, 64, 0);
			shm_ring_publish(&sw.tx);
			if (shm_ring_pop(&host.rx, out, sizeof(out), &ts) > (int)sizeof(out))
				abort();
			shm_ring_release(&host.rx);
		}
	}
	if (sw.rx.st.frames != frames || sw.rx.st.bad_len + sw.rx.st.bad_index != errors)
		abort();
	return 0;
}
