from scapy.all import IP, TCP, UDP, Raw


def tcp(side, sport, dport, flags, seq, ack=0):
    if side == 'dp0':
        return ('dp0', IP(src='10.1.0.1', dst='10.2.0.1') /
                TCP(sport=sport, dport=dport, flags=flags, seq=seq, ack=ack, window=8192))
    return ('dp1', IP(src='10.2.0.1', dst='10.1.0.1') /
            TCP(sport=dport, dport=sport, flags=flags, seq=seq, ack=ack, window=8192))


def udp(side, sport, dport):
    if side == 'dp0':
        return ('dp0', IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=sport, dport=dport) /
                Raw(b'u' * 8))
    return ('dp1', IP(src='10.2.0.1', dst='10.1.0.1') / UDP(sport=dport, dport=sport) /
            Raw(b'v' * 8))


PACKETS = []
for sp, dp in ((47100, 8080), (47101, 80), (47104, 8081)):
    PACKETS += [
        tcp('dp0', sp, dp, 'S', 1000),
        tcp('dp1', sp, dp, 'SA', 5000, 1001),      # SYN_RECV: 20 s / 60 s
        tcp('dp0', sp, dp, 'A', 1001, 5001),       # ESTABLISHED: 100 s / 5 days
        tcp('dp0', sp, dp, 'FA', 1001, 5001),      # FIN_WAIT: 40 s / 120 s
        tcp('dp1', sp, dp, 'A', 5001, 1002),       # CLOSE_WAIT: 45 s / 60 s
        tcp('dp1', sp, dp, 'FA', 5001, 1002),      # LAST_ACK: 8 s / 30 s
        tcp('dp0', sp, dp, 'A', 1002, 5002),       # TIME_WAIT: 9 s / 120 s
    ]
PACKETS += [udp('dp0', 47102, 5353), udp('dp0', 47102, 5353),   # unreplied: 5 s
            udp('dp1', 47102, 5353),                             # replied: 70 s
            udp('dp0', 47103, 53), udp('dp0', 47103, 53)]        # default: 30 s
EXPECT = {'dp1': 16, 'dp0': 10}
