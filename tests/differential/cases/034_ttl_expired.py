from scapy.all import IP, IPv6, UDP, TCP, Raw

PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1', ttl=1, id=99) / UDP(sport=33434, dport=33435) / Raw(b't' * 32),
    IP(src='10.1.0.1', dst='10.2.0.1', ttl=2) / UDP(sport=33434, dport=33436),
    IP(src='10.1.0.1', dst='10.2.0.1', ttl=1) / TCP(sport=1, dport=2, flags='S'),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1', hlim=1) / UDP(sport=33434, dport=33435) / Raw(b'u' * 32),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1', hlim=2) / UDP(sport=33434, dport=33436),
]
EXPECT = {'dp1': 2, 'dp0': 3}
