from scapy.all import IP, UDP, ICMP, Raw


def udp(side, src, dst, sport, dport, data):
    return (side, IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(data))


PACKETS = [
    # mark 0x42 from the map; replies restore it into the packet mark
    udp('dp0', '10.1.0.1', '10.2.0.1', 1000, 53, b'q1'),
    udp('dp1', '10.2.0.1', '10.1.0.1', 53, 1000, b'a1'),
    udp('dp0', '10.1.0.1', '10.2.0.1', 1000, 53, b'q2'),
    udp('dp1', '10.2.0.1', '10.1.0.1', 53, 1000, b'a2' * 40),
    udp('dp0', '10.1.0.1', '10.2.0.1', 1000, 53, b'q3'),
    # ct mark from the packet mark
    udp('dp0', '10.1.0.2', '10.2.0.1', 2000, 123, b'ntp'),
    udp('dp1', '10.2.0.1', '10.1.0.2', 123, 2000, b'ntp'),
    # a connection from dp1's side marked 0x99; the reply from dp0 or's 0x100 in
    udp('dp1', '10.2.0.9', '10.1.0.9', 3000, 514, b'log'),
    udp('dp0', '10.1.0.9', '10.2.0.9', 514, 3000, b'ack'),
    udp('dp1', '10.2.0.9', '10.1.0.9', 3000, 514, b'log2'),
    # unmarked
    ('dp0', IP(src='10.1.0.3', dst='10.2.0.1') / ICMP(type=8, id=1) / Raw(b'ping')),
    ('dp1', IP(src='10.2.0.1', dst='10.1.0.3') / ICMP(type=0, id=1) / Raw(b'ping')),
]
EXPECT = {'dp1': 6, 'dp0': 6}
