# SIP over UDP through snat (see 284_ct_helper_sip_nat.nft): each side
# sends to the address it sees of the other; no SDP bodies (nf_nat_sip's
# headers only).
from scapy.all import IP, UDP, Raw

C, C2, S, X, NAT, PUB = '10.1.0.1', '10.1.0.2', '10.2.0.1', '10.2.0.9', '100.64.0.1', '10.2.0.100'


def sip(side, text, src, dst, sport=5060, dport=5060):
    return (side, IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) /
            Raw(text.replace('\n', '\r\n').encode()))


def msg(first, via, frm, to, contact, cseq):
    return ('%s\nVia: SIP/2.0/UDP %s\nFrom: <sip:alice@%s>;tag=1\nTo: <sip:bob@%s>\n'
            '%sCall-ID: 1@x\nCSeq: %s\nContent-Length: 0\n\n') % (
        first, via, frm, to, 'Contact: <sip:%s>\n' % contact if contact else '', cseq)


PACKETS = [
    # the caller names its inside address (and no port in From)
    sip('dp0', msg('INVITE sip:bob@%s SIP/2.0' % S, '%s:5060;branch=z9hG4bK1;rport' % C,
                   C, S, 'alice@%s:5060' % C, '1 INVITE'), C, S),
    sip('dp1', msg('SIP/2.0 100 Trying',
                   '%s:6000;branch=z9hG4bK1;received=%s;rport=6000' % (NAT, NAT),
                   '%s:6000' % NAT, S, None, '1 INVITE'), S, NAT, dport=6000),
    sip('dp1', msg('SIP/2.0 200 OK',
                   '%s:6000;branch=z9hG4bK1;received=%s;rport=6000' % (NAT, NAT),
                   '%s:6000' % NAT, S, 'bob@%s' % S, '1 INVITE'), S, NAT, dport=6000),
    sip('dp0', msg('ACK sip:bob@%s:5060 SIP/2.0' % S, '%s:5060;branch=z9hG4bK2' % C,
                   C, S, None, '1 ACK'), C, S),
    # the callee's request to the caller's public address
    sip('dp1', msg('BYE sip:alice@%s:6000 SIP/2.0' % NAT, '%s:5060;branch=z9hG4bK3' % S,
                   S, '%s:6000' % NAT, None, '2 BYE'), S, NAT, dport=6000),
    sip('dp0', msg('SIP/2.0 200 OK', '%s:5060;branch=z9hG4bK3' % S, S, C, None, '2 BYE'),
        C, S),
    # a phone that sends from 5062 and listens at its Via's 5060: the
    # answer goes to 5060 (forced_dport); a Via of another address stays
    sip('dp0', msg('OPTIONS sip:%s SIP/2.0' % X, '%s:5060;branch=z9hG4bK4' % C,
                   C, X, None, '3 OPTIONS'), C, X, sport=5062),
    sip('dp1', msg('SIP/2.0 200 OK', '%s:6000;branch=z9hG4bK4' % NAT, C, X,
                   '%s:5070' % X, '3 OPTIONS'), X, NAT, dport=6000),
    # a server behind dnat, from another client (not snat'd)
    sip('dp0', msg('INVITE sip:bob@%s SIP/2.0' % PUB, '%s:5060;branch=z9hG4bK5' % C2,
                   C2, PUB, 'alice@%s' % C2, '5 INVITE'), C2, PUB),
    sip('dp1', msg('SIP/2.0 200 OK', '%s:5060;branch=z9hG4bK5' % C2, C2, '%s:5070' % S,
                   'bob@%s:5070' % S, '5 INVITE'), S, C2, sport=5070),
]
EXPECT = {'dp1': 5, 'dp0': 5}
