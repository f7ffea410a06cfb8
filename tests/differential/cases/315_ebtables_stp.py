# ebtables-nft's stp match (ebt_stp.c) through a bridge (BRIDGE = True,
# STP off: the bridge forwards BPDUs): the type and every configuration
# field, ranges, masks and inversions. ebt_stp reads struct stp_header
# (dsap, ssap, ctrl, pid, vers, type: six bytes, where a BPDU has a
# two-byte protocol identifier) at the network header, then struct
# stp_config_pdu after it; the frames are real BPDUs as a bridge sends
# them, so the kernel's view of them (one byte off: its "type" is the
# protocol version, its "flags" the BPDU type) is what is compared. Every
# rule's counter is compared.
from scapy.all import Ether, LLC, Raw, STP

BRIDGE = True
T0, T1 = '02:00:00:00:01:10', '02:00:00:00:01:11'
BGA = '01:80:c2:00:00:00'


def bpdu(src=T0, **kw):
    fields = dict(bpdutype=0, bpduflags=0, rootid=0x8000, rootmac='02:00:00:00:01:10',
                  pathcost=4, bridgeid=0x2000, bridgemac='02:00:00:00:01:20',
                  portid=0x8001, age=1, maxage=20, hellotime=2, fwddelay=15)
    fields.update(kw)
    body = bytes(LLC() / STP(**fields))
    return Ether(src=src, dst=BGA, type=len(body)) / Raw(body)


def raw(body, dst=BGA):
    return Ether(src=T0, dst=dst, type=len(body)) / Raw(body)


PACKETS = [
    bpdu(),
    bpdu(bpduflags=1),
    bpdu(bpduflags=0x80),
    bpdu(rootid=0x1000, pathcost=2000),
    bpdu(bridgemac='02:00:00:00:01:21', portid=0x8002),
    bpdu(age=0, maxage=6, hellotime=1, fwddelay=4),
    bpdu(version=2, bpdutype=2, bpduflags=0x3c),
    raw(bytes([0x42, 0x42, 3, 0, 0, 0x80])),           # a TCN
    # cut short: the length says so, the padding to 60 bytes is still read
    raw(bytes([0x42, 0x42, 3, 0, 0, 0, 0, 1, 0x80])),
    raw(bytes([0x42, 0x42, 3, 0, 0])),
    raw(bytes([0xaa, 0xaa, 3, 0, 0, 0]) + b'snap'),
    bpdu(rootmac='02:00:00:00:01:99'),
]
EXPECT = {'dp1': 10}
