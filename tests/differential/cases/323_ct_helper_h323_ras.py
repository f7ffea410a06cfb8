# H.323 RAS on UDP 1719 between an endpoint C (dp0) and its gatekeeper S
# (dp1): a RegistrationRequest whose callSignalAddress is C's own expects
# calls (Q.931, PERMANENT) from the gatekeeper to C:1720; the gatekeeper's
# RegistrationConfirm; an AdmissionConfirm naming another endpoint E
# behind S expects C's call to E:1720; a GatekeeperConfirm naming another
# RAS address expects C's RAS there; a LocationConfirm expects C's call to
# the endpoint it names.
#
# The RAS messages are built here in aligned PER (X.691): each function
# names the H.225.0 fields it writes, in order.
from scapy.all import IP, TCP, UDP, Raw

from h323_per import Per

C, S, X, E = '10.1.0.1', '10.2.0.1', '10.2.0.9', '10.2.0.5'
G2, E2 = '10.2.0.7', '10.2.0.6'  # another gatekeeper's RAS, another endpoint


PROTOCOL_ID = bytes([0x00, 0x08, 0x91, 0x4a, 0x00, 0x04])  # 0.0.8.2250.0.4


def transport_ipv4(w, addr, port):
    # TransportAddress CHOICE (ext) ipAddress { ip, port }
    w.bit(0)
    w.uint(0, 3)
    w.octets(bytes(int(x) for x in addr.split('.')))
    w.octets(port.to_bytes(2, 'big'))


def ttl_extension(w, ttl):
    # the extension bitmap of 3 (alternate..., timeToLive, tokens: the
    # last two present), then timeToLive INTEGER (1..4294967295) as an
    # open type (2 bits of length - 1, aligned, the value - 1) and tokens,
    # an empty SEQUENCE OF ClearToken (the kernel stops decoding there; it
    # wants bytes after timeToLive, which it steps over twice)
    w.uint(2, 7)
    w.uint(0b011, 3)
    inner = Per()
    inner.uint(0, 2)
    inner.octets([ttl - 1])
    b = inner.data()
    w.octets([len(b)] + list(b))
    w.octets([1, 0])


def rrq(seq, csa, ras, ttl):
    # RasMessage registrationRequest (3 of 24); RegistrationRequest (ext
    # present, nonStandardData, terminalAlias, gatekeeperIdentifier
    # absent): requestSeqNum, protocolIdentifier, discoveryComplete TRUE,
    # callSignalAddress (1), rasAddress (1), terminalType (EndpointType
    # with no optional field, mc, undefinedNode FALSE), endpointVendor
    # { vendor { t35CountryCode 181, t35Extension 0, manufacturerCode 1 } }
    w = Per()
    w.bit(0)
    w.uint(3, 5)
    w.bit(1)
    w.uint(0, 3)
    w.octets((seq - 1).to_bytes(2, 'big'))
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    w.bit(1)
    w.octets([1])
    transport_ipv4(w, *csa)
    w.octets([1])
    transport_ipv4(w, *ras)
    w.bit(0)
    w.uint(0, 6)
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.uint(0, 2)
    w.bit(0)
    w.octets([181, 0, 0, 1])
    ttl_extension(w, ttl)
    return w.data()


def rcf(seq, csa, ttl):
    # RasMessage registrationConfirm (4); RegistrationConfirm (ext present,
    # no optional field): requestSeqNum, protocolIdentifier,
    # callSignalAddress (1), endpointIdentifier "e1" (BMPString), then
    # timeToLive
    w = Per()
    w.bit(0)
    w.uint(4, 5)
    w.bit(1)
    w.uint(0, 3)
    w.octets((seq - 1).to_bytes(2, 'big'))
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    w.octets([1])
    transport_ipv4(w, *csa)
    w.uint(2 - 1, 7)
    w.octets(b'\x00e\x001')
    ttl_extension(w, ttl)
    return w.data()


def acf(seq, dest):
    # RasMessage admissionConfirm (10); AdmissionConfirm (no extension,
    # irrFrequency and nonStandardData absent): requestSeqNum, bandWidth
    # 640 (2 octets), callModel direct, destCallSignalAddress
    w = Per()
    w.bit(0)
    w.uint(10, 5)
    w.bit(0)
    w.uint(0, 2)
    w.octets((seq - 1).to_bytes(2, 'big'))
    w.uint(1, 2)
    w.octets((640).to_bytes(2, 'big'))
    w.bit(0)
    w.bit(0)
    transport_ipv4(w, *dest)
    return w.data()


def gcf(seq, rasaddr):
    # RasMessage gatekeeperConfirm (1); GatekeeperConfirm (no extension,
    # nonStandardData and gatekeeperIdentifier absent): requestSeqNum,
    # protocolIdentifier, rasAddress
    w = Per()
    w.bit(0)
    w.uint(1, 5)
    w.bit(0)
    w.uint(0, 2)
    w.octets((seq - 1).to_bytes(2, 'big'))
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    transport_ipv4(w, *rasaddr)
    return w.data()


def lcf(seq, csa, rasaddr):
    # RasMessage locationConfirm (19); LocationConfirm (no extension,
    # nonStandardData absent): requestSeqNum, callSignalAddress, rasAddress
    w = Per()
    w.bit(0)
    w.uint(19, 5)
    w.bit(0)
    w.bit(0)
    w.octets((seq - 1).to_bytes(2, 'big'))
    transport_ipv4(w, *csa)
    transport_ipv4(w, *rasaddr)
    return w.data()


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
