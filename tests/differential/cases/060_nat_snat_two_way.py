from scapy.all import IP, TCP, UDP, ICMP, Raw

S = '10.2.0.1'
MASQ = '10.2.255.254'      # dp1's address


def udp(side, src, dst, sport, dport, data):
    return (side, IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(data))


def tcp(side, src, dst, sport, dport, flags, seq, ack=0):
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                              ack=ack, window=8192))


PACKETS = [
    # masquerade: out as dp1's address, the reply comes back to it
    udp('dp0', '10.1.0.9', S, 3000, 53, b'q1'),
    udp('dp1', S, MASQ, 53, 3000, b'a1'),
    udp('dp0', '10.1.0.9', S, 3000, 53, b'q2'),
    # a TCP handshake through masquerade
    tcp('dp0', '10.1.0.9', S, 3001, 80, 'S', 100),
    tcp('dp1', S, MASQ, 80, 3001, 'SA', 900, 101),
    tcp('dp0', '10.1.0.9', S, 3001, 80, 'A', 101, 901),
    # the server has no port 69: port unreachable to the masqueraded address
    udp('dp0', '10.1.0.9', S, 3002, 69, b'tftp'),
    ('dp1', IP(src=S, dst=MASQ) / ICMP(type=3, code=3) /
     IP(src=MASQ, dst=S, ttl=63) / UDP(sport=3002, dport=69) / Raw(b'tftp')),
    # snat to an address
    udp('dp0', '10.1.0.8', S, 4000, 123, b'ntp'),
    udp('dp1', S, '10.2.0.200', 123, 4000, b'ntp'),
    # two inside hosts, one source port, one server: a clash, resolved in the range
    udp('dp0', '10.1.0.20', S, 5000, 514, b'first'),
    udp('dp0', '10.1.0.21', S, 5000, 514, b'second'),
    udp('dp1', S, '10.2.0.201', 514, 5001, b'to second'),
    udp('dp1', S, '10.2.0.201', 514, 5000, b'to first'),
]
EXPECT = {'dp1': 8, 'dp0': 6}
