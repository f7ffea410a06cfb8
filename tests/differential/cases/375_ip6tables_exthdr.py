# ip6tables' extension header matches (rt, frag, hbh, dst, ipv6header)
# loaded with ip6tables-nft-restore: routing headers of type 0 and 2,
# first and later fragments (no conntrack: nothing reassembles them),
# hop-by-hop and destination options, no next header. Every packet is
# forwarded from dp0 to dp1 but the RH0 ones (-m rt --rt-type 0 -j DROP).
from scapy.all import (UDP, IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop,
                       IPv6ExtHdrRouting, PadN, Raw)

S, D = '2001:db8:1::2', '2001:db8:2::1'


def ip():
    return IPv6(src=S, dst=D)


def udp():
    return UDP(sport=9, dport=9) / Raw(b'x' * 16)


PACKETS = [
    ip() / IPv6ExtHdrRouting(type=0, segleft=1, addresses=['2001:db8::1']) / udp(),
    ip() / IPv6ExtHdrRouting(type=0, segleft=3, addresses=['2001:db8::5', '2001:db8::1']) / udp(),
    ip() / IPv6ExtHdrRouting(type=2, segleft=1, addresses=['2001:db8::1']) / udp(),
    ip() / IPv6ExtHdrFragment(offset=0, m=1, id=7, nh=17) / Raw(b'y' * 24),
    ip() / IPv6ExtHdrFragment(offset=3, m=0, id=7, nh=17) / Raw(b'z' * 8),
    ip() / IPv6ExtHdrFragment(offset=0, m=1, id=9, nh=17) / Raw(b'y' * 24),
    ip() / IPv6ExtHdrHopByHop(options=[PadN(optdata=b'\0' * 4)]) / udp(),
    ip() / IPv6ExtHdrHopByHop(options=[PadN(optdata=b'\0' * 4)]) /
    IPv6ExtHdrDestOpt(options=[PadN(optdata=b'\0' * 4)]) / udp(),
    ip() / IPv6ExtHdrDestOpt(options=[PadN(optdata=b'\0' * 12)]) / udp(),
    IPv6(src=S, dst=D, nh=59),
    ip() / udp(),
]
EXPECT = {'dp1': 9}
