# -m connlimit (xt_connlimit over nf_conncount): SSH SYNs counted per
# source /24 (--connlimit-above 2 --connlimit-mask 24), web SYNs per
# destination (--connlimit-upto 1 --connlimit-daddr), UDP per source.
# Each dropped packet is the last of its address, so whether the kernel
# has already collected its dead connection does not show.
from scapy.all import IP, TCP, UDP


def syn(src, sport, dport, dst='10.2.0.1'):
    return IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags='S', seq=1000)


PACKETS = [
    syn('192.168.1.1', 1000, 22),  # 1 in 192.168.1.0/24
    syn('192.168.1.2', 1001, 22),  # 2
    syn('192.168.2.1', 1002, 22),  # 1 in 192.168.2.0/24
    syn('192.168.1.1', 1003, 22),  # 3: dropped
    syn('192.168.1.1', 2000, 80),  # 1 to 10.2.0.1: accepted
    syn('192.168.1.2', 2001, 80),  # 2 to 10.2.0.1: dropped
    syn('192.168.1.2', 2002, 80, '10.2.0.2'),  # 1 to 10.2.0.2
    IP(src='192.168.3.1', dst='10.2.0.1') / UDP(sport=5000, dport=53),  # 1
    IP(src='192.168.3.1', dst='10.2.0.1') / UDP(sport=5001, dport=53),  # 2: dropped
]
NEIGHBOURS = ['10.2.0.2']
EXPECT = {'dp1': 6}
