# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Helpers of tests/integration/agent_ipv6.sh: RoCEv2 over IPv6, as rxe sends it on GID
index 0 (the netdev's link-local address). Send RoCEv2 data frames (RC SEND only + 16
bytes + payload + ICRC field) from a UDP socket with a chosen traffic class, and capture
the IPv6 CNPs that arrive on a device (AF_PACKET), checking each one's bytes: next header
UDP, UDP to 4791 of length 40 with a right checksum (IPv6 pseudo-header: IPv6 has no
checksum-less UDP), BTH opcode 0x81 with BECN, P-key 0xffff, the destination QPN, 16
reserved zero bytes, and the ICRC computed here (zlib's crc32 over the IPv6 header with
traffic class, flow label and hop limit masked, the UDP header with its checksum masked,
the BTH with byte 4 masked; IBTA A17, independent of lib/frame.c).

  roce6_frames.py send DST%IFACE QPN COUNT GAP_US TCLASS [PAYLOAD]
                                         -> "sent N frames of L bytes in T ms" (L: Ethernet)
  roce6_frames.py capture IFACE SECONDS  -> one line per CNP: t_us src dst qpn hop, then
                                            ok or BAD:the checks that failed
"""
import socket
import struct
import sys
import time
import zlib

from ecn_frames import frames_in


def send(dst, qpn, count, gap_us, tclass, payload):
    host, port, flow, scope = socket.getaddrinfo(dst, 4791, socket.AF_INET6,
                                                 socket.SOCK_DGRAM)[0][4]
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, tclass)
    bth = bytes([0x04, 0, 0xff, 0xff, 0, qpn >> 16 & 0xff, qpn >> 8 & 0xff, qpn & 0xff])
    body = bytes(16) + bytes(payload) + bytes(4)
    t0 = last = time.monotonic()
    for i in range(count):
        while gap_us and time.monotonic() < last + gap_us / 1e6:
            pass
        last = time.monotonic()
        s.sendto(bth + struct.pack(">I", i & 0xffffff) + body, (host, port, flow, scope))
    print("sent %d frames of %d bytes in %.1f ms" % (count, 14 + 40 + 8 + 12 + len(body),
                                                   (time.monotonic() - t0) * 1e3))


def fold(data):
    data += b"\0" if len(data) % 2 else b""
    s = sum(struct.unpack(">%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def udp6_csum_ok(ip, udp):
    """The checksum is right, or the frame came with it still to be completed by the
    device (veth passes the sender's CHECKSUM_PARTIAL on: the field holds the folded
    pseudo-header sum, as lib/frame.c's frame_complete_partial_csum expects)."""
    pseudo = ip[8:40] + struct.pack(">IxxxB", len(udp), 17)
    if udp[6:8] == b"\0\0":
        return False    # IPv6 has no checksum-less UDP
    return fold(pseudo + udp) == 0xffff or (udp[6] << 8 | udp[7]) == fold(pseudo)


def icrc_ok(ip, udp):
    hdr = bytearray(ip[:40] + udp[:8 + 12])
    hdr[0] |= 0x0f
    hdr[1] = hdr[2] = hdr[3] = 0xff
    hdr[7] = 0xff
    hdr[40 + 6] = hdr[40 + 7] = 0xff
    hdr[40 + 8 + 4] = 0xff
    crc = zlib.crc32(b"\xff" * 8)
    crc = zlib.crc32(bytes(hdr), crc)
    crc = zlib.crc32(udp[8 + 12:-4], crc)
    return crc == struct.unpack("<I", udp[-4:])[0]


def capture(iface, seconds):
    for f in frames_in(iface, 0x86dd, seconds, 14 + 40 + 8 + 12):
        ip = f[14:54]
        plen = ip[4] << 8 | ip[5]
        udp = f[54:54 + plen]
        if ip[6] != 17 or len(udp) < 8 + 12 or (udp[2] << 8 | udp[3]) != 4791:
            continue
        bth = udp[8:]
        if bth[0] != 0x81:
            continue
        checks = [("length", (udp[4] << 8 | udp[5]) == 8 + 32 == plen),
                  ("udp checksum", udp6_csum_ok(ip, udp)), ("becn", bth[4] & 0x40),
                  ("pkey", bth[2:4] == b"\xff\xff"), ("reserved", bth[12:28] == bytes(16)),
                  ("icrc", icrc_ok(ip, udp))]
        bad = [n for n, c in checks if not c]
        ok = not bad
        qpn = bth[5] << 16 | bth[6] << 8 | bth[7]
        print("%d %s %s 0x%06x %d %s" % (time.monotonic() * 1e6,
                                         socket.inet_ntop(socket.AF_INET6, ip[8:24]),
                                         socket.inet_ntop(socket.AF_INET6, ip[24:40]), qpn,
                                         ip[7], "ok" if ok else "BAD:" + ",".join(bad)),
              flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3], 0), int(sys.argv[4]), int(sys.argv[5]),
             int(sys.argv[6], 0), int(sys.argv[7]) if len(sys.argv) > 7 else 256)
    else:
        capture(sys.argv[2], float(sys.argv[3]))
