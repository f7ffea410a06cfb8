# ECMP with a fixed seed: 40 IPv4 and 40 IPv6 packets, each copied by
# `dup to` a destination behind a two-path route (dp0's and dp1's side);
# the copies' ports show each destination's path, compared with the
# kernel's. The originals are forwarded out of dp1.
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

PACKETS = [IP(src='10.1.0.2', dst='10.2.0.5', id=i) / UDP(sport=1000, dport=i) / Raw(b'e' * 4)
           for i in range(1, 41)] + \
    [IPv6(src='2001:db8:1::2', dst='2001:db8:2::5') / UDP(sport=1000, dport=i) / Raw(b'f' * 4)
     for i in range(1, 41)]
# 80 originals on dp1; of the 80 copies the seed sends 34 to dp0's path and
# 46 to dp1's (the kernel's count, which nftdp's hash reproduces)
EXPECT = {'dp1': 126, 'dp0': 34}
