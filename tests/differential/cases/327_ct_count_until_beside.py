from scapy.all import IP, UDP, Raw


def udp(dst, sport, src='10.1.0.1'):
    return ('dp0', IP(src=src, dst=dst) / UDP(sport=sport, dport=53) / Raw(b'u' * 8))


PACKETS = (
    [udp('10.2.0.1', 1001 + i) for i in range(25)]      # 20 pass, 5 dropped
    + [udp('10.2.0.2', 2001 + i) for i in range(13)]    # 11 pass, 2 over
)
# Only new connections (see case 326).
EXPECT = {'dp1': 31}
