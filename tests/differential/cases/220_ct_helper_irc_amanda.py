from scapy.all import IP, IPv6, TCP, UDP, Raw

C, S, O = '10.1.0.1', '10.2.0.1', '10.2.0.7'
C6, S6 = '2001:db8:1::1', '2001:db8:2::1'
C_NUM = (10 << 24) | (1 << 16) | 1  # 10.1.0.1 as DCC writes it


class Flow:
    """A TCP connection whose sequence numbers follow what was sent."""

    def __init__(self, c, s, cport, sport, cseq, sseq, cside='dp0'):
        self.ip = IPv6 if ':' in c else IP
        self.c, self.s, self.cport, self.sport = c, s, cport, sport
        self.cside = cside
        self.sside = 'dp1' if cside == 'dp0' else 'dp0'
        self.seq = {'c': cseq, 's': sseq}

    def pkt(self, who, flags, data=b''):
        other = 's' if who == 'c' else 'c'
        src, dst = (self.c, self.s) if who == 'c' else (self.s, self.c)
        sp, dp = (self.cport, self.sport) if who == 'c' else (self.sport, self.cport)
        ack = self.seq[other] if 'A' in flags else 0
        p = self.ip(src=src, dst=dst) / TCP(sport=sp, dport=dp, flags=flags,
                                            seq=self.seq[who], ack=ack, window=8192)
        if data:
            p = p / Raw(data)
        self.seq[who] += len(data) + (1 if 'S' in flags else 0)
        return (self.cside if who == 'c' else self.sside, p)

    def handshake(self):
        return [self.pkt('c', 'S'), self.pkt('s', 'SA'), self.pkt('c', 'A')]

    def say(self, who, text):
        return self.pkt(who, 'PA', text)


irc = Flow(C, S, 40000, 6667, 1000, 5000)
dcc = Flow(S, C, 33000, 5000, 7000, 9000, cside='dp1')    # the peer takes the offer
dcc_no = Flow(S, C, 33001, 5001, 7000, 9000, cside='dp1')  # not offered
amanda_tcp = Flow(S, C, 900, 4671, 11000, 13000, cside='dp1')
amanda_no = Flow(S, C, 901, 4673, 11000, 13000, cside='dp1')
amanda6_tcp = Flow(S6, C6, 902, 4672, 15000, 17000, cside='dp1')

AMANDA_REP = (b'Amanda 2.4 REP HANDLE 000-65637373 SEQ 954568800\n'
              b'CONNECT DATA 4670 MESG 4671 INDEX 4672\n')

PACKETS = (
    irc.handshake()
    + [irc.say('s', b':srv 001 alice :welcome\r\n'),
       irc.say('c', b'PRIVMSG bob :\x01DCC SEND notes.txt %d 5000 1234\x01\r\n' % C_NUM)]
    + dcc.handshake()          # related
    + [dcc_no.pkt('c', 'S')]   # dropped
    + [
        ('dp1', IP(src=S, dst=C) / UDP(sport=850, dport=10080) / Raw(b'Amanda 2.4 REQ HANDLE x\n')),
        ('dp0', IP(src=C, dst=S) / UDP(sport=10080, dport=850) / Raw(AMANDA_REP)),
    ]
    + amanda_tcp.handshake()   # related
    + [amanda_no.pkt('c', 'S')]  # dropped
    + [
        ('dp1', IPv6(src=S6, dst=C6) / UDP(sport=850, dport=10080) / Raw(b'Amanda 2.4 REQ HANDLE y\n')),
        ('dp0', IPv6(src=C6, dst=S6) / UDP(sport=10080, dport=850) / Raw(AMANDA_REP)),
    ]
    + amanda6_tcp.handshake()  # related: amanda serves IPv6 too
    + [
        ('dp0', IP(src=C, dst=S) / UDP(sport=40137, dport=137) / Raw(b'\x12\x34' + b'\x00' * 48)),
        ('dp1', IP(src=O, dst=C) / UDP(sport=137, dport=40137) / Raw(b'\x12\x34' + b'\x00' * 48)),
        ('dp1', IP(src=S, dst=C) / UDP(sport=137, dport=40137) / Raw(b'\x12\x34' + b'\x00' * 48)),
        ('dp0', IP(src=C, dst=S) / UDP(sport=40161, dport=161) / Raw(b'\x30\x26' + b'\x00' * 38)),
        ('dp1', IP(src=O, dst=C) / UDP(sport=161, dport=40161) / Raw(b'\x30\x26' + b'\x00' * 38)),
        ('dp1', IP(src=S, dst=C) / UDP(sport=161, dport=40161) / Raw(b'\x30\x26' + b'\x00' * 38)),
    ]
)
EXPECT = {'dp1': 10, 'dp0': 12}
