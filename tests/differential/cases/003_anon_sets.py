from scapy.all import IP, IPv6, UDP, TCP, ICMP

PACKETS = [
    IP(src='10.1.0.2', dst='10.2.0.1') / UDP(sport=9, dport=9),
    IP(src='10.1.0.4', dst='10.2.0.1') / TCP(sport=9, dport=443),
    IP(src='10.1.0.4', dst='10.2.0.1') / UDP(sport=9, dport=150),
    IP(src='10.1.0.4', dst='10.2.0.1') / UDP(sport=9, dport=300),
    IP(src='10.1.0.4', dst='10.2.0.1') / UDP(sport=9, dport=301),
    IP(src='10.1.0.4', dst='10.2.1.77') / ICMP(),
    IP(src='10.1.0.4', dst='10.2.3.9') / ICMP(),
    IP(src='10.1.0.4', dst='10.2.3.10') / ICMP(),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(sport=9, dport=9),
    IPv6(src='2001:db8:1::1ff', dst='2001:db8:2::1') / UDP(sport=9, dport=9),
    IPv6(src='2001:db8:1::200', dst='2001:db8:2::1') / TCP(sport=9, dport=22),
]
EXPECT = {'dp1': 6}
