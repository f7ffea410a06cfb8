# fib against the kernel's routes: sources behind dp0 and spoofed ones,
# the router's own addresses, broadcast, multicast, DHCP discover, IPv6
# anycast, DAD, link-local, no route. Every packet enters on dp0.
from scapy.all import ICMPv6ND_NS, IP, IPv6, UDP

# nftdp runs in a copy of the DUT namespace with --mirror-routes
MIRROR_ROUTES = True
# reject routes, gateways, a multipath route and default routes
ROUTES = [
    'route add blackhole 10.9.1.0/24',
    'route add prohibit 10.8.0.0/16',
    'route add 198.51.100.0/24 via 10.2.0.1 dev dp1',
    'route add 203.0.113.0/24 nexthop via 10.1.0.1 dev dp0 nexthop via 10.2.0.1 dev dp1',
    'route add default via 10.2.0.1 dev dp1',
    '-6 route add unreachable 2001:db8:9::/48',
    '-6 route add 2001:db8:a::/48 via 2001:db8:2::1 dev dp1',
    '-6 route add default via 2001:db8:2::1 dev dp1',
]
NEIGHBOURS = ['10.1.0.1']

PACKETS = [
    IP(src='10.1.0.2', dst='10.2.0.1') / UDP(sport=9, dport=9),  # forwarded
    IP(src='10.2.0.7', dst='10.2.0.1') / UDP(sport=9, dport=9),  # spoofed: dp1's subnet
    IP(src='8.8.8.8', dst='10.2.0.1') / UDP(sport=9, dport=9),  # no route back
    IP(src='192.168.1.1', dst='172.16.0.1') / UDP(sport=9, dport=9),  # extra routes
    IP(src='10.1.0.2', dst='10.1.255.254') / UDP(sport=9, dport=9),  # ours, on dp0
    IP(src='10.1.0.2', dst='10.2.255.254') / UDP(sport=9, dport=9),  # ours, on dp1
    IP(src='10.1.0.2', dst='10.1.255.255') / UDP(sport=9, dport=9),  # subnet broadcast
    IP(src='10.1.0.2', dst='224.0.0.5') / UDP(sport=9, dport=9),  # multicast
    IP(src='10.1.0.2', dst='10.9.9.9') / UDP(sport=9, dport=9),  # the default route
    IP(src='0.0.0.0', dst='255.255.255.255') / UDP(sport=68, dport=67),  # DHCP
    IP(src='10.1.0.2', dst='10.9.1.1') / UDP(sport=9, dport=9),  # blackhole
    IP(src='10.8.0.5', dst='10.2.0.1') / UDP(sport=9, dport=9),  # prohibited source
    IP(src='198.51.100.7', dst='10.2.0.1') / UDP(sport=9, dport=9),  # behind dp1's gateway
    IP(src='203.0.113.5', dst='10.2.0.1') / UDP(sport=9, dport=9),  # multipath: dp0 a path
    IP(src='10.1.0.2', dst='203.0.113.9') / UDP(sport=9, dport=9),  # multipath destination
    IP(src='10.1.255.254', dst='10.2.0.1') / UDP(sport=9, dport=9),  # our own source
    IPv6(src='2001:db8:1::2', dst='2001:db8:2::1') / UDP(sport=9, dport=9),  # forwarded
    IPv6(src='2001:db8:2::5', dst='2001:db8:2::1') / UDP(sport=9, dport=9),  # spoofed
    IPv6(src='2001:db8:1::2', dst='2001:db8:1::ffff') / UDP(sport=9, dport=9),  # ours
    IPv6(src='2001:db8:1::2', dst='2001:db8:2::ffff') / UDP(sport=9, dport=9),  # ours, dp1
    IPv6(src='2001:db8:1::2', dst='2001:db8:2::') / UDP(sport=9, dport=9),  # anycast
    IPv6(src='fd00:1::5', dst='fd00:2::1') / UDP(sport=9, dport=9),  # extra routes
    IPv6(src='2001:db8:1::2', dst='2001:db8:77::1') / UDP(sport=9, dport=9),  # default
    IPv6(src='3000::1', dst='2001:db8:2::1') / UDP(sport=9, dport=9),  # no route back
    IPv6(src='fe80::5', dst='2001:db8:2::1') / UDP(sport=9, dport=9),  # link-local
    IPv6(src='2001:db8:1::2', dst='2001:db8:9::1') / UDP(sport=9, dport=9),  # unreachable
    IPv6(src='2001:db8:a::5', dst='2001:db8:2::1') / UDP(sport=9, dport=9),  # behind dp1
    IPv6(src='2001:db8:1::2', dst='2001:db8:a::') / UDP(sport=9, dport=9),  # via a gateway
    IPv6(src='::', dst='ff02::1:ff00:1', hlim=255) / ICMPv6ND_NS(tgt='2001:db8:1::1'),  # DAD
]
EXPECT = {'dp1': 8}
