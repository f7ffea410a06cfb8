# One-way through a bridge: two UDP flows (the second packet of each
# established only in the reply direction, so still new here), a TCP ACK
# without a connection (new: nf_conntrack_tcp_loose), non-IP frames.
from scapy.all import ARP, Ether, IP, Raw, TCP, UDP

BRIDGE = True
S, D = '10.1.0.10', '172.16.0.10'
T0, T1 = '02:00:00:00:01:10', '02:00:00:00:01:11'
PACKETS = [
    IP(src=S, dst=D) / UDP(sport=1000, dport=53),
    IP(src=S, dst=D) / UDP(sport=1000, dport=53),
    IP(src=S, dst=D) / UDP(sport=1001, dport=9),
    IP(src=S, dst=D) / TCP(sport=1000, dport=80, flags='A'),
    Ether(src=T0, dst='ff:ff:ff:ff:ff:ff') / ARP(psrc=S, pdst='10.1.0.1', hwsrc=T0),
    Ether(src=T0, dst=T1, type=0x88b5) / Raw(b'local experimental'),
    IP(src=S, dst=D) / TCP(sport=1001, dport=80, flags='S'),
]
EXPECT = {'dp1': 5}
