# ebtables-nft's ip6 match (ebt_ip6.c) through a bridge (BRIDGE = True):
# addresses with prefixes, traffic class, the protocol after extension
# headers (a later fragment shows as ipv6-frag), port ranges, ICMPv6 type
# and code ranges, inversions; the log watcher in front (--log-ip6, its
# counter: the kernel prints nothing from a namespace) and an nflog
# watcher at the end. Every rule's counter is compared.
from scapy.all import (ICMPv6DestUnreach, ICMPv6EchoReply, ICMPv6EchoRequest,
                       IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment,
                       IPv6ExtHdrHopByHop, Raw, TCP, UDP)

BRIDGE = True
A, B, C = '2001:db8:1::10', '2001:db8:2::10', '2001:db8:1::20'
PACKETS = [
    IPv6(src=A, dst=B) / UDP(sport=1000, dport=53) / Raw(b'q'),
    IPv6(src=A, dst=B) / UDP(sport=1000, dport=54) / Raw(b'q'),
    IPv6(src=A, dst=B) / IPv6ExtHdrHopByHop() / UDP(sport=1000, dport=53) / Raw(b'q'),
    IPv6(src=A, dst=B) / IPv6ExtHdrDestOpt() / UDP(sport=1000, dport=53) / Raw(b'q'),
    IPv6(src='2001:db8:9::1', dst=B) / UDP(sport=1000, dport=53) / Raw(b'q'),
    IPv6(src=A, dst=B) / TCP(sport=1005, dport=22, flags='S'),
    IPv6(src=A, dst=B) / TCP(sport=1011, dport=22, flags='S'),
    IPv6(src=A, dst=B) / TCP(sport=1000, dport=23, flags='S'),
    IPv6(src=A, dst=B, tc=0x28) / UDP(sport=1000, dport=100),
    IPv6(src=A, dst=B, tc=0x29) / UDP(sport=1000, dport=100),
    IPv6(src=A, dst='2001:db8:3::1') / UDP(sport=1000, dport=100),
    IPv6(src=A, dst=B) / ICMPv6EchoRequest(id=1, seq=1),
    IPv6(src=A, dst=B) / ICMPv6EchoReply(id=1, seq=1),
    IPv6(src=A, dst=B) / ICMPv6DestUnreach(code=3) / IPv6(src=B, dst=A) / UDP(),
    IPv6(src=A, dst=B) / ICMPv6DestUnreach(code=1) / IPv6(src=B, dst=A) / UDP(),
    IPv6(src=A, dst=B) / IPv6ExtHdrFragment(nh=17, offset=0, m=1, id=7) /
    UDP(sport=1000, dport=53) / Raw(b'x' * 8),
    IPv6(src=A, dst=B) / IPv6ExtHdrFragment(nh=17, offset=2, m=0, id=7) / Raw(b'y' * 8),
    IPv6(src=C, dst=B) / TCP(sport=1000, dport=80, flags='S'),
    IPv6(src=C, dst=B) / UDP(sport=1000, dport=80),
    IPv6(src=C, dst=B, nh=59),
]
EXPECT = {'dp1': 10}
