from scapy.all import IP, IPv6, UDP

PACKETS = [IP(src='10.1.0.%d' % s, dst='10.2.0.1', ttl=t) / UDP(dport=9) for s in (1, 2, 3) for t in (64, 2)]
PACKETS += [IPv6(src='2001:db8:1::%d' % s, dst='2001:db8:2::1') / UDP(dport=9) for s in (1, 2, 3)]
EXPECT = {'dp1': 9}
