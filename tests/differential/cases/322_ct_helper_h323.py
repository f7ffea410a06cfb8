# An H.323 call from C (dp0) to S (dp1): Q.931 on TCP 1720 (Setup from C,
# Connect from S, each with an h245Address, then a Progress from S with
# H.235 tokens and another h245Address), the H.245 connection S announced
# (helper H.245 from the expectation), OpenLogicalChannels from C on it
# announcing audio RTP/RTCP at C:5000/5001 and H.263 video at
# C:5010/5011, then media.
#
# The PDUs are built here in aligned PER (X.691) with h323_per.py's writer: each
# function names the H.225.0 / H.245 fields it writes, in order.
from scapy.all import IP, UDP, Raw

from h323_per import Flow, Per, endpoint_type, ip4, q931, tpkt, uuie

C, S = '10.1.0.1', '10.2.0.1'


def h225_transport_ipv4(w, addr, port):
    # TransportAddress ::= CHOICE (extensible) { ipAddress SEQUENCE { ip
    # OCTET STRING (SIZE(4)), port INTEGER(0..65535) }, ... }: index 0 of 7
    w.bit(0)
    w.uint(0, 3)
    w.octets(ip4(addr))
    w.octets(port.to_bytes(2, 'big'))


PROTOCOL_ID = bytes([0x00, 0x08, 0x91, 0x4a, 0x00, 0x04])  # 0.0.8.2250.0.4


def setup_body(w):
    # Setup-UUIE (ext): optional bits h245Address=1, sourceAddress,
    # destinationAddress, destCallSignalAddress, destExtraCallInfo,
    # destExtraCRV, callServices = 0; protocolIdentifier, h245Address,
    # sourceInfo, activeMC FALSE, conferenceID, conferenceGoal create,
    # callType pointToPoint
    w.bit(0)
    w.uint(0b1000000, 7)
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    h225_transport_ipv4(w, C, 1800)
    endpoint_type(w)
    w.bit(0)
    w.octets(bytes(range(16)))
    w.bit(0)
    w.uint(0, 2)
    w.bit(0)
    w.uint(0, 2)


def connect_body(w):
    # Connect-UUIE (ext): h245Address present; protocolIdentifier,
    # h245Address, destinationInfo, conferenceID
    w.bit(0)
    w.bit(1)
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    h225_transport_ipv4(w, S, 1801)
    endpoint_type(w)
    w.octets(bytes(range(16)))


def h245_unicast_ipv4(w, addr, port):
    # H.245 TransportAddress CHOICE (ext) unicastAddress, UnicastAddress
    # CHOICE (ext) iPAddress SEQUENCE (ext) { network, tsapIdentifier }
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.uint(0, 3)
    w.bit(0)
    w.octets(ip4(addr))
    w.octets(port.to_bytes(2, 'big'))


def h2250_params(addr, port):
    # H2250LogicalChannelParameters (ext): 10 optional bits, mediaChannel
    # and mediaControlChannel present; sessionID 1, mediaChannel (RTP),
    # mediaControlChannel (RTCP)
    w = Per()
    w.bit(0)
    w.uint(0b0010100000, 10)
    w.octets([1])
    h245_unicast_ipv4(w, addr, port)
    h245_unicast_ipv4(w, addr, port + 1)
    return w.data()


def progress_body(w):
    # Progress-UUIE, an extension alternative of h323-message-body (7) in
    # an open type: (ext) optional bits h245Address, h245SecurityMode,
    # tokens, cryptoTokens, fastStart = 1, 0, 1, 1, 0; protocolIdentifier,
    # destinationInfo, h245Address, callIdentifier { guid }, tokens (one
    # ClearToken (ext): timeStamp and generalID present: tokenOID,
    # timeStamp (4 octets), generalID "gk"), cryptoTokens (one
    # cryptoEPPwdHash: alias h323-ID "c", timeStamp, token { algorithmOID,
    # paramS (ext) without options, hash (96 bits) })
    p = Per()
    p.bit(0)
    p.uint(0b10110, 5)
    p.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    endpoint_type(p)
    h225_transport_ipv4(p, S, 1802)
    p.bit(0)
    p.octets(bytes(range(16)))
    p.octets([1])
    p.bit(0)
    p.uint(0b10000010, 8)
    p.octets([3, 0x2a, 0x03, 0x04])
    p.uint(3, 2)
    p.octets((1000).to_bytes(4, 'big'))
    p.uint(2 - 1, 7)
    p.octets(b'\x00g\x00k')
    p.octets([1])
    p.bit(0)
    p.uint(0, 3)
    p.bit(0)
    p.bit(1)
    p.octets([0, 0, ord('c')])
    p.uint(3, 2)
    p.octets((1000).to_bytes(4, 'big'))
    p.octets([3, 0x2a, 0x03, 0x05])
    p.bit(0)
    p.uint(0, 2)
    p.octets([96] + [0x55] * 12)
    b = p.data()
    w.octets([len(b)] + list(b))


