# Two phones behind one IPv6 snat call each other through a registrar
# outside (see 321_ct_helper_sip6_two_phones_nat.nft); each side sends
# to the address it sees.
from scapy.all import IPv6, UDP, Raw

A, B, R, NAT = '2001:db8:1::1', '2001:db8:1::2', '2001:db8:2::1', '2001:db8:ff::1'


def sdp(addr, port):
    return 'v=0\no=x 1 1 IN IP6 %s\ns=-\nc=IN IP6 %s\nt=0 0\nm=audio %d RTP/AVP 0\n' % (
        addr, addr, port)


def sip(side, src, dst, sport, dport, first, via, cseq, body=''):
    text = ('%s\nVia: SIP/2.0/UDP %s\nFrom: <sip:alice@[%s]>\nTo: <sip:bob@[%s]>\n'
            'Call-ID: 7@x\nCSeq: %s\nContent-Length: %d\n\n%s') % (
        first, via, R, R, cseq, len(body.replace('\n', '\r\n')), body)
    return (side, IPv6(src=src, dst=dst) / UDP(sport=sport, dport=dport) /
            Raw(text.replace('\n', '\r\n').encode()))


def media(src, dst, sport, dport):
    return ('dp1', IPv6(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(b'\x80' * 20))


PACKETS = [
    # B's keep-alive opens its connection to the registrar
    sip('dp0', B, R, 5062, 5060, 'OPTIONS sip:[%s] SIP/2.0' % R, '[%s]:5062' % B, '1 OPTIONS'),
    sip('dp1', R, NAT, 5060, 5062, 'SIP/2.0 200 OK', '[%s]:5062' % NAT, '1 OPTIONS'),
    # A calls B through the registrar, offering 49170
    sip('dp0', A, R, 5060, 5060, 'INVITE sip:bob@[%s] SIP/2.0' % R, '[%s]:5060' % A,
        '1 INVITE', sdp(A, 49170)),
    # the registrar hands the offer (now naming the NAT address) to B
    sip('dp1', R, NAT, 5060, 5062, 'INVITE sip:bob@[%s]:5062 SIP/2.0' % NAT, '[%s]:5060' % R,
        '2 INVITE', sdp(NAT, 49170)),
    # B answers with the same port: the NAT address's 49170 is A's
    # (another master's identical expectation, -EALREADY): dropped
    sip('dp0', B, R, 5062, 5060, 'SIP/2.0 200 OK', '[%s]:5060' % R, '2 INVITE', sdp(B, 49170)),
    # and with another port: through, written as the NAT address
    sip('dp0', B, R, 5062, 5060, 'SIP/2.0 200 OK', '[%s]:5060' % R, '2 INVITE', sdp(B, 49180)),
    sip('dp1', R, NAT, 5060, 5060, 'SIP/2.0 200 OK', '[%s]:5060' % NAT, '1 INVITE',
        sdp(NAT, 49180)),
    # media relayed by the registrar to each phone's NAT address: related
    media(R, NAT, 4000, 49170),
    media(R, NAT, 4002, 49180),
]
EXPECT = {'dp1': 3, 'dp0': 5}
