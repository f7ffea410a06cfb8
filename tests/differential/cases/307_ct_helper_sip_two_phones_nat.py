# Two phones behind one snat call each other through a registrar outside
# (see 307_ct_helper_sip_two_phones_nat.nft); each side sends to the
# address it sees.
import os
import sys

from scapy.all import IP, UDP, Raw

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tcpflow import Flow  # noqa: E402

A, B, R, NAT = '10.1.0.1', '10.1.0.2', '10.2.0.1', '100.64.0.1'


def sdp(addr, port):
    return 'v=0\no=x 1 1 IN IP4 %s\ns=-\nc=IN IP4 %s\nt=0 0\nm=audio %d RTP/AVP 0\n' % (
        addr, addr, port)


def sip(side, src, dst, sport, dport, first, via, cseq, body=''):
    text = ('%s\nVia: SIP/2.0/UDP %s\nFrom: <sip:alice@%s>\nTo: <sip:bob@%s>\n'
            'Call-ID: 7@x\nCSeq: %s\nContent-Length: %d\n\n%s') % (
        first, via, R, R, cseq, len(body.replace('\n', '\r\n')), body)
    return (side, IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) /
            Raw(text.replace('\n', '\r\n').encode()))


def media(src, dst, sport, dport):
    return ('dp1', IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(b'\x80' * 20))


PACKETS = [
    # B's keep-alive opens its connection to the registrar
    sip('dp0', B, R, 5062, 5060, 'OPTIONS sip:%s SIP/2.0' % R, '%s:5062' % B, '1 OPTIONS'),
    sip('dp1', R, NAT, 5060, 5062, 'SIP/2.0 200 OK', '%s:5062' % NAT, '1 OPTIONS'),
    # A calls B through the registrar, offering 49170
    sip('dp0', A, R, 5060, 5060, 'INVITE sip:bob@%s SIP/2.0' % R, '%s:5060' % A, '1 INVITE',
        sdp(A, 49170)),
    # the registrar hands the offer (now naming the NAT address) to B
    sip('dp1', R, NAT, 5060, 5062, 'INVITE sip:bob@%s:5062 SIP/2.0' % NAT, '%s:5060' % R,
        '2 INVITE', sdp(NAT, 49170)),
    # B answers with the same port: the NAT address's 49170 is A's
    # (another master's identical expectation, -EALREADY): dropped
    sip('dp0', B, R, 5062, 5060, 'SIP/2.0 200 OK', '%s:5060' % R, '2 INVITE', sdp(B, 49170)),
    # and with another port: through, written as the NAT address
    sip('dp0', B, R, 5062, 5060, 'SIP/2.0 200 OK', '%s:5060' % R, '2 INVITE', sdp(B, 49180)),
    sip('dp1', R, NAT, 5060, 5060, 'SIP/2.0 200 OK', '%s:5060' % NAT, '1 INVITE',
        sdp(NAT, 49180)),
    # media relayed by the registrar to each phone's NAT address: related
    media(R, NAT, 4000, 49170),
    media(R, NAT, 4002, 49180),
]

# A over TCP, its Via naming UDP and port 5062 (a Cisco phone's):
# forced_dport is set (the Request-URI's registrar gets port 5062, +5);
# the registrar's answer on that NATed TCP connection is dropped
# ("forced_dport only expected with UDP", this kernel); A's next request
# still passes
tcp = Flow('dp0', A, NAT, R, R, 40100, 5060, 1000, 5000)


def treq(cseq):
    return ('OPTIONS sip:%s SIP/2.0\r\nVia: SIP/2.0/UDP %s:5062;branch=z9hG4bK%d\r\n'
            'CSeq: %d OPTIONS\r\nContent-Length: 0\r\n\r\n') % (R, A, cseq, cseq)


PACKETS += tcp.handshake() + [
    tcp.say('c', treq(1), grow=5),
    tcp.say('s', 'SIP/2.0 200 OK\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n'),
    tcp.say('c', treq(2), grow=5),
]
EXPECT = {'dp1': 7, 'dp0': 6}
