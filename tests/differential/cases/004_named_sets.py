from scapy.all import IP, IPv6, UDP, TCP, ICMP

PACKETS = [
    IP(src='10.1.0.66', dst='10.2.0.1') / TCP(dport=80),
    IP(src='10.1.0.68', dst='10.2.0.1') / TCP(dport=80),
    IP(src='10.1.0.68', dst='10.2.0.1') / TCP(dport=81),
    IP(src='10.1.0.68', dst='10.2.0.1') / UDP(dport=81),
    IP(src='10.1.0.68', dst='10.2.0.1') / ICMP(),
    IPv6(src='2001:db8:1:1::5', dst='2001:db8:2::1') / UDP(),
    IPv6(src='2001:db8:1:2::80', dst='2001:db8:2::1') / UDP(),
    IPv6(src='2001:db8:1:2::100', dst='2001:db8:2::1') / UDP(),
    IPv6(src='2001:db8:1:3::1', dst='2001:db8:2::1') / TCP(dport=8080),
]
EXPECT = {'dp1': 6}
