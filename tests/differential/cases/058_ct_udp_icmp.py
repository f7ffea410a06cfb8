from scapy.all import IP, UDP, ICMP, Raw

C, S = '10.1.0.1', '10.2.0.1'


def up(src, dst, sport, dport, data):
    return IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(data)


def quoted(p):
    """The datagram as the far side received it: one hop on, TTL 63."""
    q = IP(bytes(p))
    q.ttl -= 1
    del q.chksum
    return IP(bytes(q))


req = up(C, S, 5000, 53, b'query')
PACKETS = [
    ('dp0', req),
    ('dp1', up(S, C, 53, 5000, b'answer')),
    ('dp0', up(C, S, 5000, 53, b'query2')),
    # a second flow that the server does not serve: port unreachable back
    ('dp0', up(C, S, 5001, 69, b'tftp')),
    ('dp1', IP(src=S, dst=C) / ICMP(type=3, code=3) / quoted(up(C, S, 5001, 69, b'tftp'))),
    # a router behind dp1 says time exceeded about the first flow
    ('dp1', IP(src='10.2.0.254', dst=C) / ICMP(type=11, code=0) / quoted(req)),
    # an ICMP error about a flow nobody saw: invalid
    ('dp1', IP(src=S, dst=C) / ICMP(type=3, code=3) / quoted(up(C, S, 5999, 9, b'?'))),
    # ping both ways
    ('dp0', IP(src=C, dst=S) / ICMP(type=8, id=7, seq=1) / Raw(b'ping')),
    ('dp1', IP(src=S, dst=C) / ICMP(type=0, id=7, seq=1) / Raw(b'ping')),
    ('dp0', IP(src=C, dst=S) / ICMP(type=8, id=7, seq=2) / Raw(b'ping')),
    ('dp1', IP(src=S, dst=C) / ICMP(type=0, id=7, seq=2) / Raw(b'ping')),
    # an echo reply with no request: invalid
    ('dp1', IP(src=S, dst=C) / ICMP(type=0, id=99, seq=1) / Raw(b'pong')),
    # a UDP flow opened from dp1's side, answered from dp0's
    ('dp1', up('10.2.0.9', '10.1.0.9', 123, 123, b'ntp')),
    ('dp0', up('10.1.0.9', '10.2.0.9', 123, 123, b'ntp')),
]
EXPECT = {'dp1': 6, 'dp0': 6}
