from scapy.all import IP, UDP, Raw

PACKETS = [IP(src='10.1.0.%d' % s, dst='10.2.0.1', ttl=30) / UDP(sport=1000, dport=s) / Raw(b'%d' % s * 4) for s in (7, 8, 9, 7)]
EXPECT = {'dp1': 5}
