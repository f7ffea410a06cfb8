from scapy.all import IP, IPv6, UDP, TCP

PACKETS = [IP(src='10.1.0.1', dst=d) / UDP(dport=p) for d, p in (
    ('10.2.0.9', 999), ('10.2.0.9', 1000), ('10.2.0.255', 1999), ('10.2.1.0', 1500),
    ('10.2.1.5', 22), ('10.2.1.5', 23), ('10.2.2.9', 81), ('10.2.2.10', 80))]
PACKETS += [IPv6(src='2001:db8:1::1', dst=d) / l4 for d, l4 in (
    ('2001:db8:2::1', TCP(dport=443)), ('2001:db8:2::1', UDP(dport=443)),
    ('2001:db8:2:1::1', UDP(dport=5010)), ('2001:db8:2:1::1', UDP(dport=5011)),
    ('2001:db8:2:2::1', TCP(dport=443)))]
PACKETS += [IP(src='10.1.0.%d' % s, dst='10.2.9.9') / UDP(dport=1) for s in (6, 7, 8)]
EXPECT = {'dp1': 8}
