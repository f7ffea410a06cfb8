from scapy.all import IPv6, TCP, UDP, Raw, ICMPv6DestUnreach

S, MASQ = '2001:db8:2::1', '2001:db8:2::ffff'


def udp(side, src, dst, sport, dport, data):
    return (side, IPv6(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(data))


def tcp(side, src, dst, sport, dport, flags, seq, ack=0, data=b''):
    return (side, IPv6(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                                ack=ack, window=8192) / Raw(data))


PACKETS = [
    udp('dp0', '2001:db8:1::9', S, 3000, 53, b'q'),
    udp('dp1', S, MASQ, 53, 3000, b'a'),
    tcp('dp0', '2001:db8:1::9', S, 3001, 80, 'S', 100),
    tcp('dp1', S, MASQ, 80, 3001, 'SA', 900, 101),
    tcp('dp0', '2001:db8:1::9', S, 3001, 80, 'A', 101, 901),
    udp('dp0', '2001:db8:1::9', S, 3002, 69, b'tftp'),
    ('dp1', IPv6(src=S, dst=MASQ) / ICMPv6DestUnreach(code=4) /
     IPv6(src=MASQ, dst=S, hlim=63) / UDP(sport=3002, dport=69) / Raw(b'tftp')),
    udp('dp0', '2001:db8:1::8', S, 4000, 123, b'ntp'),
    udp('dp1', S, '2001:db8:2::200', 123, 4000, b'ntp'),
    tcp('dp0', '2001:db8:1::1', '2001:db8:2::100', 1000, 8443, 'S', 10),
    tcp('dp1', S, '2001:db8:1::1', 443, 1000, 'SA', 500, 11),
    tcp('dp0', '2001:db8:1::1', '2001:db8:2::100', 1000, 8443, 'A', 11, 501),
]
EXPECT = {'dp1': 7, 'dp0': 5}
NEIGHBOURS = ['2001:db8:2::100']
