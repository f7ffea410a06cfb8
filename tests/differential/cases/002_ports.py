from scapy.all import IP, UDP, TCP, ICMP, Raw

S, D = '10.1.0.10', '10.2.0.10'
PACKETS = [
    IP(src=S, dst=D) / TCP(sport=40000, dport=22, flags='S'),
    IP(src=S, dst=D) / TCP(sport=40000, dport=1500, flags='S'),
    IP(src=S, dst=D) / TCP(sport=40000, dport=2000, flags='S'),
    IP(src=S, dst=D) / UDP(sport=53, dport=33333) / Raw(b'r' * 20),
    IP(src=S, dst=D) / UDP(sport=5000, dport=1023),
    IP(src=S, dst=D) / UDP(sport=5000, dport=1024),
    IP(src=S, dst=D) / UDP(sport=5000, dport=4242),
    IP(src=S, dst=D) / TCP(sport=1, dport=4242),
    IP(src=S, dst=D) / TCP(sport=1023, dport=80),
    IP(src=S, dst=D) / TCP(sport=1024, dport=80),
    IP(src=S, dst=D) / ICMP(type=8, id=0x10, seq=0x92),  # th dport reads the ICMP checksum
]
EXPECT = {'dp1': 8}
