from scapy.all import IP, TCP, UDP, ICMP, Raw

ME = '10.2.255.254'        # dp1's address


def tcp(side, src, dst, sport, dport, flags, seq, ack=0, data=b''):
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                              ack=ack, window=8192) / Raw(data))


PACKETS = [
    # a client behind dp0 talks to 10.2.0.100:8080, served by 10.2.0.1:80
    tcp('dp0', '10.1.0.1', '10.2.0.100', 1000, 8080, 'S', 10),
    tcp('dp1', '10.2.0.1', '10.1.0.1', 80, 1000, 'SA', 500, 11),
    tcp('dp0', '10.1.0.1', '10.2.0.100', 1000, 8080, 'A', 11, 501),
    tcp('dp0', '10.1.0.1', '10.2.0.100', 1000, 8080, 'PA', 11, 501, b'GET'),
    tcp('dp1', '10.2.0.1', '10.1.0.1', 80, 1000, 'PA', 501, 14, b'OK'),
    # a client behind dp1 reaches 10.1.0.10:22 through dp1's address, port 2222
    tcp('dp1', '10.2.0.5', ME, 33000, 2222, 'S', 70),
    tcp('dp0', '10.1.0.10', '10.2.0.5', 22, 33000, 'SA', 300, 71),
    tcp('dp1', '10.2.0.5', ME, 33000, 2222, 'A', 71, 301),
    tcp('dp0', '10.1.0.10', '10.2.0.5', 22, 33000, 'PA', 301, 71, b'SSH-2.0\r\n'),
    tcp('dp1', '10.2.0.5', ME, 33000, 2222, 'FA', 71, 310),
    # UDP forwarded the same way, and the inside host says port unreachable
    ('dp1', IP(src='10.2.0.5', dst=ME) / UDP(sport=4000, dport=5353) / Raw(b'mdns')),
    ('dp0', IP(src='10.1.0.10', dst='10.2.0.5') / ICMP(type=3, code=3) /
     IP(src='10.2.0.5', dst='10.1.0.10', ttl=63) / UDP(sport=4000, dport=53) / Raw(b'mdns')),
]
EXPECT = {'dp1': 6, 'dp0': 6}
NEIGHBOURS = ['10.2.0.100']
