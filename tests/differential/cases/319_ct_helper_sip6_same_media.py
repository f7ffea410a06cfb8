# Calls from one phone announcing the same media over IPv6 (see
# 319_ct_helper_sip6_same_media.nft): each INVITE on its own connection,
# each side sending to the address it sees.
from scapy.all import IPv6, UDP, Raw

C, S, PUB = '2001:db8:1::1', '2001:db8:2::1', '2001:db8:2::100'


def sdp(port, addr):
    return 'v=0\no=x 1 1 IN IP6 %s\ns=-\nc=IN IP6 %s\nt=0 0\nm=audio %d RTP/AVP 0\n' % (
        addr, addr, port)


def invite(dst, sport, port, call, addr=C):
    body = sdp(port, addr)
    text = ('INVITE sip:bob@[%s] SIP/2.0\nVia: SIP/2.0/UDP [%s]:%d\nFrom: <sip:alice@[%s]>\n'
            'To: <sip:bob@[%s]>\nCall-ID: %d@x\nCSeq: 1 INVITE\nContent-Length: %d\n\n%s') % (
        dst, C, sport, C, dst, call, len(body.replace('\n', '\r\n')), body)
    return ('dp0', IPv6(src=C, dst=dst) / UDP(sport=sport, dport=5060) /
            Raw(text.replace('\n', '\r\n').encode()))


PACKETS = [
    # two calls through dnat announcing [2001:db8:1::1]:49170: the second
    # finds the first's expectation (saved as its tuple) and passes as it
    # came
    invite(PUB, 5060, 49170, 1),
    invite(PUB, 5062, 49170, 2),
    # the server's media to the phone: related (the first call's)
    ('dp1', IPv6(src=S, dst=C) / UDP(sport=3456, dport=49170) / Raw(b'\x80' * 20)),
    # a call without NAT of 49172 (its expectation saved [::]:0), then two
    # through dnat of the same media: the first takes the direct RTP path
    # to the saved address and port (m=audio 0, c= and o= ::), the second
    # finds that and is written the same
    invite(S, 5064, 49172, 3),
    invite(PUB, 5066, 49172, 4),
    invite(PUB, 5068, 49172, 5),
    # the phone's address written long and in capitals: the same address
    # (in6_pton); through dnat the SDP's o= and c= are written back as
    # %pI6c writes it, Content-Length following; the next call, written
    # short, finds that media
    invite(PUB, 5070, 49174, 6, '2001:DB8:1:0:0:0:0:1'),
    invite(PUB, 5072, 49174, 7),
]
EXPECT = {'dp1': 7, 'dp0': 1}
