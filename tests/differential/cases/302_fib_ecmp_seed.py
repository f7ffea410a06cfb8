# fib daddr oif and rt nexthop over a two-path route with a fixed seed:
# 40 IPv4 and 40 IPv6 flows (destinations, and IPv6 flow labels, that the
# L3 multipath hash covers) from dp0 to a route with one path out of dp0
# and one out of dp1; each counter says how many flows took which path,
# compared with the kernel's.
from scapy.all import IP, IPv6, UDP, Raw

MIRROR_ROUTES = True
SYSCTLS = ['net.ipv4.fib_multipath_hash_seed=4242', 'net.ipv4.fib_multipath_hash_policy=0',
           'net.ipv6.fib_multipath_hash_policy=0']
ROUTES = [
    'route add 10.50.0.0/24 nexthop via 10.1.0.9 dev dp0 nexthop via 10.2.0.1 dev dp1',
    '-6 route add 2001:db8:50::/64 nexthop via 2001:db8:1::9 dev dp0 '
    'nexthop via 2001:db8:2::1 dev dp1',
]
NEIGHBOURS = ['10.1.0.9', '10.2.0.1', '2001:db8:1::9', '2001:db8:2::1']

PACKETS = [IP(src='10.1.0.2', dst='10.50.0.%d' % i) / UDP(sport=2000 + i, dport=9) /
           Raw(b'g' * 4) for i in range(1, 41)] + \
    [IPv6(src='2001:db8:1::2', dst='2001:db8:50::%x' % i, fl=(i * 7919) & 0xfffff) /
     UDP(sport=2000 + i, dport=9) / Raw(b'h' * 4) for i in range(1, 41)]
# every packet is dropped in forward. The kernel's counters with seed 4242:
# IPv4 fib 40 on dp0 (the first path, whatever the hash) and 40 `. iif`;
# IPv6 fib 18 on dp0, 22 on dp1 (18 `. iif`, 22 missing); rt ip nexthop
# 19 via 10.1.0.9, 21 via 10.2.0.1; rt ip6 nexthop 18 and 22, as IPv6 fib
EXPECT = {'dp0': 0, 'dp1': 0}
