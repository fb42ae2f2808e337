# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Helpers of tests/integration/agent_ecn.sh: send RoCEv2 data frames with a chosen ECN
(a UDP socket with IP_TOS), and capture the CNPs that arrive on a device (AF_PACKET),
checking each one's bytes: IPv4 header checksum, UDP to 4791, BTH opcode 0x81 with BECN,
P-key 0xffff, the destination QPN, 16 reserved zero bytes, and the ICRC computed here
(zlib's crc32 over the masked headers, IBTA A17; independent of lib/frame.c).

  ecn_frames.py send DST_IP QPN COUNT GAP_US TOS
  ecn_frames.py capture IFACE SECONDS      -> one line per CNP: t_us src dst qpn icrc_ok
  ecn_frames.py tos IFACE SECONDS          -> one line per arriving RoCEv2 data frame:
                                              TOS (hex) and whether the IPv4 checksum holds
"""
import socket
import struct
import sys
import time
import zlib


def send(dst, qpn, count, gap_us, tos):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    bth = bytes([0x0a, 0, 0xff, 0xff, 0, qpn >> 16 & 0xff, qpn >> 8 & 0xff, qpn & 0xff])
    reth = bytes(16)
    t0 = last = time.monotonic()
    for i in range(count):
        psn = struct.pack(">I", i & 0xffffff)
        # at least gap_us after the last one (a late frame is not made up for by a burst)
        while gap_us and time.monotonic() < last + gap_us / 1e6:
            pass
        last = time.monotonic()
        s.sendto(bth + psn + reth + bytes(256) + bytes(4), (dst, 4791))
    print("sent %d frames in %.1f ms" % (count, (time.monotonic() - t0) * 1e3))


def icrc(frame, ip_off):
    ihl = (frame[ip_off] & 0x0f) * 4
    udp_off = ip_off + ihl
    udp_len = frame[udp_off + 4] << 8 | frame[udp_off + 5]
    hdr = bytearray(frame[ip_off:udp_off + 8 + 12])
    hdr[1] = 0xff
    hdr[8] = 0xff
    hdr[10] = hdr[11] = 0xff
    hdr[ihl + 6] = hdr[ihl + 7] = 0xff
    hdr[ihl + 8 + 4] = 0xff
    end = udp_off + udp_len - 4
    crc = zlib.crc32(b"\xff" * 8)
    crc = zlib.crc32(bytes(hdr), crc)
    crc = zlib.crc32(frame[udp_off + 8 + 12:end], crc)
    return crc == struct.unpack("<I", frame[end:end + 4])[0]


def ip_csum_ok(h):
    s = sum(struct.unpack(">%dH" % (len(h) // 2), h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s == 0xffff


def frames_in(iface, ethertype, seconds, least):
    """Each frame of @ethertype arriving on @iface (not sent) of at least @least bytes,
    for @seconds (also used by roce6_frames.py)."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ethertype))
    s.bind((iface, 0))
    s.settimeout(0.2)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            f, addr = s.recvfrom(4096)
        except socket.timeout:
            continue
        if addr[2] != socket.PACKET_OUTGOING and len(f) >= least:
            yield f


def roce_in(iface, seconds):
    """Each arriving IPv4 RoCEv2 frame: (frame, offset of UDP, offset of BTH)."""
    for f in frames_in(iface, 0x0800, seconds, 14 + 20 + 8 + 12):
        ihl = (f[14] & 0x0f) * 4
        udp = 14 + ihl
        if f[14 + 9] == 17 and (f[udp + 2] << 8 | f[udp + 3]) == 4791:
            yield f, udp, udp + 8


def tos(iface, seconds):
    for f, udp, bth in roce_in(iface, seconds):
        if f[bth] != 0x81:
            print("0x%02x %s" % (f[15], "ok" if ip_csum_ok(f[14:udp]) else "BAD"), flush=True)


def capture(iface, seconds):
    ip = 14
    for f, udp, bth in roce_in(iface, seconds):
        if f[bth] != 0x81:
            continue
        ok = (ip_csum_ok(f[ip:udp]) and f[bth + 4] & 0x40 and f[bth + 2:bth + 4] == b"\xff\xff"
              and (f[udp + 4] << 8 | f[udp + 5]) == 8 + 32 and f[bth + 12:bth + 28] == bytes(16)
              and icrc(f, ip))
        qpn = f[bth + 5] << 16 | f[bth + 6] << 8 | f[bth + 7]
        print("%d %s %s 0x%06x %s" % (time.monotonic() * 1e6, socket.inet_ntoa(f[ip + 12:ip + 16]),
                                      socket.inet_ntoa(f[ip + 16:ip + 20]), qpn,
                                      "ok" if ok else "BAD"), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3], 0), int(sys.argv[4]), int(sys.argv[5]),
             int(sys.argv[6], 0))
    elif sys.argv[1] == "tos":
        tos(sys.argv[2], float(sys.argv[3]))
    else:
        capture(sys.argv[2], float(sys.argv[3]))
