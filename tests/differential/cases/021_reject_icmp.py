from scapy.all import IP, UDP, TCP, ICMP, Raw

PACKETS = [IP(src='10.1.0.1', dst='10.2.0.1', id=d) / UDP(sport=1000 + d, dport=d) / Raw(b'p' * d * 10)
           for d in (1, 2, 3, 4, 6)]
PACKETS += [
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=1000, dport=5, flags='S'),
    IP(src='10.1.0.1', dst='10.2.0.1', tos=0x10) / ICMP(type=8, id=5, seq=6) / Raw(b'ping' * 100),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=1000, dport=1) / Raw(b'L' * 1200),
]
EXPECT = {'dp1': 1, 'dp0': 7}
