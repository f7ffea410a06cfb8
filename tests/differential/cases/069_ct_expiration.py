from scapy.all import IP, TCP, UDP, ICMP, Raw


def tcp(side, src, dst, sport, dport, flags, seq, ack=0, data=b''):
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                              ack=ack, window=8192) / Raw(data))


def flow(cport, caddr='10.1.0.1', saddr='10.2.0.1', sport=80):
    return (lambda *a, **kw: tcp('dp0', caddr, saddr, cport, sport, *a, **kw),
            lambda *a, **kw: tcp('dp1', saddr, caddr, sport, cport, *a, **kw))


PACKETS = []
c, s = flow(47000)
PACKETS += [
    c('S', 1000),                         # new
    s('SA', 5000, 1001),                  # SYN_RECV: 60 s
    c('A', 1001, 5001),                   # ESTABLISHED: 5 days
    c('PA', 1001, 5001, b'x' * 10),       # unacknowledged data: 300 s
    s('A', 5001, 1011),                   # acknowledged: 5 days
    c('FA', 1011, 5001),                  # FIN_WAIT: 120 s
    s('A', 5001, 1012),                   # CLOSE_WAIT: 60 s
    s('FA', 5001, 1012),                  # LAST_ACK: 30 s
    c('A', 1012, 5002),                   # TIME_WAIT: 120 s
]
c, s = flow(47001)
PACKETS += [c('S', 2000), s('SA', 6000, 2001), c('A', 2001, 6001),
            s('R', 6001)]                 # CLOSE: 10 s
PACKETS += [
    ('dp0', IP(src='10.1.0.2', dst='10.2.0.1') / UDP(sport=1, dport=2) / Raw(b'u')),
    ('dp1', IP(src='10.2.0.1', dst='10.1.0.2') / UDP(sport=2, dport=1) / Raw(b'u')),   # 30 s
    ('dp0', IP(src='10.1.0.2', dst='10.2.0.1') / ICMP(type=8, id=3) / Raw(b'p')),
    ('dp1', IP(src='10.2.0.1', dst='10.1.0.2') / ICMP(type=0, id=3) / Raw(b'p')),      # 30 s
    ('dp0', IP(src='10.1.0.2', dst='10.2.0.1', proto=253) / Raw(b'g')),
    ('dp1', IP(src='10.2.0.1', dst='10.1.0.2', proto=253) / Raw(b'g')),                # 600 s
]
EXPECT = {'dp1': 10, 'dp0': 9}
