# Multipath hash policy 3 (custom fields) with a fixed seed, outer fields
# only: IPv4 hashes source address, protocol and destination port
# (fib_multipath_hash_fields 0x25), IPv6 destination address, flow label
# and source port (0x1a). UDP, TCP, SCTP, ICMP, AH (its SPI is the ports),
# fragments (no ports) and IPIP (protocol 4, no ports) over a two-path
# route; each flow recorded with the next hop its forward route took (rt
# nexthop) and compared element by element with the kernel's. The IPv6
# TCP packets are also copied by `dup to` an address behind the route:
# nf_dup_ipv6_route's output flow carries the header's label bytes as a
# host-order number, of which the label mask keeps a few bits, so the
# copies leave by the port the kernel's hash of those picks.
from scapy.all import IP, IPv6, UDP, TCP, ICMP, IPv6ExtHdrFragment, Raw
from scapy.layers.ipsec import AH
from scapy.layers.sctp import SCTP

MIRROR_ROUTES = True
SYSCTLS = ['net.ipv4.fib_multipath_hash_seed=4242', 'net.ipv4.fib_multipath_hash_policy=3',
           'net.ipv6.fib_multipath_hash_policy=3', 'net.ipv4.fib_multipath_hash_fields=0x25',
           'net.ipv6.fib_multipath_hash_fields=0x1a']
ROUTES = [
    'route add 10.50.0.0/24 nexthop via 10.1.0.9 dev dp0 nexthop via 10.2.0.1 dev dp1',
    '-6 route add 2001:db8:50::/64 nexthop via 2001:db8:1::9 dev dp0 '
    'nexthop via 2001:db8:2::1 dev dp1',
]
NEIGHBOURS = ['10.1.0.9', '10.2.0.1', '2001:db8:1::9', '2001:db8:2::1']

P = []
for i in range(1, 13):  # one destination, different destination ports
    P.append(IP(src='10.1.0.2', dst='10.50.0.9') / UDP(sport=3000, dport=1000 + i * 13) /
             Raw(b'u' * 4))
for i in range(1, 13):  # sources, TCP and SCTP ports
    l4 = TCP(sport=i, dport=443) if i % 2 else SCTP(sport=i, dport=443)
    P.append(IP(src='10.1.%d.%d' % (i, i), dst='10.50.0.%d' % i) / l4)
for i in range(1, 7):  # ICMP: no ports
    P.append(IP(src='10.1.%d.7' % i, dst='10.50.0.9') / ICMP(id=i))
for i in range(1, 7):  # AH: the SPI as ports
    P.append(IP(src='10.1.0.2', dst='10.50.0.9') / AH(spi=i * 0x10001, nh=59) / Raw(b'a' * 8))
for i in range(1, 5):  # first fragments: no ports
    P.append(IP(src='10.1.%d.3' % i, dst='10.50.0.9', flags='MF') /
             UDP(sport=1, dport=2) / Raw(b'f' * 16))
for i in range(1, 7):  # IPIP: protocol 4
    P.append(IP(src='10.1.%d.4' % i, dst='10.50.0.9') / IP(src='1.1.1.1', dst='2.2.2.2') /
             UDP(sport=1, dport=2))
for n, p in enumerate(P):
    p[IP].id = n + 1
Q = []
for i in range(1, 13):  # destinations and source ports
    Q.append(IPv6(src='2001:db8:1::2', dst='2001:db8:50::%x' % (i % 4 + 1)) /
             UDP(sport=2000 + i * 7, dport=53) / Raw(b'q' * 4))
for i in range(1, 13):  # flow labels; each also copied by dup to 2001:db8:50::77
    Q.append(IPv6(src='2001:db8:1::2', dst='2001:db8:50::9', fl=i * 0x12345 & 0xfffff) /
             TCP(sport=80, dport=80))
for i in range(1, 5):  # fragments: no ports
    Q.append(IPv6(src='2001:db8:1::2', dst='2001:db8:50::%x' % i) /
             IPv6ExtHdrFragment(m=1, id=i) / UDP(sport=i, dport=2) / Raw(b'g' * 16))
for n, q in enumerate(Q):
    q[IPv6].src = '2001:db8:1::%x' % (0x100 + n)  # the key (not hashed here)
PACKETS = P + Q
# the originals are dropped in forward; of the 12 copies the kernel sends 4
# out of dp0's path and 8 out of dp1's
EXPECT = {'dp0': 4, 'dp1': 8}
