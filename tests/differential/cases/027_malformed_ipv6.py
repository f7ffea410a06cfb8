from scapy.all import Ether, IPv6, UDP, Raw

S, D = '2001:db8:1::1', '2001:db8:2::1'
E = Ether(src='02:00:00:00:01:10', dst='02:00:00:00:00:10', type=0x86dd)


def raw(pkt, cut=None):
    b = bytes(pkt)
    return E / Raw(b if cut is None else b[:cut])


PACKETS = [
    IPv6(src=S, dst=D) / UDP(dport=2) / Raw(b'good'),
    raw(IPv6(src=S, dst=D, plen=300) / UDP(dport=2)),          # payload length past the frame
    raw(IPv6(src=S, dst=D) / UDP(dport=2), 30),                 # truncated header
    raw(IPv6(src=S, dst=D, plen=8) / UDP(dport=2) / Raw(b'trailing bytes')),  # trailing bytes trimmed
    raw(IPv6(version=4, src=S, dst=D) / UDP(dport=2)),          # version 4 in an IPv6 frame
    IPv6(src='::1', dst=D) / UDP(dport=2),                      # loopback source
    IPv6(src=S, dst='::1') / UDP(dport=2),                      # loopback destination
    IPv6(src=S, dst=D, hlim=0) / UDP(dport=2),                  # hop limit 0
    IPv6(src=S, dst=D) / UDP(dport=2) / Raw(b'end'),
]
EXPECT = {'dp1': 3, 'dp0': 1}
