from scapy.all import Ether, IP, UDP, TCP, Raw

S, D = '10.1.0.1', '10.2.0.1'
E = Ether(src='02:00:00:00:01:10', dst='02:00:00:00:00:10', type=0x0800)


def raw(pkt, cut=None):
    b = bytes(pkt)
    return E / Raw(b if cut is None else b[:cut])


good = IP(src=S, dst=D) / UDP(sport=1, dport=2) / Raw(b'ok' * 10)
PACKETS = [
    good,
    IP(src=S, dst=D, chksum=0x1234) / UDP(dport=2),                # bad header checksum
    raw(IP(src=S, dst=D) / UDP(dport=2), 18),                       # truncated IPv4 header
    raw(IP(src=S, dst=D, len=200) / UDP(dport=2) / Raw(b'x' * 20)),  # total length past the frame
    raw(IP(src=S, dst=D, len=19) / UDP(dport=2)),                   # total length below the header
    raw(IP(src=S, dst=D, ihl=4) / UDP(dport=2)),                    # header length below 5
    raw(IP(src=S, dst=D, ihl=15) / UDP(dport=2)),                   # header length past the packet
    raw(IP(version=6, src=S, dst=D) / UDP(dport=2)),                # version 6 in an IPv4 frame
    IP(src=S, dst=D) / UDP(sport=1, dport=2, chksum=0x4321),       # bad UDP checksum: forwarded
    raw(IP(src=S, dst=D, proto=6) / Raw(b'\x00\x01\x00\x02')),      # truncated TCP header: forwarded
    IP(src=S, dst=D, ttl=0) / UDP(dport=2),                         # TTL 0
    raw(IP(src=S, dst=D, len=30) / UDP(dport=2) / Raw(b'y' * 30)),  # trailing bytes past total length
    good,
]
EXPECT = {'dp1': 5, 'dp0': 1}
