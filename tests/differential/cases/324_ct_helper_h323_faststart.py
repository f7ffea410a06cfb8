# An H.323 call over IPv6 without a separate H.245 connection: C's Setup
# carries fastStart (two OpenLogicalChannel proposals: audio whose media
# control channel and reverse media channel are C's, and T.120 data on a
# separate LAN stack at C:1503), S's Connect tunnels H.245 (h245Control)
# with an OpenLogicalChannelAck whose H.225.0 media and media control
# channels, and its reverse parameters' media channel, are S's. The expected RTP/RTCP both ways and T.120 (permanent)
# are related; ports nobody announced are dropped.
#
# The PDUs are built here in aligned PER (X.691): each function names the
# H.225.0 / H.245 fields it writes, in order.
import ipaddress

from scapy.all import IPv6, TCP, UDP, Raw

from h323_per import Flow, Per, q931, tpkt

C, S = '2001:db8:1::1', '2001:db8:2::1'


def ip6(a):
    return ipaddress.IPv6Address(a).packed


def open_type(w, inner):
    b = inner.data()
    w.octets([len(b)] + list(b))


def unicast_ip6(w, addr, port):
    # H.245 TransportAddress (ext) unicastAddress, UnicastAddress (ext)
    # iP6Address (2 of 5) SEQUENCE (ext) { network, tsapIdentifier }
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.uint(2, 3)
    w.bit(0)
    w.octets(ip6(addr))
    w.octets(port.to_bytes(2, 'big'))


def h2250(media=None, control=None):
    # H2250LogicalChannelParameters (ext), 10 optional bits: mediaChannel
    # (3rd) and mediaControlChannel (5th) as given; sessionID 1
    w = Per()
    w.bit(0)
    w.uint((0b0010000000 if media else 0) | (0b0000100000 if control else 0), 10)
    w.octets([1])
    if media:
        unicast_ip6(w, *media)
    if control:
        unicast_ip6(w, *control)
    return w


def audio_g711(w):
    # DataType (ext) audioData (3), AudioCapability (ext) g711Ulaw64k (3) 20
    w.bit(0)
    w.uint(3, 3)
    w.bit(0)
    w.uint(3, 4)
    w.octets([19])


def olc_audio(control, reverse_media):
    # OpenLogicalChannel (ext, reverseLogicalChannelParameters present):
    # forwardLogicalChannelNumber 1; forward (ext, no portNumber) { audio,
    # multiplexParameters: extension alternative h2250 (3) with the media
    # control channel }; reverse (ext, multiplexParameters present) {
    # audio, multiplexParameters: extension alternative h2250 (2 of the
    # reverse list) with the media channel }
    w = Per()
    w.bit(0)
    w.bit(1)
    w.octets((0).to_bytes(2, 'big'))
    w.bit(0)
    w.bit(0)
    audio_g711(w)
    w.bit(1)
    w.uint(0, 7)
    open_type(w, h2250(control=control))
    w.bit(0)
    w.bit(1)
    audio_g711(w)
    w.bit(1)
    w.uint(0, 7)
    open_type(w, h2250(media=reverse_media))
    return w


def olc_t120(lan):
    # OpenLogicalChannel (ext: separateStack present), number 2; forward
    # { dataType data (4): DataApplicationCapability (ext) { application
    # (ext) t120 (1): DataProtocolCapability extension alternative
    # separateLANStack (10; 7 root alternatives), an empty open type;
    # maxBitRate 64 },
    # multiplexParameters h2250 without addresses }; separateStack:
    # NetworkAccessParameters (ext, no distribution, no externalReference)
    # { networkAddress (ext) localAreaAddress (2), associateConference
    # FALSE }
    w = Per()
    w.bit(1)
    w.bit(0)
    w.octets((1).to_bytes(2, 'big'))
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.uint(4, 3)
    w.bit(0)
    w.bit(0)
    w.uint(1, 4)
    w.bit(1)
    w.uint(10 - 7, 7)
    w.octets([1, 0])
    w.uint(0, 2)
    w.octets([64])
    w.bit(1)
    w.uint(0, 7)
    open_type(w, h2250())
    w.uint(0, 7)
    w.bit(1)
    nap = Per()
    nap.bit(0)
    nap.uint(0, 2)
    nap.bit(0)
    nap.uint(2, 2)
    unicast_ip6(nap, *lan)
    nap.bit(0)
    open_type(w, nap)
    return w


PROTOCOL_ID = bytes([0x00, 0x08, 0x91, 0x4a, 0x00, 0x04])  # 0.0.8.2250.0.4


