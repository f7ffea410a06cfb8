from scapy.all import Ether, IP, TCP

# bitmap:ip,mac under -m set (sets from .ipset, rules from .v4): an
# element's MAC against the packet's source MAC (src,src) or destination
# MAC (src,dst); `src` alone never matches (the type has two
# dimensions); an element without a MAC takes the first matching
# packet's (which counts), so the next packet with another MAC does not
# match; out of range and a zero source MAC do not match. Packets that
# fill a MAC are dropped, so the next comes GAP later: nftdp fills it at
# the control thread's next poll (docs/differences.md).
DP0 = '02:00:00:00:00:10'   # the DUT's port: the destination MAC
T0 = '02:00:00:00:01:10'    # the tester's: the usual source MAC
OTHER, THIRD, ZERO = '02:aa:00:00:00:01', '02:bb:00:00:00:02', '00:00:00:00:00:00'
D = '10.2.0.1'


def syn(src, sport, mac=T0):
    return ('dp0', Ether(src=mac, dst=DP0) / IP(src=src, dst=D) /
            TCP(sport=sport, dport=80, flags='S'))


PACKETS = [
    syn('10.1.0.1', 40000),               # ipm src,src: forwarded
    syn('10.1.0.2', 40001),               # another MAC stored: dropped
    syn('10.1.0.2', 40002, OTHER),        # its MAC: forwarded
    syn('10.1.0.6', 40003),               # src,dst: the DUT's MAC stored; dropped
    syn('10.1.0.4', 40004),               # ipmt: no MAC yet, takes T0, counts; dropped
    syn('10.1.0.4', 40005, THIRD),        # ipmt: T0 now, no match; dropped
    syn('10.1.0.4', 40006),               # ipmt counts; dropped
    syn('10.1.0.5', 40007),               # ipmt counts onto packets 5; dropped
    syn('10.1.0.7', 40008),               # in no set: dropped
    syn('10.1.1.1', 40009),               # out of both ranges: dropped
    syn('10.1.0.1', 40010, ZERO),         # a zero MAC is -EINVAL: dropped
    syn('10.1.0.1', 40011, THIRD),        # another MAC: dropped
]
IPSET_SAVE = True  # the MAC filled in and the counters, on both sides
GAP = 0.2
PACED_ONLY = 'a packet fills an element\'s MAC at the control thread\'s next poll'
EXPECT = {'dp1': 2}
