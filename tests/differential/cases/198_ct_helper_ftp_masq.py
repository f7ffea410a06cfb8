from scapy.all import IP, TCP, UDP, Raw

C, C2, S, MASQ, PUB = '10.1.0.1', '10.1.0.2', '10.2.0.1', '10.2.255.254', '10.2.0.100'


class Flow:
    """A TCP connection; each side sends to the address it sees of the other."""

    def __init__(self, c_side, c, c_seen, s, s_seen, cport, sport, cseq, sseq):
        self.c_side = c_side
        self.s_side = 'dp1' if c_side == 'dp0' else 'dp0'
        self.c, self.c_seen, self.s, self.s_seen = c, c_seen, s, s_seen
        self.cport, self.sport = cport, sport
        self.seq = {'c': cseq, 's': sseq}

    def pkt(self, who, flags, data=b''):
        other = 's' if who == 'c' else 'c'
        if who == 'c':
            side, ip, sp, dp = self.c_side, IP(src=self.c, dst=self.s_seen), self.cport, self.sport
        else:
            side, ip, sp, dp = self.s_side, IP(src=self.s, dst=self.c_seen), self.sport, self.cport
        ack = self.seq[other] if 'A' in flags else 0
        p = ip / TCP(sport=sp, dport=dp, flags=flags, seq=self.seq[who], ack=ack, window=8192)
        if data:
            p = p / Raw(data)
        self.seq[who] += len(data) + (1 if 'S' in flags else 0)
        return (side, p)

    def handshake(self):
        return [self.pkt('c', 'S'), self.pkt('s', 'SA'), self.pkt('c', 'A')]

    def say(self, who, text):
        return self.pkt(who, 'PA', text.encode())

    def login(self):
        return [self.say('s', '220 ready\r\n'), self.say('c', 'USER ftp\r\n'),
                self.say('s', '331 ok\r\n')]


# passive, the client masqueraded
ctl = Flow('dp0', C, MASQ, S, S, 40000, 21, 1000, 5000)
data = Flow('dp0', C, MASQ, S, S, 40001, 50000, 7000, 9000)
# active, the server behind dnat: its data connection comes from port 20
ctl2 = Flow('dp0', C2, C2, S, PUB, 40200, 21, 2000, 6000)
data2 = Flow('dp1', S, PUB, C2, C2, 20, 156 * 256 + 65, 11000, 13000)

PACKETS = ctl.handshake() + ctl.login() + [
    ctl.say('c', 'PASV\r\n'),
    ctl.say('s', '227 Entering Passive Mode (10,2,0,1,195,80).\r\n'),
] + data.handshake() + [
    data.say('s', 'file contents\n'),
    data.pkt('c', 'A'),
] + ctl2.handshake() + ctl2.login() + [
    ctl2.say('c', 'PORT 10,1,0,2,156,65\r\n'),
] + data2.handshake() + [
    data2.say('c', 'listing\n'),
    data2.pkt('s', 'A'),
    # TFTP read through masquerade: the reply comes back from another port
    ('dp0', IP(src=C, dst=S) / UDP(sport=1069, dport=69) / Raw(b'\x00\x01f\x00octet\x00')),
    ('dp1', IP(src=S, dst=MASQ) / UDP(sport=3001, dport=1069) / Raw(b'\x00\x03\x00\x01data')),
    ('dp0', IP(src=C, dst=S) / UDP(sport=1069, dport=3001) / Raw(b'\x00\x04\x00\x01')),
]
EXPECT = {'dp1': 15, 'dp0': 13}
