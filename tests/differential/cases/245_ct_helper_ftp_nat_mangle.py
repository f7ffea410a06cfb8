from scapy.all import IP, TCP, Raw

C, C2, S, MASQ, PUB = '10.1.0.1', '10.1.0.2', '10.2.0.1', '10.2.255.254', '10.2.0.100'


class Flow:
    """A TCP connection; each side sends to the address it sees of the
    other, and acks the other's bytes as they reached it: off[who] is what
    the NAT helper added to who's stream so far."""

    def __init__(self, c_side, c, c_seen, s, s_seen, cport, sport, cseq, sseq):
        self.c_side = c_side
        self.s_side = 'dp1' if c_side == 'dp0' else 'dp0'
        self.c, self.c_seen, self.s, self.s_seen = c, c_seen, s, s_seen
        self.cport, self.sport = cport, sport
        self.seq = {'c': cseq, 's': sseq}
        self.off = {'c': 0, 's': 0}

    def pkt(self, who, flags, data=b'', grow=0, options=None):
        other = 's' if who == 'c' else 'c'
        if who == 'c':
            side, ip, sp, dp = self.c_side, IP(src=self.c, dst=self.s_seen), self.cport, self.sport
        else:
            side, ip, sp, dp = self.s_side, IP(src=self.s, dst=self.c_seen), self.sport, self.cport
        ack = (self.seq[other] + self.off[other]) & 0xffffffff if 'A' in flags else 0
        p = ip / TCP(sport=sp, dport=dp, flags=flags, seq=self.seq[who], ack=ack, window=8192,
                     options=options or [])
        if data:
            p = p / Raw(data)
        self.seq[who] = (self.seq[who] + len(data) + (1 if 'S' in flags else 0)) & 0xffffffff
        self.off[who] += grow
        return (side, p)

    def handshake(self):
        return [self.pkt('c', 'S'), self.pkt('s', 'SA'), self.pkt('c', 'A')]

    def say(self, who, text, grow=0):
        return self.pkt(who, 'PA', text.encode(), grow)

    def login(self):
        return [self.say('s', '220 ready\r\n'), self.say('c', 'USER ftp\r\n'),
                self.say('s', '331 ok\r\n')]


# active, the client masqueraded: "10,1,0,1" becomes "10,2,255,254" (+4);
# the client's sequence numbers start just below 2^32 so they wrap
ctl = Flow('dp0', C, MASQ, S, S, 40100, 21, 0xffffffe0, 5000)
data = Flow('dp1', S, S, C, MASQ, 20, 40000, 11000, 13000)
# passive, the server behind dnat: "10,2,0,1" becomes "10,2,0,100" (+2)
ctl2 = Flow('dp0', C2, C2, S, PUB, 40200, 21, 2000, 6000)
data2 = Flow('dp0', C2, C2, S, PUB, 40001, 50000, 7000, 9000)

PACKETS = ctl.handshake() + ctl.login() + [
    ctl.say('c', 'PORT 10,1,0,1,156,64\r\n', grow=4),
    ctl.say('s', '200 PORT command successful\r\n'),
] + data.handshake() + [
    data.say('c', 'listing\n'),
    data.pkt('s', 'A'),
    ctl.say('c', 'LIST\r\n'),
]
# the server acks LIST and reports the PORT line again as a SACK block, in
# its own view of the client's stream: the block comes back by 4
port_end = (ctl.seq['c'] + ctl.off['c']) & 0xffffffff
PACKETS += [
    ctl.pkt('s', 'A', options=[('NOP', None), ('NOP', None),
                               ('SAck', ((port_end - 6 - 26) & 0xffffffff,
                                         (port_end - 6) & 0xffffffff))]),
    ctl.say('s', '226 done\r\n'),
    ctl.pkt('c', 'A'),
] + ctl2.handshake() + ctl2.login() + [
    ctl2.say('c', 'PASV\r\n'),
    ctl2.say('s', '227 Entering Passive Mode (10,2,0,1,195,80).\r\n', grow=2),
    ctl2.pkt('c', 'A'),
] + data2.handshake() + [
    data2.say('s', 'file contents\n'),
    data2.pkt('c', 'A'),
    ctl2.say('c', 'RETR f\r\n'),
    ctl2.say('s', '150 sending\r\n'),
    ctl2.pkt('c', 'A'),
]
EXPECT = {'dp1': 18, 'dp0': 16}
