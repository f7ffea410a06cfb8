from scapy.all import Ether, IPv6, UDP, Raw

S, D = '2001:db8:1::1', '2001:db8:2::1'
E = Ether(src='02:00:00:00:01:10', dst='02:00:00:00:00:10', type=0x86dd)


def hbh(opts, plen=None, tail=b''):
    """IPv6 from S to D, a hop-by-hop header of opts (next header UDP, the
    header length from opts, which must fill it to a multiple of 8), a UDP
    datagram to port 7 (checksum left 0: nothing checks it) and tail."""
    h = bytes([17, (2 + len(opts)) // 8 - 1]) + opts
    udp = bytes(UDP(sport=1000, dport=7, chksum=0) / Raw(b'data'))
    body = h + udp + tail
    ip = IPv6(src=S, dst=D, nh=0, plen=len(body) if plen is None else plen)
    return E / Raw(bytes(ip) + body)


PACKETS = [
    hbh(bytes([1, 4, 0, 0, 0, 0])),                       # PadN: fine
    hbh(bytes([5, 2, 0, 0, 1, 0])),                       # router alert: fine
    hbh(bytes([0x1e, 0, 1, 2, 0, 0])),                    # unknown, class 00: skipped
    E / Raw(bytes(IPv6(src=S, dst=D, nh=0, plen=8)) + bytes([17, 5, 1, 4, 0, 0, 0, 0])),  # header past the end
    hbh(bytes([1, 4, 0, 0, 0, 0]), plen=6),               # past the payload length (trailing bytes)
    hbh(bytes([1, 4, 0, 1, 0, 0])),                       # PadN not zero
    hbh(bytes([0] * 6) + bytes([1, 0]) + bytes([1, 4, 0, 0, 0, 0])),  # 8 bytes of padding
    hbh(bytes([0x1e, 0] * 9) + bytes([1, 2, 0, 0])),      # 9 options (max 8)
    hbh(bytes([0x1e, 0] * 8) + bytes([1, 4, 0, 0, 0, 0])),  # 8 options: fine
    hbh(bytes([0x31, 2, 0, 0, 0, 0])),                    # IOAM at 42, not 4n: dropped
    hbh(bytes([1, 0, 0x31, 2, 0, 0])),                    # IOAM at 44: ignored
    hbh(bytes([5, 4, 0, 0, 0, 0])),                       # router alert, length 4
    hbh(bytes([0x1e, 5, 0, 0, 0, 0])),                    # option runs past the header
    hbh(bytes([1, 4, 0, 0, 0, 0]), plen=0),               # payload length 0, no jumbo option
    hbh(bytes([0xc2, 4, 0, 1, 0x11, 0x70]), plen=0),      # jumbo 70000 in a short frame
    IPv6(src=S, dst=D) / UDP(dport=7) / Raw(b'end'),
]
EXPECT = {'dp1': 7}
