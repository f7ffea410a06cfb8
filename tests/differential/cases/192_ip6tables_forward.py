from scapy.all import IPv6, ICMPv6EchoRequest, TCP, UDP, Raw

S, D = '2001:db8:1::1', '2001:db8:2::1'
PACKETS = [
    IPv6(src=S, dst=D) / ICMPv6EchoRequest(id=1, seq=1) / Raw(b'p' * 20),
    IPv6(src=S, dst=D) / ICMPv6EchoRequest(id=2, seq=1) / Raw(b'p' * 400),
    IPv6(src=S, dst=D) / TCP(sport=4000, dport=80, flags='S'),
    IPv6(src=S, dst=D) / TCP(sport=4001, dport=25, flags='S'),
    IPv6(src='2001:db8:1::150', dst=D) / UDP(sport=7, dport=9),
] + [IPv6(src=S, dst=D) / UDP(sport=7, dport=d) / Raw(b'6' * 20) for d in (1, 2, 3, 4, 5)]
EXPECT = {'dp1': 2, 'dp0': 8}
