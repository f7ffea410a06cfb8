from scapy.all import IP, TCP, UDP, Raw

# -j SET --map-set ... --map-prio sets skb->priority to the element's
# skbprio (zero from an element without one) in mangle FORWARD and
# POSTROUTING; nft chains after them count by `meta priority`, so both
# sides' counters show the priority each packet left with. --map-queue
# (queue_mapping) is read by no rule (docs/iptables.md).
D = '10.2.0.1'
PACKETS = [
    IP(src='10.1.0.1', dst=D) / TCP(sport=40000, dport=80, flags='S'),   # 1:2
    IP(src='10.1.0.2', dst=D) / TCP(sport=40001, dport=80, flags='S'),   # a:14
    IP(src='10.1.0.3', dst=D) / TCP(sport=40002, dport=80, flags='S'),   # none (0)
    IP(src='10.1.0.4', dst=D) / TCP(sport=40003, dport=80, flags='S'),   # 3:4, mark 7
    IP(src='10.1.0.9', dst=D) / TCP(sport=40004, dport=80, flags='S'),   # in no set: none
    IP(src='10.1.0.1', dst=D) / TCP(sport=40005, dport=443, flags='S'),  # 1:2, then 5:6
    IP(src='10.1.0.9', dst=D) / UDP(sport=1000, dport=443) / Raw(b'q' * 8),  # not tcp: none
]
EXPECT = {'dp1': 7}
