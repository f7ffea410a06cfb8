from scapy.all import IP, UDP

PACKETS = [IP(src='10.1.0.%d' % s, dst='10.2.0.1') / UDP(dport=d) for s in (1, 2, 3) for d in (4, 5)]
EXPECT = {'dp1': 5}
