from scapy.all import IP, TCP

# -j SET on both sides (sets from .ipset, rules from .v4). Every packet
# that adds or deletes is dropped, so the next one comes GAP (200 ms)
# later: nftdp applies a packet's add at the control thread's next poll
# (at most 10 ms), the kernel at once (docs/differences.md).
A, B, C, E, D = '10.1.0.1', '10.1.0.2', '10.1.0.3', '10.1.0.99', '10.2.0.1'


def syn(src, dport, sport):
    return ('dp0', IP(src=src, dst=D) / TCP(sport=sport, dport=dport, flags='S'))


PACKETS = [
    syn(A, 80, 40000),    # forwarded, marked 0x5 by --map-set
    syn(A, 23, 40001),    # --add-set blocked src: A in, dropped
    syn(A, 80, 40002),    # blocked: dropped
    syn(B, 80, 40003),    # forwarded
    syn(A, 9, 40004),     # --del-set blocked src: A out, dropped
    syn(A, 80, 40005),    # forwarded again
    syn(C, 443, 40006),   # --add-set lst src,dst: C,tcp:443 into seen, dropped
    syn(C, 443, 40007),   # seen counts it, dropped
    syn(A, 8080, 40008),  # --add-set nets src: 10.1.0.0/16 (nets' largest prefix)
    syn(E, 8081, 40009),  # nets counts it, forwarded
]
IPSET_SAVE = True  # what the packets added and deleted, on both sides
GAP = 0.2  # a loaded control thread still polls within it (adds drop the packet)
PACED_ONLY = 'a packet\'s add reaches the set at the control thread\'s next poll'
EXPECT = {'dp1': 4}
