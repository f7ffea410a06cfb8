from scapy.all import IP, UDP, Raw


def udp(side, tos):
    if side == 'dp0':
        return ('dp0', IP(src='10.1.0.1', dst='10.2.0.1', tos=tos) /
                UDP(sport=40010, dport=53) / Raw(b'q' * 12))
    return ('dp1', IP(src='10.2.0.1', dst='10.1.0.1', tos=tos) /
            UDP(sport=53, dport=40010) / Raw(b'r' * 12))


PACKETS = [
    udp('dp0', 8),   # new: original tuple in zone 2, reply tuple in zone 0
    udp('dp1', 0),   # its reply (zone 0): established
    udp('dp1', 4),   # zone 2 both ways: new, reply tuple taken: dropped at confirm
    udp('dp1', 0),   # the first connection's reply again: established
    udp('dp0', 8),   # established
]
EXPECT = {'dp1': 2, 'dp0': 2}
