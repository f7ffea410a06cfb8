# ip6tables -m rpfilter (ip6t_rpfilter) against the kernel's routes:
# sources behind dp0 and dp1, an unreachable route, a gateway behind dp1,
# the router's own address, a link-local source, the unspecified source;
# strict, --loose, --accept-local, --invert. Every packet enters on dp0.
from scapy.all import UDP, IPv6

MIRROR_ROUTES = True
ROUTES = [
    '-6 route add unreachable 2001:db8:9::/48',
    '-6 route add 2001:db8:a::/48 via 2001:db8:2::1 dev dp1',
    '-6 route add 2001:db8:b::/48 via 2001:db8:1::1 dev dp0',
]

SOURCES = ['2001:db8:1::2', '2001:db8:2::5', '3000::1', '2001:db8:9::1', '2001:db8:a::5',
           '2001:db8:b::5', '2001:db8:1::ffff', 'fe80::5']


def u(src, dport, dst='2001:db8:2::1'):
    return IPv6(src=src, dst=dst) / UDP(sport=9, dport=dport)


PACKETS = [u(s, d) for d in (1, 2, 3, 5, 6) for s in SOURCES] + [
    u('::', 1, 'ff02::1'),  # unspecified source: passes
]
EXPECT = {'dp1': 28}
