from scapy.all import IP, IPv6, UDP, TCP, ICMPv6EchoRequest, Raw

PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=1),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=1) / Raw(b'z' * 40),
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(dport=1) / Raw(b'z' * 120),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=1) / Raw(b'q' * 972),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=1) / Raw(b'q' * 700),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(dport=1),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / TCP(dport=1) / Raw(b'w' * 100),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / ICMPv6EchoRequest(data=b'e' * 900),
]
EXPECT = {'dp1': 7}
