from scapy.all import IP, TCP, UDP, ICMP, Raw

S, MASQ, IN = '10.2.0.1', '10.2.255.254', '10.1.0.9'


def tcp(side, src, dst, sport, dport, flags, seq, ack=0):
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                              ack=ack, window=8192))


def seen(src, dst, l4, ttl=63):
    """The datagram as the far side got it, to quote in an ICMP error."""
    return IP(bytes(IP(src=src, dst=dst, ttl=ttl) / l4))


syn_seen = seen(MASQ, S, TCP(sport=3001, dport=80, flags='S', seq=100, window=8192))
ack_seen = seen(MASQ, S, TCP(sport=3001, dport=80, flags='A', seq=101, ack=901, window=8192))
PACKETS = [
    tcp('dp0', IN, S, 3001, 80, 'S', 100),
    tcp('dp1', S, MASQ, 80, 3001, 'SA', 900, 101),
    tcp('dp0', IN, S, 3001, 80, 'A', 101, 901),
    # a router behind dp1 quotes 8 bytes of TCP, the server the whole header
    ('dp1', IP(src='10.2.0.254', dst=MASQ) / ICMP(type=11) / Raw(bytes(syn_seen)[:28])),
    ('dp1', IP(src=S, dst=MASQ) / ICMP(type=3, code=4, nexthopmtu=1400) / ack_seen),
    # the inside host says port unreachable about the server's SYN-ACK
    ('dp0', IP(src=IN, dst=S) / ICMP(type=3, code=3) /
     seen(S, IN, TCP(sport=80, dport=3001, flags='SA', seq=900, ack=101, window=8192))),
    # ping through masquerade, a second one, and an error about it
    ('dp0', IP(src=IN, dst=S) / ICMP(type=8, id=555, seq=1) / Raw(b'ping')),
    ('dp1', IP(src=S, dst=MASQ) / ICMP(type=0, id=555, seq=1) / Raw(b'ping')),
    ('dp0', IP(src=IN, dst=S) / ICMP(type=8, id=555, seq=2) / Raw(b'ping')),
    ('dp1', IP(src='10.2.0.254', dst=MASQ) / ICMP(type=3, code=1) /
     seen(MASQ, S, ICMP(type=8, id=555, seq=2) / Raw(b'ping'))),
    # a protocol with no tracker of its own, snat'ed, and its reply
    ('dp0', IP(src='10.1.0.7', dst=S, proto=253) / Raw(b'exp-1')),
    ('dp1', IP(src=S, dst='10.2.0.77', proto=253) / Raw(b'exp-2')),
    ('dp0', IP(src='10.1.0.7', dst=S, proto=253) / Raw(b'exp-3')),
    # UDP with replies both ways, still not assured
    ('dp0', IP(src='10.1.0.3', dst=S) / UDP(sport=7000, dport=7000) / Raw(b'u1')),
    ('dp1', IP(src=S, dst='10.1.0.3') / UDP(sport=7000, dport=7000) / Raw(b'u2')),
    ('dp0', IP(src='10.1.0.3', dst=S) / UDP(sport=7000, dport=7000) / Raw(b'u3')),
]
EXPECT = {'dp1': 9, 'dp0': 7}
