from scapy.all import IP, UDP, TCP, Raw

PACKETS = [
    IP(src='10.1.1.5', dst='10.2.0.9') / UDP(sport=1000, dport=53) / Raw(b'a' * 10),
    IP(src='10.1.2.5', dst='10.2.0.9') / UDP(sport=1000, dport=53),
    IP(src='10.1.2.200', dst='10.2.0.9') / TCP(sport=1000, dport=80),
    IP(src='10.1.3.1', dst='10.2.1.1') / UDP(sport=1, dport=2) / Raw(b'x' * 100),
    IP(src='10.1.3.1', dst='10.2.0.1') / UDP(sport=1, dport=2) / Raw(b'y' * 33),
    IP(src='192.168.7.7', dst='172.16.1.1') / TCP(sport=5555, dport=443, flags='S'),
    IP(src='192.168.7.8', dst='10.2.0.3') / TCP(sport=5555, dport=22, flags='A'),
]
EXPECT = {'dp1': 5}
