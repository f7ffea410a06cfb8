# ebtables-nft's nat table through a bridge (BRIDGE = True): dnat in
# PREROUTING rewrites the destination MAC (the next rule sees it, and the
# packet type it makes), snat in POSTROUTING the source MAC; each target
# verdict. The frames out of dp1 are compared with their MACs, and every
# rule's counter.
from scapy.all import IP, TCP, UDP

BRIDGE = True
S, D = '10.1.0.10', '172.16.0.10'
PACKETS = [
    IP(src=S, dst=D) / UDP(sport=1, dport=53),      # dnat, continue, mark; snat return
    IP(src=S, dst=D) / UDP(sport=1, dport=54),      # dnat, drop
    IP(src=S, dst=D) / UDP(sport=1, dport=55),      # dnat to broadcast
    IP(src=S, dst=D) / UDP(sport=1000, dport=80),   # snat
    IP(src=S, dst=D) / UDP(sport=2000, dport=80),   # snat, continue, snat again
    IP(src=S, dst=D) / UDP(sport=3000, dport=80),   # snat, drop
    IP(src=S, dst=D) / TCP(sport=1000, dport=22, flags='S'),  # no nat
]
EXPECT = {'dp1': 5}
