# SNMP through snat (see 288_ct_helper_snmp_nat.nft).
from scapy.all import IP, UDP, Raw
from scapy.asn1.asn1 import ASN1_IPADDRESS, ASN1_INTEGER, ASN1_OID, ASN1_TIME_TICKS
from scapy.layers.snmp import (SNMP, SNMPget, SNMPresponse, SNMPset, SNMPtrapv1,
                               SNMPtrapv2, SNMPvarbind)

AGENT, OTHER, MGR, PUB = '10.1.0.2', '10.1.0.3', '10.2.0.1', '10.2.0.100'
CLIENT, SERVER = '10.1.0.1', '10.2.0.5'


def vb(oid, value):
    return SNMPvarbind(oid=ASN1_OID(oid), value=value)


def trap2(addrs, community='public'):
    vbs = [vb('1.3.6.1.2.1.1.3.0', ASN1_TIME_TICKS(4242)),
           vb('1.3.6.1.6.3.1.1.4.1.0', ASN1_OID('1.3.6.1.4.1.8072.2.3.0.1'))]
    vbs += [vb('1.3.6.1.4.1.8072.2.3.2.%d' % i, ASN1_IPADDRESS(a))
            for i, a in enumerate(addrs)]
    return bytes(SNMP(version=1, community=community,
                      PDU=SNMPtrapv2(id=ASN1_INTEGER(7), varbindlist=vbs)))


def trap1(agent):
    return bytes(SNMP(version=0, community='public',
                      PDU=SNMPtrapv1(enterprise=ASN1_OID('1.3.6.1.4.1.8072'),
                                     agent_addr=ASN1_IPADDRESS(agent),
                                     generic_trap=6, specific_trap=1,
                                     time_stamp=ASN1_TIME_TICKS(10),
                                     varbindlist=[vb('1.3.6.1.2.1.1.5.0',
                                                     ASN1_IPADDRESS(agent))])))


def trap(src, payload, chksum=None):
    u = UDP(sport=1162, dport=162) if chksum is None else UDP(sport=1162, dport=162,
                                                              chksum=chksum)
    return ('dp0', IP(src=src, dst=MGR) / u / Raw(payload))


V2 = trap2([AGENT, '10.9.9.9', AGENT])
V2_ODD = trap2([AGENT], community='publi')
V3 = bytes(SNMP(version=3, community='public',
                PDU=SNMPtrapv2(varbindlist=[vb('1.3.6.1.2.1.1.5.0', ASN1_IPADDRESS(AGENT))])))
# the last IpAddress cut after two of its bytes, every length left as it was
CUT = V2[:-2]
# a long-form length of three bytes (the decoder takes two at most)
LONG3 = b'\x30\x83\x00\x00\x0e\x02\x01\x01\x04\x06public\xa7\x00'
# an IpAddress of five bytes
IP5 = bytes.fromhex('302402010104067075626c6963a717020107020100020100300c300a'
                    '06012b40050a010002ff')

GET = bytes(SNMP(version=1, community='private',
                 PDU=SNMPset(id=ASN1_INTEGER(11),
                             varbindlist=[vb('1.3.6.1.2.1.4.20.1.1.0', ASN1_IPADDRESS(CLIENT))])))
GET1 = bytes(SNMP(version=0, community='private',
                  PDU=SNMPget(id=ASN1_INTEGER(12),
                              varbindlist=[vb('1.3.6.1.2.1.4.20.1.1.0', ASN1_IPADDRESS(CLIENT))])))
RESP = bytes(SNMP(version=1, community='private',
                  PDU=SNMPresponse(id=ASN1_INTEGER(11),
                                   varbindlist=[vb('1.3.6.1.2.1.4.20.1.1.0', ASN1_IPADDRESS(CLIENT)),
                                                vb('1.3.6.1.2.1.4.20.1.1.1', ASN1_IPADDRESS(PUB))])))

PACKETS = [
    trap(AGENT, V2),                  # v2c trap: both 10.1.0.2 translated
    trap(AGENT, trap1(AGENT)),        # v1 Trap-PDU: not in the grammar, dropped
    trap(AGENT, V3),                  # version 3: dropped
    trap(AGENT, V2, chksum=0),        # no checksum: translated, check stays 0
    trap(AGENT, V2_ODD),              # the address at an odd offset
    trap(AGENT, CUT),                 # cut inside an IpAddress: dropped
    trap(AGENT, b'hello'),            # not BER: dropped
    trap(AGENT, LONG3),               # three length bytes: dropped
    trap(AGENT, IP5),                 # a five-byte IpAddress: dropped
    trap(OTHER, trap1(OTHER)),        # not NATed: untouched
    trap(OTHER, b'hello'),            # not NATed: not parsed
    ('dp0', IP(src=CLIENT, dst=SERVER) / UDP(sport=2000, dport=161) / Raw(GET)),
    ('dp1', IP(src=SERVER, dst=PUB) / UDP(sport=161, dport=2000) / Raw(RESP)),
    ('dp0', IP(src=CLIENT, dst=SERVER) / UDP(sport=2000, dport=161) / Raw(GET1)),
    # the last IpAddress cut after one byte, short-form lengths unchanged:
    # dropped
    ('dp1', IP(src=SERVER, dst=PUB) / UDP(sport=161, dport=2000) / Raw(RESP[:-3])),
]
EXPECT = {'dp1': 7, 'dp0': 1}
