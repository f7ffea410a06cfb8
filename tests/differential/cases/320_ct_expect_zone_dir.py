# A signalling connection from the client (dp0) to the server (dp1) in
# zone 5 expecting media to ports 5004, 5006 and 5008 (see
# 320_ct_expect_zone_dir.nft), then the server's media.
from scapy.all import IP, TCP, UDP, Raw

C, S = '10.1.0.1', '10.2.0.1'


def tcp(side, flags, seq, ack=0):
    a, b = (C, S) if side == 'dp0' else (S, C)
    sp, dp = (40000, 5060) if side == 'dp0' else (5060, 40000)
    return (side, IP(src=a, dst=b) / TCP(sport=sp, dport=dp, flags=flags, seq=seq, ack=ack,
                                         window=8192))


def media(sport, dport):
    return ('dp1', IP(src=S, dst=C) / UDP(sport=sport, dport=dport) / Raw(b'rtp' * 4))


PACKETS = [
    tcp('dp0', 'S', 1000),
    tcp('dp1', 'SA', 5000, 1001),
    tcp('dp0', 'A', 1001, 5001),
    media(7000, 5004),  # zone 5 in reply only: related
    media(7001, 5006),  # zone 5 in original only: related
    media(7002, 5008),  # no zone: new, dropped
]
EXPECT = {'dp1': 2, 'dp0': 3}
