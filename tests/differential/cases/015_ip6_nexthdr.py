from scapy.all import IPv6, UDP, TCP, IP, GRE, IPv6ExtHdrHopByHop, IPv6ExtHdrDestOpt, ICMPv6EchoRequest, Raw

S, D = '2001:db8:1::1', '2001:db8:2::1'
PACKETS = [
    IPv6(src=S, dst=D) / TCP(dport=99),
    IPv6(src=S, dst=D) / TCP(dport=98),
    IPv6(src=S, dst=D) / UDP(dport=99),
    IPv6(src=S, dst=D) / IPv6ExtHdrHopByHop() / UDP(dport=1),
    IPv6(src=S, dst=D) / IPv6ExtHdrDestOpt() / TCP(dport=99),
    IPv6(src=S, dst=D) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / TCP(dport=98),
    IPv6(src=S, dst=D) / IP(src='10.1.0.1', dst='10.2.0.1') / UDP(),
    IPv6(src=S, dst=D) / GRE() / Raw(b'g' * 8),
    IPv6(src=S, dst=D) / ICMPv6EchoRequest(),
    IPv6(src=S, dst=D, nh=59),
]
EXPECT = {'dp1': 6}
