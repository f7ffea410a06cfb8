from scapy.all import IPv6, UDP, TCP, Raw

D = '2001:db8:2::1'
PACKETS = [
    IPv6(src='2001:db8:1::1', dst=D) / UDP(dport=7),
    IPv6(src='::', dst=D) / UDP(dport=7),
    IPv6(src='::', dst=D) / TCP(dport=80, flags='S'),
    IPv6(src='::', dst=D, hlim=1) / UDP(dport=7),
    IPv6(src='2001:db8:1::1', dst=D, hlim=1) / UDP(dport=8),
    IPv6(src='2001:db8:1::1', dst=D) / UDP(dport=7) / Raw(b'end'),
]
EXPECT = {'dp1': 2, 'dp0': 1}
