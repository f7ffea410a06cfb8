# the capture of case 256
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    'case_256_capture', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     '256_ct_helper_pptp.py'))
_case = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_case)

PACKETS = _case.PACKETS
EXPECT = {'dp1': 13, 'dp0': 9}
