#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write docs/examples/edge-firewall.pcap: traffic for edge-firewall.nft.

A deterministic mix (fixed seed, fixed timestamps) as the edge firewall sees
it on its inside port dp0: trusted inside hosts going out, hosts in the
blocked ranges, outside hosts reaching services, DNS, ICMP of several types,
IPv6, and some junk the kernel drops before any rule (bad header checksum,
truncated datagram) or that is not IP at all (ARP).

usage: make-capture.py [OUT.pcap]
"""
import random
import sys

from scapy.all import (ARP, ICMP, IP, TCP, UDP, Ether, ICMPv6DestUnreach,
                       ICMPv6EchoRequest, IPv6, Raw, wrpcap)
from scapy.layers.dns import DNS, DNSQR

OUT = sys.argv[1] if len(sys.argv) > 1 else 'docs/examples/edge-firewall.pcap'
rnd = random.Random(20261203)
GW = '02:00:00:00:00:fe'  # the firewall's inside MAC
pkts = []


def eth(i):
    return Ether(src='02:00:00:00:%02x:%02x' % (i >> 8 & 0xff, i & 0xff), dst=GW)


def tcp(src, dst, dport, flags='S', v6=False, n=1):
    for _ in range(n):
        sport = rnd.randint(32768, 60999)
        l3 = IPv6(src=src, dst=dst) if v6 else IP(src=src, dst=dst, id=rnd.randint(1, 65535))
        pkts.append(eth(len(pkts)) / l3 / TCP(sport=sport, dport=dport, flags=flags,
                                              seq=rnd.getrandbits(32), window=64240))


def udp(src, dst, dport, payload=b'', v6=False):
    l3 = IPv6(src=src, dst=dst) if v6 else IP(src=src, dst=dst, id=rnd.randint(1, 65535))
    pkts.append(eth(len(pkts)) / l3 / UDP(sport=rnd.randint(32768, 60999), dport=dport) /
                payload)


def icmp(src, dst, type_, code=0):
    pkts.append(eth(len(pkts)) / IP(src=src, dst=dst, id=rnd.randint(1, 65535)) /
                ICMP(type=type_, code=code, id=rnd.randint(1, 65535), seq=1, ts_ori=0, ts_rx=0,
                     ts_tx=0) / (b'\x00' * 32))


inside = ['10.0.0.%d' % i for i in range(10, 20)] + ['192.168.1.%d' % i for i in range(2, 6)]
outside = ['192.0.2.%d' % i for i in range(1, 9)] + ['100.64.3.%d' % i for i in range(1, 5)]
web = ['93.184.216.34', '151.101.1.69', '140.82.121.4']
blocked = ['198.51.100.%d' % i for i in (7, 23, 99)] + ['203.0.113.%d' % i for i in (5, 66)]

for h in inside:  # trusted inside hosts going anywhere: accepted by the trusted rule
    tcp(h, rnd.choice(web), rnd.choice([80, 443, 8080, 993]), n=3)
    udp(h, '9.9.9.9', 53, bytes(DNS(rd=1, qd=DNSQR(qname='example.org'))))
for h in blocked:  # to and from the blocked ranges: counted in dropped_blocked
    tcp(h, rnd.choice(outside), 443, n=2)
    tcp(rnd.choice(inside), h, 22)
for h in outside:  # outside hosts: services accepted, the rest dropped by policy
    for port in (22, 80, 443):
        tcp(h, rnd.choice(outside), port)
    for port in (23, 445, 3389):
        tcp(h, rnd.choice(outside), port)
    udp(h, '192.0.2.53', 53, bytes(DNS(rd=1, qd=DNSQR(qname='nftdp.example'))))
    udp(h, rnd.choice(outside), 123, b'\x23' + b'\x00' * 47)  # NTP: policy drop
for t, c in [(8, 0), (0, 0), (3, 3), (11, 0), (13, 0), (5, 1), (8, 0), (17, 0)]:
    icmp(rnd.choice(outside), rnd.choice(outside), t, c)  # vmap: accept, or audit
for i in range(4):  # IPv6: services, echo (audit accepts ICMPv6), the rest dropped
    tcp('2001:db8:1::%x' % (i + 1), '2001:db8:2::80', 443, v6=True)
    tcp('2001:db8:1::%x' % (i + 1), '2001:db8:2::80', 25, v6=True)
    pkts.append(eth(len(pkts)) / IPv6(src='2001:db8:1::%x' % (i + 1), dst='2001:db8:2::1') /
                ICMPv6EchoRequest(id=i, seq=1))
    udp('2001:db8:1::%x' % (i + 1), '2001:db8:2::53', 53, b'\x00' * 12, v6=True)
    udp('2001:db8:1::%x' % (i + 1), '2001:db8:2::7', 5060, b'\x00' * 20, v6=True)
pkts.append(eth(len(pkts)) / IPv6(src='2001:db8:2::1', dst='2001:db8:1::1') /
            ICMPv6DestUnreach(code=4) / IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') /
            UDP(sport=40000, dport=33434))
# junk
bad = eth(len(pkts)) / IP(src='192.0.2.9', dst='192.0.2.10', chksum=0x1234) / TCP(dport=80)
pkts.append(bad)  # bad IPv4 header checksum: ip_rcv drops it
short = bytes(eth(len(pkts)) / IP(src='192.0.2.9', dst='192.0.2.10', len=200) / TCP(dport=80))
pkts.append(Ether(short))  # total length past the frame: truncated, dropped
pkts.append(eth(len(pkts)) / ARP(psrc='10.0.0.10', pdst='10.0.0.1'))  # not IP: passes
pkts.append(eth(len(pkts)) / IP(src='192.0.2.9', dst='192.0.2.10', proto=47) /
            Raw(b'\x00\x00\x08\x00' + b'\x00' * 20))  # GRE from outside: policy drop

for i, p in enumerate(pkts):
    p.time = 1767225600 + i * 0.001  # 2026-01-01, one packet per millisecond
wrpcap(OUT, pkts)
print('%s: %d packets' % (OUT, len(pkts)))
