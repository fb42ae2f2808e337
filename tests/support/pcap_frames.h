/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Frames from a pcap file (tests/vectors/), for tests that check qpace against captured
 * kernel rxe traffic. */
#ifndef QPACE_TEST_PCAP_FRAMES_H
#define QPACE_TEST_PCAP_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#define PCAP_FRAME_MAX_BYTES 2048

struct pcap_frame {
	uint8_t b[PCAP_FRAME_MAX_BYTES];
	size_t len;
};

/* Append every frame of @path to @out (which holds @max, *n used). 0, or -1 with a message
 * on stderr naming the file and the frame: the file cannot be opened (run the tests from
 * the repository's top folder), a frame was cut short by the capture, is larger than
 * PCAP_FRAME_MAX_BYTES, or does not fit in @out. */
int pcap_frames_load(const char *path, struct pcap_frame *out, size_t max, size_t *n);

#endif
