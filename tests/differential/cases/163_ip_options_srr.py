from scapy.all import Ether, IP, UDP, Raw
from scapy.utils import checksum

S, D = '10.1.0.1', '10.2.0.1'
E = Ether(src='02:00:00:00:01:10', dst='02:00:00:00:00:10', type=0x800)


def opts(raw, sport, csum=None):
    """IPv4 from S to D with the option bytes raw (a multiple of 4) and a
    UDP datagram (checksum csum if given), the header checksum made for the
    bytes as they are."""
    udp = bytes(IP(src=S, dst=D) / UDP(sport=sport, dport=7, chksum=csum) / Raw(b'data'))[20:]
    h = bytearray(bytes(IP(src=S, dst=D, proto=17, ihl=5 + len(raw) // 4,
                           len=20 + len(raw) + len(udp), id=sport)))[:20] + raw
    h[10:12] = b'\0\0'
    c = checksum(bytes(h))
    h[10:12] = bytes([c >> 8, c & 0xff])
    return E / Raw(bytes(h) + udp)


PACKETS = [
    opts(bytes([1, 1, 1, 0]), 1),                                     # NOPs, END: forwarded
    opts(bytes([131, 7, 4, 10, 2, 0, 9, 0]), 2),                      # LSRR: dropped
    opts(bytes([137, 7, 4, 10, 2, 0, 9, 0]), 3),                      # SSRR: dropped
    opts(bytes([131, 7, 8, 10, 2, 0, 9, 0]), 4),                      # LSRR, route used up: dropped
    opts(bytes([1, 0x88, 1, 0]), 5),                                  # option length 1: pointer 21
    opts(bytes([7, 0xff, 4, 0]), 6),                                  # RR length 0xff: pointer 20
    opts(bytes([7, 7, 1, 0, 0, 0, 0, 0]), 7),                         # RR pointer 1: pointer 22
    opts(bytes([131, 2, 4, 0]), 8),                                   # LSRR length 2: pointer 21
    opts(bytes([131, 7, 4, 10, 2, 0, 9] * 2) + bytes([0, 0]), 9),     # two source routes: pointer 27
    opts(bytes([68, 4, 5, 0]), 10),                                   # timestamp, pointer 5 > length: fine
    opts(bytes([68, 4, 9, 0xf0]), 12),                                # timestamp full, overflow 15: pointer 23
    opts(bytes([148, 2, 0, 0]), 13),                                  # router alert length 2: pointer 21
    opts(bytes([7, 3, 4, 0]), 14),                                    # RR, pointer 4 past length 3: fine
    opts(bytes([7, 0xff, 4, 0]), 15, csum=0x1234),                   # bad RR, bad UDP checksum: still
    IP(src=S, dst=D) / UDP(dport=7) / Raw(b'end'),
]
EXPECT = {"dp1": 4, "dp0": 8}
