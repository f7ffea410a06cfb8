from scapy.all import IP, IPv6, UDP, TCP, ICMP, ICMPv6EchoRequest, Raw

PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=1, dport=2, flags='S') / Raw(b'tcp'),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=1, dport=2) / Raw(b'udp'),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=1, dport=2, chksum=0) / Raw(b'udp0'),
    IP(src='10.1.0.5', dst='10.2.0.2') / ICMP() / Raw(b'icmp'),
    IP(src='10.1.0.5', dst='10.2.0.2') / TCP(sport=1, dport=2, flags='A'),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / TCP(sport=1, dport=2, flags='S'),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(sport=1, dport=2) / Raw(b'u6'),
    IPv6(src='2001:db8:1::5', dst='2001:db8:2::2') / ICMPv6EchoRequest(data=b'e6'),
]
NEIGHBOURS = ['10.2.0.3', '2001:db8:2::3']  # the rewritten destinations
EXPECT = {'dp1': 8}
