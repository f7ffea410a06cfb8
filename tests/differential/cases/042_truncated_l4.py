from scapy.all import IP, IPv6, TCP, UDP, Raw

S, D = '10.1.0.1', '10.2.0.1'
S6, D6 = '2001:db8:1::1', '2001:db8:2::1'


def l4(proto, hdr, n):
    """IPv4 with the first n bytes of a transport header."""
    return IP(src=S, dst=D, proto=proto) / Raw(bytes(hdr)[:n])


def l4v6(nh, hdr, n):
    return IPv6(src=S6, dst=D6, nh=nh) / Raw(bytes(hdr)[:n])


PACKETS = [
    l4(6, TCP(sport=1, dport=2, flags='S'), 4),     # ports present: dropped
    l4(6, TCP(sport=3, dport=4, flags='S'), 4),     # flags missing: neither flags rule matches
    l4(6, TCP(sport=3, dport=4, flags='S'), 14),    # flags present: dropped by the first
    l4(17, UDP(sport=5, dport=7), 2),               # sport present: dropped
    l4(17, UDP(sport=6, dport=8), 3),               # dport cut in half: forwarded
    l4(1, b'\x08\x00', 1),                          # ICMP type only: the second icmp rule drops it
    l4(1, b'\x08\x00', 2),                          # type and code: the first drops it
    l4v6(58, b'\x80\x00\x00\x00\x00\x09', 5),       # id cut: forwarded
    l4v6(58, b'\x80\x00\x00\x00\x00\x09', 6),       # id present: dropped
    l4v6(6, TCP(sport=9, dport=8), 4),              # th dport present: dropped
    l4v6(6, TCP(sport=9, dport=8), 3),              # th dport cut: forwarded
]
EXPECT = {'dp1': 4}
