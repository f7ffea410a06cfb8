# wg-quick's rules: a default route in table 51820 (the "tunnel", here via
# dp1) and main's default via dp0; suppress_prefixlength 0 skips main's
# default only. Every packet enters on dp0; what fib sends anywhere but
# dp1 is dropped, so the kernel forwards the rest out of dp1.
from scapy.all import IP, IPv6, UDP

# nftdp runs in a copy of the DUT namespace with --mirror-routes
MIRROR_ROUTES = True
ROUTES = [
    'route add default via 10.1.0.1 dev dp0',
    'route add default via 10.2.0.1 dev dp1 table 51820',
    'rule add not fwmark 51820 table 51820 pref 100',
    'rule add table main suppress_prefixlength 0 pref 99',
    '-6 route add default via 2001:db8:1::1 dev dp0',
    '-6 route add default via 2001:db8:2::1 dev dp1 table 51820',
    '-6 rule add not fwmark 51820 table 51820 pref 100',
    '-6 rule add table main suppress_prefixlength 0 pref 99',
]
NEIGHBOURS = ['10.1.0.1', '10.2.0.1', '2001:db8:1::1', '2001:db8:2::1']


def u4(src, dst):
    return IP(src=src, dst=dst) / UDP(sport=9, dport=9)


def u6(src, dst):
    return IPv6(src=src, dst=dst) / UDP(sport=9, dport=9)


PACKETS = [
    u4('10.1.0.2', '8.8.8.8'),  # main's default suppressed: 51820, dp1
    u4('10.1.0.3', '8.8.8.8'),  # marked 51820: main's default, dp0
    u4('10.1.0.2', '10.2.0.1'),  # main's /16: not suppressed, dp1
    u4('10.1.0.3', '10.2.0.1'),  # marked, main's /16, dp1
    u4('10.1.0.2', '192.168.7.7'),  # main's 192.168/16 on dp0
    u6('2001:db8:1::2', '2001:db8:77::1'),  # 51820, dp1
    u6('2001:db8:1::3', '2001:db8:77::1'),  # marked: main's default, dp0
    u6('2001:db8:1::2', '2001:db8:2::1'),  # main's /48, dp1
]
EXPECT = {'dp1': 5}
