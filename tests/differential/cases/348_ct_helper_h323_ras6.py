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
# The RAS messages are built here in aligned PER (X.691), as case 323's.
import ipaddress

from scapy.all import IPv6, TCP, UDP, Raw

from h323_per import Per

C, S, X, E = '2001:db8:1::1', '2001:db8:2::1', '2001:db8:2::9', '2001:db8:2::5'
G2, E2 = '2001:db8:2::7', '2001:db8:2::6'  # another gatekeeper's RAS, another endpoint


PROTOCOL_ID = bytes([0x00, 0x08, 0x91, 0x4a, 0x00, 0x04])  # 0.0.8.2250.0.4


def transport(w, addr, port):
    # TransportAddress CHOICE (ext): ip6Address (3 of 7) SEQUENCE (ext)
    # { ip OCTET STRING (SIZE(16)), port }, or an IPv4 ipAddress (0)
    w.bit(0)
    if ':' in addr:
        w.uint(3, 3)
        w.bit(0)
        w.octets(ipaddress.IPv6Address(addr).packed)
    else:
        w.uint(0, 3)
        w.octets(ipaddress.IPv4Address(addr).packed)
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
    transport(w, *csa)
    w.octets([1])
    transport(w, *ras)
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
    transport(w, *csa)
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
    transport(w, *dest)
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
    transport(w, *rasaddr)
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
    transport(w, *csa)
    transport(w, *rasaddr)
    return w.data()


def urq(seq, csa):
    # RasMessage unregistrationRequest (6); UnregistrationRequest (no
    # extension, no optional field): requestSeqNum, callSignalAddress (1)
    w = Per()
    w.bit(0)
    w.uint(6, 5)
    w.bit(0)
    w.uint(0, 5)
    w.octets((seq - 1).to_bytes(2, 'big'))
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
