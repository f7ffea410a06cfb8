from scapy.all import IP, UDP, Raw

# 50-byte IPv4 datagrams: the quota boundaries fall exactly on packet edges.
PACKETS = [IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=d) / Raw(b'Q' * 22)
           for i in range(5) for d in (1, 2, 3, 4)]
EXPECT = {'dp1': 12}
