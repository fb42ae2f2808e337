/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Frames from a pcap file: see pcap_frames.h. */
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "pcap_frames.h"

int pcap_frames_load(const char *path, struct pcap_frame *out, size_t max, size_t *n)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p = pcap_open_offline(path, err);
	int rc = 0;

	if (!p) {
		fprintf(stderr, "%s: %s (run the tests from the repository's top folder)\n", path,
			err);
		return -1;
	}
	while (pcap_next_ex(p, &h, &data) == 1) {
		if (*n == max || h->caplen != h->len || h->caplen > PCAP_FRAME_MAX_BYTES) {
			fprintf(stderr, "%s: frame %zu: too many, cut short or over %d bytes\n",
				path, *n, PCAP_FRAME_MAX_BYTES);
			rc = -1;
			break;
		}
		memcpy(out[*n].b, data, h->caplen);
		out[*n].len = h->caplen;
		(*n)++;
	}
	pcap_close(p);
	return rc;
}
