# dup to an address: copies made at prerouting, forward and postrouting,
# with and without a device, one of a packet forward drops, IPv4 and
# IPv6; each copy leaves by its route (dp1, or dp0 for a gateway on the
# sources' side) before the original. Egress is compared from the IP
# header on, so the copies' TTL, DF and checksum are too.
from scapy.all import IP, IPv6, UDP, Raw

MIRROR_ROUTES = True
NEIGHBOURS = ['10.2.0.1', '10.1.0.9', '172.16.0.9', '2001:db8:2::1']


def u4(src, dport=7, ttl=30, dst='10.2.0.5'):
    return IP(src=src, dst=dst, ttl=ttl, id=100 + dport) / UDP(sport=1000, dport=dport) / Raw(b'x' * 8)


def u6(src):
    return IPv6(src=src, dst='2001:db8:2::5', hlim=20) / UDP(sport=1000, dport=7) / Raw(b'y' * 8)


PACKETS = [
    u4('10.1.0.2'),  # prerouting, device dp1: copy then original on dp1
    u4('10.1.0.2', dport=8),  # no dup
    u4('10.1.0.3'),  # prerouting, by route
    u4('10.1.0.4'),  # to 172.16.0.9: its route is dp1's, no gateway
    u4('10.1.0.5'),  # forward: the copy goes to dp0's side
    u4('10.1.0.6'),  # forward: copied, the original dropped
    u4('10.1.0.7'),  # postrouting
    u4('10.1.0.2', ttl=1),  # TTL 1: the copy has 0, the original gets time exceeded
    u6('2001:db8:1::2'),  # prerouting: hop limit one less
    u6('2001:db8:1::3'),  # postrouting
]
EXPECT = {'dp1': 16, 'dp0': 2}
