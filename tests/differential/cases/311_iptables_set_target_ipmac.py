from scapy.all import Ether, IP, TCP

# -j SET --add-set/--del-set on bitmap:ip,mac (sets from .ipset, rules
# from .v4): the element takes the packet's source MAC (src,src) or
# destination MAC (src,dst, here through a list:set); an element with a
# MAC is not replaced without --exist; --del-set deletes whatever its
# MAC; a zero source MAC adds nothing by src,src (dstm still takes the
# destination MAC). Packets that add or delete are
# dropped, so the next comes GAP later (nftdp applies them at the
# control thread's next poll; docs/differences.md).
DP0 = '02:00:00:00:00:10'
T0 = '02:00:00:00:01:10'
OTHER, ZERO = '02:aa:00:00:00:01', '00:00:00:00:00:00'
D = '10.2.0.1'


def syn(src, dport, sport, mac=T0):
    return ('dp0', Ether(src=mac, dst=DP0) / IP(src=src, dst=D) /
            TCP(sport=sport, dport=dport, flags='S'))


PACKETS = [
    syn('10.1.0.1', 80, 40000),          # not seen: dropped
    syn('10.1.0.1', 22, 40001),          # seenm .1,T0 and dstm .1,DP0 added; dropped
    syn('10.1.0.1', 80, 40002),          # seen: forwarded (dstm counts)
    syn('10.1.0.1', 80, 40003, OTHER),   # another MAC: dropped
    syn('10.1.0.1', 22, 40004, OTHER),   # already there: no change; dropped
    syn('10.1.0.1', 80, 40005, OTHER),   # still T0's: dropped
    syn('10.1.0.1', 9, 40006, OTHER),    # --del-set ignores the MAC: .1 goes
    syn('10.1.0.1', 80, 40007),          # gone: dropped
    syn('10.1.0.2', 22, 40008, ZERO),    # not to seenm (zero MAC), to dstm; dropped
    syn('10.1.0.2', 80, 40009),          # not seen: dropped
]
IPSET_SAVE = True  # what the packets added and deleted, on both sides
GAP = 0.2
PACED_ONLY = 'a packet\'s add reaches the set at the control thread\'s next poll'
EXPECT = {'dp1': 1}
