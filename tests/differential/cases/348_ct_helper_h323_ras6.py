# H.323 RAS over IPv6 (UDP 1719) between an endpoint C (dp0) and its
# gatekeeper S (dp1), every TransportAddress an ip6Address: a
# RegistrationRequest whose callSignalAddress is C's own expects calls
# (Q.931, PERMANENT) from the gatekeeper to C:1720; one whose address is
# an IPv4 ipAddress expects nothing on IPv6 (get_h225_addr); the
# gatekeeper's RegistrationConfirm; an AdmissionConfirm naming another
# endpoint E behind S expects C's call to E:1720; a GatekeeperConfirm
# naming another RAS address expects C's RAS there; a LocationConfirm
# expects C's call to the endpoint it names; an UnregistrationRequest
# removes the expectations left.
#
# The RAS messages are built in aligned PER (X.691), as case 323's (h323_per.py).

from scapy.all import IPv6, TCP, UDP, Raw

from h323_per import acf, gcf, lcf, ras_message, rcf, rrq, transport

C, S, X, E = '2001:db8:1::1', '2001:db8:2::1', '2001:db8:2::9', '2001:db8:2::5'
G2, E2 = '2001:db8:2::7', '2001:db8:2::6'  # another gatekeeper's RAS, another endpoint


def urq(seq, csa):
    # RasMessage unregistrationRequest (6); UnregistrationRequest (no
    # extension, no optional field): requestSeqNum, callSignalAddress (1)
    w = ras_message(6, 0, 5, seq)
    w.octets([1])
    transport(w, *csa)
    return w.data()


def ras(side, payload):
    src, dst = (C, S) if side == 'dp0' else (S, C)
    sp, dp = (40000, 1719) if side == 'dp0' else (1719, 40000)
    return (side, IPv6(src=src, dst=dst) / UDP(sport=sp, dport=dp) / Raw(payload))


def dgram(side, src, dst, sport, dport):
    return (side, IPv6(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(b'\x00' * 8))


def syn(side, src, dst, sport, dport):
    return (side, IPv6(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags='S', seq=100,
                                               window=8192))


PACKETS = [
    ras('dp0', rrq(1, ('10.1.0.1', 1721), ('10.1.0.1', 40000), 120)),  # IPv4: nothing
    syn('dp1', S, C, 30007, 1721),        # not expected: dropped
    ras('dp0', rrq(2, (C, 1720), (C, 40000), 120)),
    ras('dp1', rcf(2, (S, 1720), 120)),
    syn('dp1', S, C, 30000, 1720),        # related: the RRQ's (from the gatekeeper)
    syn('dp1', S, C, 30001, 1720),        # again: the expectation is permanent
    syn('dp1', X, C, 30002, 1720),        # not from the gatekeeper: dropped
    ras('dp1', acf(3, (E, 1720))),
    syn('dp0', C, E, 30003, 1720),        # related: the ACF's
    syn('dp0', C, E, 30004, 1721),        # not announced: dropped
    ras('dp1', gcf(4, (G2, 1719))),       # another RAS address: expected (helper RAS)
    dgram('dp0', C, G2, 40005, 1719),     # related
    dgram('dp0', C, G2, 40006, 1718),     # not announced: dropped
    ras('dp1', lcf(5, (E2, 1720), (E2, 1719))),  # the call to E2 expected
    ras('dp0', urq(6, (C, 1720))),        # every expectation of the RAS connection gone
    syn('dp0', C, E2, 30005, 1720),       # not expected any more: dropped
    syn('dp1', S, C, 30008, 1720),        # the RRQ's neither: dropped
]
EXPECT = {'dp1': 5, 'dp0': 6}
