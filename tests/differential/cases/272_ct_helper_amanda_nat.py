# Amanda through dnat (see 272_ct_helper_amanda_nat.nft).
from scapy.all import IP, TCP, UDP, Raw

C, S, PUB = '10.1.0.1', '10.2.0.1', '10.1.0.100'
REQ = b'Amanda 2.4 REQ HANDLE 000-00000001 SEQ 1\nSERVICE sendbackup\n'
REP = b'Amanda 2.4 REP HANDLE 000-00000001 SEQ 1\nCONNECT DATA 9999 MESG 4671 INDEX 4672\n'


def req(sport):
    return ('dp1', IP(src=S, dst=PUB) / UDP(sport=sport, dport=10080) / Raw(REQ))


def rep(sport):
    return ('dp0', IP(src=C, dst=S) / UDP(sport=10080, dport=sport) / Raw(REP))


def syn(sport, dport):
    return ('dp1', IP(src=S, dst=PUB) / TCP(sport=sport, dport=dport, flags='S', seq=100))


def synack(sport, dport):
    return ('dp0', IP(src=C, dst=S) / TCP(sport=dport, dport=sport, flags='SA', seq=500, ack=101))


PACKETS = [
    req(850), rep(850),
    syn(900, 9999), synack(900, 9999),     # DATA
    syn(901, 4671), synack(901, 4671),     # MESG
    syn(902, 4672),                        # INDEX
    syn(903, 12345),                       # nothing expected: dropped
]
EXPECT = {'dp1': 3, 'dp0': 4}
