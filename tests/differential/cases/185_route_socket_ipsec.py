from scapy.all import IP, IPv6, UDP, TCP, ICMP

PACKETS = [
    IP(src='10.1.0.2', dst='10.2.0.1') / UDP(sport=9, dport=9),
    IP(src='10.1.0.2', dst='10.2.0.1') / TCP(sport=9, dport=80),
    IP(src='10.1.0.4', dst='10.2.0.1') / ICMP(),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(sport=9, dport=9),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / TCP(sport=9, dport=443),
]
EXPECT = {'dp1': 3}
