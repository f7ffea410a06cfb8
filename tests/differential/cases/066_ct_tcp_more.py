from scapy.all import IP, TCP, Raw


def tcp(side, src, dst, sport, dport, flags, seq, ack=0, data=b'', win=8192):
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                              ack=ack, window=win) / Raw(data))


def flow(cport, caddr='10.1.0.1', saddr='10.2.0.1', sport=80):
    return (lambda *a, **kw: tcp('dp0', caddr, saddr, cport, sport, *a, **kw),
            lambda *a, **kw: tcp('dp1', saddr, caddr, sport, cport, *a, **kw))


PACKETS = []
# half close: the client sends FIN, the server goes on sending, then closes
c, s = flow(46000)
PACKETS += [c('S', 1000), s('SA', 5000, 1001), c('A', 1001, 5001),
            c('FA', 1001, 5001), s('A', 5001, 1002), s('PA', 5001, 1002, b'more data'),
            c('A', 1002, 5010), s('FA', 5010, 1002), c('A', 1002, 5011)]
# a SYN inside an established connection; keepalives both ways
c, s = flow(46001)
PACKETS += [c('S', 2000), s('SA', 6000, 2001), c('A', 2001, 6001),
            c('S', 2001), c('A', 2000, 6001), s('A', 6000, 2001)]
# a RST with the wrong ack answering a SYN; the right one follows
c, s = flow(46002)
PACKETS += [c('S', 3000), s('RA', 0, 12345), s('RA', 0, 3001)]
# the server's bare ACK while the client waits for SYN-ACK; then a
# retransmitted SYN-ACK, and a zero window with its probe
c, s = flow(46003)
PACKETS += [c('S', 4000), s('A', 8000, 4001), s('SA', 8000, 4001), s('SA', 8000, 4001),
            c('A', 4001, 8001), s('A', 8001, 4001, win=0), c('PA', 4001, 8001, b'p')]
EXPECT = {'dp1': 13, 'dp0': 11}
