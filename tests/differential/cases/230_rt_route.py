# rt against the kernel's routes: a gateway route with an mtu metric, the
# default route, a directly connected destination on a device whose mtu
# was lowered, IPv4 and IPv6; TCP SYNs get their MSS clamped, the rest is
# counted. Every packet enters on dp0 and leaves on dp1.
from scapy.all import IP, IPv6, TCP, UDP

MIRROR_ROUTES = True
ROUTES = [
    'link set dp1 mtu 1400',
    'route add 198.51.100.0/24 via 10.2.0.1 dev dp1 mtu 1300',
    'route add default via 10.2.0.1 dev dp1',
    '-6 route add 2001:db8:a::/48 via 2001:db8:2::1 dev dp1 mtu 1300',
    '-6 route add default via 2001:db8:2::1 dev dp1',
]
NEIGHBOURS = ['10.2.0.1', '2001:db8:2::1']


def syn(ip, sport):
    return ip / TCP(sport=sport, dport=80, flags='S', seq=1000, options=[('MSS', 1460)])


PACKETS = [
    syn(IP(src='10.1.0.2', dst='198.51.100.7'), 1001),  # gateway, mtu metric 1300
    syn(IP(src='10.1.0.2', dst='8.8.8.8'), 1002),  # the default route, dp1's mtu
    syn(IP(src='10.1.0.2', dst='10.2.0.5'), 1003),  # connected: the next hop is daddr
    IP(src='10.1.0.2', dst='198.51.100.7') / UDP(sport=9, dport=9),
    IP(src='10.1.0.2', dst='10.2.0.5') / UDP(sport=9, dport=9),
    IP(src='192.168.1.1', dst='8.8.4.4') / UDP(sport=9, dport=9),
    syn(IPv6(src='2001:db8:1::2', dst='2001:db8:a::7'), 1004),  # gateway, mtu metric
    syn(IPv6(src='2001:db8:1::2', dst='2001:db8:77::1'), 1005),  # default route
    syn(IPv6(src='2001:db8:1::2', dst='2001:db8:2::5'), 1006),  # connected
    IPv6(src='2001:db8:1::2', dst='2001:db8:2::5') / UDP(sport=9, dport=9),
]
EXPECT = {'dp1': 10}
