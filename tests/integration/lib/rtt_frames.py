# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Helpers of tests/integration/agent_tc_rtt.sh: RoCEv2 data frames that ask for an ACK,
and a responder that answers them as an RC responder does, through UDP sockets (the tc
programs see them as RoCEv2: UDP to 4791, a BTH; nothing checks the ICRC on the way).

  rtt_frames.py send DST_IP QPN COUNT GAP_US
      COUNT RDMA WRITE ONLY frames to DST_IP's QPN, PSN 0, 1, ..., AckReq set, 256 bytes
      of payload, at least GAP_US apart
  rtt_frames.py respond SECONDS LOCAL_QPN DELAY_US NAK_AT COUNT
      until COUNT frames are answered, or for SECONDS at most, each arriving data frame
      with AckReq is answered DELAY_US after it came (each on its own schedule: no answer
      waits for another) by an ACK (opcode 0x11, AETH syndrome 0x1f) of its PSN to the
      sender's LOCAL_QPN; the NAK_AT-th (from 0; -1: none) by a NAK with a PSN sequence
      error (syndrome 0x60) instead. Prints "ready" once its socket is bound, and
      "answered N, naks M" at the end.
"""
import socket
import struct
import sys
import time


def send(dst, qpn, count, gap_us):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    last = time.monotonic()
    for i in range(count):
        while gap_us and time.monotonic() < last + gap_us / 1e6:
            pass
        last = time.monotonic()
        bth = bytes([0x0a, 0, 0xff, 0xff, 0, qpn >> 16 & 0xff, qpn >> 8 & 0xff, qpn & 0xff])
        bth += struct.pack(">I", 0x80000000 | (i & 0xffffff))   # AckReq, PSN
        s.sendto(bth + bytes(16) + bytes(256) + bytes(4), (dst, 4791))
    print("sent %d frames" % count)


def respond(seconds, local_qpn, delay_us, nak_at, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 4791))
    print("ready", flush=True)
    end = time.monotonic() + seconds
    answered = naks = n = 0
    due = []   # (time, frame, address), in arrival order: each answered delay_us after it came
    while time.monotonic() < end and (n < count or due):
        now = time.monotonic()
        while due and due[0][0] <= now:
            _, f, addr = due.pop(0)
            s.sendto(f, addr)
        wait = min(0.05, due[0][0] - now) if due else 0.05
        s.settimeout(max(wait, 0.0001))
        try:
            f, (src, _) = s.recvfrom(4096)
        except socket.timeout:
            continue
        if len(f) < 12 or f[0] == 0x11 or not f[8] & 0x80:
            continue
        syn = 0x60 if n == nak_at else 0x1f
        n += 1
        bth = bytes([0x11, 0, 0xff, 0xff, 0, local_qpn >> 16 & 0xff, local_qpn >> 8 & 0xff,
                     local_qpn & 0xff, 0]) + f[9:12]
        due.append((time.monotonic() + delay_us / 1e6, bth + bytes([syn, 0, 0, 1]) + bytes(4),
                    (src, 4791)))
        if syn == 0x60:
            naks += 1
        else:
            answered += 1
    print("answered %d, naks %d" % (answered, naks))


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3], 0), int(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1] == "respond":
        respond(float(sys.argv[2]), int(sys.argv[3], 0), int(sys.argv[4]), int(sys.argv[5]),
                int(sys.argv[6]))
    else:
        sys.exit("usage: rtt_frames.py send|respond ...")
