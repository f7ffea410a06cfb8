# -j NETMAP: a /24 of destinations mapped 1:1 at prerouting, a /24 of
# sources at postrouting, and the replies mapped back (conntrack).
from scapy.all import IP, UDP, Raw

NEIGHBOURS = ['10.2.7.9', '10.2.7.200', '10.1.0.5']

PACKETS = [
    ('dp0', IP(src='10.1.0.5', dst='172.16.5.9') / UDP(sport=5000, dport=53) / Raw(b'q1')),
    ('dp1', IP(src='10.2.7.9', dst='10.9.3.5') / UDP(sport=53, dport=5000) / Raw(b'r1')),
    ('dp0', IP(src='10.1.0.77', dst='172.16.5.200') / UDP(sport=5001, dport=53) / Raw(b'q2')),
    ('dp0', IP(src='10.1.1.5', dst='10.2.7.9') / UDP(sport=5002, dport=53) / Raw(b'q3')),
]
EXPECT = {'dp1': 3, 'dp0': 1}
