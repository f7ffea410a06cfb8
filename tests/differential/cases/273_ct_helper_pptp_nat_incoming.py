# An incoming call through masquerade (see 273_ct_helper_pptp_nat_incoming.nft);
# the control connection of 270_ct_helper_pptp_nat.py.
import importlib.util
import os

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    'pptp270', os.path.join(_here, '270_ct_helper_pptp_nat.py'))
n = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(n)
m = n.m

PNS_ID, PAC_ID = 0x4a01, 0x7b02  # 18945, 31490

f = n.Flow()
PACKETS = (
    f.handshake() + [
        f.pkt('dp0', 'PA', m.start_req()),
        f.pkt('dp1', 'PA', m.start_rep()),
        f.pkt('dp1', 'PA', m.in_req(PAC_ID)),
        f.pkt('dp0', 'PA', m.in_rep(PNS_ID, PAC_ID)),  # its call id kept
        f.pkt('dp1', 'PA', m.in_con(PNS_ID)),          # peer call id -> 0
        n.to_pac(PAC_ID, 1),        # related: source key 0, translated to 18945
        n.to_masq(PNS_ID, 1),       # back to the PNS with key 0
        n.to_pac(PAC_ID, 2),
        f.pkt('dp0', 'A'),
    ]
)
EXPECT = {'dp1': 7, 'dp0': 5}
