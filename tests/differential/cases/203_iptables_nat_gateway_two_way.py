from scapy.all import IP, TCP, UDP, ICMP, Raw

# a NAT gateway from iptables-nft-restore, both ways (two-way case)
S = '10.2.0.1'
GW = '10.2.255.254'        # dp1's address: masquerade, port forwards
IN = '10.1.0.10'           # the inside host behind the port forwards


def udp(side, src, dst, sport, dport, data):
    return (side, IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(data))


def tcp(side, src, dst, sport, dport, flags, seq, ack=0):
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                              ack=ack, window=8192))


PACKETS = [
    # masquerade: out as dp1's address, the reply back to the inside host
    udp('dp0', '10.1.0.9', S, 3000, 53, b'q1'),
    udp('dp1', S, GW, 53, 3000, b'a1'),
    udp('dp0', '10.1.0.9', S, 3000, 53, b'q2'),
    # a TCP handshake through masquerade
    tcp('dp0', '10.1.0.9', S, 3001, 80, 'S', 100),
    tcp('dp1', S, GW, 80, 3001, 'SA', 900, 101),
    tcp('dp0', '10.1.0.9', S, 3001, 80, 'A', 101, 901),
    # port unreachable to the masqueraded address: RELATED, translated back
    udp('dp0', '10.1.0.9', S, 3002, 69, b'tftp'),
    ('dp1', IP(src=S, dst=GW) / ICMP(type=3, code=3) /
     IP(src=GW, dst=S, ttl=63) / UDP(sport=3002, dport=69) / Raw(b'tftp')),
    # SNAT to an address, its reply
    udp('dp0', '10.1.0.8', S, 4000, 123, b'ntp'),
    udp('dp1', S, '10.2.0.200', 123, 4000, b'ntp'),
    # port forward 2222 -> 10.1.0.10:22, the handshake both ways
    tcp('dp1', S, GW, 40000, 2222, 'S', 500),
    tcp('dp0', IN, S, 22, 40000, 'SA', 700, 501),
    tcp('dp1', S, GW, 40000, 2222, 'A', 501, 701),
    # port forward 5353 -> 10.1.0.10:53 and its answer
    udp('dp1', S, GW, 41000, 5353, b'mdns?'),
    udp('dp0', IN, S, 53, 41000, b'mdns!'),
    # from outside straight to the inside host: no rule lets it in
    tcp('dp1', S, IN, 40001, 22, 'S', 800),
    # a reply to nothing: invalid, dropped
    tcp('dp1', S, '10.1.0.9', 80, 3999, 'SA', 950, 1),
]
EXPECT = {'dp1': 8, 'dp0': 7}
