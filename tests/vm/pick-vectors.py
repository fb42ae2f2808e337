#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Keep one frame of each RoCEv2 opcode from a capture, as test vectors.

    pick-vectors.py [--src A.B.C.D] CAPTURE.pcap OUT.pcap

Reads the frames tests/vm/relay.py wrote (the relay forwards kernel rxe's frames between
two guests), keeps the first IPv4/UDP-4791 frame of every BTH opcode (and, for the ACK
opcode, of every AETH syndrome class), checks each one's ICRC, and writes them, in opcode
order, to OUT.pcap. With --src, only frames from that IPv4 source are kept (every frame's
ICRC is still checked). Prints one line per kept frame. Exits 1 if a RoCEv2 frame in the
capture has a wrong ICRC or no frame was kept.

ICRC (references §9; IBTA annex A17): zlib's CRC-32 over 8 bytes of 0xFF, then the IPv4
header with TOS, TTL and header checksum set to all ones, the UDP header with its
checksum set to all ones, the BTH with byte 4 (FECN, BECN, reserved) set to 0xFF, then
the rest of the packet up to the ICRC, which is stored little-endian in the last 4 bytes.
"""
import struct
import sys
import zlib

ROCEV2_PORT = 4791
OPCODES = {
    0x00: "SEND_FIRST", 0x01: "SEND_MIDDLE", 0x02: "SEND_LAST", 0x03: "SEND_LAST_IMM",
    0x04: "SEND_ONLY", 0x05: "SEND_ONLY_IMM", 0x06: "WRITE_FIRST", 0x07: "WRITE_MIDDLE",
    0x08: "WRITE_LAST", 0x09: "WRITE_LAST_IMM", 0x0A: "WRITE_ONLY", 0x0B: "WRITE_ONLY_IMM",
    0x0C: "READ_REQUEST", 0x0D: "READ_RESPONSE_FIRST", 0x0E: "READ_RESPONSE_MIDDLE",
    0x0F: "READ_RESPONSE_LAST", 0x10: "READ_RESPONSE_ONLY", 0x11: "ACKNOWLEDGE",
    0x81: "CNP",
}


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError(f"{path}: {len(data)} bytes, shorter than a pcap header")
    magic = struct.unpack_from("<I", data)[0]
    if magic != 0xA1B2C3D4:
        raise ValueError(f"{path}: magic {magic:#x}: want a little-endian µs pcap")
    off = 24
    while off + 16 <= len(data):
        sec, usec, caplen, wirelen = struct.unpack_from("<IIII", data, off)
        off += 16
        if caplen > len(data) - off:
            raise ValueError(f"{path}: truncated record at byte {off}")
        yield sec, usec, data[off:off + caplen]
        off += caplen


def rocev2(frame):
    """(ip offset, ihl bytes, bth offset) for an IPv4 UDP-4791 frame, else None."""
    if len(frame) < 14 + 20 + 8 + 12 + 4 or frame[12:14] != b"\x08\x00":
        return None
    ihl = (frame[14] & 0x0F) * 4
    if frame[14] >> 4 != 4 or ihl < 20 or frame[14 + 9] != 17:
        return None
    udp = 14 + ihl
    if struct.unpack_from(">H", frame, udp + 2)[0] != ROCEV2_PORT:
        return None
    return 14, ihl, udp + 8


def icrc(frame, ip, ihl, bth):
    h = bytearray(frame[ip:len(frame) - 4])
    h[1] = 0xFF                       # TOS (DSCP + ECN)
    h[8] = 0xFF                       # TTL
    h[10:12] = b"\xff\xff"            # IPv4 header checksum
    h[ihl + 6:ihl + 8] = b"\xff\xff"  # UDP checksum
    h[bth - ip + 4] = 0xFF            # FECN, BECN, reserved
    return zlib.crc32(bytes(h), zlib.crc32(b"\xff" * 8)) & 0xFFFFFFFF


def main():
    args = sys.argv[1:]
    src = None
    if len(args) == 4 and args[0] == "--src":
        src = bytes(int(x) for x in args[1].split("."))
        args = args[2:]
    if len(args) != 2 or (src is not None and len(src) != 4):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    keep = {}
    seen = bad = 0
    for sec, usec, frame in read_pcap(args[0]):
        r = rocev2(frame)
        if not r:
            continue
        ip, ihl, bth = r
        seen += 1
        stored = struct.unpack_from("<I", frame, len(frame) - 4)[0]
        if icrc(frame, ip, ihl, bth) != stored:
            bad += 1
            continue
        if src is not None and frame[ip + 12:ip + 16] != src:
            continue
        op = frame[bth]
        # ACK: keep an ACK and a NAK apart (AETH syndrome's top 3 bits).
        key = (op, frame[bth + 12] >> 5) if op == 0x11 else (op, 0)
        keep.setdefault(key, (sec, usec, frame))
    if bad:
        print(f"pick-vectors: {bad} of {seen} RoCEv2 frames have a wrong ICRC", file=sys.stderr)
        return 1
    if not keep:
        print(f"pick-vectors: no RoCEv2 frame in {args[0]}", file=sys.stderr)
        return 1
    with open(args[1], "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for key in sorted(keep):
            sec, usec, frame = keep[key]
            out.write(struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame)
            bth = rocev2(frame)[2]
            psn = struct.unpack_from(">I", frame, bth + 8)[0] & 0xFFFFFF
            name = OPCODES.get(key[0], "?")
            if key[0] == 0x11:
                name += {0: " (ACK)", 1: " (RNR NAK)", 3: " (NAK)"}.get(key[1], " (?)")
            print(f"  {key[0]:#04x} {name:<24} {len(frame):5} bytes "
                  f"psn {psn:#08x} icrc {struct.unpack_from('<I', frame, len(frame) - 4)[0]:#010x}")
    print(f"pick-vectors: {seen} RoCEv2 frames, all ICRCs right; kept {len(keep)} in {args[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
