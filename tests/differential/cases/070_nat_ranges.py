from scapy.all import IP, UDP, Raw


def udp(side, src, dst, sport, dport, data=b'x'):
    return (side, IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(data))


# which address of a range each connection gets is the point here (the
# kernel's choice is a hash with fixed seeds: the same every run); replies
# for the port range, whose choice is the range's first port
PACKETS = []
for h in range(1, 7):
    PACKETS.append(udp('dp0', '10.1.1.%d' % h, '10.2.0.1', 1000 + h, 53))
    PACKETS.append(udp('dp0', '10.1.2.%d' % h, '10.2.0.1', 2000 + h, 53))
    PACKETS.append(udp('dp0', '10.1.2.%d' % h, '10.2.0.2', 2000 + h, 53))
for h in range(1, 6):
    PACKETS.append(udp('dp0', '10.1.3.%d' % h, '10.2.0.100', 3000, 53))
for h in range(1, 3):
    PACKETS.append(udp('dp0', '10.1.4.%d' % h, '10.2.0.101', 4000, 80))
    PACKETS.append(udp('dp1', '10.2.0.1', '10.1.4.%d' % h, 8000, 4000, b'reply'))
EXPECT = {'dp1': 25, 'dp0': 2}
NEIGHBOURS = ['10.2.0.100', '10.2.0.101', '10.2.0.3', '10.2.0.4']
