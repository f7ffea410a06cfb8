# case 196's FTP and TFTP capture, with zones after it
import importlib.util
import os

from scapy.all import IP, UDP, Raw

_spec = importlib.util.spec_from_file_location(
    'case_196_capture', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     '196_ct_helper_ftp.py'))
_case = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_case)

C, S = '10.1.0.1', '10.2.0.1'


def udp(side, sport, dport, data=b'x'):
    src, dst = (C, S) if side == 'dp0' else (S, C)
    return (side, IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(data))


PACKETS = _case.PACKETS + [
    udp('dp0', 6000, 5353),   # zone 5 both ways: new
    udp('dp1', 5353, 6000),   # zone 0: no connection, new, dropped
    udp('dp0', 6001, 5354),   # zone 6 in the original direction only
    udp('dp1', 5354, 6001),   # its reply, zone 0 both ways: established
    udp('dp0', 6002, 5355),   # zone from the mark (0x10007: zone 7), new
    udp('dp1', 5355, 6002),   # zone 7 too: established
    udp('dp0', 6004, 5356),   # mark 0x10008: zone 8, new
    udp('dp1', 5356, 6004),   # zone 7: no connection, new, dropped
    udp('dp0', 6003, 7),      # notrack first: untracked
    udp('dp0', 6003, 7),
]
EXPECT = {'dp1': 26, 'dp0': 19}
