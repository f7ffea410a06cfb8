from scapy.all import IP, IPv6, TCP, UDP, Raw

S, D = '10.1.0.1', '10.2.0.1'
S6, D6 = '2001:db8:1::1', '2001:db8:2::1'
PACKETS = [
    IP(src=S, dst=D, id=7) / UDP(sport=1, dport=2) / Raw(b'idid'),
    IP(src=S, dst=D, id=6) / UDP(sport=1, dport=2) / Raw(b'idid'),
    IP(src=S, dst=D) / UDP(sport=1, dport=2) / Raw(b'xx'),          # length 30
    IP(src=S, dst=D) / UDP(sport=1, dport=2) / Raw(b'x'),           # udp length 9
    IPv6(src=S6, dst=D6) / UDP(sport=1, dport=2) / Raw(b'ab6c'),    # payload length 12
    IPv6(src=S6, dst=D6, fl=0x11111) / UDP(sport=1, dport=2) / Raw(b'fl'),
    IPv6(src=S6, dst=D6, fl=0x11111) / TCP(sport=1, dport=2, seq=100, flags='A'),
    IP(src=S, dst=D) / TCP(sport=1, dport=2, seq=100, flags='A') / Raw(b'seq'),
    IP(src=S, dst=D) / UDP(sport=9, dport=3) / Raw(b'nocsum'),
    IPv6(src=S6, dst=D6) / UDP(sport=9, dport=3) / Raw(b'nocsum6'),
    IP(src=S, dst=D) / UDP(sport=8, dport=10, chksum=0) / Raw(b'zero'),
    IP(src=S, dst=D) / UDP(sport=8, dport=10) / Raw(b'nonzero'),
]
EXPECT = {'dp1': 8}