def setup_faststart(olcs):
    # H323-UserInformation { h323-uu-pdu { setup (0): Setup-UUIE (ext,
    # optional fields absent): protocolIdentifier, sourceInfo (EndpointType
    # without options), activeMC FALSE, conferenceID, conferenceGoal
    # create, callType pointToPoint; extensions: 7 bits, fastStart (the
    # 7th, index 19) present: SEQUENCE OF open OpenLogicalChannel } }
    w = Per()
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.uint(0, 3)
    w.bit(1)
    w.uint(0, 7)
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    w.bit(0)
    w.uint(0, 6)
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.octets(bytes(range(16)))
    w.bit(0)
    w.uint(0, 2)
    w.bit(0)
    w.uint(0, 2)
    w.uint(7 - 1, 7)
    w.uint(0b0000001, 7)
    fs = Per()
    fs.octets([len(olcs)])
    for o in olcs:
        open_type(fs, o)
    open_type(w, fs)
    return w.data()


def olc_ack(media, control, reverse_media):
    # MultimediaSystemControlMessage response (1), ResponseMessage
    # openLogicalChannelAck (5): OpenLogicalChannelAck (ext, reverse
    # parameters present) { forwardLogicalChannelNumber 1;
    # reverseLogicalChannelParameters (ext; portNumber absent,
    # multiplexParameters present) { reverseLogicalChannelNumber 2,
    # multiplexParameters: the extension alternative h2250 (1) with a
    # media channel }; extensions: forwardMultiplexAckParameters (index 3:
    # 2 bits, the 2nd) present: h2250LogicalChannelAckParameters (ext)
    # with sessionID 1, mediaChannel and mediaControlChannel }
    w = Per()
    w.bit(0)
    w.uint(1, 2)
    w.bit(0)
    w.uint(5, 5)
    w.bit(1)
    w.bit(1)
    w.octets((0).to_bytes(2, 'big'))
    w.bit(0)
    w.uint(0b01, 2)
    w.octets((1).to_bytes(2, 'big'))
    w.bit(1)
    w.uint(0, 7)
    open_type(w, h2250(media=reverse_media))
    w.uint(2 - 1, 7)
    w.uint(0b01, 2)
    fma = Per()
    fma.bit(0)
    fma.bit(0)
    fma.uint(0b01110, 5)
    fma.uint(0, 8)
    unicast_ip6(fma, *media)
    unicast_ip6(fma, *control)
    open_type(w, fma)
    return w


def connect_tunnel(msgs):
    # H323-UserInformation { h323-uu-pdu (ext) { connect (2): Connect-UUIE
    # (ext, no h245Address): protocolIdentifier, destinationInfo,
    # conferenceID; the PDU's extensions (3 bits): h245Tunneling TRUE,
    # h245Control: SEQUENCE OF open MultimediaSystemControlMessage } }
    w = Per()
    w.bit(0)
    w.bit(0)
    w.bit(1)
    w.bit(0)
    w.bit(0)
    w.uint(2, 3)
    w.bit(0)
    w.bit(0)
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    w.bit(0)
    w.uint(0, 6)
    w.bit(0)
    w.bit(0)
    w.octets(bytes(range(16)))
    w.uint(3 - 1, 7)
    w.uint(0b011, 3)
    t = Per()
    t.bit(1)
    open_type(w, t)
    ctl = Per()
    ctl.octets([len(msgs)])
    for m in msgs:
        open_type(ctl, m)
    open_type(w, ctl)
    return w.data()


def udp(side, sport, dport):
    a, b = (C, S) if side == 'dp0' else (S, C)
    return (side, IPv6(src=a, dst=b) / UDP(sport=sport, dport=dport) / Raw(b'\x80' * 20))


def syn(side, sport, dport):
    a, b = (C, S) if side == 'dp0' else (S, C)
    return (side, IPv6(src=a, dst=b) / TCP(sport=sport, dport=dport, flags='S', seq=100,
                                           window=8192))


q = Flow(C, S, 40000, 1720, 1000, 5000)

PACKETS = (
    q.handshake()
    + [q.pkt('dp0', 'PA', tpkt(q931(0x05, setup_faststart(
        [olc_audio((C, 5001), (C, 5002)), olc_t120((C, 1503))])))),
       q.pkt('dp1', 'PA', tpkt(q931(0x07, connect_tunnel(
           [olc_ack((S, 7000), (S, 7001), (S, 7010))]))))]
    + [udp('dp1', 6000, 5000),            # RTP to C (forward control 5001's pair)
       udp('dp1', 6001, 5003),            # RTCP of the reverse media channel 5002
       udp('dp1', 6002, 5004),            # not announced: dropped
       udp('dp0', 5000, 7001),            # to S's media control channel
       udp('dp0', 5000, 7002),            # not announced: dropped
       udp('dp0', 5010, 7010),            # the Ack's reverse media channel
       syn('dp1', 30000, 1503),           # T.120 to C: related
       syn('dp1', 30001, 1503),           # again: permanent
       syn('dp1', 30002, 1504)]           # not announced: dropped
)
EXPECT = {'dp1': 5, 'dp0': 6}
