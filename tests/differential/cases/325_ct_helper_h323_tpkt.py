# How the Q.931 helper reads segments, against the kernel's get_tpkt_data
# and decoder: a TPKT header alone announces the next segment's data (as
# NetMeeting sends them: the Setup's h245Address there is expected); two
# TPKTs in one segment (an Alerting, then a Connect with h245Address) are
# both read; a Setup whose user-user element is cut short and a Connect
# whose TransportAddress choice is out of range decode to errors: nothing
# is expected from them, and they pass. Then one segment of six TPKTs:
# Information, ReleaseComplete (decoded, nothing to expect),
# CallProceeding, Alerting and a Facility (startH245) whose h245Address
# is expected, and a Facility forwarding the call, whose is not.
#
# The PDUs are built here in aligned PER (X.691): each function names the
# H.225.0 fields it writes, in order.
from scapy.all import IP, TCP, UDP, Raw

from h323_per import Flow, Per, endpoint_type, ip4, q931, tpkt, uuie

C, S = '10.1.0.1', '10.2.0.1'


def h225_transport_ipv4(w, addr, port, choice=0):
    # TransportAddress ::= CHOICE (extensible) { ipAddress SEQUENCE { ip
    # OCTET STRING (SIZE(4)), port INTEGER(0..65535) }, ... }: index 0 of 7
    # (7: out of the root without the extension bit, a range error)
    w.bit(0)
    w.uint(choice, 3)
    w.octets(ip4(addr))
    w.octets(port.to_bytes(2, 'big'))


PROTOCOL_ID = bytes([0x00, 0x08, 0x91, 0x4a, 0x00, 0x04])  # 0.0.8.2250.0.4


def setup_body(w, port=1800):
    # Setup-UUIE (ext): optional bits h245Address=1, sourceAddress,
    # destinationAddress, destCallSignalAddress, destExtraCallInfo,
    # destExtraCRV, callServices = 0; protocolIdentifier, h245Address,
    # sourceInfo, activeMC FALSE, conferenceID, conferenceGoal create,
    # callType pointToPoint
    w.bit(0)
    w.uint(0b1000000, 7)
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    h225_transport_ipv4(w, C, port)
    endpoint_type(w)
    w.bit(0)
    w.octets(bytes(range(16)))
    w.bit(0)
    w.uint(0, 2)
    w.bit(0)
    w.uint(0, 2)


def connect_body(w, port=1801, choice=0):
    # Connect-UUIE (ext): h245Address present; protocolIdentifier,
    # h245Address, destinationInfo, conferenceID
    w.bit(0)
    w.bit(1)
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    h225_transport_ipv4(w, S, port, choice)
    endpoint_type(w)
    w.octets(bytes(range(16)))


def alerting_body(w, port=None):
    # Alerting-UUIE and CallProceeding-UUIE (ext, the h245Address optional
    # bit): protocolIdentifier, destinationInfo, [h245Address S:port]
    w.bit(0)
    w.bit(1 if port else 0)
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    endpoint_type(w)
    if port:
        h225_transport_ipv4(w, S, port)


def information_body(w):
    # Information-UUIE (ext): protocolIdentifier
    w.bit(0)
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))


def release_body(w):
    # ReleaseComplete-UUIE (ext, reason present): protocolIdentifier,
    # reason destinationRejection (3 of 12)
    w.bit(0)
    w.bit(1)
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    w.bit(0)
    w.uint(3, 4)


def facility_body(w, reason, port):
    # Facility-UUIE (ext present; alternativeAddress, alternativeAliasAddress,
    # conferenceID absent): protocolIdentifier, reason (root 0-3, or an
    # extension alternative in an open type of one zero octet); the
    # extensions' 7 bits, h245Address (the 7th, index 11) S:port
    w.bit(1)
    w.uint(0, 3)
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    if reason < 4:
        w.bit(0)
        w.uint(reason, 2)
    else:
        w.bit(1)
        w.uint(reason - 4, 7)
        w.octets([1, 0])
    w.uint(7 - 1, 7)
    w.uint(0b0000001, 7)
    t = Per()
    h225_transport_ipv4(t, S, port)
    b = t.data()
    w.octets([len(b)] + list(b))


def syn(side, sport, dport):
    a, b = (C, S) if side == 'dp0' else (S, C)
    return (side, IP(src=a, dst=b) / TCP(sport=sport, dport=dport, flags='S', seq=100,
                                         window=8192))


def h245_unicast_ipv4(w, addr, port):
    # H.245 TransportAddress (ext) unicastAddress, UnicastAddress (ext)
    # iPAddress (ext) { network, tsapIdentifier }
    w.bit(0)
    w.bit(0)
    w.bit(0)
    w.uint(0, 3)
    w.bit(0)
    w.octets(ip4(addr))
    w.octets(port.to_bytes(2, 'big'))


