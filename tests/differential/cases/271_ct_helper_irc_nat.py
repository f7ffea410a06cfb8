# IRC DCC through snat (see 271_ct_helper_irc_nat.nft); the TCP flows are
# 245_ct_helper_ftp_nat_mangle.py's (each side sends to the address it
# sees and acks what reached it).
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    'ftp245', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           '245_ct_helper_ftp_nat_mangle.py'))
m = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(m)

C, S, NAT = '10.1.0.1', '10.2.0.1', '100.64.0.1'

ctl = m.Flow('dp0', C, NAT, S, S, 40100, 6667, 1000, 5000)
# the server, as a DCC peer, connects to the offered ports
dcc = m.Flow('dp1', S, S, C, NAT, 33000, 5000, 7000, 9000)
dcc2 = m.Flow('dp1', S, S, C, NAT, 33001, 5001, 7100, 9100)

PACKETS = ctl.handshake() + [
    ctl.say('s', ':irc 001 alice :hi\r\n'),
    ctl.say('c', 'PRIVMSG bob :\1DCC SEND f 167837697 5000 12\1\r\n', grow=1),
    ctl.pkt('s', 'A'),
    ctl.say('c', 'PRIVMSG bob :\1DCC SEND g 1681915905 5001 12\1\r\n'),
    ctl.say('s', ':bob PRIVMSG alice :ok\r\n'),
    ctl.pkt('c', 'A'),
] + dcc.handshake() + [
    dcc.say('c', 'data\n'),
    dcc.pkt('s', 'A'),
] + dcc2.handshake() + [
    ctl.say('c', 'QUIT\r\n'),
    ctl.pkt('s', 'A'),
]
EXPECT = {'dp1': 9, 'dp0': 10}
