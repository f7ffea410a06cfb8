from scapy.all import IP, IPv6, TCP, UDP, Raw

S, D = '10.1.0.1', '10.2.0.1'
PACKETS = [
    IP(src=S, dst=D) / TCP(sport=1000, dport=80, flags='S', options=[('MSS', 1460), ('SAckOK', b''), ('WScale', 7)]),
    IP(src=S, dst=D) / TCP(sport=1000, dport=80, flags='S', options=[('MSS', 1300)]),
    IP(src=S, dst=D) / TCP(sport=1000, dport=80, flags='A', options=[('MSS', 1460)]),
    IP(src=S, dst=D) / TCP(sport=1000, dport=99, flags='A', options=[('NOP', None), ('NOP', None), ('Timestamp', (1, 2))]),
    IP(src=S, dst=D) / TCP(sport=1000, dport=5000, flags='S'),
    IP(src=S, dst=D) / UDP(sport=1000, dport=5000),
    IP(src='10.1.0.7', dst=D) / UDP(sport=1000, dport=1),
    IP(src=S, dst=D) / UDP(sport=1000, dport=7777) / Raw(b'zzzz'),
    IP(src=S, dst=D) / TCP(sport=1000, dport=1, flags='S'),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / TCP(sport=1000, dport=80, flags='S', options=[('MSS', 1440)]),
]
EXPECT = {'dp1': 7}
