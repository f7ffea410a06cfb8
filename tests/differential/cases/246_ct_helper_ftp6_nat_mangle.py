import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tcpflow import Flow  # noqa: E402

C, C2, S, MASQ, PUB = '2001:db8:1::1', '2001:db8:1::2', '2001:db8:2::1', '2001:db8:2::ffff', \
    '2001:db8:2::100'

# active, the client masqueraded: "2001:db8:1::1" (13) becomes
# "2001:0db8:0002:0000:0000:0000:0000:ffff" (39)
ctl = Flow('dp0', C, MASQ, S, S, 40100, 21, 1000, 5000)
data = Flow('dp1', S, S, C, MASQ, 20, 40000, 11000, 13000)
# passive, the server behind dnat: 229 names only the port
ctl2 = Flow('dp0', C2, C2, S, PUB, 40200, 21, 2000, 6000)
data2 = Flow('dp0', C2, C2, S, PUB, 40001, 50000, 7000, 9000)

PACKETS = ctl.handshake() + ctl.login() + [
    ctl.say('c', 'EPRT |2|2001:db8:1::1|40000|\r\n', grow=26),
    ctl.say('s', '200 EPRT command successful\r\n'),
] + data.handshake() + [
    data.say('c', 'listing\n'),
    data.pkt('s', 'A'),
    ctl.say('c', 'LIST\r\n'),
    ctl.say('s', '226 done\r\n'),
    ctl.pkt('c', 'A'),
] + ctl2.handshake() + ctl2.login() + [
    ctl2.say('c', 'EPSV\r\n'),
    ctl2.say('s', '229 Entering Extended Passive Mode (|||50000|)\r\n'),
    ctl2.pkt('c', 'A'),
] + data2.handshake() + [
    data2.say('s', 'file contents\n'),
    data2.pkt('c', 'A'),
    ctl2.say('c', 'RETR f\r\n'),
    ctl2.say('s', '150 sending\r\n'),
    ctl2.pkt('c', 'A'),
]
EXPECT = {'dp1': 18, 'dp0': 15}
NEIGHBOURS = ['2001:db8:2::100']
