#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Writes packets.txt: named IPv4/IPv6 packets (from the network header on)
# for the VM tables in cases.txt. Run: python3 gen_packets.py > packets.txt
import socket
import struct


def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def ip4(src, dst, proto, payload, ttl=64, tos=0, opts=b'', frag=0, ident=1):
    ihl = 5 + len(opts) // 4
    tot = ihl * 4 + len(payload)
    h = struct.pack('!BBHHHBBH4s4s', 0x40 | ihl, tos, tot, ident, frag, ttl, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst)) + opts
    c = csum(h)
    h = h[:10] + struct.pack('!H', c) + h[12:]
    return h + payload


def pseudo4(src, dst, proto, l4):
    return socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack('!BBH', 0, proto, len(l4))


def pseudo6(src, dst, proto, l4):
    return (socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst) +
            struct.pack('!IxxxB', len(l4), proto))


def tcp(sport, dport, flags, opts=b'', payload=b'', ph=None):
    doff = 5 + len(opts) // 4
    h = struct.pack('!HHIIBBHHH', sport, dport, 1000, 0, doff << 4, flags, 65535, 0, 0) + opts
    seg = h + payload
    if ph:
        c = csum(ph(seg) + seg)
        seg = seg[:16] + struct.pack('!H', c) + seg[18:]
    return seg


def udp(sport, dport, payload, ph=None, zero_csum=False):
    seg = struct.pack('!HHHH', sport, dport, 8 + len(payload), 0) + payload
    if ph and not zero_csum:
        c = csum(ph(seg) + seg) or 0xffff
        seg = seg[:6] + struct.pack('!H', c) + seg[8:]
    return seg


def ip6(src, dst, nh, payload, hlim=64):
    return struct.pack('!IHBB16s16s', 0x60000000, len(payload), nh, hlim,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + payload


pk = {}
a, b = '10.0.0.1', '192.168.1.1'
p4 = lambda s, d, pr: (lambda seg: pseudo4(s, d, pr, seg))
mss = struct.pack('!BBH', 2, 4, 1460)
pk['tcp4_syn'] = ip4(a, b, 6, tcp(1234, 22, 0x02, mss, ph=p4(a, b, 6)), tos=0xb8)
pk['tcp4_synack'] = ip4(a, b, 6, tcp(1234, 22, 0x12, ph=p4(a, b, 6)))
pk['tcp4_ack'] = ip4('10.0.0.2', '172.16.0.1', 6,
                     tcp(40000, 1500, 0x10, ph=p4('10.0.0.2', '172.16.0.1', 6)), ttl=5)
sackp = struct.pack('!BB', 4, 2) + b'\x01\x01'
pk['tcp4_sackperm'] = ip4(a, b, 6, tcp(1234, 80, 0x02, mss + sackp, ph=p4(a, b, 6)))
pk['udp4_dns'] = ip4('10.0.0.3', '8.8.8.8', 17,
                     udp(53, 5353, b'ABCD', ph=p4('10.0.0.3', '8.8.8.8', 17)))
pk['udp4_nocsum'] = ip4('10.0.0.3', '8.8.8.8', 17, udp(53, 5353, b'ABCD', zero_csum=True))
pk['icmp4_big'] = ip4(a, '10.0.0.2', 1, (lambda m: m[:2] + struct.pack('!H', csum(m)) + m[4:])(
    struct.pack('!BBHHH', 8, 0, 0, 1, 1) + bytes(1172)))
rr = struct.pack('!BBB4s', 7, 7, 4, b'\0\0\0\0') + b'\0'
pk['ip4_rr'] = ip4(a, b, 17, udp(1, 2, b'xy'), opts=rr)
pk['ip4_ra'] = ip4(a, b, 17, udp(1, 2, b'xy'), opts=struct.pack('!BBH', 148, 4, 0))
pk['ip4_frag'] = ip4(a, b, 6, bytes(range(24)), frag=185)
pk['ip4_firstfrag'] = ip4(a, b, 6, tcp(1234, 22, 0x02)[:20], frag=0x2000)
t = tcp(1234, 22, 0x02)
pk['tcp4_trunc'] = ip4(a, b, 6, t[:10])
pk['tcp4_badoff'] = ip4(a, b, 6, t[:12] + b'\xf0' + t[13:])
A6, B6 = '2001:db8::1', '2001:db8::2'
p6 = lambda s, d, pr: (lambda seg: pseudo6(s, d, pr, seg))
pk['tcp6_443'] = ip6(A6, B6, 6, tcp(5555, 443, 0x02, ph=p6(A6, B6, 6)))
hbh = struct.pack('!BB', 17, 0) + b'\x01\x04\0\0\0\0'
pk['ip6_hbh_udp'] = ip6(A6, B6, 0, hbh + udp(7, 9, b'zz', ph=p6(A6, B6, 17)))
fh = struct.pack('!BBHI', 17, 0, 0x0001, 42)
pk['ip6_frag0'] = ip6(A6, B6, 44, fh + udp(7, 9, b'zz'))
fh2 = struct.pack('!BBHI', 6, 0, (100 << 3), 42)
pk['ip6_frag_later'] = ip6(A6, B6, 44, fh2 + bytes(16))
rt = struct.pack('!BBBB', 6, 2, 0, 1) + bytes(4) + socket.inet_pton(socket.AF_INET6, B6)
pk['ip6_rt0'] = ip6(A6, B6, 43, rt + tcp(1, 2, 0x02))
pk['icmp6_echo'] = ip6('::1', 'fe80::1', 58, struct.pack('!BBHHH', 128, 0, 0, 1, 1))
pk['ip6_trunc_ext'] = ip6(A6, B6, 0, b'\x11')
for k, v in pk.items():
    print(k, v.hex())
