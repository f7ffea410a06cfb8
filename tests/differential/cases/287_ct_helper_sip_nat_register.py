# A phone C behind snat registers at S (see
# 287_ct_helper_sip_nat_register.nft); each side sends to the address it
# sees of the other.
from scapy.all import IP, UDP, Raw

C, S, X, NAT = '10.1.0.1', '10.2.0.1', '10.2.0.9', '100.64.0.1'


def sip(side, text, src, dst, sport=5060, dport=5060):
    return (side, IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) /
            Raw(text.replace('\n', '\r\n').encode()))


def msg(first, via, cseq, extra='', body=''):
    return ('%s\nVia: SIP/2.0/UDP %s\nFrom: <sip:alice@%s>\nTo: <sip:alice@%s>\n'
            'Call-ID: 7@x\nCSeq: %s\n%sContent-Length: %d\n\n%s') % (
        first, via, S, S, cseq, extra, len(body.replace('\n', '\r\n')), body)


PACKETS = [
    # the Contact names the phone's inside address and the port it sends
    # from: the calls are expected at the snat address and the port the
    # registrar sees, and the Contact says so
    sip('dp0', msg('REGISTER sip:%s SIP/2.0' % S, '%s:5070' % C, '7 REGISTER',
                   'Contact: <sip:alice@%s:5070>\nExpires: 3600\n' % C), C, S, 5070),
    sip('dp1', msg('SIP/2.0 200 OK', '%s:5070' % NAT, '7 REGISTER',
                   'Contact: <sip:alice@%s:5070>;expires=600\n' % NAT), S, NAT, 5060, 5070),
    # the registrar's call from another port: related, to the phone inside
    sip('dp1', msg('INVITE sip:alice@%s:5070 SIP/2.0' % NAT, '%s:5062' % S, '1 INVITE'),
        S, NAT, 5062, 5070),
    sip('dp0', msg('SIP/2.0 180 Ringing', '%s:5062' % S, '1 INVITE'), C, S, 5070, 5062),
    # straight to the inside address: nothing expects it
    sip('dp1', msg('INVITE sip:alice@%s:5070 SIP/2.0' % NAT, '%s:5063' % X, '1 INVITE'),
        X, C, 5063, 5070),
]
EXPECT = {'dp1': 2, 'dp0': 2}
