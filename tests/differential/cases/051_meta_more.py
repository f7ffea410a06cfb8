from scapy.all import IP, IPv6, UDP

PACKETS = [IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=d) for d in (1, 2, 3)]
PACKETS += [IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(dport=d) for d in (1, 2)]
EXPECT = {'dp1': 3}
