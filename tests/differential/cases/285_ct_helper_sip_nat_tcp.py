# SIP over TCP through snat (see 285_ct_helper_sip_nat_tcp.nft); the TCP
# flow is tcpflow.Flow (each side sends to the address it sees and acks
# what reached it).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tcpflow import Flow  # noqa: E402

C, S, NAT = '10.1.0.1', '10.2.0.1', '100.64.0.1'

ctl = Flow('dp0', C, NAT, S, S, 40100, 5060, 1000, 5000)


def req(cseq, addr):
    return ('OPTIONS sip:bob@%s SIP/2.0\r\nVia: SIP/2.0/TCP %s:40100;branch=z9hG4bK%d\r\n'
            'From: <sip:alice@%s:40100>;tag=1\r\nTo: <sip:bob@%s>\r\n'
            'Contact: <sip:alice@%s:40100>\r\nCSeq: %d OPTIONS\r\nContent-Length: 0\r\n\r\n') % (
        S, addr, cseq, addr, S, addr, cseq)


def ok(cseq, addr):
    return ('SIP/2.0 200 OK\r\nVia: SIP/2.0/TCP %s:40100;branch=z9hG4bK%d;received=%s\r\n'
            'From: <sip:alice@%s:40100>;tag=1\r\nTo: <sip:bob@%s>;tag=2\r\n'
            'CSeq: %d OPTIONS\r\nContent-Length: 0\r\n\r\n') % (addr, cseq, addr, addr, S, cseq)


PACKETS = ctl.handshake() + [
    # two requests in one segment: "10.1.0.1" becomes "100.64.0.1" three
    # times in each (+12 in all, one sequence adjustment)
    ctl.say('c', req(1, C) + req(2, C), grow=12),
    # the answers name the snat address: three times -2 each
    ctl.say('s', ok(1, NAT), grow=-6),
    ctl.pkt('c', 'A'),
    ctl.say('s', ok(2, NAT), grow=-6),
    ctl.say('c', req(3, C), grow=6),
    ctl.pkt('s', 'A'),
    ctl.pkt('c', 'FA'),
    ctl.pkt('s', 'FA'),
    ctl.pkt('c', 'A'),
]
EXPECT = {'dp1': 7, 'dp0': 5}
