#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""A trivial learning Ethernet switch over UDP, for the Soft-RoCE guest tests.

It uses qpace-switch's port convention so the same guest wiring works with both:
`--star N --base-port P` makes N ports; port i receives frames on 127.0.0.1:(P+2i) and
sends to 127.0.0.1:(P+2i+1), one Ethernet frame per datagram (QEMU's `-netdev dgram`).
Frames go to the port that last sent from their destination MAC, or to every other port
when that is unknown or a broadcast. No queueing model, no telemetry: this only proves the
wiring, and can write every frame it forwards to a pcap file (--pcap) for test vectors.

Bounded: it exits after --duration seconds (default 600) or on SIGTERM/SIGINT, and prints
its counters. Loopback addresses only.
"""
import argparse
import os
import selectors
import signal
import socket
import struct
import sys
import time

LINKTYPE_ETHERNET = 1
MAX_FRAME = 65535


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--star", type=int, required=True, help="number of ports (1-64)")
    ap.add_argument("--base-port", type=int, required=True, help="UDP base port P (even)")
    ap.add_argument("--pcap", help="write every forwarded frame to this pcap file")
    ap.add_argument("--duration", type=float, default=600.0, help="exit after S seconds")
    a = ap.parse_args()
    if not 1 <= a.star <= 64:
        ap.error(f"--star {a.star}: want 1-64 ports")
    if not 1024 <= a.base_port <= 65535 - 2 * a.star:
        ap.error(f"--base-port {a.base_port}: want 1024-{65535 - 2 * a.star}")
    if not 0 < a.duration <= 3600:
        ap.error(f"--duration {a.duration}: want 0-3600 s")
    return a


class Pcap:
    def __init__(self, path):
        self.f = open(path, "wb")
        self.f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, MAX_FRAME,
                                 LINKTYPE_ETHERNET))

    def write(self, frame):
        t = time.time()
        sec = int(t)
        self.f.write(struct.pack("<IIII", sec, int((t - sec) * 1e6), len(frame), len(frame)))
        self.f.write(frame)

    def close(self):
        self.f.close()


def main():
    a = parse_args()
    ports = []
    for i in range(a.star):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", a.base_port + 2 * i))
        s.setblocking(False)
        ports.append((s, ("127.0.0.1", a.base_port + 2 * i + 1)))
    pcap = Pcap(a.pcap) if a.pcap else None
    where = {}  # MAC -> port index
    rx = [0] * a.star
    tx = [0] * a.star
    runt = 0
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    sel = selectors.DefaultSelector()
    for i, (s, _) in enumerate(ports):
        sel.register(s, selectors.EVENT_READ, i)
    print(f"relay: {a.star} ports, base {a.base_port}, pid {os.getpid()}", flush=True)
    end = time.monotonic() + a.duration
    while not stop and time.monotonic() < end:
        for key, _ in sel.select(timeout=0.5):
            i = key.data
            s = ports[i][0]
            while True:
                try:
                    frame = s.recv(MAX_FRAME)
                except BlockingIOError:
                    break
                except InterruptedError:
                    continue
                rx[i] += 1
                if len(frame) < 14:
                    runt += 1
                    continue
                dst, src = frame[0:6], frame[6:12]
                if not src[0] & 1:
                    where[src] = i
                out = [where[dst]] if dst in where else [j for j in range(a.star) if j != i]
                if pcap:
                    pcap.write(frame)
                for j in out:
                    if j == i:
                        continue
                    try:
                        ports[j][0].sendto(frame, ports[j][1])
                        tx[j] += 1
                    except OSError:
                        pass  # nobody listening on that port yet: the frame is lost
    if pcap:
        pcap.close()
    print(f"relay: rx {rx} tx {tx} runt {runt}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
