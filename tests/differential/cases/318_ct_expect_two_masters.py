# Signalling connections from the client (dp0) to the server (dp1), each
# asking for media from the server to the client's port 5004 (see
# 318_ct_expect_two_masters.nft).
from scapy.all import IP, TCP, UDP, Raw

C, S = '10.1.0.1', '10.2.0.1'


def tcp(side, sport, flags, seq, ack=0):
    a, b = (C, S) if side == 'dp0' else (S, C)
    sp, dp = (sport, 5060) if side == 'dp0' else (5060, sport)
    return (side, IP(src=a, dst=b) / TCP(sport=sp, dport=dp, flags=flags, seq=seq, ack=ack,
                                         window=8192))


def media(sport):
    return ('dp1', IP(src=S, dst=C) / UDP(sport=sport, dport=5004) / Raw(b'rtp' * 4))


PACKETS = [
    tcp('dp0', 40000, 'S', 1000),  # master 1 (mark 1): expects media
    tcp('dp0', 40001, 'S', 2000),  # master 2 (mark 2): clash, dropped
    tcp('dp1', 40000, 'SA', 5000, 1001),
    tcp('dp0', 40000, 'A', 1001, 5001),
    media(7000),  # master 1's: related, mark 1
    media(7001),  # used: new, dropped
    tcp('dp0', 40001, 'S', 2000),  # the retransmission: expects media now
    tcp('dp1', 40001, 'SA', 6000, 2001),
    tcp('dp0', 40001, 'A', 2001, 6001),
    media(7002),  # master 2's: related, mark 2
    # master 3 makes it unmarked, then is marked 7 on its ACK
    tcp('dp0', 40002, 'S', 3000),
    tcp('dp1', 40002, 'SA', 7000, 3001),
    tcp('dp0', 40002, 'A', 3001, 7001),
    media(7003),  # related, mark 7 (the master's now)
]
EXPECT = {'dp1': 6, 'dp0': 6}
