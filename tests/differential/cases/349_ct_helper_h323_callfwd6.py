# h323 call forwarding over IPv6, without NAT (case 346's over IPv6). C
# (2001:db8:1::1, dp0) calls S (2001:db8:20::1, behind the gateway
# 2001:db8:2::fe on dp1); on the Q.931 connection, each Facility's
# alternativeAddress an ip6Address:
# - S forwards the call to fd00:2::9 port 1721 (on dp1's link): the peer C
#   is on dp0, so the call C makes there is expected (related, Q.931);
# - C forwards it to 2001:db8:20::99 port 1722, behind S's gateway: the
#   routes to it and to the peer S leave by dp1 to 2001:db8:2::fe, so
#   callforward_filter tracks nothing and S's call there is new;
# - C forwards it to fd00:2::10 port 1723, on dp1's link: the same device
#   but another next hop (the address itself), so S's call there is
#   related.
# The kernel decides by its routes; nftdp by its copy of them
# (MIRROR_ROUTES).
from scapy.all import TCP, IPv6

from h323_per import Flow, forwarded

C, S = '2001:db8:1::1', '2001:db8:20::1'
ROUTES = ['-6 route add 2001:db8:20::/48 via 2001:db8:2::fe dev dp1']
NEIGHBOURS = ['2001:db8:2::fe']
MIRROR_ROUTES = True


def syn(side, src, dst, sport, dport):
    return (side, IPv6(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags='S', seq=100,
                                              window=8192))


q = Flow(C, S, 40000, 1720, 1000, 5000)

PACKETS = (
    q.handshake()
    + [q.pkt('dp1', 'PA', forwarded('fd00:2::9', 1721)),       # tracked: C on dp0
       q.pkt('dp0', 'PA', forwarded('2001:db8:20::99', 1722)),  # filtered: S's gateway
       q.pkt('dp0', 'PA', forwarded('fd00:2::10', 1723))]      # tracked: another hop
    + [syn('dp0', C, 'fd00:2::9', 30001, 1721),          # related: forwarded
       syn('dp1', S, '2001:db8:20::99', 30002, 1722),    # new: counted, dropped
       syn('dp1', S, 'fd00:2::10', 30003, 1723)]         # related: counted, dropped
)
EXPECT = {'dp1': 5, 'dp0': 2}
