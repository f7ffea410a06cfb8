from scapy.all import IP, IPv6, UDP, Raw

PACKETS = []
for d in (6, 7, 8):
    PACKETS.append(IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=d))
    PACKETS.append(IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=d) / Raw(b'E' * 100))
    PACKETS.append(IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(dport=d))
EXPECT = {'dp1': 3}
