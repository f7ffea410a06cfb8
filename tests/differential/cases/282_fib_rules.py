# fib with `ip rule`: marked, source-routed, blackholed and prohibited
# destinations, IPv4 and IPv6. Every packet enters on dp0; the kernel
# forwards by the same rules, and what fib says is missing is dropped.
from scapy.all import IP, IPv6, UDP

# nftdp runs in a copy of the DUT namespace with --mirror-routes
MIRROR_ROUTES = True
ROUTES = [
    'route add 10.50.0.0/16 via 10.2.0.1 dev dp1 table 100',
    'rule add fwmark 0x1/0xff table 100 pref 100',
    'route add 10.60.0.0/16 via 10.2.0.1 dev dp1 table 200',
    'rule add from 10.1.0.7 table 200 pref 110',
    'rule add to 10.2.77.0/24 blackhole pref 120',
    'rule add to 10.2.78.0/24 prohibit pref 121',
    # a saddr check at forward with iif looks up with the output device
    # as iif (nft_fib4_eval, nft_fib6_flowi_init): this rule sees it
    'route add 10.1.0.4/32 via 10.2.0.1 dev dp1 table 300',
    'rule add iif dp1 table 300 pref 130',
    '-6 route add 2001:db8:50::/48 via 2001:db8:2::1 dev dp1 table 100',
    '-6 rule add fwmark 1 table 100 pref 100',
    '-6 route add 2001:db8:60::/48 via 2001:db8:2::1 dev dp1 table 200',
    '-6 rule add from 2001:db8:1::7 table 200 pref 110',
    '-6 rule add to 2001:db8:2:77::/64 blackhole pref 120',
    '-6 route add 2001:db8:1::4/128 via 2001:db8:2::1 dev dp1 table 300',
    '-6 rule add iif dp1 table 300 pref 130',
]
NEIGHBOURS = ['10.2.0.1', '2001:db8:2::1']


def u4(src, dst):
    return IP(src=src, dst=dst) / UDP(sport=9, dport=9)


def u6(src, dst):
    return IPv6(src=src, dst=dst) / UDP(sport=9, dport=9)


PACKETS = [
    u4('10.1.0.3', '10.50.0.5'),  # marked: table 100
    u4('10.1.0.4', '10.50.0.5'),  # unmarked: no route
    u4('10.1.0.7', '10.60.0.5'),  # from 10.1.0.7: table 200
    u4('10.1.0.8', '10.60.0.5'),  # another source: no route
    u4('10.1.0.7', '10.2.0.1'),  # table 200 misses: main
    u4('10.1.0.2', '10.2.77.1'),  # blackhole rule
    u4('10.1.0.2', '10.2.78.1'),  # prohibit rule
    u4('10.1.0.3', '10.2.77.1'),  # marked, 100 misses, then the blackhole
    u4('10.1.0.2', '10.2.0.1'),  # main
    u4('10.1.0.4', '10.2.0.1'),  # forwarded; its saddr check at forward meets iif dp1
    u6('2001:db8:1::3', '2001:db8:50::5'),  # marked: table 100
    u6('2001:db8:1::4', '2001:db8:50::5'),  # unmarked: no route
    u6('2001:db8:1::7', '2001:db8:60::5'),  # from ::7: table 200
    u6('2001:db8:1::2', '2001:db8:2:77::1'),  # blackhole rule
    u6('2001:db8:1::3', '2001:db8:2:77::1'),  # marked, then the blackhole
    u6('2001:db8:1::2', '2001:db8:2::1'),  # main
    u6('2001:db8:1::4', '2001:db8:2::1'),  # the same for IPv6
]
EXPECT = {'dp1': 9}
