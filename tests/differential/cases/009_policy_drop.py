from scapy.all import IP, UDP, TCP

PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=9),
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(dport=80),
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(dport=81),
    IP(src='10.1.0.7', dst='10.2.0.1') / TCP(dport=81),
    IP(src='10.1.0.7', dst='10.2.0.1') / UDP(dport=9),
]
EXPECT = {'dp1': 2}
