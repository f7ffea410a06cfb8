from scapy.all import IP, UDP

PACKETS = [IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=d) for d in (1, 2, 3, 4)]
EXPECT = {'dp1': 1}
