from scapy.all import IP, TCP, Raw


def tcp(side, src, dst, sport, dport, flags, seq, ack=0, data=b''):
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                              ack=ack, window=8192) / Raw(data))


def flow(cport, caddr='10.1.0.1', saddr='10.2.0.1', sport=80):
    return (lambda *a, **kw: tcp('dp0', caddr, saddr, cport, sport, *a, **kw),
            lambda *a, **kw: tcp('dp1', saddr, caddr, sport, cport, *a, **kw))


PACKETS = []
# the server resets an established connection; the client's late ACK and RST follow
c, s = flow(41000)
PACKETS += [c('S', 1000), s('SA', 5000, 1001), c('A', 1001, 5001),
            c('PA', 1001, 5001, b'data'), s('R', 5001),
            c('A', 1005, 5001), c('R', 1005)]
# a RST far outside the window is invalid; the connection goes on
c, s = flow(41001)
PACKETS += [c('S', 2000), s('SA', 6000, 2001), c('A', 2001, 6001),
            s('R', 6001 + 10000000), c('PA', 2001, 6001, b'still here'), s('A', 6001, 2011)]
# the client resets: its RST goes from dp0 to dp1
c, s = flow(41002)
PACKETS += [c('S', 3000), s('SA', 7000, 3001), c('A', 3001, 7001), c('RA', 3001, 7001)]
# FIN close, then a RST after the close
c, s = flow(41003)
PACKETS += [c('S', 4000), s('SA', 8000, 4001), c('A', 4001, 8001),
            c('FA', 4001, 8001), s('FA', 8001, 4002), c('A', 4002, 8002), s('R', 8002)]
# nothing opens a connection but a SYN: a SYN-ACK, a RST, a FIN on their own
PACKETS += [tcp('dp1', '10.2.0.1', '10.1.0.3', 80, 42000, 'SA', 100, 200),
            tcp('dp0', '10.1.0.3', '10.2.0.1', 42001, 80, 'R', 300),
            tcp('dp0', '10.1.0.3', '10.2.0.1', 42002, 80, 'F', 400)]
EXPECT = {'dp1': 15, 'dp0': 8}
