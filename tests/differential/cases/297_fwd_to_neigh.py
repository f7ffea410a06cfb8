# fwd to a neighbour: IPv4 and IPv6 stolen to dp1 with TTL / hop limit
# one less, an IPv4 packet
# that meets `fwd ip6` is forwarded by route instead.
from scapy.all import IP, IPv6, UDP, Raw

MIRROR_ROUTES = True
NEIGHBOURS = ['10.2.0.1', '2001:db8:2::1']

PACKETS = [
    IP(src='10.1.0.2', dst='10.2.0.5', ttl=30, id=1) / UDP(sport=1000, dport=7) / Raw(b'a' * 8),
    IP(src='10.1.0.2', dst='10.2.0.5', ttl=2, id=2) / UDP(sport=1000, dport=7) / Raw(b'b' * 8),
    IPv6(src='2001:db8:1::2', dst='2001:db8:2::5', hlim=20) / UDP(sport=1000, dport=7) / Raw(b'c' * 8),
    IP(src='10.1.0.3', dst='10.2.0.5', ttl=30, id=3) / UDP(sport=1000, dport=9) / Raw(b'd' * 8),
    IP(src='10.1.0.4', dst='10.2.0.5', ttl=30, id=4) / UDP(sport=1000, dport=8) / Raw(b'e' * 8),
]
EXPECT = {'dp1': 5}
