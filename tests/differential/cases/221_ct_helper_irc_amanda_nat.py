from scapy.all import IP, TCP, UDP, Raw

C, S, MASQ, PUB = '10.1.0.1', '10.2.0.1', '10.2.255.254', '10.2.0.100'
MASQ_NUM = (10 << 24) | (2 << 16) | (255 << 8) | 254  # as DCC writes it


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
        return self.pkt(who, 'PA', text)


# the IRC client masqueraded; the DCC peer (S) connects to the public address
irc = Flow('dp0', C, MASQ, S, S, 40000, 6667, 1000, 5000)
dcc = Flow('dp1', S, S, C, MASQ, 33000, 5000, 7000, 9000)
# amanda: the server (S) reaches the client behind dnat at PUB
amanda_tcp = Flow('dp1', S, S, C, PUB, 900, 4671, 11000, 13000)

PACKETS = irc.handshake() + [
    irc.say('s', b':srv 001 alice :welcome\r\n'),
    irc.say('c', b'PRIVMSG bob :\x01DCC SEND notes.txt %d 5000 1234\x01\r\n' % MASQ_NUM),
] + dcc.handshake() + [
    dcc.say('c', b'hello\n'),
    dcc.pkt('s', 'A'),
    ('dp1', IP(src=S, dst=PUB) / UDP(sport=850, dport=10080) / Raw(b'Amanda 2.4 REQ HANDLE x\n')),
    ('dp0', IP(src=C, dst=S) / UDP(sport=10080, dport=850)
     / Raw(b'Amanda 2.4 REP HANDLE x SEQ 1\nCONNECT DATA 4670 MESG 4671 INDEX 4672\n')),
] + amanda_tcp.handshake()
EXPECT = {'dp1': 7, 'dp0': 8}
