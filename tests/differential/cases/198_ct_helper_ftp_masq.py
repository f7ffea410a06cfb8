from scapy.all import IP, TCP, Raw

C, S, MASQ = '10.1.0.1', '10.2.0.1', '10.2.255.254'


class Flow:
    """A TCP connection through masquerade: the server answers MASQ."""

    def __init__(self, cport, sport, cseq, sseq):
        self.cport, self.sport = cport, sport
        self.seq = {'dp0': cseq, 'dp1': sseq}

    def pkt(self, side, flags, data=b''):
        other = 'dp1' if side == 'dp0' else 'dp0'
        if side == 'dp0':
            ip, sp, dp = IP(src=C, dst=S), self.cport, self.sport
        else:
            ip, sp, dp = IP(src=S, dst=MASQ), self.sport, self.cport
        ack = self.seq[other] if 'A' in flags else 0
        p = ip / TCP(sport=sp, dport=dp, flags=flags, seq=self.seq[side], ack=ack, window=8192)
        if data:
            p = p / Raw(data)
        self.seq[side] += len(data) + (1 if 'S' in flags else 0)
        return (side, p)

    def handshake(self):
        return [self.pkt('dp0', 'S'), self.pkt('dp1', 'SA'), self.pkt('dp0', 'A')]

    def say(self, side, text):
        return self.pkt(side, 'PA', text.encode())


ctl = Flow(40000, 21, 1000, 5000)
data = Flow(40001, 50000, 7000, 9000)
PACKETS = ctl.handshake() + [
    ctl.say('dp1', '220 ready\r\n'),
    ctl.say('dp0', 'USER ftp\r\n'),
    ctl.say('dp1', '331 ok\r\n'),
    ctl.say('dp0', 'PASV\r\n'),
    ctl.say('dp1', '227 Entering Passive Mode (10,2,0,1,195,80).\r\n'),
] + data.handshake() + [
    data.say('dp1', 'file contents\n'),
    data.pkt('dp0', 'A'),
]
EXPECT = {'dp1': 7, 'dp0': 6}
