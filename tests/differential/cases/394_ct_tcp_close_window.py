from scapy.all import IP, IPv6, TCP, Raw


def tcp(side, ip, src, dst, sport, dport, flags, seq, ack=0, data=b''):
    return (side, ip(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                              ack=ack, window=8192) / Raw(data))


def flow(cport, ip=IP, caddr='10.1.0.1', saddr='10.2.0.1', sport=80):
    return (lambda *a, **kw: tcp('dp0', ip, caddr, saddr, cport, sport, *a, **kw),
            lambda *a, **kw: tcp('dp1', ip, saddr, caddr, sport, cport, *a, **kw))


PACKETS = []
# data, then the client's FIN, the server's ACK and FIN, the last ACK to
# TIME_WAIT, and that ACK again
c, s = flow(46000)
PACKETS += [c('S', 1000), s('SA', 5000, 1001), c('A', 1001, 5001),
            c('PA', 1001, 5001, b'hello'), s('A', 5001, 1006), c('FA', 1006, 5001),
            s('A', 5001, 1007), s('FA', 5001, 1007), c('A', 1007, 5002), c('A', 1007, 5002)]
# a FIN a million bytes past the window (invalid), then the real one; the
# server's FIN, the last ACK, and an ACK of data the client never sent
c, s = flow(46001)
PACKETS += [c('S', 2000), s('SA', 6000, 2001), c('A', 2001, 6001),
            c('FA', 2001 + 1000000, 6001), c('FA', 2001, 6001), s('FA', 6001, 2002),
            c('A', 2002, 6002), s('A', 6002, 2502)]
# half close: the client's FIN, the server's data after it (CLOSE_WAIT),
# the client's ACK of it, the server's FIN (LAST_ACK), the last ACK
c, s = flow(46002)
PACKETS += [c('S', 3000), s('SA', 7000, 3001), c('A', 3001, 7001), c('FA', 3001, 7001),
            s('PA', 7001, 3002, b'data'), c('A', 3002, 7005), s('FA', 7005, 3002),
            c('A', 3002, 7006)]
# the handshake's ACK acknowledging more than the server sent (invalid),
# then the right one, data and its ACK
c, s = flow(46003)
PACKETS += [c('S', 4000), s('SA', 8000, 4001), c('A', 4001, 8011), c('A', 4001, 8001),
            c('PA', 4001, 8001, b'xyz'), s('A', 8001, 4004)]
# IPv6: data both ways, FINs crossing, both last ACKs
c, s = flow(46004, IPv6, '2001:db8:1::1', '2001:db8:2::1')
PACKETS += [c('S', 9000), s('SA', 9500, 9001), c('A', 9001, 9501),
            c('PA', 9001, 9501, b'abc'), s('PA', 9501, 9004, b'de'), c('FA', 9004, 9503),
            s('FA', 9503, 9004), c('A', 9005, 9504), s('A', 9504, 9005)]
EXPECT = {'dp1': 23, 'dp0': 15}
