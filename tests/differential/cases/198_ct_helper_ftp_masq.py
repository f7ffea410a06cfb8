import os
import sys

from scapy.all import IP, UDP, Raw

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tcpflow import Flow  # noqa: E402

C, C2, S, MASQ, PUB = '10.1.0.1', '10.1.0.2', '10.2.0.1', '10.2.255.254', '10.2.0.100'

# passive, the client masqueraded
ctl = Flow('dp0', C, MASQ, S, S, 40000, 21, 1000, 5000)
data = Flow('dp0', C, MASQ, S, S, 40001, 50000, 7000, 9000)
# active, the server behind dnat: its data connection comes from port 20
ctl2 = Flow('dp0', C2, C2, S, PUB, 40200, 21, 2000, 6000)
data2 = Flow('dp1', S, PUB, C2, C2, 20, 156 * 256 + 65, 11000, 13000)

PACKETS = ctl.handshake() + ctl.login() + [
    ctl.say('c', 'PASV\r\n'),
    ctl.say('s', '227 Entering Passive Mode (10,2,0,1,195,80).\r\n'),
] + data.handshake() + [
    data.say('s', 'file contents\n'),
    data.pkt('c', 'A'),
] + ctl2.handshake() + ctl2.login() + [
    ctl2.say('c', 'PORT 10,1,0,2,156,65\r\n'),
] + data2.handshake() + [
    data2.say('c', 'listing\n'),
    data2.pkt('s', 'A'),
    # TFTP read through masquerade: the reply comes back from another port
    ('dp0', IP(src=C, dst=S) / UDP(sport=1069, dport=69) / Raw(b'\x00\x01f\x00octet\x00')),
    ('dp1', IP(src=S, dst=MASQ) / UDP(sport=3001, dport=1069) / Raw(b'\x00\x03\x00\x01data')),
    ('dp0', IP(src=C, dst=S) / UDP(sport=1069, dport=3001) / Raw(b'\x00\x04\x00\x01')),
]
EXPECT = {'dp1': 15, 'dp0': 13}
