/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Independent ICRC (see icrc_ref.h). IBTA vol. 1 annex A17 / references §9: CRC-32 over
 * 8 bytes of 0xFF, the IPv4 header with TOS, TTL and checksum set to all ones, the UDP
 * header with its checksum set to all ones, the BTH with byte 4 set to 0xFF, and the rest
 * of the UDP payload up to the ICRC, which is stored little-endian. */
#include <stdlib.h>
#include <string.h>

#include "icrc_ref.h"

static uint32_t crc_step(uint32_t crc, uint8_t byte)
{
	crc ^= byte;
	for (int k = 0; k < 8; k++)
		crc = crc & 1 ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
	return crc;
}

bool icrc_ref(const uint8_t *f, size_t len, uint32_t *icrc)
{
	size_t ip = 14, ihl, udp, udp_len, end, i;
	uint32_t crc = 0xffffffffu;

	if (len < ip + 20 || f[12] != 0x08 || f[13] != 0x00 || f[ip] >> 4 != 4)
		return false;
	ihl = (size_t)(f[ip] & 15) * 4;
	udp = ip + ihl;
	if (ihl < 20 || f[ip + 9] != 17 || len < udp + 8)
		return false;
	udp_len = (size_t)f[udp + 4] << 8 | f[udp + 5];
	end = udp + udp_len;
	if (udp_len < 8 + 12 + 4 || end > len)
		return false;
	for (i = 0; i < 8; i++)
		crc = crc_step(crc, 0xff);
	for (i = ip; i < end - 4; i++) {
		size_t o = i - ip;
		bool masked = o == 1 || o == 8 || o == 10 || o == 11 ||    /* TOS, TTL, csum */
			      o == ihl + 6 || o == ihl + 7 ||              /* UDP checksum */
			      o == ihl + 8 + 4;                            /* BTH FECN/BECN/resv */
		crc = crc_step(crc, masked ? 0xff : f[i]);
	}
	*icrc = ~crc;
	return true;
}

bool icrc_ref_ok(const uint8_t *f, size_t len)
{
	uint32_t want, got;
	size_t udp, end;

	if (!icrc_ref(f, len, &want))
		return false;
	udp = 14 + (size_t)(f[14] & 15) * 4;
	end = udp + ((size_t)f[udp + 4] << 8 | f[udp + 5]);
	got = (uint32_t)f[end - 4] | (uint32_t)f[end - 3] << 8 | (uint32_t)f[end - 2] << 16 |
	      (uint32_t)f[end - 1] << 24;
	return got == want;
}
