# BER corner cases through nf_nat_snmp_basic (see 289_ct_helper_snmp_nat_ber.nft).
from scapy.all import IP, UDP, Raw

H = bytes.fromhex
IPV = H('40040a010002')  # IpAddress 10.1.0.2, the agent's address


def t(i, payload):
    return IP(src='10.1.0.2', dst='10.2.0.1') / UDP(sport=3000 + i, dport=162) / Raw(payload)


def tl(tag, body):
    return bytes([tag, len(body)]) + body


def vb(val, indef=False):
    b = H('06012b') + val
    return (b'\x30\x80' + b + b'\x00\x00') if indef else tl(0x30, b)


def pdu(vbl, tag=0xa7):
    return tl(tag, H('020107020100020100') + vbl)


def msg(pdus, ver=H('020101')):
    return tl(0x30, ver + b'\x04\x06public' + pdus)


ONE = msg(pdu(tl(0x30, vb(H('020401020304')))))

PACKETS = [
    # passed
    t(0, msg(pdu(b'\x30\x80' + vb(IPV) + b'\x00\x00'))),         # indefinite VarBindList
    t(1, msg(pdu(tl(0x30, vb(H('8200'), indef=True))))),          # indefinite VarBind, endOfMibView
    t(2, msg(pdu(tl(0x30, b'\x30\x81\x09' + H('06012b') + IPV)))),
    t(3, msg(pdu(tl(0x30, b'\x30\x82\x00\x09' + H('06012b') + IPV)))),
    t(4, msg(pdu(tl(0x30, tl(0x10, H('06012b') + IPV))))),        # primitive 0x10 for SEQUENCE
    t(5, msg(pdu(tl(0x30, vb(IPV)), 0xa0) + pdu(tl(0x30, vb(IPV)), 0xa2))),
    t(6, msg(pdu(tl(0x30, vb(IPV + H('410105')))))),              # IpAddress, then a Counter32
    t(7, msg(pdu(tl(0x30, vb(H('020101') + IPV))))),              # INTEGER, then an IpAddress
    t(8, msg(pdu(tl(0x30, vb(IPV)), 0xa0), ver=H('020100'))),     # SNMPv1 get
    t(9, ONE + b'\x00'),                                          # a byte after the message
    t(10, msg(b'')),                                              # no PDU
    # dropped
    t(11, msg(pdu(b'\x30\x00'))),                                 # empty VarBindList
    t(12, msg(pdu(tl(0x30, vb(IPV)), 0xa2) + pdu(tl(0x30, vb(IPV)), 0xa0))),
    t(13, msg(pdu(tl(0x30, vb(H('1f0100')))))),                   # long tag
    t(14, msg(pdu(tl(0x30, vb(IPV))), ver=H('02020001'))),        # two-byte version
    t(15, b'\x30\x80' + H('020101') + b'\x04\x06public' + pdu(tl(0x30, vb(IPV))) + b'\x00\x00'),
    t(16, msg(pdu(tl(0x30, vb(H('020101'), indef=True))))),
    t(17, ONE[:-3]),                                              # INTEGER cut, lengths kept
    t(18, msg(pdu(tl(0x30, vb(H('0500')))))[:-1]),                # NULL cut in two
]
EXPECT = {'dp1': 11}
