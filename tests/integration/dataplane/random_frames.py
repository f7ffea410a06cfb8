#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Deterministic random and mutated Ethernet frames for the sanitizer replay
(0004_random_frames_0.sh): plain struct, no scapy, a fixed seed.

    random_frames.py OUT0.pcap OUT1.pcap [COUNT] [SEED]

About a tenth of the frames are random bytes, the rest are well-formed
frames (TCP, UDP, ICMP, v4 and v6, extension headers, IP options, VLAN
tags, fragments, ARP) that are then mutated: bytes flipped or set, length
fields made to lie, extension and option lengths changed, the frame cut.
Frames go to OUT0 and OUT1 (the rx captures of ports 0 and 1) at random,
COUNT in all (default 100000).
"""

import random
import struct
import sys


def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def l4(r, proto):
    if proto == 6:
        opts = b''
        if r.random() < 0.5:
            opts = bytes([2, 4, 5, 0xb4, 1, 3, 3, 7, 4, 2, 8, 10]) + struct.pack('!II', 1, 0) + b'\1\1'
        off = (20 + len(opts)) // 4
        return struct.pack('!HHIIBBHHH', r.randrange(1, 65536), r.choice([22, 23, 80, 443, 8000, 8080, 8002, 21, 28]),
                           r.getrandbits(32), r.getrandbits(32), off << 4, r.choice([2, 0x12, 0x10, 0x18, 0x11, 4, 0x29]),
                           65535, 0, 0) + opts + bytes(r.randrange(0, 64))
    if proto == 17:
        pay = bytes(r.randrange(0, 64))
        return struct.pack('!HHHH', r.randrange(1, 65536), r.choice([53, 24, 25, 26, 29, 7001, 7002, 7003, 8001, 9999, 5353]),
                           8 + len(pay), 0) + pay
    if proto in (1, 58):
        t = r.choice([0, 3, 8, 11, 13] if proto == 1 else [1, 3, 128, 129, 135, 2])
        return struct.pack('!BBHHH', t, r.randrange(0, 5), 0, r.randrange(65536), 1) + bytes(r.randrange(0, 48))
    return bytes(r.randrange(0, 40))


def fix_l4(r, pseudo, proto, seg):
    off = {6: 16, 17: 6, 1: 2, 58: 2}.get(proto)
    if off is None or len(seg) < off + 2 or r.random() < 0.05:
        return seg
    seg = bytearray(seg)
    seg[off:off + 2] = b'\0\0'
    c = csum(bytes(seg) if proto == 1 else pseudo + bytes(seg))
    seg[off:off + 2] = struct.pack('!H', c)
    return bytes(seg)


def addr4(r):
    return bytes([10, r.choice([1, 2, 66, 77]), r.choice([0, 1, 2, 3, 255]), r.randrange(1, 255)])


def addr6(r):
    return bytes([0xfd, 0, 0, r.choice([1, 2, 0x77])]) + bytes(10) + bytes([0, r.randrange(1, 4)])


def ip4(r):
    proto = r.choice([6, 6, 17, 17, 1, 132, 50, 47])
    seg = l4(r, proto)
    opts = b''
    if r.random() < 0.15:
        opts = r.choice([bytes([7, 11, 4]) + bytes(8) + b'\0', bytes([131, 7, 4]) + bytes(4) + b'\0',
                         bytes([148, 4, 0, 0]), bytes([137, 3, 4, 0])])
    ihl = 5 + len(opts) // 4
    src, dst = addr4(r), addr4(r)
    frag = 0
    if r.random() < 0.1:
        frag = r.choice([0x2000, 0x2000 | r.randrange(1, 200), r.randrange(1, 200), 0x4000])
    pseudo = src + dst + struct.pack('!BBH', 0, proto, len(seg))
    seg = fix_l4(r, pseudo, proto, seg)
    hdr = struct.pack('!BBHHHBBH4s4s', 0x40 | ihl, r.choice([0, 46 << 2, 1]), 20 + len(opts) + len(seg),
                      r.randrange(65536), frag, r.choice([64, 64, 1, 2]), proto, 0, src, dst) + opts
    hdr = hdr[:10] + struct.pack('!H', csum(hdr)) + hdr[12:]
    return 0x0800, hdr + seg


def ip6(r):
    proto = r.choice([6, 17, 58, 59])
    seg = l4(r, proto)
    src, dst = addr6(r), addr6(r)
    pseudo = src + dst + struct.pack('!IxxxB', len(seg), proto)
    seg = fix_l4(r, pseudo, proto, seg)
    nh, ext = proto, b''
    for _ in range(r.choice([0, 0, 1, 2])):
        t = r.choice([0, 43, 44, 60])
        if t == 44:
            h = struct.pack('!BBHI', nh, 0, r.choice([1, 8, 0x10 | 1]), r.getrandbits(32))
        elif t == 43:
            h = struct.pack('!BBBB', nh, 2, 0, 1) + bytes(4) + dst
        else:
            h = struct.pack('!BB', nh, 0) + bytes([1, 4, 0, 0, 0, 0])
        nh, ext = t, h + ext
    if r.random() < 0.05:  # issue 11: a header that claims 2048 bytes
        nh, ext = 60, bytes([nh, 255, 1, 4, 0, 0, 0, 0]) + ext
    hdr = struct.pack('!IHBB16s16s', 0x60000000, len(ext) + len(seg), nh, r.choice([64, 1]), src, dst)
    return 0x86dd, hdr + ext + seg


def frame(r):
    if r.random() < 0.1:
        return bytes(r.getrandbits(8) for _ in range(r.randrange(0, 200)))
    kind = r.random()
    if kind < 0.03:
        et, body = 0x0806, struct.pack('!HHBBH', 1, 0x0800, 6, 4, 1) + bytes(20)
    elif kind < 0.55:
        et, body = ip4(r)
    else:
        et, body = ip6(r)
    dst = r.choice([b'\x02\0\0\0\0\x10'] * 6 + [b'\xff' * 6, b'\x01\0\x5e\0\0\1', b'\x02\0\0\0\0\x11'])
    src = b'\x02\0\0\0\0\x66' if r.random() < 0.05 else b'\x02\0\0\0\1\x10'
    tags = b''
    if r.random() < 0.08:
        tags = struct.pack('!HH', 0x8100, r.choice([0, 100, 5]))
        if r.random() < 0.3:
            tags = struct.pack('!HH', 0x88a8, 7) + tags
    f = bytearray(dst + src + tags + struct.pack('!H', et) + body)
    # mutations
    for _ in range(r.choice([0, 0, 1, 1, 2, 4])):
        m = r.random()
        if m < 0.4 and len(f) > 14:
            i = r.randrange(14, len(f))
            f[i] = r.getrandbits(8) if r.random() < 0.5 else f[i] ^ (1 << r.randrange(8))
        elif m < 0.6 and len(f) > 20:
            # an IP length field or a header length made to lie
            i = 14 + len(tags) + r.choice([0, 2, 3, 4, 5, 41, 42, 21])
            if i < len(f):
                f[i] = r.getrandbits(8)
        elif m < 0.8:
            f = f[:r.randrange(0, len(f) + 1)]
        else:
            f += bytes(r.getrandbits(8) for _ in range(r.randrange(1, 32)))
    return bytes(f)


def main():
    out0, out1 = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    r = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 11)
    fs = [open(out0, 'wb'), open(out1, 'wb')]
    for f in fs:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(count):
        data = frame(r)
        # an Ethernet header at least: net_pcap passes anything, but a
        # frame the wire could not carry says nothing
        fs[r.random() < 0.3].write(struct.pack('<IIII', 1000 + i // 1000000, i % 1000000,
                                               len(data), len(data)) + data)
    for f in fs:
        f.close()


if __name__ == '__main__':
    main()