def open_logical_channel(addr, port):
    # request (0), openLogicalChannel (3): OpenLogicalChannel (ext, no
    # reverse parameters) { 1, forward (ext) { audioData g711Ulaw64k 20,
    # multiplexParameters: the extension alternative h2250 (3) with
    # sessionID 1, mediaChannel addr:port, mediaControlChannel
    # addr:port + 1 } }
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
    p = Per()
    p.bit(0)
    p.uint(0b0010100000, 10)
    p.octets([1])
    h245_unicast_ipv4(p, addr, port)
    h245_unicast_ipv4(p, addr, port + 1)
    b = p.data()
    w.octets([len(b)] + list(b))
    return w.data()


NAT = '100.64.0.1'
q = Flow(C, S, 40000, 1720, 1000, 5000)
# a call through the source NAT (the nat table's rule: source port 41000):
# the Setup's h245Address is rewritten to NAT:1800 and expected there, its
# destCallSignalAddress to S's, its sourceCallSignalAddress to NAT:41000; S's
# H.245 connection to it goes to C (nf_nat_follow_master); C's
# OpenLogicalChannel on it is rewritten to NAT:5000/5001, S's RTP there
# goes to C
qn = Flow(C, S, 41000, 1720, 1000, 5000)


def setup_nat_body(w):
    # Setup-UUIE (ext present): optional bits h245Address and
    # destCallSignalAddress; protocolIdentifier, h245Address C:1800,
    # sourceInfo, destCallSignalAddress 10.2.0.8:1720 (not S: rewritten to
    # S:1720), activeMC, conferenceID, conferenceGoal, callType; the
    # extensions' 1 bit: sourceCallSignalAddress C:41000 (rewritten to the
    # NAT address)
    w.bit(1)
    w.uint(0b1001000, 7)
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    h225_transport_ipv4(w, C, 1800)
    endpoint_type(w)
    h225_transport_ipv4(w, '10.2.0.8', 1720)
    w.bit(0)
    w.octets(bytes(range(16)))
    w.bit(0)
    w.uint(0, 2)
    w.bit(0)
    w.uint(0, 2)
    w.uint(0, 7)
    w.bit(1)
    t = Per()
    h225_transport_ipv4(t, C, 41000)
    b = t.data()
    w.octets([len(b)] + list(b))


def rrq_nat():
    # RasMessage registrationRequest (3); RegistrationRequest (no
    # extension; nonStandardData, terminalAlias, gatekeeperIdentifier
    # absent): requestSeqNum 1, protocolIdentifier, discoveryComplete,
    # callSignalAddress (C:1720), rasAddress (C:41719), terminalType,
    # endpointVendor
    w = Per()
    w.bit(0)
    w.uint(3, 5)
    w.bit(0)
    w.uint(0, 3)
    w.octets((0).to_bytes(2, 'big'))
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    w.bit(1)
    w.octets([1])
    h225_transport_ipv4(w, C, 1720)
    w.octets([1])
    h225_transport_ipv4(w, C, 41719)
    endpoint_type(w)
    w.bit(0)
    w.uint(0, 2)
    w.bit(0)
    w.octets([181, 0, 0, 1])
    return w.data()


def rcf_nat():
    # RasMessage registrationConfirm (4); RegistrationConfirm (no
    # extension): requestSeqNum 1, protocolIdentifier, callSignalAddress
    # (S:1720), endpointIdentifier "e1"
    w = Per()
    w.bit(0)
    w.uint(4, 5)
    w.bit(0)
    w.uint(0, 3)
    w.octets((0).to_bytes(2, 'big'))
    w.octets([len(PROTOCOL_ID)] + list(PROTOCOL_ID))
    w.octets([1])
    h225_transport_ipv4(w, S, 1720)
    w.uint(2 - 1, 7)
    w.octets(b'\x00e\x001')
    return w.data()


def arq_nat():
    # RasMessage admissionRequest (9); AdmissionRequest (no extension; of
    # the 7 optional bits srcCallSignalAddress): requestSeqNum 2, callType
    # pointToPoint, endpointIdentifier "e1", srcInfo (h323-ID "c"),
    # srcCallSignalAddress C:1720 (the kernel stops at bandWidth)
    w = Per()
    w.bit(0)
    w.uint(9, 5)
    w.bit(0)
    w.uint(0b0000100, 7)
    w.octets((1).to_bytes(2, 'big'))
    w.bit(0)
    w.uint(0, 2)
    w.uint(2 - 1, 7)
    w.octets(b'\x00e\x001')
    w.octets([1])
    w.bit(0)
    w.bit(1)
    w.octets([0, 0, ord('c')])
    h225_transport_ipv4(w, C, 1720)
    return w.data()


