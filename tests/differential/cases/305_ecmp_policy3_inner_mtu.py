# Multipath hash policy 3 (custom fields) with inner fields, and `rt mtu`
# of a hashed path: IPv4 hashes the outer destination and the inner
# addresses and ports (fib_multipath_hash_fields 0xcc2), IPv6 the outer
# addresses and the inner destination, protocol and flow label (0x383).
# dp1 has mtu 1400, dp0 1500, so `rt mtu` (get_tcpmss: the lower of the
# forward path's mtu and that of the output route back to the source,
# less the headers) tells which path each took; the flows from sources
# behind the two-path route take a hashed route back too (the output flow
# {daddr saddr}: fib_multipath_custom_hash_fl4 / _fl6). Each flow's next
# hop and mss are recorded and compared element by element.
from scapy.all import IP, IPv6, UDP, TCP, GRE, Raw

MIRROR_ROUTES = True
SYSCTLS = ['net.ipv4.fib_multipath_hash_seed=4242', 'net.ipv4.fib_multipath_hash_policy=3',
           'net.ipv6.fib_multipath_hash_policy=3', 'net.ipv4.fib_multipath_hash_fields=0xcc2',
           'net.ipv6.fib_multipath_hash_fields=0x383']
ROUTES = [
    'link set dp1 mtu 1400',
    'route add 10.50.0.0/24 nexthop via 10.1.0.9 dev dp0 nexthop via 10.2.0.1 dev dp1',
    '-6 route add 2001:db8:50::/64 nexthop via 2001:db8:1::9 dev dp0 '
    'nexthop via 2001:db8:2::1 dev dp1',
]
NEIGHBOURS = ['10.1.0.9', '10.2.0.1', '2001:db8:1::9', '2001:db8:2::1']

P = []
for i in range(1, 13):  # IPIP: inner ports
    P.append(IP(src='10.1.0.2', dst='10.50.0.200') / IP(src='172.16.0.1', dst='172.17.0.1') /
             UDP(sport=4000 + i * 17, dport=4000 + i) / Raw(b'i' * 4))
for i in range(1, 13):  # GRE: inner addresses, TCP ports
    P.append(IP(src='10.1.0.2', dst='10.50.0.201') / GRE(key_present=1, key=9) /
             IP(src='192.168.%d.1' % i, dst='192.168.99.%d' % i) / TCP(sport=1000, dport=80))
for i in range(1, 9):  # plain: the outer destination alone
    P.append(IP(src='10.1.0.2', dst='10.50.0.%d' % i) / UDP(sport=1, dport=2))
for i in range(1, 13):  # from behind the route: a hashed route back
    P.append(IP(src='10.50.0.%d' % (100 + i), dst='10.50.0.%d' % (i * 5)) /
             TCP(sport=5000 + i, dport=443))
for n, p in enumerate(P):
    p[IP].id = n + 1
Q = []
for i in range(1, 9):  # IPv4 in IPv6: the inner destination and protocol
    Q.append(IPv6(dst='2001:db8:50::200') /
             IP(src='172.18.0.1', dst='172.19.%d.9' % i) / (UDP if i % 2 else TCP)(dport=i))
for i in range(1, 9):  # IPv6 in IPv6: the inner flow label
    Q.append(IPv6(dst='2001:db8:50::201', fl=0x54321) /
             IPv6(src='2001:db8:88::1', dst='2001:db8:89::1', fl=i * 977) / UDP(sport=1, dport=2))
for i in range(1, 9):  # plain: the outer addresses
    Q.append(IPv6(dst='2001:db8:50::%x' % i) / UDP(sport=1, dport=2))
for i in range(1, 13):  # from behind the route
    Q.append(IPv6(src='2001:db8:50::%x' % (0x100 + i), dst='2001:db8:50::%x' % (i * 5)) /
             TCP(sport=5000 + i, dport=443))
for n, q in enumerate(Q):
    if n < 24:
        q[IPv6].src = '2001:db8:1::%x' % (0x100 + n)  # the key in @p6, @m6
PACKETS = P + Q
EXPECT = {'dp0': 0, 'dp1': 0}
