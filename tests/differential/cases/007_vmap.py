from scapy.all import IP, TCP, UDP

PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(dport=22),
    IP(src='10.1.0.2', dst='10.2.0.1') / TCP(dport=22),
    IP(src='10.1.0.2', dst='10.2.0.1') / TCP(dport=23),
    IP(src='10.1.0.2', dst='10.2.0.1') / TCP(dport=80),
    IP(src='10.1.0.50', dst='10.2.0.1') / TCP(dport=81),
    IP(src='10.1.0.51', dst='10.2.0.1') / UDP(dport=81),
    IP(src='10.1.0.52', dst='10.2.0.1') / UDP(dport=81),
]
EXPECT = {'dp1': 3}
