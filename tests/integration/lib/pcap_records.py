# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Helpers of the tests that read a switch's --pcap capture (bench_incast.sh,
vt_determinism.sh): the records of a little-endian libpcap file (independent of libpcap),
and how many frames a --stats-json says the switch sent.

  pcap_records.py count PCAP JSON   -> "RECORDS SENT": the capture's records (-1 when the
                                       file is not a pcap or ends inside a record) and the
                                       sum of every port's tx_frames in JSON
  pcap_records.py compare A B JSON  -> two captures of one command: exit 0 when both hold
                                       a record for every frame JSON says was sent, with
                                       the same stamps and lengths, and differ at most in
                                       the RDMA WRITEs' RETH address (bytes 56-61) and
                                       the ICRC
"""
import json
import struct
import sys

RETH_VA = set(range(56, 62))   # 14 Ethernet + 20 IPv4 + 8 UDP + 12 BTH = 54; VA: 54-61


def records(path):
    """[(seconds, microseconds, frame bytes)], or None for a bad or truncated file."""
    d = open(path, "rb").read()
    if d[:4] != b"\xd4\xc3\xb2\xa1":
        return None
    out, o = [], 24
    while o + 16 <= len(d):
        s, us, cl, _ = struct.unpack("<IIII", d[o:o + 16])
        out.append((s, us, d[o + 16:o + 16 + cl]))
        o += 16 + cl
    return out if o == len(d) else None


def sent(json_path):
    sw = json.load(open(json_path))
    return sum(p.get("tx_frames", 0) for s in sw["switches"] for p in s["ports"])


def compare(a_path, b_path, json_path):
    a, b, n = records(a_path), records(b_path), sent(json_path)
    if a is None or b is None:
        print("  pcap: not a whole capture")
        return False
    pos = set()
    for x, y in zip(a, b):
        if x[2] != y[2] and len(x[2]) == len(y[2]):
            last = len(x[2]) - 4
            pos |= {j if j < last else "icrc" for j in range(len(x[2])) if x[2][j] != y[2][j]}
    same = all(x[:2] == y[:2] and len(x[2]) == len(y[2]) for x, y in zip(a, b))
    print(f"  pcap: {len(a)} and {len(b)} records, the switch sent {n}; stamps and lengths "
          f"{'the same' if same else 'DIFFER'}; bytes that differ: {sorted(pos, key=str)}")
    return len(a) == len(b) == n > 0 and same and pos <= RETH_VA | {"icrc"}


def main(argv):
    if len(argv) == 4 and argv[1] == "count":
        r = records(argv[2])
        print(-1 if r is None else len(r), sent(argv[3]))
        return 0
    if len(argv) == 5 and argv[1] == "compare":
        return 0 if compare(argv[2], argv[3], argv[4]) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
