from scapy.all import IP, IPv6, UDP, TCP, Raw

S, D = '10.1.0.1', '10.2.0.1'
S6, D6 = '2001:db8:1::1', '2001:db8:2::1'
PACKETS = [
    IP(src=S, dst=D) / TCP(sport=4000, dport=80, flags='S', seq=1000) / Raw(b'hello'),
    IP(src=S, dst=D) / UDP(sport=4000, dport=53) / Raw(b'query'),
    IP(src=S, dst=D) / UDP(sport=4000, dport=53, chksum=0) / Raw(b'nocsum'),
    IP(src=S, dst=D) / UDP(sport=7, dport=9) / Raw(b'seven'),
    IP(src=S, dst=D) / TCP(sport=1000, dport=1, flags='A') / Raw(b'x' * 33),
    IP(src=S, dst='10.2.0.99') / TCP(sport=4000, dport=443, flags='S'),
    IP(src=S, dst='10.2.0.99') / UDP(sport=4000, dport=443) / Raw(b'u'),
    IPv6(src=S6, dst=D6) / TCP(sport=4000, dport=80, flags='S') / Raw(b'six'),
    IPv6(src=S6, dst=D6) / UDP(sport=4000, dport=53) / Raw(b'q6'),
]
EXPECT = {'dp1': 9}
NEIGHBOURS = ['10.2.0.100']  # the rewritten destination
