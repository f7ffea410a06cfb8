from scapy.all import Ether, IPv6, UDP, Raw

S, D, M = '2001:db8:1::1', '2001:db8:2::1', 'ff0e::1'
E = Ether(src='02:00:00:00:01:10', dst='02:00:00:00:00:10', type=0x86dd)


def hbh(opts, dst=D, plen=None, sport=1000, csum=None):
    """IPv6 with a hop-by-hop header of opts (a multiple of 8 with the
    first two bytes) before a UDP datagram with a valid checksum (or csum)."""
    h = bytes([17, (2 + len(opts)) // 8 - 1]) + opts
    udp = bytes(IPv6(src=S, dst=dst) / UDP(sport=sport, dport=7, chksum=csum) / Raw(b'data'))[40:]
    body = h + udp
    ip = IPv6(src=S, dst=dst, nh=0, plen=len(body) if plen is None else plen)
    return E / Raw(bytes(ip) + body)


PACKETS = [
    hbh(bytes([0x1e, 4, 0, 0, 0, 0]), sport=1),           # class 00: forwarded
    hbh(bytes([0x5e, 4, 0, 0, 0, 0]), sport=2),           # class 01: dropped
    hbh(bytes([0x9e, 4, 0, 0, 0, 0]), sport=3),           # class 10: parameter problem
    hbh(bytes([0xde, 4, 0, 0, 0, 0]), sport=4),           # class 11: parameter problem
    hbh(bytes([0xde, 4, 0, 0, 0, 0]), dst=M, sport=5),    # class 11, multicast: nothing
    hbh(bytes([0x5e, 4, 0, 0, 0, 0]), dst=M, sport=6),    # class 01, multicast: nothing
    hbh(bytes([0x9e, 4, 0, 0, 0, 0]), dst=M, sport=12),   # class 10, multicast: parameter problem
    hbh(bytes([1, 0, 0x9e, 2, 0, 0]), sport=7),           # class 10 after PadN: pointer 44
    hbh(bytes([0xc2, 4, 0, 1, 0x11, 0x70]), sport=8),     # jumbo 70000, payload length set
    hbh(bytes([0xc2, 4, 0, 0, 0x11, 0x70]), sport=9),     # jumbo 4464 (<= 65535)
    hbh(bytes([0, 0xc2, 4, 0, 1, 0x11, 0x70]) + bytes([0] * 7), sport=10),  # jumbo misaligned: dropped
    hbh(bytes([0x9e, 4, 0, 0, 0, 0]), sport=11, csum=0x1234),  # class 10, bad UDP checksum: still
    IPv6(src=S, dst=D) / UDP(dport=7) / Raw(b'end'),
]
EXPECT = {'dp1': 2, 'dp0': 7}
