from scapy.all import IP, UDP, Raw


def udp(side, sport, tos):
    if side == 'dp0':
        return ('dp0', IP(src='10.1.0.1', dst='10.2.0.1', tos=tos) /
                UDP(sport=sport, dport=53) / Raw(b'q' * 12))
    return ('dp1', IP(src='10.2.0.1', dst='10.1.0.1', tos=tos) /
            UDP(sport=53, dport=sport) / Raw(b'r' * 12))


PACKETS = [
    udp('dp0', 40000, 0),   # new, zone 0
    udp('dp0', 40000, 4),   # the same tuple: new, zone 1
    udp('dp1', 40000, 4),   # zone 1's reply
    udp('dp1', 40000, 0),   # zone 0's reply
    udp('dp0', 40000, 4),   # established in zone 1
    udp('dp0', 40001, 8),   # new, original direction in zone 2
    udp('dp1', 40001, 0),   # its reply, zone 0
    udp('dp0', 40001, 8),   # established
]
EXPECT = {'dp1': 5, 'dp0': 3}
