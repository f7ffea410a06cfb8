from scapy.all import IPv6, UDP, ICMPv6EchoRequest, IPv6ExtHdrFragment, fragment6


def v6(ident, l4, payload, size, reverse=False):
    p = IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / IPv6ExtHdrFragment(id=ident) / l4 / payload
    frags = fragment6(p, size)
    return list(reversed(frags)) if reverse else frags


PACKETS = (
    # UDP, 1400-byte fragments, in order, then reversed
    v6(200, UDP(sport=1234, dport=5000), b'f' * 3000, 1400) +
    v6(201, UDP(sport=1234, dport=5000), b'g' * 2000, 1400, reverse=True) +
    # an ICMPv6 echo out of order: middle, last, first
    [v6(202, ICMPv6EchoRequest(id=7, seq=1), b'h' * 3000, 1400)[i] for i in (1, 2, 0)] +
    # a small datagram that needs no reassembly goes through
    [IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(sport=1234, dport=5000) / b'i']
)
EXPECT = {'dp1': 1}
