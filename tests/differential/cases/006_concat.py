from scapy.all import IP, UDP, TCP

PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(dport=22),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=22),
    IP(src='10.1.0.2', dst='10.2.0.1') / UDP(dport=53),
    IP(src='10.1.5.7', dst='10.2.5.7') / UDP(dport=1),
    IP(src='10.1.5.7', dst='10.2.6.7') / UDP(dport=1),
    IP(src='10.1.6.9', dst='10.2.6.127') / UDP(dport=1),
    IP(src='10.1.6.9', dst='10.2.6.128') / UDP(dport=1),
    IP(src='10.1.9.9', dst='10.2.0.80') / TCP(dport=80),
    IP(src='10.1.9.9', dst='10.2.0.81') / TCP(dport=80),
    IP(src='10.1.9.9', dst='10.2.0.82') / TCP(dport=80),
]
EXPECT = {'dp1': 5}
