# SYNs of our own fingerprints and others through osf rules (see
# 308_osf.nft). OSF: the fingerprints, written for this case (not pf.os),
# which the harness loads into the kernel (from the scratch netns, and
# removes after: its list is global) and into the running nftdp through
# the shim, with tests/differential/osf_load.py (OSF_MSG_ADD of struct
# nf_osf_user_finger, as nfnl_osf sends). First match in each
# don't-fragment list, in this order.
from scapy.all import IP, TCP, UDP, Raw

OSF = [
    {'genre': 'Tux', 'version': '6.x', 'ttl': 64, 'df': 1, 'ss': 60,
     'wss': ['mss', 10], 'opts': 'MSTNW'},
    {'genre': 'Tux', 'version': '2.4', 'ttl': 64, 'df': 1, 'ss': 60,
     'wss': ['mtu', 4], 'opts': 'MSTNW'},
    {'genre': 'Winnt', 'version': '10', 'ttl': 128, 'df': 1, 'ss': 52,
     'wss': ['plain', 64240], 'opts': 'MNWNNS'},
    {'genre': 'Bsd', 'version': '14', 'subtype': 'generic', 'ttl': 64, 'df': 0, 'ss': 60,
     'wss': ['modulo', 512], 'opts': 'MNWST'},
    {'genre': 'Any', 'version': '1', 'ttl': 255, 'df': 1, 'ss': 44,
     'wss': ['plain', 0], 'opts': 'M'},
]
PACED_ONLY = 'the fingerprints reach nftdp through the shim while it runs live'

TUX = [('MSS', 1460), ('SAckOK', b''), ('Timestamp', (1, 0)), ('NOP', None), ('WScale', 7)]
WIN = [('MSS', 1460), ('NOP', None), ('WScale', 8), ('NOP', None), ('NOP', None),
       ('SAckOK', b'')]
BSD = [('MSS', 1460), ('NOP', None), ('WScale', 6), ('SAckOK', b''), ('Timestamp', (1, 0))]
_port = [40000]


def syn(ttl, window, opts, df=True, flags='S'):
    _port[0] += 1
    return ('dp0', IP(src='10.1.0.1', dst='10.2.0.1', ttl=ttl, flags='DF' if df else 0, id=1) /
            TCP(sport=_port[0], dport=80, flags=flags, seq=1000, window=window, options=opts))


PACKETS = [
    syn(64, 14600, TUX),                                    # Tux:6.x (10 x 1460)
    syn(64, 14000, [('MSS', 1400)] + TUX[1:]),              # Tux:6.x (10 x its MSS)
    syn(64, 6000, TUX),                                     # Tux:2.4 (4 x (1460 + 40))
    syn(63, 14600, TUX),                                    # ttl 63: loose and skip only
    syn(70, 14600, TUX),                                    # ttl 70: skip only
    syn(128, 64240, WIN),                                   # Winnt:10
    syn(128, 65535, WIN),                                   # another window: unknown
    syn(64, 65024, BSD, df=False),                          # Bsd:14 (512 x 127)
    syn(64, 65000, BSD, df=False),                          # not a multiple: unknown
    syn(64, 14600, TUX, df=False),                          # Tux without DF: unknown
    syn(64, 14600, TUX[:3] + [TUX[4], TUX[3]]),             # options out of order
    syn(255, 1234, [('MSS', 1460)]),                        # Any:1 (any window)
    syn(254, 1234, [('MSS', 1460)]),                        # ttl 254: loose
    syn(64, 14600, TUX, flags='SA'),                        # a SYN-ACK is a SYN
    syn(64, 14600, TUX, flags='A'),                         # no SYN: no osf rule
    ('dp0', IP(src='10.1.0.1', dst='10.2.0.1', flags='DF') / UDP(sport=1, dport=2) /
     Raw(b'x' * 20)),                                       # not TCP
]
EXPECT = {'dp1': 16, 'dp0': 0}
