from scapy.all import IP, IPv6, UDP

PACKETS = [IP(src='10.1.0.%d' % s, dst='10.2.0.1') / UDP(dport=d) for s in (1, 2, 3) for d in (1, 2, 3)]
PACKETS += [IPv6(src='2001:db8:1::%d' % s, dst='2001:db8:2::1') / UDP(dport=d) for s in (1, 2) for d in (53, 123, 5)]
EXPECT = {'dp1': 11}
