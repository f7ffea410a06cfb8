from scapy.all import IPv6, UDP, TCP, AH, Raw, IPv6ExtHdrHopByHop, IPv6ExtHdrDestOpt, IPv6ExtHdrRouting

S, D = '2001:db8:1::1', '2001:db8:2::1'
PACKETS = [
    IPv6(src=S, dst=D) / AH(nh=17, payloadlen=4, spi=1, seq=1, icv=b'\0' * 12) / UDP(dport=1),
    IPv6(src=S, dst=D) / AH(nh=6, payloadlen=4, spi=1, seq=2, icv=b'\0' * 12) / TCP(dport=2),
    IPv6(src=S, dst=D) / AH(nh=17, payloadlen=4, spi=1, seq=3, icv=b'\0' * 12) / UDP(dport=3),
    IPv6(src=S, dst=D) / IPv6ExtHdrDestOpt() / IPv6ExtHdrHopByHop() / UDP(dport=1),
    IPv6(src=S, dst=D) / IPv6ExtHdrDestOpt() / IPv6ExtHdrRouting() / IPv6ExtHdrDestOpt() / TCP(dport=2),
    IPv6(src=S, dst=D, nh=253) / Raw(b'\x11\x00' + b'\0' * 6),
    IPv6(src=S, dst=D) / IPv6ExtHdrDestOpt(nh=59) / Raw(b'nothing follows'),
    IPv6(src=S, dst=D) / IPv6ExtHdrDestOpt(nh=17) / Raw(b'\x00'),
]
# the kernel's walk stops at AH (IP6_FH_F_AUTH): l4proto is 51 for all three AH packets
EXPECT = {'dp1': 5}
