# A SIP call from C behind snat (see 286_ct_helper_sip_nat_sdp.nft): SDP
# both ways, then media; each side sends to the address it sees.
from scapy.all import IP, IPv6, UDP, Raw

C, S, NAT = '10.1.0.1', '10.2.0.1', '100.64.0.1'


def sip(side, text, src, dst, sport=5060):
    return (side, IP(src=src, dst=dst) / UDP(sport=sport, dport=5060) /
            Raw(text.replace('\n', '\r\n').encode()))


def sdp(addr, port, media_c=False):
    if media_c:
        return 'v=0\no=x 1 1 IN IP4 %s\ns=-\nt=0 0\nm=audio %d RTP/AVP 0\nc=IN IP4 %s\n' % (
            addr, port, addr)
    return 'v=0\no=x 1 1 IN IP4 %s\ns=-\nc=IN IP4 %s\nt=0 0\nm=audio %d RTP/AVP 0\n' % (
        addr, addr, port)


def msg(first, via, cseq, body=''):
    return ('%s\nVia: SIP/2.0/UDP %s:5060\nFrom: <sip:alice@%s>\nTo: <sip:bob@%s>\n'
            'Call-ID: 1@x\nCSeq: %s\nContent-Length: %d\n\n%s') % (
        first, via, via, S, cseq, len(body.replace('\n', '\r\n')), body)


def media(side, src, dst, sport, dport):
    return (side, IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(b'\x80' * 20))


PACKETS = [
    # the offer names the inside address: o=, c= and Content-Length change
    sip('dp0', msg('INVITE sip:bob@%s SIP/2.0' % S, C, '1 INVITE', sdp(C, 49170)), C, S),
    sip('dp1', msg('SIP/2.0 100 Trying', NAT, '1 INVITE'), S, NAT),
    # the answer (its c= after m=) names the callee: written as it was
    sip('dp1', msg('SIP/2.0 200 OK', NAT, '1 INVITE', sdp(S, 3456, media_c=True)), S, NAT),
    sip('dp0', msg('ACK sip:bob@%s SIP/2.0' % S, C, '1 ACK'), C, S),
    media('dp1', S, NAT, 3456, 49170),     # related: to the caller inside
    media('dp0', C, S, 49170, 3456),       # its reply, from the NAT address
    media('dp0', C, S, 49171, 3457),       # related (the answer's RTCP), snat'd
    media('dp1', S, C, 3458, 49170),       # to the inside address: dropped
    sip('dp0', msg('BYE sip:bob@%s SIP/2.0' % S, C, '2 BYE'), C, S),
    sip('dp1', msg('SIP/2.0 200 OK', NAT, '2 BYE'), S, NAT),
    # offers that expect no media, each on its own connection: the
    # session's o= and c= become its c= address (have_rtp_addr), and
    # without any c= the SDP is left alone
    sip('dp0', msg('INVITE sip:bob@%s SIP/2.0' % S, C, '1 INVITE',
                   'v=0\no=x 1 1 IN IP4 %s\ns=-\nc=IN IP4 10.1.0.7\nt=0 0\n'
                   'm=audio 0 RTP/AVP 0\n' % C), C, S, 5062),
    sip('dp0', msg('INVITE sip:bob@%s SIP/2.0' % S, C, '1 INVITE',
                   'v=0\no=x 1 1 IN IP4 %s\ns=-\nt=0 0\nm=text 4000 RTP/AVP 0\n' % C),
        C, S, 5064),
]

# IPv6: the caller masqueraded to the DUT's address on dp1; the SDP's
# addresses are written as %pI6c, the Via and From in brackets
C6, S6, MASQ6 = '2001:db8:1::1', '2001:db8:2::1', '2001:db8:2::ffff'


def sip6(side, text, src, dst):
    return (side, IPv6(src=src, dst=dst) / UDP(sport=5060, dport=5060) /
            Raw(text.replace('\n', '\r\n').encode()))


def sdp6(addr, port):
    return 'v=0\no=x 1 1 IN IP6 %s\ns=-\nc=IN IP6 %s\nt=0 0\nm=audio %d RTP/AVP 0\n' % (
        addr, addr, port)


def msg6(first, via, cseq, body=''):
    return ('%s\nVia: SIP/2.0/UDP [%s]:5060\nFrom: <sip:alice@[%s]>\nTo: <sip:bob@[%s]>\n'
            'Call-ID: 6@x\nCSeq: %s\nContent-Length: %d\n\n%s') % (
        first, via, via, S6, cseq, len(body.replace('\n', '\r\n')), body)


PACKETS += [
    sip6('dp0', msg6('INVITE sip:bob@[%s] SIP/2.0' % S6, C6, '1 INVITE', sdp6(C6, 40000)),
         C6, S6),
    sip6('dp1', msg6('SIP/2.0 200 OK', MASQ6, '1 INVITE', sdp6(S6, 6000)), S6, MASQ6),
    ('dp1', IPv6(src=S6, dst=MASQ6) / UDP(sport=6000, dport=40000) / Raw(b'\x80' * 20)),
    ('dp0', IPv6(src=C6, dst=S6) / UDP(sport=40001, dport=6001) / Raw(b'\x80' * 20)),
]
EXPECT = {'dp1': 9, 'dp0': 6}
