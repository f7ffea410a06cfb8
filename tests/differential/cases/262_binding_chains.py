from scapy.all import IP, IPv6, UDP, TCP

PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=9, dport=53),
    IP(src='10.1.0.5', dst='10.2.0.1') / UDP(sport=9, dport=53),
    IP(src='10.1.0.2', dst='10.2.0.1') / UDP(sport=9, dport=54),
    IP(src='10.1.0.6', dst='10.2.0.1') / UDP(sport=9, dport=54),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(sport=9, dport=53),
    IP(src='10.1.0.7', dst='10.2.0.1') / TCP(sport=9, dport=80),
]
EXPECT = {'dp1': 4}
