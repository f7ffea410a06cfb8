from scapy.all import IP, IPv6, UDP, TCP

PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=9, dport=9),
    IP(src='10.1.0.2', dst='10.2.5.1') / UDP(sport=9, dport=10),
    IP(src='10.1.0.5', dst='10.2.0.1') / UDP(sport=9, dport=9),
    IP(src='10.1.0.3', dst='10.2.0.9') / TCP(sport=9, dport=80),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(sport=9, dport=10),
]
EXPECT = {'dp1': 2}
