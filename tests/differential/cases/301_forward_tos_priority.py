from scapy.all import IP, IPv6, UDP, Raw


def v4(tos, src='10.1.0.1'):
    return IP(src=src, dst='10.2.0.1', tos=tos) / UDP(sport=1000 + tos, dport=53) / Raw(b'q')


PACKETS = [v4(tos) for tos in (0x00, 0x02, 0x04, 0x08, 0x0c, 0x10, 0x14, 0x18, 0x1c,
                               0x1e, 0xb8, 0xff)]
PACKETS += [
    v4(0x00, src='10.1.0.9'),   # prerouting's 1:9, then the TOS's 0
    v4(0x10, src='10.1.0.9'),   # prerouting's 1:9, then 0:6
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1', tc=0x10) / UDP(sport=1, dport=53),
    IPv6(src='2001:db8:1::9', dst='2001:db8:2::1', tc=0x10) / UDP(sport=2, dport=53),
]
EXPECT = {'dp1': 16}
