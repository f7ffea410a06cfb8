import os
import sys

from scapy.all import IP, UDP, Raw

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tcpflow import Flow  # noqa: E402

C, S, MASQ, PUB = '10.1.0.1', '10.2.0.1', '10.2.255.254', '10.2.0.100'
MASQ_NUM = (10 << 24) | (2 << 16) | (255 << 8) | 254  # as DCC writes it

# the IRC client masqueraded; the DCC peer (S) connects to the public address
irc = Flow('dp0', C, MASQ, S, S, 40000, 6667, 1000, 5000)
dcc = Flow('dp1', S, S, C, MASQ, 33000, 5000, 7000, 9000)
# amanda: the server (S) reaches the client behind dnat at PUB
amanda_tcp = Flow('dp1', S, S, C, PUB, 900, 4671, 11000, 13000)

PACKETS = irc.handshake() + [
    irc.say('s', b':srv 001 alice :welcome\r\n'),
    irc.say('c', b'PRIVMSG bob :\x01DCC SEND notes.txt %d 5000 1234\x01\r\n' % MASQ_NUM),
] + dcc.handshake() + [
    dcc.say('c', b'hello\n'),
    dcc.pkt('s', 'A'),
    ('dp1', IP(src=S, dst=PUB) / UDP(sport=850, dport=10080) / Raw(b'Amanda 2.4 REQ HANDLE x\n')),
    ('dp0', IP(src=C, dst=S) / UDP(sport=10080, dport=850)
     / Raw(b'Amanda 2.4 REP HANDLE x SEQ 1\nCONNECT DATA 4670 MESG 4671 INDEX 4672\n')),
] + amanda_tcp.handshake()
EXPECT = {'dp1': 7, 'dp0': 8}
