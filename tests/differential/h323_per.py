# SPDX-License-Identifier: BSD-3-Clause
"""The H.323 differential cases' (322-325, 346-348) common encoders: an
aligned PER (X.691) bit writer, the Q.931 message with its H.225.0
user-user part, the TPKT header (RFC 1006) that frames both on TCP, a
Facility forwarding the call, a TCP flow, and the RAS messages of cases
323 and 348 with their TransportAddress (IPv4 or IPv6)."""

import ipaddress

from scapy.all import IP, IPv6, TCP, Raw


class Per:
    """Aligned PER bit writer."""

    def __init__(self):
        self.bits = []

    def bit(self, v):
        self.bits.append(1 if v else 0)

    def uint(self, v, n):
        for i in range(n - 1, -1, -1):
            self.bit((v >> i) & 1)

    def align(self):
        while len(self.bits) % 8:
            self.bits.append(0)

    def octets(self, b):
        self.align()
        for x in b:
            self.uint(x, 8)

    def data(self):
        self.align()
        return bytes(int(''.join(map(str, self.bits[i:i + 8])), 2)
                     for i in range(0, len(self.bits), 8))


def ip4(a):
    return bytes(int(x) for x in a.split('.'))


def endpoint_type(w):
    # EndpointType (extensible): no optional field of the 6, mc FALSE,
    # undefinedNode FALSE
    w.bit(0)
    w.uint(0, 6)
    w.bit(0)
    w.bit(0)


def uuie(body_index, body):
    # H323-UserInformation (ext, user-data absent) { h323-uu-pdu (ext,
    # nonStandardData absent) { h323-message-body CHOICE index } }
    w = Per()
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.bit(0)                 # h323-message-body: not an extension
    w.uint(body_index, 3)
    body(w)
    return w.data()


def q931(msgtype, user_user):
    # protocol discriminator 8, call reference (2 bytes), message type,
    # bearer capability IE, user-user IE (protocol discriminator 5)
    ie = bytes([0x7e]) + (len(user_user) + 1).to_bytes(2, 'big') + b'\x05' + user_user
    return bytes([0x08, 0x02, 0x00, 0x01, msgtype, 0x04, 0x03, 0x88, 0x93, 0xa5]) + ie


def tpkt(payload):
    return bytes([3, 0]) + (len(payload) + 4).to_bytes(2, 'big') + payload


PROTOCOL_ID = bytes([0x00, 0x08, 0x91, 0x4a, 0x00, 0x04])  # 0.0.8.2250.0.4


def forwarded(addr, port):
    """A TPKT of a Q.931 Facility forwarding the call to addr:port.
    Facility-UUIE (ext absent): optional bits alternativeAddress=1,
    alternativeAliasAddress, conferenceID = 0; protocolIdentifier,
    alternativeAddress (TransportAddress ipAddress, index 0 of 7; an IPv6
    address: ip6Address, 3, an extensible SEQUENCE), reason callForwarded
    (FacilityReason, index 1 of 4)."""
    def body(w):
        w.bit(0)
        w.uint(0b100, 3)
        w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
        w.bit(0)
        if ':' in addr:
            w.uint(3, 3)
            w.bit(0)
            w.octets(ipaddress.IPv6Address(addr).packed)
        else:
            w.uint(0, 3)
            w.octets(ip4(addr))
        w.octets(port.to_bytes(2, 'big'))
        w.bit(0)
        w.uint(1, 2)
    return tpkt(q931(0x62, uuie(6, body)))


class Flow:
    """A TCP connection whose sequence numbers follow what was sent; IPv6
    where the addresses are."""

    def __init__(self, c, s, cport, sport, cseq, sseq):
        self.c, self.s, self.cport, self.sport = c, s, cport, sport
        self.seq = {'dp0': cseq, 'dp1': sseq}

    def pkt(self, side, flags, data=b''):
        other = 'dp1' if side == 'dp0' else 'dp0'
        src, dst = (self.c, self.s) if side == 'dp0' else (self.s, self.c)
        sp, dp = (self.cport, self.sport) if side == 'dp0' else (self.sport, self.cport)
        ack = self.seq[other] if 'A' in flags else 0
        ip = IPv6 if ':' in src else IP
        p = ip(src=src, dst=dst) / TCP(sport=sp, dport=dp, flags=flags,
                                     seq=self.seq[side], ack=ack, window=8192)
        if data:
            p = p / Raw(data)
        self.seq[side] += len(data) + (1 if 'S' in flags else 0)
        return (side, p)

    def handshake(self):
        return [self.pkt('dp0', 'S'), self.pkt('dp1', 'SA'), self.pkt('dp0', 'A')]



# H.225.0 RAS (cases 323, 348): each function names the fields it writes, in order

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


def ras_message(choice, ext, n_opt, seq):
    """A Per writer at RasMessage's CHOICE index choice (the root's, its
    extension bit clear), then the chosen SEQUENCE's extension bit ext and
    n_opt absent optional fields, then requestSeqNum seq (encoded as
    seq - 1 above the constraint's lower bound 1)."""
    w = Per()
    w.bit(0)
    w.uint(choice, 5)
    w.bit(ext)
    w.uint(0, n_opt)
    w.octets((seq - 1).to_bytes(2, 'big'))
    return w


def rrq(seq, csa, ras, ttl):
    # RasMessage registrationRequest (3 of 24); RegistrationRequest (ext
    # present, nonStandardData, terminalAlias, gatekeeperIdentifier
    # absent): requestSeqNum, protocolIdentifier, discoveryComplete TRUE,
    # callSignalAddress (1), rasAddress (1), terminalType (EndpointType
    # with no optional field, mc, undefinedNode FALSE), endpointVendor
    # { vendor { t35CountryCode 181, t35Extension 0, manufacturerCode 1 } }
    w = ras_message(3, 1, 3, seq)
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
    w = ras_message(4, 1, 3, seq)
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
    w = ras_message(10, 0, 2, seq)
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
    w = ras_message(1, 0, 2, seq)
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    transport(w, *rasaddr)
    return w.data()


def lcf(seq, csa, rasaddr):
    # RasMessage locationConfirm (19); LocationConfirm (no extension,
    # nonStandardData absent): requestSeqNum, callSignalAddress, rasAddress
    w = ras_message(19, 0, 1, seq)
    transport(w, *csa)
    transport(w, *rasaddr)
    return w.data()
