from scapy.all import IPv6, Raw

SRC, DST = 'fd00:1::1', 'fd00:2::1'


def past_end(nh, hlim):
    # destination options (60) with hdrlen 255: 2048 bytes claimed, 8 there
    return IPv6(src=SRC, dst=DST, nh=60, plen=8, hlim=hlim) / Raw(bytes([nh, 255, 1, 4, 0, 0, 0, 0]))


PACKETS = [
    past_end(6, 64),   # TCP: meta l4proto tcp matches, reject sends nothing
    past_end(17, 64),  # UDP: the ICMPv6 reject sends nothing
    past_end(6, 1),    # hop limit 1: ip6_forward's time exceeded quotes it
    past_end(17, 1),
    past_end(59, 64),  # no next header: forwarded
]
EXPECT = {'dp1': 1, 'dp0': 2}
