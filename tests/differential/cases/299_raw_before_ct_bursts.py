from scapy.all import ICMP, IP, TCP, UDP, Raw


def fwd(sport, dport=53, tos=0, src='10.1.0.1'):
    return ('dp0', IP(src=src, dst='10.2.0.1', tos=tos) /
            UDP(sport=sport, dport=dport) / Raw(b'q' * 12))


def rev(sport, dport=53, tos=0, src='10.1.0.1'):
    return ('dp1', IP(src='10.2.0.1', dst=src, tos=tos) /
            UDP(sport=dport, dport=sport) / Raw(b'r' * 12))


PACKETS = [
    fwd(40000),             # new, zone 0
    fwd(40000, tos=4),      # the same tuple in zone 1: new
    fwd(40000),             # zone 0 again, no reply yet: new
    fwd(41000, dport=7),    # untracked
    fwd(41000, dport=7),    # untracked
    fwd(42000, dport=9),    # within the limit's burst
    fwd(42001, dport=9),
    fwd(42002, dport=9),    # over it: dropped in raw
    ('dp0', IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=43000, dport=23, flags='S')),
    ('dp0', IP(src='10.1.0.1', dst='10.2.0.1') / ICMP(type=8, id=7, seq=1)),
    fwd(40001),             # new
    fwd(40001),             # new (no reply)
    rev(40000),             # zone 0's reply
    rev(40000, tos=4),      # zone 1's reply
    rev(41000, dport=7),    # untracked both ways: sport 7 is no notrack
    ('dp1', IP(src='10.2.0.1', dst='10.1.0.1') / ICMP(type=0, id=7, seq=1)),
    fwd(40000),             # established in zone 0
    fwd(40000, tos=4),      # established in zone 1
    fwd(40000, tos=4),
    rev(40001),
    fwd(40001),             # established
    fwd(42003, dport=9),    # still over the limit
    ('dp0', IP(src='10.1.0.9', dst='10.2.0.1') / TCP(sport=43001, dport=23, flags='S')),
    fwd(40002, src='10.1.0.2'),
    fwd(40002, src='10.1.0.2'),
    rev(40002, src='10.1.0.2'),
    fwd(40002, src='10.1.0.2'),
]
# forwarded: 17 to dp1; 8 back to dp0, two of them the resets
EXPECT = {'dp1': 17, 'dp0': 8}
