from scapy.all import (IPv6, TCP, UDP, Raw, ICMPv6DestUnreach, ICMPv6PacketTooBig,
                       ICMPv6EchoRequest, ICMPv6EchoReply)

C, S = '2001:db8:1::1', '2001:db8:2::1'


def tcp(side, src, dst, sport, dport, flags, seq, ack=0, data=b''):
    return (side, IPv6(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                                                ack=ack, window=8192) / Raw(data))


def quoted(p):
    """The packet as the far side received it: one hop on."""
    q = IPv6(bytes(p))
    q.hlim -= 1
    return IPv6(bytes(q))


c = lambda *a, **kw: tcp('dp0', C, S, 44000, 443, *a, **kw)
s = lambda *a, **kw: tcp('dp1', S, C, 443, 44000, *a, **kw)
big = IPv6(src=C, dst=S) / UDP(sport=6000, dport=4500) / Raw(b'B' * 200)
PACKETS = [
    c('S', 1000), s('SA', 5000, 1001), c('A', 1001, 5001),
    c('PA', 1001, 5001, b'hello'), s('PA', 5001, 1006, b'world'), c('A', 1006, 5006),
    s('R', 5006), c('A', 1006, 5006),
    ('dp0', IPv6(src=C, dst=S) / UDP(sport=5000, dport=53) / Raw(b'q')),
    ('dp1', IPv6(src=S, dst=C) / UDP(sport=53, dport=5000) / Raw(b'a')),
    ('dp0', IPv6(src=C, dst=S) / UDP(sport=5001, dport=69) / Raw(b'tftp')),
    ('dp1', IPv6(src=S, dst=C) / ICMPv6DestUnreach(code=4) /
     quoted(IPv6(src=C, dst=S) / UDP(sport=5001, dport=69) / Raw(b'tftp'))),
    ('dp0', big),
    ('dp1', IPv6(src='2001:db8:2::fe', dst=C) / ICMPv6PacketTooBig(mtu=1280) / quoted(big)),
    ('dp1', IPv6(src=S, dst=C) / ICMPv6DestUnreach(code=4) /
     quoted(IPv6(src=C, dst=S) / UDP(sport=5999, dport=9) / Raw(b'?'))),
    ('dp0', IPv6(src=C, dst=S) / ICMPv6EchoRequest(id=7, seq=1, data=b'ping')),
    ('dp1', IPv6(src=S, dst=C) / ICMPv6EchoReply(id=7, seq=1, data=b'ping')),
    ('dp1', IPv6(src=S, dst=C) / ICMPv6EchoReply(id=99, seq=1, data=b'pong')),
]
EXPECT = {'dp1': 9, 'dp0': 7}
