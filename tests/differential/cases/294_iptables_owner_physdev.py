from scapy.all import IP, TCP, UDP, Raw

# owner and physdev evaluated for forwarded packets: the kernel has no
# socket for them and (no bridge here) no bridge info, so a rule matches
# only where every option it uses is inverted; nftdp answers the same.
PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=40000, dport=80, flags='S'),
    IP(src='10.1.0.2', dst='10.2.0.1') / TCP(sport=40001, dport=443, flags='S'),
    IP(src='10.1.0.3', dst='10.2.0.1') / UDP(sport=1000, dport=53) / Raw(b'q' * 8),
]
EXPECT = {'dp1': 2}
