from scapy.all import IP, IPv6, UDP, TCP, Raw

PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=1),                      # padded to 60
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=1) / Raw(b'p' * 200),
    IP(src='10.1.0.66', dst='10.2.0.1') / UDP(dport=1),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=666),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(dport=666),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / TCP(dport=1),
]
EXPECT = {'dp1': 3}