def uuie_ext(body_index, body):
    # as uuie(), the message body an extension alternative (open type)
    w = Per()
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.bit(1)
    w.uint(body_index - 7, 7)
    body(w)
    return w.data()


def open_logical_channel_h263(addr, port):
    # as open_logical_channel(), number 2, dataType videoData (2):
    # VideoCapability (ext) h263VideoCapability (3) (ext; of the 7
    # optional bits only qcifMPI): qcifMPI 1, maxBitRate 3840 (2 octets),
    # unrestrictedVector, arithmeticCoding, advancedPrediction, pbFrames,
    # temporalSpatialTradeOffCapability FALSE
    w = Per()
    w.bit(0)
    w.uint(0, 2)
    w.bit(0)
    w.uint(3, 4)
    w.bit(0)
    w.bit(0)
    w.octets((1).to_bytes(2, 'big'))
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.uint(2, 3)
    w.bit(0)
    w.uint(3, 3)
    w.bit(0)
    w.uint(0b0100000, 7)
    w.uint(0, 5)
    w.uint(1, 2)
    w.octets((3840).to_bytes(2, 'big'))
    w.uint(0, 5)
    w.bit(1)
    w.uint(0, 7)
    inner = h2250_params(addr, port)
    w.octets([len(inner)] + list(inner))
    return w.data()


def open_logical_channel(addr, port):
    # MultimediaSystemControlMessage request (index 0 of 4), RequestMessage
    # openLogicalChannel (index 3 of 11), OpenLogicalChannel (ext, no
    # reverse parameters) { forwardLogicalChannelNumber 1,
    # forwardLogicalChannelParameters (ext, no portNumber) { dataType
    # audioData (3) g711Ulaw64k (3) 20, multiplexParameters: the extension
    # alternative h2250LogicalChannelParameters (3), an open type } }
    w = Per()
    w.bit(0)
    w.uint(0, 2)
    w.bit(0)
    w.uint(3, 4)
    w.bit(0)
    w.bit(0)
    w.octets((0).to_bytes(2, 'big'))
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.uint(3, 3)
    w.bit(0)
    w.uint(3, 4)
    w.octets([19])
    w.bit(1)
    w.uint(0, 7)
    inner = h2250_params(addr, port)
    w.octets([len(inner)] + list(inner))
    return w.data()


def media(side, sport, dport):
    a, b = (C, S) if side == 'dp0' else (S, C)
    return (side, IP(src=a, dst=b) / UDP(sport=sport, dport=dport) / Raw(b'\x80' * 20))


q = Flow(C, S, 40000, 1720, 1000, 5000)
h245 = Flow(C, S, 40001, 1801, 7000, 9000)   # to the address S announced
h245x = Flow(C, S, 40002, 1802, 7000, 9000)  # a port nobody announced

PACKETS = (
    q.handshake()
    + [q.pkt('dp0', 'PA', tpkt(q931(0x05, uuie(0, setup_body)))),    # Setup
       q.pkt('dp1', 'PA', tpkt(q931(0x07, uuie(2, connect_body)))),  # Connect
       q.pkt('dp1', 'PA', tpkt(q931(0x03, uuie_ext(7, progress_body))))]  # Progress
    + h245.handshake()                    # related: announced by the Connect
    + [h245.pkt('dp0', 'PA', tpkt(open_logical_channel(C, 5000))),
       h245.pkt('dp0', 'PA', tpkt(open_logical_channel_h263(C, 5010))),
       h245.pkt('dp1', 'A')]
    + Flow(C, S, 40003, 1802, 7000, 9000).handshake()[:1]  # related: the Progress
    + h245x.handshake()[:1]               # not announced: dropped
    + [media('dp1', 6000, 5000),          # RTP to C: related (the OLC)
       media('dp1', 6001, 5001),          # RTCP: related
       media('dp1', 6010, 5010),          # the video's RTP: related
       media('dp1', 6002, 5002)]          # not announced: dropped
)
EXPECT = {'dp1': 8, 'dp0': 8}
