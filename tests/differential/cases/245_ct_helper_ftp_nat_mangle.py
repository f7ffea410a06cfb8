import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tcpflow import Flow  # noqa: E402

C, C2, S, MASQ, PUB = '10.1.0.1', '10.1.0.2', '10.2.0.1', '10.2.255.254', '10.2.0.100'

# active, the client masqueraded: "10,1,0,1" becomes "10,2,255,254" (+4);
# the client's sequence numbers start just below 2^32 so they wrap
ctl = Flow('dp0', C, MASQ, S, S, 40100, 21, 0xffffffe0, 5000)
data = Flow('dp1', S, S, C, MASQ, 20, 40000, 11000, 13000)
# passive, the server behind dnat: "10,2,0,1" becomes "10,2,0,100" (+2)
ctl2 = Flow('dp0', C2, C2, S, PUB, 40200, 21, 2000, 6000)
data2 = Flow('dp0', C2, C2, S, PUB, 40001, 50000, 7000, 9000)

PACKETS = ctl.handshake() + ctl.login() + [
    ctl.say('c', 'PORT 10,1,0,1,156,64\r\n', grow=4),
    ctl.say('s', '200 PORT command successful\r\n'),
] + data.handshake() + [
    data.say('c', 'listing\n'),
    data.pkt('s', 'A'),
    ctl.say('c', 'LIST\r\n'),
]
# the server acks LIST and reports the PORT line again as a SACK block, in
# its own view of the client's stream: the block comes back by 4
port_end = (ctl.seq['c'] + ctl.off['c']) & 0xffffffff
PACKETS += [
    ctl.pkt('s', 'A', options=[('NOP', None), ('NOP', None),
                               ('SAck', ((port_end - 6 - 26) & 0xffffffff,
                                         (port_end - 6) & 0xffffffff))]),
    ctl.say('s', '226 done\r\n'),
    ctl.pkt('c', 'A'),
] + ctl2.handshake() + ctl2.login() + [
    ctl2.say('c', 'PASV\r\n'),
    ctl2.say('s', '227 Entering Passive Mode (10,2,0,1,195,80).\r\n', grow=2),
    ctl2.pkt('c', 'A'),
] + data2.handshake() + [
    data2.say('s', 'file contents\n'),
    data2.pkt('c', 'A'),
    ctl2.say('c', 'RETR f\r\n'),
    ctl2.say('s', '150 sending\r\n'),
    ctl2.pkt('c', 'A'),
]
EXPECT = {'dp1': 18, 'dp0': 16}
