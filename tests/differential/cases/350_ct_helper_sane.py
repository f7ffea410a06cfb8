# The sane helper (nf_conntrack_sane) on a control connection from C
# (dp0) to saned on S:6566 (dp1), IPv4 and IPv6: SANE_NET_START (RPC code
# 7) answered by status 0, a zero word and port 40001 expects C's data
# connection to S:40001; another command's reply, a refused start
# (status 1) and a reply whose reserved word is not zero expect nothing.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tcpflow import Flow  # noqa: E402

START = bytes([0, 0, 0, 7, 0, 0, 0, 1])
OTHER = bytes([0, 0, 0, 4, 0, 0, 0, 1])


def reply(status, zero, port):
    return (status.to_bytes(4, 'big') + zero.to_bytes(2, 'big') + port.to_bytes(2, 'big') +
            b'\0\0\0\0' + b'user\0')


def session(c, s, base):
    ctl = Flow('dp0', c, c, s, s, base, 6566, 1000, 5000)
    ok = Flow('dp0', c, c, s, s, base + 1, 40001, 7000, 9000)
    other = Flow('dp0', c, c, s, s, base + 2, 40002, 7100, 9100)
    refused = Flow('dp0', c, c, s, s, base + 3, 40003, 7200, 9200)
    nonzero = Flow('dp0', c, c, s, s, base + 4, 40004, 7300, 9300)
    return ctl.handshake() + [
        ctl.say('c', OTHER),
        ctl.say('s', reply(0, 0, 40002)),   # not a start: nothing expected
    ] + [other.pkt('c', 'S')] + [
        ctl.say('c', START),
        ctl.say('s', reply(1, 0, 40003)),   # refused
    ] + [refused.pkt('c', 'S')] + [
        ctl.say('c', START),
        ctl.say('s', reply(0, 1, 40004)),   # the reserved word not zero
    ] + [nonzero.pkt('c', 'S')] + [
        ctl.say('c', START),
        ctl.say('s', reply(0, 0, 40001)),   # expects C -> S:40001
    ] + ok.handshake() + [ok.say('s', b'image data'), ok.pkt('c', 'A')]


PACKETS = session('10.1.0.1', '10.2.0.1', 41000) + session('2001:db8:1::1', '2001:db8:2::1', 42000)
EXPECT = {'dp1': 18, 'dp0': 14}
