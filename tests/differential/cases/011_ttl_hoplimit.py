from scapy.all import IP, IPv6, UDP

PACKETS = [IP(src='10.1.0.1', dst='10.2.0.1', ttl=t) / UDP(dport=7) for t in (64, 2, 9, 201, 255, 199)]
PACKETS += [IPv6(src='2001:db8:1::1', dst='2001:db8:2::1', hlim=h) / UDP(dport=7) for h in (64, 2, 255)]
EXPECT = {'dp1': 6}
