from scapy.all import ICMP, IP, UDP, IPv6, ICMPv6EchoRequest, fragment, fragment6, IPv6ExtHdrFragment

def v4(ident, l4, payload, size, reverse=False):
    frags = fragment(IP(src='10.1.0.1', dst='10.2.0.1', id=ident) / l4 / payload, fragsize=size)
    return list(reversed(frags)) if reverse else frags

def v6(ident, l4, payload, size, reverse=False):
    p = IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / IPv6ExtHdrFragment(id=ident) / l4 / payload
    frags = fragment6(p, size)
    return list(reversed(frags)) if reverse else frags

def df(frags):
    for f in frags:
        f.flags = f.flags | 2
    return frags

PACKETS = (
    # a UDP datagram of 3008 bytes in three fragments, in order
    v4(100, UDP(sport=1234, dport=5000), b'a' * 3000, 1480) +
    # the same flow again, fragments in reverse order
    v4(101, UDP(sport=1234, dport=5000), b'b' * 2000, 1480, reverse=True) +
    # small fragments: sent on no bigger than they came
    v4(102, UDP(sport=1234, dport=5000), b'c' * 1000, 400) +
    # an ICMP echo of 2008 bytes
    v4(103, ICMP(type=8, id=7, seq=1), b'd' * 2000, 1480) +
    # a datagram that needs no reassembly
    [IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=1234, dport=5000) / b'e'] +
    df(v4(104, UDP(sport=1234, dport=5000), b'h' * 2000, 1480)) +
    df(v4(105, UDP(sport=1234, dport=5000), b'i' * 2000, 1480)[:1]) + v4(105, UDP(sport=1234, dport=5000), b'i' * 2000, 1480)[1:]
)
EXPECT = {'dp1': 3 + 2 + 3 + 2 + 1 + 2 + 2}
