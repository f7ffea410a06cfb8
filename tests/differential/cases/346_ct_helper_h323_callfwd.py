# h323 call forwarding without NAT. C (10.1.0.1, dp0) calls S (172.20.0.1,
# behind the gateway 10.2.0.254 on dp1); on the Q.931 connection:
# - S forwards the call to 172.16.0.9:1721 (on dp1's link): the peer C is
#   on dp0, so the call C makes there is expected (related, helper Q.931);
# - C forwards it to 172.20.9.9:1722, behind S's gateway: the routes to it
#   and to the peer S leave by dp1 to 10.2.0.254, so callforward_filter
#   tracks nothing and S's call there is new;
# - C forwards it to 172.16.0.10:1723, on dp1's link: the same device but
#   another next hop (the address itself), so S's call there is related.
# The kernel decides by its routes; nftdp by its copy of them
# (MIRROR_ROUTES). The PDUs: h323_per.py's aligned PER writer.
from scapy.all import IP, TCP

from h323_per import Flow, forwarded

C, S = '10.1.0.1', '172.20.0.1'
ROUTES = ['route add 172.20.0.0/16 via 10.2.0.254 dev dp1']
NEIGHBOURS = ['10.2.0.254']
MIRROR_ROUTES = True


def syn(side, src, dst, sport, dport):
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags='S', seq=100,
                                            window=8192))


q = Flow(C, S, 40000, 1720, 1000, 5000)

PACKETS = (
    q.handshake()
    + [q.pkt('dp1', 'PA', forwarded('172.16.0.9', 1721)),   # tracked: C on dp0
       q.pkt('dp0', 'PA', forwarded('172.20.9.9', 1722)),   # filtered: S's gateway
       q.pkt('dp0', 'PA', forwarded('172.16.0.10', 1723))]  # tracked: another hop
    + [syn('dp0', C, '172.16.0.9', 30001, 1721),      # related: forwarded
       syn('dp1', S, '172.20.9.9', 30002, 1722),      # new: counted, dropped
       syn('dp1', S, '172.16.0.10', 30003, 1723)]     # related: counted, dropped
)
EXPECT = {'dp1': 5, 'dp0': 2}
