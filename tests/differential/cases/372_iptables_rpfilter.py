# -m rpfilter (ipt_rpfilter) against the kernel's routes: sources behind
# dp0 and dp1, none, a blackhole, a multipath route with a path over dp0,
# a gateway behind dp1, the router's own address, DHCP; strict, --loose,
# --accept-local, --validmark (an `ip rule` for the mark), --invert.
# Every packet enters on dp0 and goes to 10.2.0.1.
from scapy.all import IP, UDP

# nftdp runs in a copy of the DUT namespace with --mirror-routes
MIRROR_ROUTES = True
ROUTES = [
    'route add blackhole 10.9.1.0/24',
    'route add 198.51.100.0/24 via 10.2.0.1 dev dp1',
    'route add 203.0.113.0/24 nexthop via 10.1.0.1 dev dp0 nexthop via 10.2.0.1 dev dp1',
    'route add 10.2.0.7/32 dev dp0 table 100',
    'rule add fwmark 1 table 100',
]
NEIGHBOURS = ['10.1.0.1']

SOURCES = ['10.1.0.2', '10.2.0.7', '8.8.8.8', '10.9.1.1', '203.0.113.5', '198.51.100.7',
           '10.1.255.254']


def u(src, dport, dst='10.2.0.1'):
    return IP(src=src, dst=dst) / UDP(sport=9, dport=dport)


PACKETS = [u(s, d) for d in (1, 2, 3, 5, 6) for s in SOURCES] + [
    u('10.2.0.7', 4),  # --validmark: table 100 has it on dp0
    u('10.1.0.2', 4),
    u('0.0.0.0', 1, '255.255.255.255'),  # DHCP: passes
]
EXPECT = {'dp1': 26}
