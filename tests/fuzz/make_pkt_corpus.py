#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpus of fuzz_pkt (tests/fuzz/corpus/pkt/): short frame
sequences in fuzz_pkt.c's input format, built with scapy, deterministic.

    tests/fuzz/make_pkt_corpus.py [OUTDIR]

Each seed: a flags byte (bit 0: --router), then records hdr(1) len(2) bytes.
hdr bit 0: rx port, bit 1: end of burst, bits 2-3: clock step, bit 4: the
bytes are an IP packet (fuzz_pkt prepends Ethernet), bit 5: IPv6, bit 6:
fix lengths and checksums.
"""

import os
import struct
import sys

from scapy.all import (ARP, ICMP, IP, TCP, UDP, Dot1Q, Ether, GRE, IPOption_LSRR,
                       IPOption_RR, IPOption_Router_Alert, IPv6, IPv6ExtHdrDestOpt,
                       IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting,
                       ICMPv6EchoReply, ICMPv6EchoRequest, ICMPv6ND_NS, Raw, fragment)
from scapy.layers.inet import UDPerror, IPerror, TCPerror
from scapy.layers.sctp import SCTP

C4, S4 = '10.1.0.1', '10.2.0.1'
C6, S6 = 'fd00:1::1', 'fd00:2::1'
MAC0 = '02:00:00:00:00:10'


def rec(pkt, port=0, end=False, clock=0, fix=True):
    """One record: an IP packet (Ethernet prepended by fuzz_pkt) or a frame."""
    hdr = port | (2 if end else 0) | (clock << 2)
    if isinstance(pkt, Ether):
        data = bytes(pkt)
    else:
        data = bytes(pkt)
        hdr |= 0x10 | (0x20 if isinstance(pkt, IPv6) else 0) | (0x40 if fix else 0)
    return struct.pack('>BH', hdr, len(data)) + data


def seed(records, router=True):
    return bytes([1 if router else 0]) + b''.join(records)


def tcp_flow(c, s, sport, dport, v6=False, replyaddr=None):
    L3 = IPv6 if v6 else IP
    ra = replyaddr or s
    return [
        rec(L3(src=c, dst=s) / TCP(sport=sport, dport=dport, flags='S', seq=1000,
                                   options=[('MSS', 1460), ('SAckOK', b''), ('Timestamp', (1, 0)),
                                            ('WScale', 7)])),
        rec(L3(src=ra, dst=c) / TCP(sport=dport, dport=sport, flags='SA', seq=5000, ack=1001), port=1),
        rec(L3(src=c, dst=s) / TCP(sport=sport, dport=dport, flags='A', seq=1001, ack=5001)),
        rec(L3(src=c, dst=s) / TCP(sport=sport, dport=dport, flags='PA', seq=1001, ack=5001) /
            b'GET / HTTP/1.0\r\n\r\n', end=True),
        rec(L3(src=ra, dst=c) / TCP(sport=dport, dport=sport, flags='FA', seq=5001, ack=1019), port=1),
        rec(L3(src=c, dst=s) / TCP(sport=sport, dport=dport, flags='R', seq=1019), clock=1),
    ]


def ftp_session(c, s, v6=False):
    """An FTP control connection whose commands the ftp helper reads
    (fuzz_pkt_tracked.nft assigns it), then the announced data connection."""
    L3 = IPv6 if v6 else IP
    seq = {0: 1000, 1: 5000}
    out = []

    def seg(port, flags, data=b''):
        src, dst = (c, s) if port == 0 else (s, c)
        sp, dp = (40010, 21) if port == 0 else (21, 40010)
        p = L3(src=src, dst=dst) / TCP(sport=sp, dport=dp, flags=flags, seq=seq[port],
                                       ack=seq[1 - port] if 'A' in flags else 0)
        if data:
            p = p / data
        seq[port] += len(data) + (1 if 'S' in flags else 0)
        out.append(rec(p, port=port))

    seg(0, 'S')
    seg(1, 'SA')
    seg(0, 'A')
    seg(1, 'PA', b'220 hi\r\n')
    seg(0, 'PA', b'USER ftp\r\n')
    seg(1, 'PA', b'331 ok\r\n')
    if v6:
        seg(0, 'PA', b'EPSV\r\n')
        seg(1, 'PA', b'229 Entering Extended Passive Mode (|||6446|)\r\n')
        seg(0, 'PA', b'EPRT |2|' + c.encode() + b'|5282|\r\n')
        out.append(rec(L3(src=c, dst=s) / TCP(sport=40011, dport=6446, flags='S', seq=7)))
    else:
        seg(0, 'PA', b'PASV\r\n')
        seg(1, 'PA', b'227 Entering Passive Mode (10,2,0,1,195,80).\r\n')
        seg(0, 'PA', b'PORT 10,1,0,1,156,65\r\n')
        out.append(rec(L3(src=c, dst=s) / TCP(sport=40011, dport=50000, flags='S', seq=7)))
    out.append(rec(L3(src=s, dst=c) / TCP(sport=20, dport=40001, flags='S', seq=9), port=1,
                   end=True))
    return out


def pptp_session(c, s):
    """A PPTP control connection with an outgoing call (fuzz_pkt_tracked.nft
    gives it the pptp helper), the call's GRE both ways, GRE with another
    call id, then Call-Disconnect-Notify."""
    seq = {0: 1000, 1: 5000}
    out = []

    def ctl(mtype, body):
        return struct.pack('>HHIHH', 12 + len(body), 1, 0x1a2b3c4d, mtype, 0) + body

    def seg(port, data):
        src, dst = (c, s) if port == 0 else (s, c)
        sp, dp = (40020, 1723) if port == 0 else (1723, 40020)
        out.append(rec(IP(src=src, dst=dst) / TCP(sport=sp, dport=dp, flags='PA', seq=seq[port],
                                                  ack=seq[1 - port]) / data, port=port))
        seq[port] += len(data)

    def gre(port, call_id):
        src, dst = (c, s) if port == 0 else (s, c)
        hdr = struct.pack('>BBHHHI', 0x30, 1, 0x880b, 4, call_id, 1)
        out.append(rec(IP(src=src, dst=dst, proto=47) / (hdr + b'\xff\x03\xc0\x21'), port=port))

    out.append(rec(IP(src=c, dst=s) / TCP(sport=40020, dport=1723, flags='S', seq=999)))
    out.append(rec(IP(src=s, dst=c) / TCP(sport=1723, dport=40020, flags='SA', seq=4999,
                                          ack=1000), port=1))
    out.append(rec(IP(src=c, dst=s) / TCP(sport=40020, dport=1723, flags='A', seq=1000, ack=5000)))
    seg(0, ctl(1, bytes(144)))
    seg(1, ctl(2, b'\x01\x00\x01' + bytes(141)))
    seg(0, ctl(7, b'\x4a\x01' + bytes(154)))
    seg(1, ctl(8, b'\x7b\x02\x4a\x01\x01' + bytes(15)))
    gre(0, 0x7b02)
    gre(1, 0x4a01)
    gre(0, 0x7b03)
    seg(1, ctl(13, b'\x7b\x02\x01' + bytes(133)))
    gre(0, 0x7b02)
    return out


def sip_call(c, s, v6=False):
    """A SIP call over UDP (fuzz_pkt_tracked.nft gives port 5060 the sip
    helper): INVITE and 200 with SDP, the announced RTP, a BYE; then a
    REGISTER and its 200."""
    L3 = IPv6 if v6 else IP
    fam = 'IP6' if v6 else 'IP4'

    def sip(port, text):
        # longer than 200 bytes: the tracked ruleset drops new 100-200
        text = text.replace('CSeq', 'Subject: %s\nCSeq' % ('x' * 100), 1)
        src, dst = (c, s) if port == 0 else (s, c)
        return rec(L3(src=src, dst=dst) / UDP(sport=5060, dport=5060) /
                   text.replace('\n', '\r\n').encode(), port=port)

    def sdp(a, p):
        return 'v=0\no=x 1 1 IN %s %s\nc=IN %s %s\nm=audio %d RTP/AVP 0\n' % (fam, a, fam, a, p)

    return [
        sip(0, 'INVITE sip:b SIP/2.0\nCSeq: 1 INVITE\nl: 0\n\n' + sdp(c, 4000)),
        sip(1, 'SIP/2.0 200 OK\nCSeq: 1 INVITE\n\n' + sdp(s, 6000)),
        rec(L3(src=s, dst=c) / UDP(sport=6000, dport=4000) / (b'\x80' * 12), port=1),
        sip(0, 'BYE sip:b SIP/2.0\nCSeq: 2 BYE\n\n'),
        sip(0, 'REGISTER sip:r SIP/2.0\nCSeq: 3 REGISTER\nm: <sip:a@%s:5070>;expires=60\n\n'
            % (('[%s]' % c) if v6 else c)),
        sip(1, 'SIP/2.0 200 OK\nCSeq: 3 REGISTER\nm: <sip:a@%s:5070>\n\n'
            % (('[%s]' % c) if v6 else c)),
        rec(L3(src=s, dst=c) / UDP(sport=5061, dport=5070) / b'INVITE x SIP/2.0\r\n', port=1,
            end=True),
    ]


def seeds():
    out = {}
    out['sip4'] = seed(sip_call(C4, S4))
    out['sip6'] = seed(sip_call(C6, S6, v6=True))
    out['ftp4'] = seed(ftp_session(C4, S4))
    out['ftp6'] = seed(ftp_session(C6, S6, v6=True))
    out['pptp4'] = seed(pptp_session(C4, S4))
    out['tftp4'] = seed([
        rec(IP(src=C4, dst=S4) / UDP(sport=1069, dport=69) / b'\x00\x01f\x00octet\x00'),
        rec(IP(src=S4, dst=C4) / UDP(sport=3001, dport=1069) / b'\x00\x03\x00\x01d', port=1),
    ])
    out['tcp4_dnat'] = seed(tcp_flow(C4, '10.2.0.50', 40000, 8000, replyaddr='10.2.0.10'))
    out['tcp4_plain'] = seed(tcp_flow(C4, S4, 40001, 80))
    out['tcp4_masq'] = seed(tcp_flow('10.1.0.7', S4, 40002, 443))
    out['tcp4_snat_range'] = seed(tcp_flow('10.1.1.7', S4, 40003, 22))
    out['tcp6_dnat'] = seed(tcp_flow(C6, 'fd00:77::1', 40004, 80, v6=True, replyaddr='fd00:2::10'))
    out['tcp6_masq'] = seed(tcp_flow(C6, S6, 40005, 443, v6=True))
    out['tcp4_wire'] = seed(tcp_flow(C4, S4, 40006, 8080), router=False)
    out['udp4_dnat'] = seed([
        rec(IP(src=C4, dst='10.2.0.50') / UDP(sport=5000, dport=8001) / b'q'),
        rec(IP(src='10.2.0.10', dst=C4) / UDP(sport=5000, dport=5000) / b'r', port=1),
        rec(IP(src=C4, dst='10.2.0.50') / UDP(sport=5000, dport=8001) / b'q2', clock=2),
    ])
    out['udp4_map_dnat'] = seed([
        rec(IP(src=C4, dst='10.77.0.1') / UDP(sport=5001, dport=53) / b'q'),
        rec(IP(src='10.2.0.9', dst=C4) / UDP(sport=53, dport=5001) / b'r', port=1),
    ])
    out['udp4_masq_random'] = seed([
        rec(IP(src='10.1.3.5', dst=S4) / UDP(sport=6000 + i, dport=53) / b'x') for i in range(20)
    ])
    out['udp6'] = seed([
        rec(IPv6(src='fd00:1:1::5', dst=S6) / UDP(sport=5002, dport=53) / b'q'),
        rec(IPv6(src=S6, dst='fd00:2::99') / UDP(sport=53, dport=5002) / b'r', port=1),
    ])
    out['udp_special'] = seed([
        rec(IP(src=C4, dst=S4) / UDP(sport=1, dport=p) / b'data') for p in
        (24, 25, 26, 29, 53, 5353, 7001, 7002, 9999, 8082, 8081, 8084)
    ] + [rec(IPv6(src=C6, dst=S6) / UDP(sport=1, dport=p) / b'data') for p in (26, 7003, 8083)])
    out['tcp_special'] = seed([
        rec(IP(src=C4, dst=S4) / TCP(sport=2, dport=p, flags='S')) for p in
        (21, 23, 27, 28, 8004, 8002, 8003, 8081, 1500)
    ])
    out['icmp4'] = seed([
        rec(IP(src=C4, dst=S4) / ICMP(type=8, id=1, seq=1) / b'ping'),
        rec(IP(src=S4, dst=C4) / ICMP(type=0, id=1, seq=1) / b'ping', port=1),
        rec(IP(src=C4, dst=S4) / ICMP(type=13)),
        rec(IP(src=S4, dst=C4) / ICMP(type=3, code=3) / IPerror(src=C4, dst=S4) /
            UDPerror(sport=5000, dport=8001), port=1),
    ])
    out['icmp_error_related'] = seed([
        rec(IP(src=C4, dst=S4) / TCP(sport=40010, dport=80, flags='S')),
        rec(IP(src='10.2.0.3', dst=C4) / ICMP(type=3, code=1) / IPerror(src=C4, dst=S4) /
            TCPerror(sport=40010, dport=80, flags='S'), port=1),
    ])
    out['icmp6'] = seed([
        rec(IPv6(src=C6, dst=S6) / ICMPv6EchoRequest(id=3, seq=1)),
        rec(IPv6(src=S6, dst=C6) / ICMPv6EchoReply(id=3, seq=1), port=1),
        rec(IPv6(src=C6, dst='ff02::1:ff00:1') / ICMPv6ND_NS(tgt=S6)),
    ])
    big = IP(src=C4, dst=S4, id=77) / UDP(sport=1234, dport=5000) / (b'a' * 3000)
    out['frag4'] = seed([rec(f, fix=False) for f in fragment(big, fragsize=1000)])
    out['frag4_reverse'] = seed([rec(f, fix=False) for f in reversed(fragment(big, fragsize=600))])
    out['frag4_overlap'] = seed([
        rec(IP(src=C4, dst=S4, id=78, proto=17, flags='MF', frag=0) / Raw(b'b' * 64), fix=False),
        rec(IP(src=C4, dst=S4, id=78, proto=17, frag=4) / Raw(b'c' * 64), fix=False),
    ])
    out['frag4_timeout'] = seed([
        rec(IP(src=C4, dst=S4, id=79, proto=17, flags='MF', frag=0) / Raw(b'd' * 64), fix=False),
        rec(IP(src=C4, dst=S4, id=79, proto=17, frag=8) / Raw(b'e' * 16), clock=3, fix=False),
    ])
    big6 = bytes(UDP(sport=1234, dport=5000) / (b'f' * 2000))
    out['frag6'] = seed([
        rec(IPv6(src=C6, dst=S6) / IPv6ExtHdrFragment(nh=17, offset=0, m=1, id=9) / Raw(big6[:1000]), fix=False),
        rec(IPv6(src=C6, dst=S6) / IPv6ExtHdrFragment(nh=17, offset=125, m=0, id=9) / Raw(big6[1000:]), fix=False),
    ])
    out['ip_options'] = seed([
        rec(IP(src=C4, dst=S4, options=[IPOption_RR(routers=['0.0.0.0'] * 3)]) / UDP(sport=1, dport=2)),
        rec(IP(src=C4, dst=S4, options=[IPOption_LSRR(routers=['10.2.0.2'])]) / UDP(sport=1, dport=2)),
        rec(IP(src=C4, dst=S4, options=[IPOption_Router_Alert()]) / TCP(sport=1, dport=80)),
        rec(IP(src=C4, dst=S4, ihl=6) / Raw(b'\x01\x01\x01\x00' + bytes(UDP(sport=1, dport=2))), fix=False),
    ])
    out['ip6_exthdrs'] = seed([
        rec(IPv6(src=C6, dst=S6) / IPv6ExtHdrHopByHop() / UDP(sport=1, dport=2)),
        rec(IPv6(src=C6, dst=S6) / IPv6ExtHdrRouting(type=0, addresses=[S6]) / UDP(sport=1, dport=2)),
        rec(IPv6(src=C6, dst=S6) / IPv6ExtHdrDestOpt() / TCP(sport=1, dport=80, flags='S')),
        rec(IPv6(src=C6, dst=S6) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() /
            IPv6ExtHdrFragment(nh=17, m=1, id=3) / UDP(sport=1, dport=2) / b'xx', fix=False),
    ])
    # issue 11: destination options claiming 2048 bytes in an 8-byte payload
    for nh, name in ((6, 'tcp'), (17, 'udp')):
        past = [rec(IPv6(src=C6, dst=S6, nh=60, plen=8, hlim=h) / Raw(bytes([nh, 255, 1, 4, 0, 0, 0, 0])),
                    fix=False) for h in (64, 1)]
        out['ip6_exthdr_past_end_' + name] = seed(past)
        out['ip6_exthdr_past_end_%s_wire' % name] = seed(past, router=False)
    out['ttl1'] = seed([
        rec(IP(src=C4, dst=S4, ttl=1) / UDP(sport=1, dport=2) / b'x'),
        rec(IPv6(src=C6, dst=S6, hlim=1) / TCP(sport=1, dport=2)),
    ])
    out['vlan'] = seed([
        rec(Ether(dst=MAC0) / Dot1Q(vlan=100) / IP(src=C4, dst=S4) / UDP(sport=1, dport=2)),
        rec(Ether(dst=MAC0) / Dot1Q(vlan=0) / IPv6(src=C6, dst=S6) / UDP(sport=1, dport=2)),
        rec(Ether(dst=MAC0, type=0x88a8) / Dot1Q(vlan=5) / Dot1Q(vlan=6) / IP(src=C4, dst=S4) / TCP()),
    ], router=False)
    out['l2_misc'] = seed([
        rec(Ether(dst='ff:ff:ff:ff:ff:ff') / ARP(pdst='10.1.255.254')),
        rec(Ether(dst='ff:ff:ff:ff:ff:ff') / IP(src=C4, dst='10.1.255.255') / UDP(sport=1, dport=2)),
        rec(Ether(dst='01:00:5e:00:00:01') / IP(src=C4, dst='224.0.0.1') / UDP(sport=1, dport=2)),
        rec(Ether(src='02:00:00:00:00:66', dst=MAC0) / IP(src=C4, dst=S4)),
        rec(Ether(dst=MAC0) / Raw(b'\x08')),
    ])
    out['other_protos'] = seed([
        rec(IP(src=C4, dst=S4) / SCTP(sport=1, dport=9)),
        rec(IP(src=C4, dst=S4, proto=50) / Raw(b'\0' * 16)),
        rec(IP(src=C4, dst=S4) / GRE() / IP(src='1.1.1.1', dst='2.2.2.2')),
        rec(IP(src=C4, dst=S4, proto=136) / Raw(b'\0' * 8)),
        rec(IPv6(src=C6, dst=S6, nh=59)),
    ])
    out['bad'] = seed([
        rec(IP(src=C4, dst=S4) / TCP(sport=1, dport=23, chksum=1), fix=False),
        rec(IP(src=C4, dst=S4, len=1000) / UDP(sport=1, dport=2), fix=False),
        rec(IP(src=C4, dst=S4, ihl=15) / UDP(sport=1, dport=2), fix=False),
        rec(IP(src='192.0.2.1', dst=S4) / UDP(sport=1, dport=2)),
        rec(IP(src='127.0.0.1', dst=S4) / UDP(sport=1, dport=2)),
        rec(IPv6(src='::', dst=S6) / UDP(sport=1, dport=2)),
        rec(IP(src=C4, dst='10.2.255.254') / UDP(sport=1, dport=2)),
    ])
    out['big_dscp'] = seed([
        rec(IP(src=C4, dst=S4, tos=46 << 2) / UDP(sport=1, dport=2) / (b'z' * 1400)),
        rec(IP(src='203.0.113.1', dst=S4) / UDP(sport=1, dport=2)),
        rec(IP(src='10.66.1.1', dst=S4) / UDP(sport=1, dport=2)),
    ])
    return out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), 'corpus', 'pkt')
    os.makedirs(outdir, exist_ok=True)
    for name, data in sorted(seeds().items()):
        with open(os.path.join(outdir, name), 'wb') as f:
            f.write(data)
    print('%d seeds in %s' % (len(seeds()), outdir))


if __name__ == '__main__':
    main()
