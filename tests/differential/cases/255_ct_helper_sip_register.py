# The client C (dp0) registers with S (dp1).
from scapy.all import IP, UDP, Raw

C, S, X = '10.1.0.1', '10.2.0.1', '10.2.0.9'


def sip(side, text, sport=5060, dport=5060, src=None):
    a, b = (C, S) if side == 'dp0' else (S, C)
    return (side, IP(src=src or a, dst=b) / UDP(sport=sport, dport=dport) /
            Raw(text.replace('\n', '\r\n').encode()))


def msg(first, cseq, extra='', body=''):
    return '%s\nFrom: <sip:alice@%s>\nTo: <sip:alice@%s>\nCSeq: %s\n%sContent-Length: %d\n\n%s' % (
        first, C, S, cseq, extra, len(body.replace('\n', '\r\n')), body)


def sdp(addr, port):
    return 'v=0\no=x 1 1 IN IP4 %s\ns=-\nc=IN IP4 %s\nt=0 0\nm=audio %d RTP/AVP 0\n' % (
        addr, addr, port)


def media(side, sport, dport):
    a, b = (C, S) if side == 'dp0' else (S, C)
    return (side, IP(src=a, dst=b) / UDP(sport=sport, dport=dport) / Raw(b'\x80' * 20))


REG = msg('REGISTER sip:%s SIP/2.0' % S, '7 REGISTER',
          'Contact: <sip:alice@%s:5070>\nExpires: 3600\n' % C)
PACKETS = [
    sip('dp0', REG),
    sip('dp1', msg('INVITE sip:alice@%s:5070 SIP/2.0' % C, '1 INVITE'), 5061, 5070),  # inactive
    sip('dp1', msg('SIP/2.0 200 OK', '7 REGISTER',
                   'Contact: <sip:alice@%s:5070>;expires=600\n' % C)),
    # a call from the registrar: related, with the helper: its SDP counts
    sip('dp1', msg('INVITE sip:alice@%s:5070 SIP/2.0' % C, '1 INVITE', body=sdp(S, 7000)),
        5062, 5070),
    media('dp0', 7777, 7001),               # related (announced by that INVITE)
    sip('dp1', msg('INVITE sip:alice@%s:5070 SIP/2.0' % C, '1 INVITE'), 5063, 5070,
        src=X),                             # not the registrar: dropped
    sip('dp1', msg('INVITE sip:alice@%s:5070 SIP/2.0' % C, '1 INVITE'), 5064, 5070),
    # an INVITE on the registration's connection, then a CANCEL: the
    # media stays expected; the 487 for the INVITE's CSeq removes it
    sip('dp0', msg('INVITE sip:bob@%s SIP/2.0' % S, '8 INVITE', body=sdp(C, 40000))),
    sip('dp0', msg('CANCEL sip:bob@%s SIP/2.0' % S, '8 CANCEL')),
    media('dp1', 9000, 40000),              # related
    sip('dp1', msg('SIP/2.0 487 Request Terminated', '8 INVITE')),
    media('dp1', 9002, 40001),              # dropped
]
EXPECT = {'dp1': 4, 'dp0': 5}
