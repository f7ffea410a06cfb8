# Signalling connections from the client (dp0) to the server (dp1), the
# media the server then sends back (UDP to the client's port 5004).
from scapy.all import IP, TCP, UDP, Raw

C, S = '10.1.0.1', '10.2.0.1'


def tcp(side, sport, dport, flags, seq, ack=0):
    src, dst = (C, S) if side == 'dp0' else (S, C)
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                             ack=ack, window=8192))


def media(sport, dport):
    return ('dp1', IP(src=S, dst=C) / UDP(sport=sport, dport=dport) / Raw(b'rtp' * 4))


PACKETS = [
    tcp('dp0', 40000, 5060, 'S', 1000),  # opens the expectation
    tcp('dp1', 5060, 40000, 'SA', 5000, 1001),
    tcp('dp0', 40000, 5060, 'A', 1001, 5001),
    media(7000, 5004),  # expected: related
    media(7001, 5005),  # another port: new, dropped
    media(7002, 5004),  # the expectation was used: new, dropped
    tcp('dp0', 40001, 5061, 'S', 2000),  # opens one too
    tcp('dp1', 5061, 40001, 'SA', 6000, 2001),
    tcp('dp0', 40001, 5061, 'A', 2001, 6001),  # confirmed: the rule breaks
    media(7003, 5004),  # related
    media(7004, 5004),  # used: dropped
]
EXPECT = {'dp1': 4, 'dp0': 4}
