# A call from C (dp0) to S (dp1): SIP on 5060 both ways, then media.
from scapy.all import IP, UDP, Raw

C, S, X = '10.1.0.1', '10.2.0.1', '10.2.0.9'


def sip(side, text, sport=5060, dport=5060):
    src, dst = (C, S) if side == 'dp0' else (S, C)
    return (side, IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) /
            Raw(text.replace('\n', '\r\n').encode()))


def sdp(addr, port, media_c=False):
    if media_c:
        return 'v=0\no=x 1 1 IN IP4 %s\ns=-\nt=0 0\nm=audio %d RTP/AVP 0\nc=IN IP4 %s\n' % (
            addr, port, addr)
    return 'v=0\no=x 1 1 IN IP4 %s\ns=-\nc=IN IP4 %s\nt=0 0\nm=audio %d RTP/AVP 0\n' % (
        addr, addr, port)


def msg(first, cseq, body=''):
    return ('%s\nVia: SIP/2.0/UDP %s:5060\nFrom: <sip:alice@%s>\nTo: <sip:bob@%s>\n'
            'Call-ID: 1@%s\nCSeq: %s\nContent-Length: %d\n\n%s') % (
        first, C, C, S, C, cseq, len(body.replace('\n', '\r\n')), body)


def media(side, sport, dport, src=None):
    a, b = (C, S) if side == 'dp0' else (S, C)
    return (side, IP(src=src or a, dst=b) / UDP(sport=sport, dport=dport) / Raw(b'\x80' * 20))


PACKETS = [
    sip('dp0', msg('INVITE sip:bob@%s SIP/2.0' % S, '1 INVITE', sdp(C, 49170))),
    # the same INVITE on a second connection (a forked call): the first
    # one's expectations stand for it (-EALREADY), it passes
    sip('dp0', msg('INVITE sip:bob@%s SIP/2.0' % S, '1 INVITE', sdp(C, 49170)), sport=5062),
    sip('dp1', msg('SIP/2.0 100 Trying', '1 INVITE')),
    sip('dp1', msg('SIP/2.0 200 OK', '1 INVITE', sdp(S, 3456, media_c=True))),
    sip('dp0', msg('ACK sip:bob@%s SIP/2.0' % S, '1 ACK')),
    media('dp1', 3456, 49170),             # related (announced by the INVITE)
    media('dp0', 49170, 3456),             # its reply: established
    media('dp0', 49171, 3457),             # related (RTCP, announced by the 200)
    media('dp1', 3456, 49172),             # not announced: dropped
    media('dp1', 3456, 49171, src=X),      # another source: dropped
    sip('dp0', msg('BYE sip:bob@%s SIP/2.0' % S, '2 BYE')),
    sip('dp1', msg('SIP/2.0 200 OK', '2 BYE')),
    media('dp1', 3458, 49171),             # after the BYE: dropped
]
EXPECT = {'dp1': 6, 'dp0': 4}
