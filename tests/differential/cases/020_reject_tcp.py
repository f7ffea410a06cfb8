from scapy.all import IP, IPv6, TCP, Raw

PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=5000, dport=23, flags='S', seq=100),
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=5001, dport=23, flags='A', seq=200, ack=300),
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=5002, dport=23, flags='PA', seq=400, ack=500) / Raw(b'data'),
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=5003, dport=22, flags='S'),
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=5003, dport=23, flags='R'),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / TCP(sport=5000, dport=24, flags='S', seq=7),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / TCP(sport=5000, dport=23, flags='FA', seq=9, ack=11),
]
EXPECT = {'dp1': 1, 'dp0': 5}
