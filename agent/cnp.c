/* The pure translations of DCQCN without a CNP-sending switch (cnp.h). */
#include "cnp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/frame.h"

int cnp_peer_qpn(const struct cnp_peers *p, uint32_t lqpn, uint32_t *rqpn)
{
	const struct rdma_nl_qp *q = rdma_nl_find(p->dump, p->ndump, lqpn, 0);

	if (q && (q->has & RDMA_NL_HAS_RQPN)) {
		*rqpn = q->rqpn;
		return 0;
	}
	for (size_t i = 0; i < p->npairs; i++) {
		if (p->pairs[i].lqpn == lqpn) {
			*rqpn = p->pairs[i].rqpn;
			return 0;
		}
	}
	return -ENOENT;
}

int cnp_payload(uint8_t *buf, size_t cap, uint32_t src_ip, uint16_t sport, uint32_t dst_ip,
		uint32_t dest_qpn)
{
	uint8_t frame[128];
	struct frame_roce_spec s = {
		.src = { .ip = src_ip, .port = sport },
		.dst = { .ip = dst_ip },
		.bth = { .opcode = FRAME_OP_CNP, .becn = true, .pkey = 0xffff,
			 .dest_qp = dest_qpn & 0xffffffu },
	};
	int n = frame_build_roce(frame, sizeof(frame), &s);
	const size_t off = FRAME_ETH_HLEN + FRAME_IPV4_HLEN + FRAME_UDP_HLEN;

	if (n < 0)
		return n;
	if (cap < CNP_UDP_PAYLOAD)
		return -EMSGSIZE;
	memcpy(buf, frame + off, CNP_UDP_PAYLOAD);
	return CNP_UDP_PAYLOAD;
}

static int parse_qpn(const char *s, char **end, uint32_t *out)
{
	unsigned long v;

	errno = 0;
	v = strtoul(s, end, 0);
	if (errno || *end == s || v > 0xffffffu)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int cnp_pairs_parse(const char *s, struct cnp_pair *out, size_t cap, char *err,
		    size_t errlen)
{
	size_t n = 0;

	if (!strcmp(s, "none"))
		return 0;
	while (*s) {
		const char *start = s;
		char *end;
		struct cnp_pair p;
		size_t plen = strcspn(s, ",");

		if (n == cap)
			return qp_errmsg(-EINVAL, err, errlen, "more than %zu pairs", cap);
		if (parse_qpn(s, &end, &p.lqpn) || *end != '=' ||
		    parse_qpn(end + 1, &end, &p.rqpn) || (*end && *end != ','))
			return qp_errmsg(-EINVAL, err, errlen, "'%.*s': not LQPN=PEER_QPN (QPNs "
					 "0..0xffffff)", (int)plen, start);
		out[n++] = p;
		s = *end ? end + 1 : end;
	}
	return (int)n;
}
