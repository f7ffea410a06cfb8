from scapy.all import IP, IPv6, UDP, TCP, ICMP, Raw

PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(dport=80),
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(dport=443) / Raw(b'a' * 100),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=53),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=54),
    IP(src='10.1.0.1', dst='10.2.0.1') / ICMP(),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(dport=9),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / TCP(dport=80),
]
EXPECT = {'dp1': 6}
