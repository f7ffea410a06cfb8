# -m string (bm and kmp, --from/--to, --icase, --hex-string, !) over
# UDP and TCP payloads; a pattern of zeroes that only the Ethernet
# padding of a short frame holds is not found (the IP packet's end).
from scapy.all import IP, TCP, UDP, Raw

S, D = '10.1.0.1', '10.2.0.1'


def u(payload, dport=9):
    return IP(src=S, dst=D) / UDP(sport=5000, dport=dport) / Raw(payload)


PACKETS = [
    u(b'GET /cmd.exe HTTP/1.0'),  # dropped
    u(b'GET /index.html'),  # --from 28 --to 40
    u(b'xxxxxxxxxxxxxxGET /'),  # past --to
    u(b'1 UNION SeLeCt * from t'),  # --icase
    u(b'hello world'),  # ! --string hello: no
    u(b'a', dport=7),  # zeroes only in the padding
    IP(src=S, dst=D) / TCP(sport=1000, dport=80, flags='PA') / Raw(b'\x01\xde\xad\xbe\xef'),
    IP(src=S, dst=D) / TCP(sport=1001, dport=80, flags='PA') / Raw(b'\xde\xad\xbe'),
]
EXPECT = {'dp1': 6}
