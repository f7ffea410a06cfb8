# PPTP through masquerade (see 270_ct_helper_pptp_nat.nft); the messages
# are those of 256_ct_helper_pptp.py.
import importlib.util
import os

from scapy.all import IP, TCP, Raw

_spec = importlib.util.spec_from_file_location(
    'pptp256', os.path.join(os.path.dirname(os.path.abspath(__file__)), '256_ct_helper_pptp.py'))
m = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(m)

PNS, PAC, MASQ = '10.1.0.1', '10.2.0.1', '10.2.255.254'
PNS_ID, PAC_ID = 0x4a01, 0x7b02
NAT_ID = 40000  # the control connection's source port, kept by masquerade


class Flow:
    """The control connection; the PAC answers the masquerade address."""

    def __init__(self):
        self.seq = {'dp0': 1000, 'dp1': 5000}

    def pkt(self, side, flags, data=b''):
        other = 'dp1' if side == 'dp0' else 'dp0'
        if side == 'dp0':
            ip, sp, dp = IP(src=PNS, dst=PAC), NAT_ID, 1723
        else:
            ip, sp, dp = IP(src=PAC, dst=MASQ), 1723, NAT_ID
        ack = self.seq[other] if 'A' in flags else 0
        p = ip / TCP(sport=sp, dport=dp, flags=flags, seq=self.seq[side], ack=ack, window=8192)
        if data:
            p = p / Raw(data)
        self.seq[side] += len(data) + (1 if 'S' in flags else 0)
        return (side, p)

    def handshake(self):
        return [self.pkt('dp0', 'S'), self.pkt('dp1', 'SA'), self.pkt('dp0', 'A')]


def to_pac(call_id, seq):
    return ('dp0', m.gre(PNS, PAC, call_id, seq))


def to_masq(call_id, seq):
    return ('dp1', m.gre(PAC, MASQ, call_id, seq))


f = Flow()
PACKETS = (
    f.handshake() + [
        f.pkt('dp0', 'PA', m.start_req()),
        f.pkt('dp1', 'PA', m.start_rep()),
        f.pkt('dp0', 'PA', m.out_req(PNS_ID)),       # call id 0x4a01 -> 40000
        f.pkt('dp1', 'PA', m.out_rep(PAC_ID, NAT_ID)),  # peer 40000 -> 0x4a01
        to_pac(PAC_ID, 1),          # related, masqueraded
        to_masq(NAT_ID, 1),         # back to the PNS with key 0x4a01
        to_pac(PAC_ID, 2),
        to_masq(NAT_ID, 2),
        to_pac(PAC_ID + 1, 1),      # another call id: new (masqueraded), dropped
        f.pkt('dp0', 'PA', m.set_link(PAC_ID)),      # not rewritten
        f.pkt('dp1', 'PA', m.wan_error(NAT_ID)),     # peer 40000 -> 0x4a01
        f.pkt('dp1', 'PA', m.set_link(NAT_ID)),      # the PAC's: 40000 -> 0x4a01
        f.pkt('dp0', 'PA', m.echo_req(7)),
        f.pkt('dp0', 'PA', m.clear_req(PNS_ID)),     # 0x4a01 -> 40000
        to_pac(PAC_ID, 3),
        f.pkt('dp1', 'PA', m.disc(PAC_ID)),          # its call id -> 0x4a01 (sic)
        to_pac(PAC_ID, 4),          # the call's connection is gone: new, dropped
        f.pkt('dp0', 'A'),
    ]
)
# (GRE to the masquerade address without a connection would be the DUT's
# own, answered by an ICMP protocol unreachable: not sent)
EXPECT = {'dp1': 11, 'dp0': 8}
