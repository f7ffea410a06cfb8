# ip6tables' NETMAP (a /64 of destinations at prerouting), connlimit per
# /64 of sources, string, u32 and time over IPv6, loaded with
# ip6tables-nft-restore.
from scapy.all import TCP, UDP, IPv6, Raw

NEIGHBOURS = ['2001:db8:2:7::9']


def syn(src, dst, sport):
    return IPv6(src=src, dst=dst) / TCP(sport=sport, dport=22, flags='S', seq=1)


PACKETS = [
    syn('2001:db8:1::5', 'fd00:2:5::9', 1000),  # mapped to 2001:db8:2:7::9; 1 in the /64
    syn('2001:db8:1::6', '2001:db8:2::1', 1001),  # 2 in 2001:db8:1::/64: dropped
    syn('2001:db8:1:1::5', '2001:db8:2::1', 1002),  # 1 in another /64
    IPv6(src='2001:db8:1::5', dst='2001:db8:2::1') / UDP(sport=5000, dport=53) / Raw(b'an evil query'),
    IPv6(src='2001:db8:1::5', dst='2001:db8:2::1') / UDP(sport=5001, dport=53) / Raw(b'a good one'),
]
EXPECT = {'dp1': 3}
