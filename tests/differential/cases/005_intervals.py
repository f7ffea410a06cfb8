from scapy.all import IP, UDP

PACKETS = [IP(src='10.1.0.%d' % h, dst='10.2.0.1') / UDP(dport=5000)
           for h in (0, 15, 16, 20, 21, 99, 100, 101)]
PACKETS += [IP(src='10.1.1.%d' % h, dst='10.2.0.1') / UDP(dport=5000) for h in (0, 255)]
PACKETS += [IP(src='10.1.2.1', dst='10.2.0.1') / UDP(dport=p) for p in (0, 1, 10, 11, 20, 21, 999, 1000, 1999, 2000, 65534, 65535)]
PACKETS += [IP(src='10.1.2.1', dst=d) / UDP(dport=5000) for d in ('10.2.0.255', '10.2.1.0', '10.2.2.0')]
EXPECT = {'dp1': 11}
