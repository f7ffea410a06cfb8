from scapy.all import IP, TCP, Raw


def tcp(side, src, dst, sport, dport, flags, seq, ack=0, data=b'', win=8192):
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                              ack=ack, window=win) / Raw(data))


C, S = '10.1.0.1', '10.2.0.1'
c = lambda *a, **kw: tcp('dp0', C, S, 43000, 80, *a, **kw)
s = lambda *a, **kw: tcp('dp1', S, C, 80, 43000, *a, **kw)
PACKETS = [
    c('S', 1000, win=1000),
    s('SA', 5000, 1001, win=2000),
    c('A', 1001, 5001, win=1000),
    c('PA', 1001, 5001, b'x' * 100, win=1000),          # in window
    s('A', 5001, 1101, win=2000),
    c('PA', 1101 + 50000, 5001, b'far', win=1000),      # past the server's window
    c('PA', (1001 - 70000) % 2**32, 5001, b'oldx', win=1000),     # long before the window: passed, ignored
    s('A', 5001, 1101 + 30000, win=2000),               # acks data never sent
    c('PA', 1001, 5001, b'x' * 100, win=1000),          # retransmission, in window
    s('PA', 5001, 1101, b'y' * 10, win=2000),
    c('A', 1101, 5011, win=1000),
]
EXPECT = {'dp1': 6, 'dp0': 3}
