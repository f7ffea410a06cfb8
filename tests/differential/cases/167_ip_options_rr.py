from scapy.all import Ether, IP, UDP, Raw
from scapy.utils import checksum

S, D = '10.1.0.1', '10.2.0.1'
E = Ether(src='02:00:00:00:01:10', dst='02:00:00:00:00:10', type=0x800)


def opts(raw, sport):
    """IPv4 from S to D with the option bytes raw (a multiple of 4) and a
    UDP datagram, the header checksum made for the bytes as they are."""
    udp = bytes(IP(src=S, dst=D) / UDP(sport=sport, dport=7) / Raw(b'data'))[20:]
    h = bytearray(bytes(IP(src=S, dst=D, proto=17, ihl=5 + len(raw) // 4,
                           len=20 + len(raw) + len(udp), id=sport)))[:20] + raw
    h[10:12] = b'\0\0'
    c = checksum(bytes(h))
    h[10:12] = bytes([c >> 8, c & 0xff])
    return E / Raw(bytes(h) + udp)


PACKETS = [
    opts(bytes([7, 7, 4, 0, 0, 0, 0, 0]), 1),                         # RR, one free slot
    opts(bytes([7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0]), 2),            # RR, two free slots
    opts(bytes([7, 11, 8, 10, 9, 9, 9, 0, 0, 0, 0, 0]), 3),           # RR, second slot free
    opts(bytes([7, 7, 8, 10, 9, 9, 9, 0]), 4),                        # RR full
    opts(bytes([1, 7, 7, 4, 0, 0, 0, 0]), 5),                         # RR after a NOP
    IP(src=S, dst=D) / UDP(dport=7) / Raw(b'end'),
]
EXPECT = {'dp1': 6}
