from scapy.all import IP, IPv6, TCP, UDP, Raw

C, S = '10.1.0.1', '10.2.0.1'
C6, S6 = '2001:db8:1::1', '2001:db8:2::1'


class Flow:
    """A TCP connection whose sequence numbers follow what was sent."""

    def __init__(self, v6, c, s, cport, sport, cseq, sseq):
        self.ip = IPv6 if v6 else IP
        self.c, self.s, self.cport, self.sport = c, s, cport, sport
        self.seq = {'dp0': cseq, 'dp1': sseq}

    def pkt(self, side, flags, data=b''):
        other = 'dp1' if side == 'dp0' else 'dp0'
        src, dst = (self.c, self.s) if side == 'dp0' else (self.s, self.c)
        sp, dp = (self.cport, self.sport) if side == 'dp0' else (self.sport, self.cport)
        ack = self.seq[other] if 'A' in flags else 0
        p = self.ip(src=src, dst=dst) / TCP(sport=sp, dport=dp, flags=flags,
                                            seq=self.seq[side], ack=ack, window=8192)
        if data:
            p = p / Raw(data)
        self.seq[side] += len(data) + (1 if 'S' in flags else 0)
        return (side, p)

    def handshake(self):
        return [self.pkt('dp0', 'S'), self.pkt('dp1', 'SA'), self.pkt('dp0', 'A')]

    def say(self, side, text):
        return self.pkt(side, 'PA', text.encode())


def session(v6, c, s, cport, pasv, port_cmd):
    f = Flow(v6, c, s, cport, 21, 1000, 5000)
    return f.handshake() + [
        f.say('dp1', '220 ready\r\n'),      # first line each way: only tracked
        f.say('dp0', 'USER ftp\r\n'),
        f.say('dp1', '331 ok\r\n'),
        f.say('dp0', 'PASS x\r\n'),
        f.say('dp1', '230 in\r\n'),
        f.say('dp0', 'EPSV\r\n' if v6 else 'PASV\r\n'),
        f.say('dp1', pasv),
    ], f, port_cmd


ses4, ctl4, port4 = session(False, C, S, 40000,
                            '227 Entering Passive Mode (10,2,0,1,195,80).\r\n',
                            'PORT 10,1,0,1,156,65\r\n')
ses6, ctl6, port6 = session(True, C6, S6, 40100,
                            '229 Entering Extended Passive Mode (|||6446|)\r\n',
                            'EPRT |2|2001:db8:1::1|5282|\r\n')

pasv4 = Flow(False, C, S, 40001, 195 * 256 + 80, 7000, 9000)
act4 = Flow(False, S, C, 20, 156 * 256 + 65, 11000, 13000)  # server -> client
pasv6 = Flow(True, C6, S6, 40101, 6446, 7000, 9000)
act6 = Flow(True, S6, C6, 20, 5282, 11000, 13000)


def rev(side_pkt):
    """act flows start at the server (dp1)."""
    side, p = side_pkt
    return ('dp1' if side == 'dp0' else 'dp0', p)


PACKETS = (
    ses4
    + pasv4.handshake()                      # related: announced by 227
    + [ctl4.say('dp0', port4)]
    + [rev(p) for p in act4.handshake()]     # related: announced by PORT
    + [('dp0', IP(src=C, dst=S) / TCP(sport=40002, dport=195 * 256 + 81, flags='S',
                                      seq=100, window=8192))]   # not announced: dropped
    + ses6
    + pasv6.handshake()                      # related: 229
    + [ctl6.say('dp0', port6)]
    + [rev(p) for p in act6.handshake()]     # related: EPRT
    + [
        ('dp0', IP(src=C, dst=S) / UDP(sport=1069, dport=69) / Raw(b'\x00\x01f\x00octet\x00')),
        ('dp1', IP(src=S, dst=C) / UDP(sport=3001, dport=1069) / Raw(b'\x00\x03\x00\x01data')),
        ('dp0', IP(src=C, dst=S) / UDP(sport=1069, dport=3001) / Raw(b'\x00\x04\x00\x01')),
    ]
)
EXPECT = {'dp1': 20, 'dp0': 17}
