/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* perftest's out-of-band exchange: the codecs (qpace/pt_wire.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qpace/bytes.h"
#include "qpace/pt_wire.h"

int pt_version_encode(uint8_t out[PT_VERSION_LEN], const char *ver)
{
	size_t n = strlen(ver);

	if (n >= PT_VERSION_LEN)
		return -EINVAL;
	memset(out, 0, PT_VERSION_LEN);
	memcpy(out, ver, n);
	return PT_VERSION_LEN;
}

int pt_version_decode(unsigned *x100, const uint8_t *buf, size_t len)
{
	unsigned major = 0, minor = 0, nminor = 0;
	size_t i = 0;

	if (len < PT_VERSION_LEN)
		return -EMSGSIZE;
	/* digits, one dot, one or two digits, then NULs to the end */
	for (; i < 4 && buf[i] >= '0' && buf[i] <= '9'; i++)
		major = major * 10 + (unsigned)(buf[i] - '0');
	if (i == 0 || buf[i] != '.')
		return -EBADMSG;
	for (i++; nminor < 2 && buf[i] >= '0' && buf[i] <= '9'; i++, nminor++)
		minor = minor * 10 + (unsigned)(buf[i] - '0');
	if (nminor == 0)
		return -EBADMSG;
	for (; i < PT_VERSION_LEN; i++)
		if (buf[i])
			return -EBADMSG;
	*x100 = major * 100 + (nminor == 1 ? minor * 10 : minor);
	return PT_VERSION_LEN;
}

void pt_u32_encode(uint8_t out[PT_SYS_LEN], uint32_t v)
{
	qp_put32(out, v);
}

int pt_u32_decode(uint32_t *v, const uint8_t *buf, size_t len)
{
	if (len < PT_SYS_LEN)
		return -EMSGSIZE;
	*v = qp_get32(buf);
	return PT_SYS_LEN;
}

/* IB's MTU enum: 1 = 256 ... 5 = 4096. */
int pt_mtu_encode(uint8_t out[PT_MTU_LEN], uint32_t mtu_bytes)
{
	for (unsigned e = 1; e <= 5; e++)
		if (mtu_bytes == 128u << e) {
			out[0] = (uint8_t)('0' + e);
			out[1] = 0;
			return PT_MTU_LEN;
		}
	return -EINVAL;
}

int pt_mtu_decode(uint32_t *mtu_bytes, const uint8_t *buf, size_t len)
{
	if (len < PT_MTU_LEN)
		return -EMSGSIZE;
	if (buf[0] < '1' || buf[0] > '5' || buf[1])
		return -EBADMSG;
	*mtu_bytes = 128u << (buf[0] - '0');
	return PT_MTU_LEN;
}

int pt_key_encode(uint8_t out[PT_KEY_LEN], const struct pt_key *k)
{
	char s[PT_KEY_LEN + 1];
	int n;

	if (k->qpn > 0xffffff || k->psn > 0xffffff)
		return -EINVAL;
	n = snprintf(s, sizeof(s), "%04x:%04x:%06x:%06x:%08x:%016llx:", k->lid, k->out_reads,
		     k->qpn, k->psn, k->rkey, (unsigned long long)k->vaddr);
	for (int i = 0; i < 16; i++)
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%02x:", k->gid[i]);
	n += snprintf(s + n, sizeof(s) - (size_t)n, "%08x:", k->srqn);
	if (n != PT_KEY_LEN - 1)
		return -EINVAL;
	memcpy(out, s, PT_KEY_LEN);   /* with its NUL */
	return PT_KEY_LEN;
}

/* @digits lowercase or uppercase hex digits at @p, then a colon; their value. */
static int hex_field(const uint8_t *p, unsigned digits, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned i = 0; i < digits; i++) {
		uint8_t c = p[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -EBADMSG;
		x = x << 4 | d;
	}
	if (p[digits] != ':')
		return -EBADMSG;
	*v = x;
	return (int)digits + 1;
}

int pt_key_decode(struct pt_key *out, const uint8_t *buf, size_t len)
{
	static const uint8_t widths[6] = { 4, 4, 6, 6, 8, 16 };
	uint64_t v[6], g;
	struct pt_key k;
	size_t off = 0;
	int rc;

	if (len < PT_KEY_LEN)
		return -EMSGSIZE;
	for (int i = 0; i < 6; i++) {
		if ((rc = hex_field(buf + off, widths[i], &v[i])) < 0)
			return rc;
		off += (size_t)rc;
	}
	memset(&k, 0, sizeof(k));
	k.lid = (uint16_t)v[0];
	k.out_reads = (uint16_t)v[1];
	k.qpn = (uint32_t)v[2];
	k.psn = (uint32_t)v[3];
	k.rkey = (uint32_t)v[4];
	k.vaddr = v[5];
	for (int i = 0; i < 16; i++) {
		if ((rc = hex_field(buf + off, 2, &g)) < 0)
			return rc;
		k.gid[i] = (uint8_t)g;
		off += (size_t)rc;
	}
	if ((rc = hex_field(buf + off, 8, &g)) < 0)
		return rc;
	k.srqn = (uint32_t)g;
	off += (size_t)rc;
	if (off != PT_KEY_LEN - 1 || buf[off])
		return -EBADMSG;
	*out = k;
	return PT_KEY_LEN;
}

void pt_u64_encode(uint8_t out[PT_REPORT_FIELD_LEN], uint64_t v)
{
	qp_put64(out, v);
}

int pt_u64_decode(uint64_t *v, const uint8_t *buf, size_t len)
{
	if (len < PT_REPORT_FIELD_LEN)
		return -EMSGSIZE;
	*v = qp_get64(buf);
	return PT_REPORT_FIELD_LEN;
}

void pt_double_encode(uint8_t out[PT_REPORT_FIELD_LEN], double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	qp_put64(out, bits);
}

int pt_double_decode(double *v, const uint8_t *buf, size_t len)
{
	uint64_t bits;
	double d;

	if (len < PT_REPORT_FIELD_LEN)
		return -EMSGSIZE;
	bits = qp_get64(buf);
	memcpy(&d, &bits, sizeof(d));
	if (!isfinite(d))
		return -EBADMSG;
	*v = d;
	return PT_REPORT_FIELD_LEN;
}
