# -m u32 test programs: ports and payload words reached through the IP
# and TCP header lengths (@), lengths, ranges, &&, !, and reads past the
# IP packet's end (a short frame's padding is not part of it).
from scapy.all import IP, TCP, UDP, Raw

S, D = '10.1.0.1', '10.2.0.1'

PACKETS = [
    IP(src=S, dst=D) / UDP(sport=1000, dport=9) / Raw(b'hello'),
    IP(src=S, dst=D) / UDP(sport=2000, dport=9) / Raw(b'x'),  # 29 bytes, padded
    IP(src=S, dst=D) / TCP(sport=3000, dport=80, flags='PA') / Raw(b'GET / HTTP/1.0\r\n'),
    IP(src=S, dst=D) / TCP(sport=3001, dport=80, flags='S'),  # 40 bytes
    IP(src=S, dst=D, options=b'\x01\x01\x01\x00') / TCP(sport=3002, dport=80, flags='PA') /
    Raw(b'GET /x'),  # IP options: the header is 24 bytes
    IP(src=S, dst=D) / UDP(sport=1000, dport=9) / Raw(b'y' * 300),
]
EXPECT = {'dp1': 4}
