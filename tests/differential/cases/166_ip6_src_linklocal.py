from scapy.all import IPv6, UDP, Raw

D = '2001:db8:2::1'
PACKETS = [
    IPv6(src='2001:db8:1::1', dst=D) / UDP(dport=7),
    IPv6(src='fe80::1', dst=D) / UDP(dport=7),
    IPv6(src='fe80::1', dst=D, hlim=1) / UDP(dport=7),
    IPv6(src='2001:db8:1::1', dst=D) / UDP(dport=7) / Raw(b'end'),
]
EXPECT = {'dp1': 2, 'dp0': 0}
