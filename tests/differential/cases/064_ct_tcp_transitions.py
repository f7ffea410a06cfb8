from scapy.all import IP, TCP, Raw


def tcp(side, src, dst, sport, dport, flags, seq, ack=0, data=b'', win=8192, opts=()):
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                              ack=ack, window=win, options=list(opts)) / Raw(data))


def flow(cport, caddr='10.1.0.1', saddr='10.2.0.1', sport=80):
    return (lambda *a, **kw: tcp('dp0', caddr, saddr, cport, sport, *a, **kw),
            lambda *a, **kw: tcp('dp1', saddr, caddr, sport, cport, *a, **kw))


PACKETS = []
# SYN retransmitted after the SYN-ACK, then the handshake completes
c, s = flow(45000)
PACKETS += [c('S', 1000), s('SA', 5000, 1001), c('S', 1000), s('SA', 5000, 1001),
            c('A', 1001, 5001)]
# simultaneous open: both send SYN, both answer SYN-ACK
c, s = flow(45001, sport=45001)
PACKETS += [c('S', 2000), s('S', 6000), c('SA', 2000, 6001), s('SA', 6000, 2001),
            c('A', 2001, 6001)]
# connection refused: RST|ACK to the SYN; then the client tries again
c, s = flow(45002)
PACKETS += [c('S', 3000), s('RA', 0, 3001), c('S', 3000), s('SA', 7000, 3001)]
# closed to TIME_WAIT, then a new SYN on the same ports reopens it
c, s = flow(45003)
PACKETS += [c('S', 4000), s('SA', 8000, 4001), c('A', 4001, 8001),
            c('FA', 4001, 8001), s('FA', 8001, 4002), c('A', 4002, 8002),
            c('S', 900000), s('SA', 950000, 900001), c('A', 900001, 950001)]
# window scale 7 on both sides: 500 * 128 bytes of window
ws = [('WScale', 7), ('NOP', None)]
c, s = flow(45004)
PACKETS += [c('S', 10000, win=65535, opts=ws), s('SA', 20000, 10001, win=65535, opts=ws),
            c('A', 10001, 20001, win=500), s('PA', 20001 + 40000, 10001, b'z' * 100, win=500),
            s('PA', 20001 + 200000, 10001, b'far', win=500)]
# a SYN-ACK acknowledging the wrong sequence number
c, s = flow(45005)
PACKETS += [c('S', 11000), s('SA', 21000, 5), s('SA', 21000, 11001), c('A', 11001, 21001)]
EXPECT = {'dp1': 18, 'dp0': 13}
