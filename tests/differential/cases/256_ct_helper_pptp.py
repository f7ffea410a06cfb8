# A PPTP control connection and its GRE calls (see 256_ct_helper_pptp.nft).
import struct

from scapy.all import IP, TCP, Raw

PNS, PAC = '10.1.0.1', '10.2.0.1'


class Flow:
    """A TCP connection whose sequence numbers follow what was sent."""

    def __init__(self, c, s, cport, sport, cseq, sseq):
        self.c, self.s, self.cport, self.sport = c, s, cport, sport
        self.seq = {'dp0': cseq, 'dp1': sseq}

    def pkt(self, side, flags, data=b''):
        other = 'dp1' if side == 'dp0' else 'dp0'
        src, dst = (self.c, self.s) if side == 'dp0' else (self.s, self.c)
        sp, dp = (self.cport, self.sport) if side == 'dp0' else (self.sport, self.cport)
        ack = self.seq[other] if 'A' in flags else 0
        p = IP(src=src, dst=dst) / TCP(sport=sp, dport=dp, flags=flags,
                                       seq=self.seq[side], ack=ack, window=8192)
        if data:
            p = p / Raw(data)
        self.seq[side] += len(data) + (1 if 'S' in flags else 0)
        return (side, p)

    def handshake(self):
        return [self.pkt('dp0', 'S'), self.pkt('dp1', 'SA'), self.pkt('dp0', 'A')]


def ctl(mtype, body):
    """A PPTP control message: length, type 1, magic cookie, type, body."""
    return struct.pack('!HHIHH', 12 + len(body), 1, 0x1a2b3c4d, mtype, 0) + body


def start_req():
    return ctl(1, struct.pack('!HHIIHH64s64s', 0x0100, 0, 1, 1, 0, 1, b'pns', b'nftdp'))


def start_rep(result=1):
    return ctl(2, struct.pack('!HBBIIHH64s64s', 0x0100, result, 0, 1, 1, 0, 1, b'pac',
                              b'nftdp'))


def out_req(call_id):
    return ctl(7, struct.pack('!HHIIIIHHHH64s64s', call_id, 1, 300, 100000000, 3, 3,
                              64, 0, 0, 0, b'', b''))


def out_rep(call_id, peer, result=1):
    return ctl(8, struct.pack('!HHBBHIHHI', call_id, peer, result, 0, 0, 100000000,
                              64, 0, 0))


def in_req(call_id):
    return ctl(9, struct.pack('!HHIIHH64s64s64s', call_id, 1, 3, 0, 0, 0, b'', b'', b''))


def in_rep(call_id, peer, result=1):
    return ctl(10, struct.pack('!HHBBHHH', call_id, peer, result, 0, 64, 0, 0))


def in_con(peer):
    return ctl(11, struct.pack('!HHIHHI', peer, 0, 100000000, 64, 0, 3))


def set_link(peer):
    return ctl(15, struct.pack('!HHII', peer, 0, 0xffffffff, 0xffffffff))


def wan_error(peer):
    return ctl(14, struct.pack('!HH6I', peer, 0, 0, 0, 0, 0, 0, 0))


def echo_req(ident):
    return ctl(5, struct.pack('!I', ident))


def clear_req(call_id):
    return ctl(12, struct.pack('!HH', call_id, 0))


def disc(call_id):
    return ctl(13, struct.pack('!HBBHH128s', call_id, 1, 0, 0, 0, b''))


def gre(src, dst, call_id, seq, payload=b'\xff\x03\xc0\x21\x01\x01\x00\x04'):
    """Enhanced GRE (RFC 2637): key and sequence present, version 1, PPP."""
    hdr = struct.pack('!BBHHHI', 0x30, 0x01, 0x880b, len(payload), call_id, seq)
    return IP(src=src, dst=dst, proto=47) / Raw(hdr + payload)


def to_pac(call_id, seq):
    return ('dp0', gre(PNS, PAC, call_id, seq))


def to_pns(call_id, seq):
    return ('dp1', gre(PAC, PNS, call_id, seq))


f = Flow(PNS, PAC, 40000, 1723, 1000, 5000)
PNS_ID, PAC_ID = 0x4a01, 0x7b02

PACKETS = (
    f.handshake() + [
        f.pkt('dp0', 'PA', start_req()),
        f.pkt('dp1', 'PA', start_rep()),
        f.pkt('dp0', 'PA', out_req(PNS_ID)),
        f.pkt('dp1', 'PA', out_rep(PAC_ID, PNS_ID)),
        to_pac(PAC_ID, 1),          # related (expected), then established
        to_pns(PNS_ID, 1),
        to_pac(PAC_ID, 2),
        to_pac(PAC_ID + 1, 1),      # another call id: new, dropped
        to_pns(PNS_ID + 1, 1),      # the same the other way
        to_pns(PNS_ID, 2),
        f.pkt('dp0', 'PA', set_link(PAC_ID)),
        f.pkt('dp1', 'PA', wan_error(PNS_ID)),
        f.pkt('dp0', 'PA', echo_req(7)),
        f.pkt('dp0', 'PA', clear_req(PNS_ID)),
        to_pac(PAC_ID, 3),          # still up until the disconnect
        f.pkt('dp1', 'PA', disc(PAC_ID)),
        to_pac(PAC_ID, 4),          # the call's connection is gone: new, dropped
        to_pns(PNS_ID, 3),
        f.pkt('dp0', 'A'),
    ]
)
EXPECT = {'dp1': 11, 'dp0': 7}
