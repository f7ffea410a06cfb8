# H.323 RAS on UDP 1719 between an endpoint C (dp0) and its gatekeeper S
# (dp1): a RegistrationRequest whose callSignalAddress is C's own expects
# calls (Q.931, PERMANENT) from the gatekeeper to C:1720; the gatekeeper's
# RegistrationConfirm; an AdmissionConfirm naming another endpoint E
# behind S expects C's call to E:1720; a GatekeeperConfirm naming another
# RAS address expects C's RAS there; a LocationConfirm expects C's call to
# the endpoint it names.
#
# The RAS messages are built in aligned PER (X.691) by h323_per.py.
from scapy.all import IP, TCP, UDP, Raw

from h323_per import acf, gcf, lcf, rcf, rrq

C, S, X, E = '10.1.0.1', '10.2.0.1', '10.2.0.9', '10.2.0.5'
G2, E2 = '10.2.0.7', '10.2.0.6'  # another gatekeeper's RAS, another endpoint


def ras(side, payload):
    src, dst = (C, S) if side == 'dp0' else (S, C)
    sp, dp = (40000, 1719) if side == 'dp0' else (1719, 40000)
    return (side, IP(src=src, dst=dst) / UDP(sport=sp, dport=dp) / Raw(payload))


def dgram(side, src, dst, sport, dport):
    return (side, IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(b'\x00' * 8))


def syn(side, src, dst, sport, dport):
    return (side, IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags='S', seq=100,
                                             window=8192))


PACKETS = [
    ras('dp0', rrq(1, (C, 1720), (C, 40000), 120)),
    ras('dp1', rcf(1, (S, 1720), 120)),
    syn('dp1', S, C, 30000, 1720),        # related: the RRQ's (from the gatekeeper)
    syn('dp1', S, C, 30001, 1720),        # again: the expectation is permanent
    syn('dp1', X, C, 30002, 1720),        # not from the gatekeeper: dropped
    ras('dp1', acf(2, (E, 1720))),
    syn('dp0', C, E, 30003, 1720),        # related: the ACF's
    syn('dp0', C, E, 30004, 1721),        # not announced: dropped
    ras('dp1', gcf(3, (G2, 1719))),       # another RAS address: expected (helper RAS)
    dgram('dp0', C, G2, 40005, 1719),     # related
    dgram('dp0', C, G2, 40006, 1718),     # not announced: dropped
    ras('dp1', lcf(4, (E2, 1720), (E2, 1719))),  # the call to E2 expected
    syn('dp0', C, E2, 30005, 1720),       # related
    syn('dp0', C, E2, 30006, 1721),       # not announced: dropped
]
EXPECT = {'dp1': 4, 'dp0': 6}
