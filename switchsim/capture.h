/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Pcap capture of the frames ports send (all ports, or one), timestamped with the model's
 * leave time on the wall clock, so Wireshark shows the emulated link's spacing; in virtual
 * time (a wall offset of 0) the stamps are simulated time from 0, the same run after run. */
#ifndef SW_CAPTURE_H
#define SW_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/time.h"

struct sw_capture;
struct sw_port;

/* @wall_offset_ns: added to a leave time for the stamp (qp_wall_offset_ns() in real
 * time, 0 in virtual time). NULL with a message when the file cannot be written. */
struct sw_capture *sw_capture_open(const char *path, qp_time_ns wall_offset_ns, char *err,
				   size_t errlen);
void sw_capture_frame(struct sw_capture *c, const struct sw_port *p, const uint8_t *frame,
		      size_t len, qp_time_ns leave_ns);
void sw_capture_flush(struct sw_capture *c);
void sw_capture_close(struct sw_capture *c);
uint64_t sw_capture_count(const struct sw_capture *c);

#endif
