from scapy.all import IP, UDP

PACKETS = [IP(src='10.1.0.%d' % s, dst='10.2.0.1') / UDP(dport=d)
           for s in (1, 2, 3, 4) for d in (1, 2, 3, 4)]
EXPECT = {'dp1': 4}
