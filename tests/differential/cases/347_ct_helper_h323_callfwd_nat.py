# h323 call forwarding through source NAT. C (10.1.0.1:41000, dp0) calls S
# (10.2.0.1, dp1) through `snat to 100.64.0.1`; on the Q.931 connection C
# sends two Facility messages forwarding the call:
# - to 10.1.0.7:1721 (dp0's side; the peer S is on dp1): expected from S
#   at 100.64.0.1:1721, the alternativeAddress rewritten to it; S's call
#   there is related, gets helper Q.931 and goes to 10.1.0.7:1721 from S;
# - to 10.2.0.1:1722, S's own address: callforward_filter's routes are the
#   same, nothing is expected or rewritten; S's call to 100.64.0.1:1722
#   is new, counted and dropped at prerouting.
# The kernel decides by its routes, nftdp by its copy (MIRROR_ROUTES).
from scapy.all import IP, TCP

from h323_per import Flow, forwarded

C, S, NAT = '10.1.0.1', '10.2.0.1', '100.64.0.1'
MIRROR_ROUTES = True
NEIGHBOURS = ['10.1.0.7']  # only in the Facility's payload


def to_nat(pkts):
    # S's packets of the NATed connection go to the NAT address
    out = []
    for side, p in pkts:
        if side == 'dp1':
            p = p.copy()
            p[IP].dst = NAT
            del p[IP].chksum
            del p[TCP].chksum
        out.append((side, p))
    return out


def syn(dport, sport):
    return ('dp1', IP(src=S, dst=NAT) / TCP(sport=sport, dport=dport, flags='S', seq=100,
                                           window=8192))


q = Flow(C, S, 41000, 1720, 1000, 5000)

PACKETS = (
    to_nat(q.handshake())
    + [q.pkt('dp0', 'PA', forwarded('10.1.0.7', 1721)),  # rewritten: NAT:1721
       q.pkt('dp0', 'PA', forwarded(S, 1722))]           # filtered: as it is
    + [syn(1721, 30001),   # related: to 10.1.0.7:1721
       syn(1722, 30002)]   # not expected: dropped at prerouting
)
EXPECT = {'dp1': 4, 'dp0': 2}
