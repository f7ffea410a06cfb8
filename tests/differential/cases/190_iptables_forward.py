from scapy.all import ICMP, IP, TCP, UDP, Raw

# iptables-nft-restore programs both sides (match/target expressions)
PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=40000, dport=80, flags='S', seq=1),
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=40001, dport=8050, flags='S', seq=1),
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=40002, dport=25, flags='S', seq=1),
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=40003, dport=80, flags=0),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=53, dport=3000),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=1000, dport=7),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=1000, dport=9),
    IP(src='10.1.0.1', dst='10.2.0.1') / ICMP(type=8, id=1, seq=1) / Raw(b'p' * 20),
    IP(src='10.1.0.1', dst='10.2.0.1') / ICMP(type=8, id=2, seq=1) / Raw(b'p' * 400),
    IP(src='10.1.0.150', dst='10.2.0.1') / UDP(sport=1000, dport=9),
]
EXPECT = {'dp1': 5, 'dp0': 4}
