from scapy.all import IP, TCP, UDP

# 054's NAT through iptables-nft-restore (target DNAT/SNAT/MASQUERADE)
PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.100') / TCP(sport=1000, dport=8080, flags='S', seq=1),
    IP(src='10.1.0.1', dst='10.2.0.100') / TCP(sport=1000, dport=8080, flags='S', seq=1),
    IP(src='10.1.0.1', dst='10.2.0.101') / UDP(sport=2000, dport=53),
    IP(src='10.1.0.1', dst='10.2.0.102') / UDP(sport=2001, dport=99),
    IP(src='10.1.0.9', dst='10.2.0.1') / UDP(sport=3000, dport=53),
    IP(src='10.1.0.9', dst='10.2.0.1') / UDP(sport=3000, dport=53),
    IP(src='10.1.0.8', dst='10.2.0.1') / TCP(sport=4000, dport=443, flags='S'),
    IP(src='10.1.0.6', dst='10.2.0.1') / UDP(sport=4001, dport=123),
    IP(src='10.1.0.7', dst='10.2.0.1') / UDP(sport=5000, dport=123),
]
EXPECT = {'dp1': 9}
NEIGHBOURS = ['10.2.0.2', '10.2.0.100', '10.2.0.101', '10.2.0.102']
