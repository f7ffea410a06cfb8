from scapy.all import IP, TCP, Raw


def tcp(side, src, dst, sport, dport, flags, seq, ack=0, data=b''):
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                              ack=ack, window=8192) / Raw(data))


C, S = '10.1.0.1', '10.2.0.1'     # client behind dp0, server behind dp1
c = lambda *a, **kw: tcp('dp0', C, S, 40000, 80, *a, **kw)
s = lambda *a, **kw: tcp('dp1', S, C, 80, 40000, *a, **kw)
PACKETS = [
    c('S', 1000),
    s('SA', 5000, 1001),
    c('A', 1001, 5001),
    c('PA', 1001, 5001, b'GET / HTTP/1.0\r\n\r\n'),
    s('A', 5001, 1019),
    s('PA', 5001, 1019, b'HTTP/1.0 200 OK\r\n\r\nhello'),
    c('A', 1019, 5025),
    c('FA', 1019, 5025),
    s('FA', 5025, 1020),
    c('A', 1020, 5026),
]
# a connection opened from dp1's side: its SYN is new in the original direction
C2, S2 = '10.2.0.7', '10.1.0.7'
a = lambda *a, **kw: tcp('dp1', C2, S2, 50000, 22, *a, **kw)
b = lambda *a, **kw: tcp('dp0', S2, C2, 22, 50000, *a, **kw)
PACKETS += [
    a('S', 70000),
    b('SA', 90000, 70001),
    a('A', 70001, 90001),
    b('PA', 90001, 70001, b'SSH-2.0-x\r\n'),
    a('A', 70001, 90012),
]
EXPECT = {'dp1': 8, 'dp0': 7}
