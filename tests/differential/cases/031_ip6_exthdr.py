from scapy.all import (IPv6, UDP, TCP, Raw, IPv6ExtHdrHopByHop, IPv6ExtHdrDestOpt,
                       IPv6ExtHdrRouting, IPv6ExtHdrFragment, PadN)

S, D = '2001:db8:1::1', '2001:db8:2::1'
PACKETS = [
    IPv6(src=S, dst=D) / IPv6ExtHdrHopByHop(options=[PadN(optdata=b'\0' * 4)]) / UDP(dport=53),
    IPv6(src=S, dst=D) / IPv6ExtHdrDestOpt() / UDP(dport=54),
    IPv6(src=S, dst=D) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / TCP(dport=80),
    IPv6(src=S, dst=D) / IPv6ExtHdrRouting(type=0, segleft=0, addresses=['2001:db8:2::9']) / UDP(dport=54),
    IPv6(src=S, dst=D) / IPv6ExtHdrRouting(type=2, segleft=0, addresses=['2001:db8:2::9']) / UDP(dport=54),
    IPv6(src=S, dst=D) / IPv6ExtHdrFragment(id=1, offset=0, m=1) / UDP(dport=54, len=40) / Raw(b'f' * 24),
    IPv6(src=S, dst=D) / IPv6ExtHdrFragment(id=1, offset=4, m=0, nh=17) / Raw(b'g' * 8),
    IPv6(src=S, dst=D) / IPv6ExtHdrFragment(id=2, offset=0, m=0) / TCP(dport=81),
]
EXPECT = {'dp1': 6}
