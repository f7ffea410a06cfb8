from scapy.all import IP, IPv6, IPv6ExtHdrFragment, TCP, UDP, Raw

S4, D4 = '10.1.0.1', '10.2.0.1'
S6, D6 = 'fd00:1::1', 'fd00:2::1'

PACKETS = [
    IP(src=S4, dst=D4, ttl=1) / UDP(sport=1000, dport=53, chksum=0x1234) / (b'x' * 4),
    IP(src=S4, dst=D4, ttl=1) / TCP(sport=1000, dport=80, chksum=0x1234),
    IP(src=S4, dst=D4, ttl=1, id=7, proto=17, frag=10) / Raw(b'y' * 16),
    IPv6(src=S6, dst=D6, hlim=1) / UDP(sport=1000, dport=53, chksum=0x1234) / (b'x' * 4),
    IPv6(src=S6, dst=D6, hlim=1) / TCP(sport=1000, dport=80, chksum=0x1234),
    IPv6(src=S6, dst=D6, hlim=1) / IPv6ExtHdrFragment(nh=17, offset=10, id=7) / Raw(b'y' * 16),
]
EXPECT = {'dp1': 0, 'dp0': 5}
