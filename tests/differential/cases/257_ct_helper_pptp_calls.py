# Two PPTP control connections and their calls (see 257_ct_helper_pptp_calls.nft).
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    'case_256_capture', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     '256_ct_helper_pptp.py'))
_c = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_c)

PNS, PAC = _c.PNS, _c.PAC
a = _c.Flow(PNS, PAC, 40010, 1723, 1000, 5000)  # incoming call
b = _c.Flow(PNS, PAC, 40011, 1723, 8000, 9000)  # outgoing call
n = _c.Flow(PNS, PAC, 40012, 1723, 3000, 4000)  # no session
A_PNS, A_PAC = 0x0422, 0x0311
B_PNS, B_PAC = 0x0533, 0x0644

PACKETS = (
    a.handshake() + b.handshake() + n.handshake() + [
        a.pkt('dp0', 'PA', _c.start_req()),
        b.pkt('dp0', 'PA', _c.start_req()),
        a.pkt('dp1', 'PA', _c.start_rep()),
        b.pkt('dp1', 'PA', _c.start_rep()),
        a.pkt('dp1', 'PA', _c.in_req(A_PAC)),
        a.pkt('dp0', 'PA', _c.in_rep(A_PNS, A_PAC)),
        a.pkt('dp1', 'PA', _c.in_con(A_PNS)),
        b.pkt('dp0', 'PA', _c.out_req(B_PNS)),
        b.pkt('dp1', 'PA', _c.out_rep(B_PAC, B_PNS)),
        n.pkt('dp0', 'PA', _c.start_req()),
        n.pkt('dp0', 'PA', _c.out_req(0x0777)),
        n.pkt('dp1', 'PA', _c.out_rep(0x0888, 0x0777)),
        _c.to_pns(A_PNS, 1),          # call a: related, the PAC first
        _c.to_pac(B_PAC, 1),          # call b: related
        _c.to_pac(A_PAC, 1),          # call a: established
        _c.to_pns(B_PNS, 1),          # call b: established
        _c.to_pac(0x0888, 1),         # never expected: new, dropped
        _c.to_pns(0x0777, 1),
        _c.to_pac(A_PAC, 2),
        _c.to_pns(A_PNS, 2),
        b.pkt('dp0', 'PA', _c.clear_req(B_PNS)),
        b.pkt('dp1', 'PA', _c.disc(B_PAC)),
        _c.to_pac(B_PAC, 2),          # call b is over: new, dropped
        _c.to_pac(A_PAC, 3),          # call a goes on
    ]
)
EXPECT = {'dp1': 17, 'dp0': 13}
