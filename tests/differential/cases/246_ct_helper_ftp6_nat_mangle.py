from scapy.all import IPv6, TCP, Raw

C, C2, S, MASQ, PUB = '2001:db8:1::1', '2001:db8:1::2', '2001:db8:2::1', '2001:db8:2::ffff', \
    '2001:db8:2::100'


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

    def pkt(self, who, flags, data=b'', grow=0):
        other = 's' if who == 'c' else 'c'
        if who == 'c':
            side, ip, sp, dp = self.c_side, IPv6(src=self.c, dst=self.s_seen), self.cport, \
                self.sport
        else:
            side, ip, sp, dp = self.s_side, IPv6(src=self.s, dst=self.c_seen), self.sport, \
                self.cport
        ack = (self.seq[other] + self.off[other]) & 0xffffffff if 'A' in flags else 0
        p = ip / TCP(sport=sp, dport=dp, flags=flags, seq=self.seq[who], ack=ack, window=8192)
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


# active, the client masqueraded: "2001:db8:1::1" (13) becomes
# "2001:0db8:0002:0000:0000:0000:0000:ffff" (39)
ctl = Flow('dp0', C, MASQ, S, S, 40100, 21, 1000, 5000)
data = Flow('dp1', S, S, C, MASQ, 20, 40000, 11000, 13000)
# passive, the server behind dnat: 229 names only the port
ctl2 = Flow('dp0', C2, C2, S, PUB, 40200, 21, 2000, 6000)
data2 = Flow('dp0', C2, C2, S, PUB, 40001, 50000, 7000, 9000)

PACKETS = ctl.handshake() + ctl.login() + [
    ctl.say('c', 'EPRT |2|2001:db8:1::1|40000|\r\n', grow=26),
    ctl.say('s', '200 EPRT command successful\r\n'),
] + data.handshake() + [
    data.say('c', 'listing\n'),
    data.pkt('s', 'A'),
    ctl.say('c', 'LIST\r\n'),
    ctl.say('s', '226 done\r\n'),
    ctl.pkt('c', 'A'),
] + ctl2.handshake() + ctl2.login() + [
    ctl2.say('c', 'EPSV\r\n'),
    ctl2.say('s', '229 Entering Extended Passive Mode (|||50000|)\r\n'),
    ctl2.pkt('c', 'A'),
] + data2.handshake() + [
    data2.say('s', 'file contents\n'),
    data2.pkt('c', 'A'),
    ctl2.say('c', 'RETR f\r\n'),
    ctl2.say('s', '150 sending\r\n'),
    ctl2.pkt('c', 'A'),
]
EXPECT = {'dp1': 18, 'dp0': 15}
NEIGHBOURS = ['2001:db8:2::100']
