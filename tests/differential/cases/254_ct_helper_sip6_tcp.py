# A call over TCP from C (dp0) to S (dp1), IPv6, then media.
from scapy.all import IPv6, TCP, UDP, Raw

C, S = '2001:db8:1::1', '2001:db8:2::1'


class Flow:
    def __init__(self):
        self.seq = {'dp0': 1000, 'dp1': 5000}

    def pkt(self, side, flags, data=b''):
        other = 'dp1' if side == 'dp0' else 'dp0'
        src, dst = (C, S) if side == 'dp0' else (S, C)
        sp, dp = (40000, 5060) if side == 'dp0' else (5060, 40000)
        ack = self.seq[other] if 'A' in flags else 0
        p = IPv6(src=src, dst=dst) / TCP(sport=sp, dport=dp, flags=flags,
                                         seq=self.seq[side], ack=ack, window=8192)
        if data:
            p = p / Raw(data)
        self.seq[side] += len(data) + (1 if 'S' in flags else 0)
        return (side, p)

    def say(self, side, *texts):
        return self.pkt(side, 'PA', ''.join(texts).replace('\n', '\r\n').encode())


def msg(first, cseq, body='', clen=None):
    n = len(body.replace('\n', '\r\n')) if clen is None else clen
    return '%s\nFrom: <sip:a@[%s]>\nTo: <sip:b@[%s]>\nCSeq: %s\nl: %d\n\n%s' % (
        first, C, S, cseq, n, body)


def sdp(addr, audio, video):
    return ('v=0\no=x 1 1 IN IP6 %s\ns=-\nc=IN IP6 %s\nt=0 0\nm=audio %d RTP/AVP 0\n'
            'm=video 0 RTP/AVP 31\nm=video %d RTP/AVP 31\n') % (addr, addr, audio, video)


def media(side, sport, dport):
    a, b = (C, S) if side == 'dp0' else (S, C)
    return (side, IPv6(src=a, dst=b) / UDP(sport=sport, dport=dport) / Raw(b'\x80' * 20))


f = Flow()
PACKETS = [f.pkt('dp0', 'S'), f.pkt('dp1', 'SA'), f.pkt('dp0', 'A')] + [
    f.say('dp0', msg('OPTIONS sip:b@[%s] SIP/2.0' % S, '1 OPTIONS'),
          msg('INVITE sip:b@[%s] SIP/2.0' % S, '2 INVITE', sdp(C, 4000, 4002))),
    f.say('dp1', msg('SIP/2.0 100 Trying', '2 INVITE'),
          msg('SIP/2.0 200 OK', '2 INVITE', sdp(S, 6000, 6002))),
    f.say('dp0', msg('ACK sip:b@[%s] SIP/2.0' % S, '2 ACK')),
    media('dp1', 6000, 4000),      # related: audio RTP
    media('dp1', 6003, 4003),      # related: video RTCP
    media('dp0', 4001, 6001),      # related: audio RTCP the other way
    media('dp0', 4002, 6004),      # not announced: dropped
    # a re-INVITE whose body is cut by the segment: nothing announced,
    # the expectations stay
    f.say('dp0', msg('INVITE sip:b@[%s] SIP/2.0' % S, '3 INVITE', sdp(C, 4100, 4102), clen=900)),
    media('dp1', 6000, 4100),      # dropped
    media('dp1', 6002, 4002),      # related: video RTP still expected
]
EXPECT = {'dp1': 6, 'dp0': 5}
