# --clamp-mss-to-pmtu against the kernel's routes: a gateway route with an
# mtu metric, the default route over a device with a lowered mtu, a
# directly connected destination, a SYN whose MSS is already lower, and a
# SYN-ACK back from a source behind the mtu-limited route. Every packet
# enters on dp0 and leaves on dp1.
from scapy.all import IP, TCP

MIRROR_ROUTES = True
ROUTES = [
    'link set dp1 mtu 1400',
    'route add 198.51.100.0/24 via 10.2.0.1 dev dp1 mtu 1300',
    'route add 192.0.2.0/24 via 10.1.0.1 dev dp0 mtu 1200',
    'route add default via 10.2.0.1 dev dp1',
]
NEIGHBOURS = ['10.1.0.1', '10.2.0.1']


def syn(src, dst, sport, mss, flags='S'):
    return IP(src=src, dst=dst) / TCP(sport=sport, dport=80, flags=flags, seq=1000,
                                      options=[('MSS', mss)])


PACKETS = [
    syn('10.1.0.2', '198.51.100.7', 1001, 1460),  # mtu metric 1300: 1260
    syn('10.1.0.2', '8.8.8.8', 1002, 1460),  # dp1's mtu 1400: 1360
    syn('10.1.0.2', '10.2.0.5', 1003, 1460),  # connected over dp1: 1360
    syn('10.1.0.2', '8.8.8.8', 1004, 1000),  # already lower: unchanged
    syn('192.0.2.9', '8.8.8.8', 1005, 1460, 'SA'),  # the way back is 1200: 1160
    syn('10.1.0.2', '8.8.8.8', 1006, 1460, 'A'),  # no SYN: unchanged
]
EXPECT = {'dp1': 6}
