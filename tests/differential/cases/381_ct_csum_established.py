from scapy.all import IP, IPv6, TCP, UDP, Raw


def l3(v6, src, dst):
    return IPv6(src=src, dst=dst) if v6 else IP(src=src, dst=dst)


def tcp(side, v6, src, dst, sport, dport, flags, seq, ack=0, data=b'', chksum=None):
    seg = TCP(sport=sport, dport=dport, flags=flags, seq=seq, ack=ack, window=8192)
    if chksum is not None:
        seg.chksum = chksum
    return (side, l3(v6, src, dst) / seg / Raw(data))


def zero_sum(v6, src, dst, sport, dport, flags, seq, ack):
    """a payload whose first word makes the segment's checksum 0x0000"""
    tail = b'zq'
    p = l3(v6, src, dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq, ack=ack,
                               window=8192) / Raw(b'\0\0' + tail)
    c = (IPv6 if v6 else IP)(bytes(p))[TCP].chksum
    data = c.to_bytes(2, 'big') + tail
    q = l3(v6, src, dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq, ack=ack,
                               window=8192) / Raw(data)
    assert (IPv6 if v6 else IP)(bytes(q))[TCP].chksum == 0
    return data


def tcp_flow(v6, cport):
    ca, sa = ('2001:db8:1::1', '2001:db8:2::1') if v6 else ('10.1.0.1', '10.2.0.1')

    def c(*a, **kw):
        return tcp('dp0', v6, ca, sa, cport, 80, *a, **kw)

    def s(*a, **kw):
        return tcp('dp1', v6, sa, ca, 80, cport, *a, **kw)

    z1 = zero_sum(v6, ca, sa, cport, 80, 'PA', 1006, 5001)
    z2 = zero_sum(v6, ca, sa, cport, 80, 'PA', 1010, 5001)
    return [c('S', 1000), s('SA', 5000, 1001), c('A', 1001, 5001),
            c('PA', 1001, 5001, b'hello'), s('A', 5001, 1006),
            c('PA', 1006, 5001, z1),                 # sums to 0x0000
            c('PA', 1010, 5001, z2, chksum=0xffff),  # 0x0000 written as 0xffff
            c('PA', 1014, 5001, b'abcd', chksum=0x1234),  # bad: invalid
            c('PA', 1014, 5001, b'abcd'), s('A', 5001, 1018),
            s('PA', 5001, 1018, b'resp', chksum=0x4321),  # bad: invalid
            s('PA', 5001, 1018, b'resp'), c('A', 1018, 5005)]


def udp(side, src, dst, sport, dport, data, chksum=None):
    d = UDP(sport=sport, dport=dport)
    if chksum is not None:
        d.chksum = chksum
    return (side, IP(src=src, dst=dst) / d / Raw(data))


PACKETS = tcp_flow(False, 47000) + tcp_flow(True, 47001)
PACKETS += [udp('dp0', '10.1.0.2', '10.2.0.2', 5353, 53, b'query'),
            udp('dp1', '10.2.0.2', '10.1.0.2', 53, 5353, b'answer'),
            udp('dp0', '10.1.0.2', '10.2.0.2', 5353, 53, b'bad', chksum=0x1111),
            udp('dp0', '10.1.0.2', '10.2.0.2', 5353, 53, b'none', chksum=0),
            udp('dp1', '10.2.0.2', '10.1.0.2', 53, 5353, b'bad', chksum=0x2222),
            udp('dp1', '10.2.0.2', '10.1.0.2', 53, 5353, b'again')]
# each TCP flow: the client's 8 segments, 1 invalid; the server's 5, 1
# invalid; UDP: 3 datagrams each way, 1 invalid
EXPECT = {'dp1': 2 * 7 + 2, 'dp0': 2 * 4 + 2}