def ras_nat(side, payload):
    if side == 'dp0':
        return (side, IP(src=C, dst=S) / UDP(sport=41719, dport=1719) / Raw(payload))
    return (side, IP(src=S, dst=NAT) / UDP(sport=1719, dport=41719) / Raw(payload))


def to_nat(pkts):
    # S's packets of the NATed Q.931 connection go to the NAT address
    out = []
    for side, p in pkts:
        if side == 'dp1':
            p = p.copy()
            p[IP].dst = NAT
            del p[IP].chksum
            del p[TCP].chksum
        out.append((side, p))
    return out


def h245_nat():
    # S (dp1) connects to NAT:1800; C answers from its own address
    def seg(side, flags, seq, ack, data=b''):
        if side == 'dp1':
            p = IP(src=S, dst=NAT) / TCP(sport=30010, dport=1800, flags=flags, seq=seq, ack=ack,
                                         window=8192)
        else:
            p = IP(src=C, dst=S) / TCP(sport=1800, dport=30010, flags=flags, seq=seq, ack=ack,
                                       window=8192)
        return (side, p / Raw(data) if data else p)
    olc = tpkt(open_logical_channel(C, 5000))
    return [seg('dp1', 'S', 7000, 0), seg('dp0', 'SA', 9000, 7001), seg('dp1', 'A', 7001, 9001),
            seg('dp0', 'PA', 9001, 7001, olc)]
setup = q931(0x05, uuie(0, setup_body))
two = (tpkt(q931(0x01, uuie(3, alerting_body)))
       + tpkt(q931(0x07, uuie(2, connect_body))))
cut = q931(0x05, uuie(0, lambda w: setup_body(w, 1802)))[:-5]   # the UUIE cut short
bad = q931(0x07, uuie(2, lambda w: connect_body(w, 1803, choice=7)))

PACKETS = (
    q.handshake()
    + [q.pkt('dp0', 'PA', tpkt(setup)[:4]),      # a TPKT header alone
       q.pkt('dp0', 'PA', setup),                # its data: h245Address C:1800
       q.pkt('dp1', 'PA', two),                  # Alerting, Connect (S:1801)
       q.pkt('dp0', 'PA', tpkt(cut)),            # decoding error: passes
       q.pkt('dp1', 'PA', tpkt(bad)),            # range error: passes
       q.pkt('dp1', 'PA', tpkt(q931(0x7b, uuie(4, information_body)))
             + tpkt(q931(0x5a, uuie(5, release_body)))
             + tpkt(q931(0x02, uuie(1, lambda w: alerting_body(w, 1810))))
             + tpkt(q931(0x01, uuie(3, lambda w: alerting_body(w, 1811))))
             + tpkt(q931(0x62, uuie(6, lambda w: facility_body(w, 5, 1812))))
             + tpkt(q931(0x62, uuie(6, lambda w: facility_body(w, 1, 1813)))))]
    # Information, ReleaseComplete, CallProceeding (S:1810), Alerting
    # (S:1811), Facility startH245 (S:1812), Facility callForwarded (its
    # h245Address not read: S:1813)
    + [syn('dp1', 30000, 1800),                  # related (the split Setup)
       syn('dp0', 30001, 1801),                  # related (the second TPKT)
       syn('dp1', 30002, 1802),                  # not expected: dropped
       syn('dp0', 30003, 1803),                  # not expected: dropped
       syn('dp0', 30004, 1810),                  # related: CallProceeding
       syn('dp0', 30005, 1811),                  # related: Alerting
       syn('dp0', 30006, 1812),                  # related: Facility startH245
       syn('dp0', 30007, 1813)]                  # Facility callForwarded: dropped
    + to_nat(qn.handshake())
    + [qn.pkt('dp0', 'PA', tpkt(q931(0x05, uuie(0, setup_nat_body))))]  # h245Address C:1800
    + h245_nat()
    + [('dp1', IP(src=S, dst=NAT) / UDP(sport=6000, dport=5000) / Raw(b'\x80' * 20)),
       ('dp1', IP(src=S, dst=NAT) / UDP(sport=6001, dport=5001) / Raw(b'\x80' * 20))]
    # RAS through the source NAT (source port 41719): the RRQ's
    # callSignalAddress rewritten to NAT:1720 and its rasAddress to
    # NAT:41719, the gatekeeper's call there goes to C; an ARQ's
    # srcCallSignalAddress rewritten to NAT:1720
    + [ras_nat('dp0', rrq_nat()), ras_nat('dp1', rcf_nat()),
       ('dp1', IP(src=S, dst=NAT) / TCP(sport=30020, dport=1720, flags='S', seq=100,
                                       window=8192)),
       ras_nat('dp0', arq_nat())]
)
EXPECT = {'dp1': 16, 'dp0': 12}
